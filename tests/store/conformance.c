/*
 * conformance.c — the store conformance suite: the same tests, run against
 * each backend (`store_conformance sqlite`, `store_conformance pg`).
 *
 * Every test opens a fresh store (a new SQLite file in the test's temp dir,
 * or, on PostgreSQL, the run's own database with jobd's schema dropped),
 * migrates it and sets a manual clock, so lease expiry and backoff are
 * driven by moving the clock, never by sleeping. The tests pin down every transition
 * and guard of CONTRACT.md §1 through the public store_*() interface only,
 * so a backend passes exactly when it keeps the contract.
 */
#include <libpq-fe.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/job.h"
#include "core/rules.h"
#include "store/store.h"
#include "test.h"
#include "util/clock.h"

/* 2027-01-15T08:00:00Z: a fixed start so every time in a test is exact. */
#define T0 INT64_C(1800000000000000)
#define SEC INT64_C(1000000)
#define MS INT64_C(1000)

/* Ends a forked child, flushing what it wrote (stderr is a file here). */
static void
child_exit(int code)
{
    fflush(NULL);
    _exit(code);
}

/* One test's store, clock and error buffer. Lives on the test's stack. */
struct fx {
    struct store *st;
    struct manual_clock mc;
    struct jobd_error err;
    char url[1200];
};

static const char *
backend(void)
{
    if (test_argv == NULL || test_argv[1] == NULL)
        TEST_FAIL("usage: store_conformance sqlite|pg|pg_pooled");
    if (strcmp(test_argv[1], "sqlite") != 0 && strcmp(test_argv[1], "pg") != 0 &&
        strcmp(test_argv[1], "pg_pooled") != 0)
        TEST_FAIL("unknown backend '%s' (sqlite, pg or pg_pooled)", test_argv[1]);
    return test_argv[1];
}

/* pg_pooled: PostgreSQL with ?pooler=transaction, i.e. as behind PgBouncer in
 * transaction mode: every statement unnamed, no LISTEN (store_pg_conn.c). */
static bool
is_pg(void)
{
    return strncmp(backend(), "pg", 2) == 0;
}

/*
 * PostgreSQL: one database per run of this program, made through the
 * superuser URL in JOBD_TEST_PG_URL and named after the harness's (parent)
 * pid, so parallel runs never share rows; every test starts by dropping
 * jobd's schema (CONTRACT §6: everything lives in schema "jobd"). CREATE
 * DATABASE costs a second or more with fsync on, DROP SCHEMA a few ms. The
 * names are made here, never user data, so they are safe as identifiers.
 */
static pid_t conf_parent_pid;

__attribute__((constructor)) static void
conf_record_parent(void)
{
    conf_parent_pid = getpid();
}

static const char *
pg_admin_url(void)
{
    const char *base = getenv("JOBD_TEST_PG_URL");
    if (base == NULL || *base == '\0')
        TEST_FAIL("JOBD_TEST_PG_URL is not set: run `scripts/with-pg.sh store_conformance pg`");
    return base;
}

static void
pg_run_db_name(char *buf, size_t len)
{
    snprintf(buf, len, "jobd_t_conf_%ld", (long)conf_parent_pid);
}

/* url = base with its database (the URI path) replaced by db. */
static void
pg_url_with_db(const char *base, const char *db, char *url, size_t len)
{
    const char *auth = strstr(base, "://");
    if (auth == NULL)
        TEST_FAIL("JOBD_TEST_PG_URL is not a postgresql:// URI: %s", base);
    size_t start = (size_t)(auth + 3 - base) + strcspn(auth + 3, "/?");
    size_t end = start;
    if (base[start] == '/')
        end = start + strcspn(base + start, "?");
    snprintf(url, len, "%.*s/%s%s", (int)start, base, db, base + end);
}

/* Runs sql on url; ok_state is an SQLSTATE also taken as success (or NULL). */
static int
pg_exec(const char *url, const char *sql, const char *ok_state)
{
    PGconn *c = PQconnectdb(url);
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "cannot connect to %s: %s", url, PQerrorMessage(c));
        PQfinish(c);
        return -1;
    }
    PGresult *r = PQexec(c, sql);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    if (!ok && ok_state != NULL && state != NULL && strcmp(state, ok_state) == 0)
        ok = 1;
    if (!ok)
        fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    PQfinish(c);
    return ok ? 0 : -1;
}

/* The fixture's URL as libpq takes it: without jobd's own pooler=transaction,
 * which pg_fresh appends last for pg_pooled. */
static const char *
libpq_url(const char *url, char *buf, size_t n)
{
    snprintf(buf, n, "%s", url);
    char *p = strstr(buf, "pooler=transaction");
    if (p != NULL && p > buf)
        p[-1] = '\0'; /* the '?' or '&' before it */
    return buf;
}

/* Points fx->url at the run's database, created if needed, without jobd's schema. */
static void
pg_fresh(struct fx *f)
{
    const char *base = pg_admin_url();
    char db[64], sql[160];
    pg_run_db_name(db, sizeof db);
    /* template0: CREATE DATABASE fails while anyone is connected to template1. */
    snprintf(sql, sizeof sql, "CREATE DATABASE %s TEMPLATE template0", db);
    if (pg_exec(base, sql, "42P04" /* duplicate_database */) != 0)
        TEST_FAIL("cannot create the test database %s", db);
    pg_url_with_db(base, db, f->url, sizeof f->url);
    if (pg_exec(f->url, "DROP SCHEMA IF EXISTS jobd CASCADE", NULL) != 0)
        TEST_FAIL("cannot reset schema jobd in %s", db);
    if (strcmp(backend(), "pg_pooled") == 0) {
        size_t n = strlen(f->url);
        snprintf(f->url + n, sizeof f->url - n, "%spooler=transaction",
                 strchr(f->url, '?') ? "&" : "?");
    }
}

/* In the harness process only (not in a test child that exits): drop the run's db. */
__attribute__((destructor)) static void
conf_drop_run_db(void)
{
    if (getpid() != conf_parent_pid || test_argv == NULL || test_argv[1] == NULL ||
        strcmp(test_argv[1], "pg") != 0)
        return;
    const char *base = getenv("JOBD_TEST_PG_URL");
    if (base == NULL || *base == '\0')
        return;
    char db[64], sql[160];
    pg_run_db_name(db, sizeof db);
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", db);
    (void)pg_exec(base, sql, NULL);
}

/* Opens another connection to the fixture's database, migrated, same clock. */
static struct store *
fx_connect(struct fx *f)
{
    struct store *st = NULL;
    struct jobd_error e = {0};
    ASSERT_OK(store_open(f->url, &st, &e), &e);
    ASSERT_OK(store_migrate(st, &e), &e);
    store_set_clock(st, &f->mc.clock);
    return st;
}

static void
fx_open(struct fx *f)
{
    memset(f, 0, sizeof *f);
    manual_clock_init(&f->mc, T0);
    if (is_pg()) {
        pg_fresh(f);
    } else {
        snprintf(f->url, sizeof f->url, "sqlite:%s", test_path("conf.db"));
    }
    f->st = fx_connect(f);
    ASSERT_STR_EQ(store_backend(f->st), is_pg() ? "pg" : "sqlite");
}

static void
fx_close(struct fx *f)
{
    store_close(f->st);
    f->st = NULL;
}

static int64_t
now_of(struct fx *f)
{
    return atomic_load(&f->mc.now_us);
}

/* Enqueues a job and returns its id. */
static int64_t
enq(struct fx *f, const char *type, const char *queue, int32_t priority, int64_t run_at_us)
{
    struct job_spec s = {.type = type, .queue = queue, .priority = priority,
                         .run_at_us = run_at_us};
    struct job j = {0};
    ASSERT_OK(store_enqueue(f->st, &s, &j, NULL, &f->err), &f->err);
    ASSERT(j.id > 0);
    int64_t id = j.id;
    job_fini(&j);
    return id;
}

static int64_t
enq_spec(struct fx *f, const struct job_spec *s)
{
    struct job j = {0};
    ASSERT_OK(store_enqueue(f->st, s, &j, NULL, &f->err), &f->err);
    int64_t id = j.id;
    job_fini(&j);
    return id;
}

/* Claims up to limit jobs of any queue/type as worker "w1". */
static void
claim(struct fx *f, int limit, int64_t lease_ms, struct job_list *out)
{
    struct claim_req r = {.worker_id = "w1", .limit = limit, .lease_ms = lease_ms};
    ASSERT_OK(store_claim(f->st, &r, out, &f->err), &f->err);
}

/* Claims exactly one job and returns its attempt; the job must be id. */
static int32_t
claim_one(struct fx *f, int64_t id)
{
    struct job_list l = {0};
    claim(f, 1, 60000, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, id);
    int32_t a = l.v[0].attempt;
    job_list_fini(&l);
    return a;
}

static struct job
getj(struct fx *f, int64_t id)
{
    struct job j = {0};
    ASSERT_OK(store_get(f->st, id, &j, &f->err), &f->err);
    return j;
}

static enum job_status
status_of(struct fx *f, int64_t id)
{
    struct job j = getj(f, id);
    enum job_status s = j.status;
    job_fini(&j);
    return s;
}

/* ------------------------------------------------------------------ */
/* opening, migrations, bad input                                      */

TEST(migrate_is_idempotent)
{
    struct fx f;
    fx_open(&f);
    ASSERT_OK(store_migrate(f.st, &f.err), &f.err);
    ASSERT_OK(store_migrate(f.st, &f.err), &f.err);
    ASSERT_OK(store_ping(f.st, &f.err), &f.err);
    fx_close(&f);
}

TEST(migrate_concurrent_starters)
{
    struct fx f;
    memset(&f, 0, sizeof f);
    manual_clock_init(&f.mc, T0);
    /* A fresh, unmigrated database that four processes migrate at once. */
    if (is_pg()) {
        pg_fresh(&f);
    } else {
        snprintf(f.url, sizeof f.url, "sqlite:%s", test_path("mig.db"));
    }
    fflush(NULL); /* or the children repeat what is buffered */
    pid_t pids[4];
    for (int i = 0; i < 4; i++) {
        pids[i] = fork();
        ASSERT(pids[i] >= 0);
        if (pids[i] == 0) {
            struct store *st = NULL;
            struct jobd_error e = {0};
            int rc = store_open(f.url, &st, &e);
            if (rc == JOBD_OK)
                rc = store_migrate(st, &e);
            if (rc != JOBD_OK)
                fprintf(stderr, "child %d: %d %s\n", i, rc, e.msg);
            store_close(st);
            child_exit(rc == JOBD_OK ? 0 : 1);
        }
    }
    for (int i = 0; i < 4; i++) {
        int status = 0;
        ASSERT_EQ(waitpid(pids[i], &status, 0), pids[i]);
        ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    f.st = fx_connect(&f);
    enq(&f, "t", NULL, 0, 0);
    fx_close(&f);
}

TEST(open_not_a_database)
{
    if (is_pg()) {
        /* The pg twin: a database that does not exist is a clean error. */
        struct fx f;
        fx_open(&f);
        char bad[1300];
        const char *slash = strrchr(f.url, '/');
        snprintf(bad, sizeof bad, "%.*s/jobd_no_such_database_x", (int)(slash - f.url), f.url);
        struct store *st = NULL;
        struct jobd_error e = {0};
        int rc = store_open(bad, &st, &e);
        if (rc == JOBD_OK)
            rc = store_migrate(st, &e);
        ASSERT_NE(rc, JOBD_OK);
        ASSERT(e.msg[0] != '\0');
        store_close(st);
        fx_close(&f);
        return;
    }
    const char *p = test_path("garbage.db");
    FILE *fp = fopen(p, "w");
    ASSERT(fp != NULL);
    for (int i = 0; i < 200; i++)
        fputs("this is not a sqlite database, just text\n", fp);
    fclose(fp);
    char url[1100];
    snprintf(url, sizeof url, "sqlite:%s", p);
    struct store *st = NULL;
    struct jobd_error e = {0};
    int rc = store_open(url, &st, &e);
    if (rc == JOBD_OK) {
        rc = store_migrate(st, &e);
        store_close(st);
    }
    ASSERT_EQ(rc, JOBD_E_STORE);
    ASSERT(e.msg[0] != '\0');
}

TEST(open_missing_directory)
{
    if (is_pg())
        return;
    struct store *st = NULL;
    struct jobd_error e = {0};
    int rc = store_open("sqlite:/nonexistent-dir-jobd/x/y.db", &st, &e);
    ASSERT_NE(rc, JOBD_OK);
    ASSERT(st == NULL);
    ASSERT(e.msg[0] != '\0');
}

/* ------------------------------------------------------------------ */
/* enqueue                                                             */

TEST(enqueue_defaults)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "email.send"};
    struct job j = {0};
    bool replayed = true;
    ASSERT_OK(store_enqueue(f.st, &s, &j, &replayed, &f.err), &f.err);
    ASSERT(!replayed);
    ASSERT(j.id > 0);
    ASSERT_STR_EQ(j.type, "email.send");
    ASSERT_STR_EQ(j.queue, "default");
    ASSERT_STR_EQ(j.payload, "{}");
    ASSERT_EQ(j.status, JOB_PENDING);
    ASSERT_EQ(j.priority, 0);
    ASSERT_EQ(j.attempt, 0);
    ASSERT_EQ(j.max_attempts, 25);
    ASSERT_EQ(j.run_at_us, T0);
    ASSERT_EQ(j.created_at_us, T0);
    ASSERT_EQ(j.started_at_us, 0);
    ASSERT_EQ(j.finished_at_us, 0);
    ASSERT_EQ(j.lease_expires_at_us, 0);
    ASSERT_EQ(j.timeout_ms, 0);
    ASSERT(!j.cancel_requested);
    ASSERT_NULL(j.idempotency_key);
    ASSERT_NULL(j.schedule);
    ASSERT_NULL(j.worker_id);
    ASSERT_NULL(j.last_error);
    ASSERT_NULL(j.result);
    ASSERT_EQ(j.scheduled_for_us, 0);

    /* get returns the same row */
    struct job g = getj(&f, j.id);
    ASSERT_EQ(g.id, j.id);
    ASSERT_STR_EQ(g.queue, "default");
    ASSERT_STR_EQ(g.payload, "{}");
    ASSERT_EQ(g.status, JOB_PENDING);
    ASSERT_EQ(g.max_attempts, 25);
    ASSERT_EQ(g.run_at_us, T0);
    job_fini(&g);
    job_fini(&j);
    fx_close(&f);
}

TEST(enqueue_all_fields)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "report:build", .payload = "{\"a\":[1,2,{\"b\":\"\\u00e9\"}]}",
                         .queue = "mail_2", .priority = -7, .run_at_us = T0 + 90 * SEC,
                         .max_attempts = 3, .idempotency_key = "key-1", .timeout_ms = 30000,
                         .schedule = "nightly", .scheduled_for_us = T0 + 60 * SEC};
    struct job j = {0};
    ASSERT_OK(store_enqueue(f.st, &s, &j, NULL, &f.err), &f.err);
    struct job g = getj(&f, j.id);
    ASSERT_STR_EQ(g.type, "report:build");
    ASSERT_STR_EQ(g.payload, "{\"a\":[1,2,{\"b\":\"\\u00e9\"}]}");
    ASSERT_STR_EQ(g.queue, "mail_2");
    ASSERT_EQ(g.priority, -7);
    ASSERT_EQ(g.run_at_us, T0 + 90 * SEC);
    ASSERT_EQ(g.max_attempts, 3);
    ASSERT_STR_EQ(g.idempotency_key, "key-1");
    ASSERT_EQ(g.timeout_ms, 30000);
    ASSERT_STR_EQ(g.schedule, "nightly");
    ASSERT_EQ(g.scheduled_for_us, T0 + 60 * SEC);
    ASSERT_EQ(g.created_at_us, T0);
    job_fini(&g);
    job_fini(&j);
    fx_close(&f);
}

TEST(ids_grow_and_get_missing)
{
    struct fx f;
    fx_open(&f);
    int64_t a = enq(&f, "t", NULL, 0, 0);
    int64_t b = enq(&f, "t", NULL, 0, 0);
    ASSERT(b > a);
    struct job j = {0};
    ASSERT_EQ(store_get(f.st, b + 1000, &j, &f.err), JOBD_E_NOTFOUND);
    ASSERT_EQ(store_get(f.st, -1, &j, &f.err), JOBD_E_NOTFOUND);
    fx_close(&f);
}

TEST(ids_never_reused_after_jobs_finish)
{
    struct fx f;
    fx_open(&f);
    int64_t a = enq(&f, "t", NULL, 0, 0);
    int64_t b = enq(&f, "t", NULL, 0, 0);
    /* both finish, so no pending/running row holds the highest id any more */
    struct job_list l = {0};
    claim(&f, 2, 0, &l);
    ASSERT_EQ(l.n, 2);
    ASSERT_OK(store_complete(f.st, l.v[0].id, 1, NULL, NULL, &f.err), &f.err);
    ASSERT_OK(store_fail(f.st, l.v[1].id, 1, "x", false, 0, NULL, &f.err), &f.err);
    job_list_fini(&l);
    int64_t c = enq(&f, "t", NULL, 0, 0);
    ASSERT(c > b && b > a);
    /* a retried job keeps its id and the next new one is still fresh */
    ASSERT_OK(store_retry(f.st, b, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, b), JOB_PENDING);
    int64_t d = enq(&f, "t", NULL, 0, 0);
    ASSERT(d > c);
    ASSERT_EQ(status_of(&f, a), JOB_SUCCEEDED);
    fx_close(&f);
}

TEST(enqueue_invalid_is_rejected)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "bad type"};
    ASSERT_EQ(store_enqueue(f.st, &s, NULL, NULL, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "type");
    struct job_list l = {0};
    int64_t next = 0;
    struct job_filter flt = {.status = STORE_ANY};
    ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
    ASSERT_EQ(l.n, 0);
    job_list_fini(&l);
    fx_close(&f);
}

/* ------------------------------------------------------------------ */
/* claim                                                               */

TEST(claim_sets_lease_and_attempt)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    manual_clock_advance(&f.mc, 2 * SEC);
    struct job_list l = {0};
    struct claim_req r = {.worker_id = "host-a:17", .limit = 10, .lease_ms = 45000};
    ASSERT_OK(store_claim(f.st, &r, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    struct job *c = &l.v[0];
    ASSERT_EQ(c->id, id);
    ASSERT_EQ(c->status, JOB_RUNNING);
    ASSERT_EQ(c->attempt, 1);
    ASSERT_STR_EQ(c->worker_id, "host-a:17");
    ASSERT_EQ(c->lease_expires_at_us, T0 + 2 * SEC + 45 * SEC);
    ASSERT_EQ(c->started_at_us, T0 + 2 * SEC);
    ASSERT_STR_EQ(c->type, "t");
    ASSERT_STR_EQ(c->payload, "{}");
    job_list_fini(&l);

    struct job g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_RUNNING);
    ASSERT_EQ(g.attempt, 1);
    ASSERT_STR_EQ(g.worker_id, "host-a:17");
    ASSERT_EQ(g.lease_expires_at_us, T0 + 47 * SEC);
    job_fini(&g);

    /* nothing left to claim */
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 0);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(claim_default_lease)
{
    struct fx f;
    fx_open(&f);
    enq(&f, "t", NULL, 0, 0);
    struct job_list l = {0};
    claim(&f, 1, 0, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].lease_expires_at_us, T0 + JOB_DEFAULT_LEASE_MS * MS);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(claim_order_priority_run_at_id)
{
    struct fx f;
    fx_open(&f);
    /* enqueued in a scrambled order */
    int64_t p0_late = enq(&f, "t", NULL, 0, T0 - 1 * SEC);
    int64_t p5_b = enq(&f, "t", NULL, 5, T0 - 5 * SEC);
    int64_t p0_early = enq(&f, "t", NULL, 0, T0 - 9 * SEC);
    int64_t p5_a = enq(&f, "t", NULL, 5, T0 - 5 * SEC);
    int64_t pneg = enq(&f, "t", NULL, -3, T0 - 60 * SEC);
    int64_t p9 = enq(&f, "t", NULL, 9, T0);
    int64_t want[] = {p9, p5_b, p5_a, p0_early, p0_late, pneg};
    struct job_list l = {0};
    claim(&f, 100, 0, &l);
    ASSERT_EQ(l.n, 6);
    for (size_t i = 0; i < 6; i++)
        ASSERT_EQ(l.v[i].id, want[i]);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(claim_order_across_queues)
{
    struct fx f;
    fx_open(&f);
    int64_t a = enq(&f, "t", "qa", 1, 0);
    int64_t b = enq(&f, "t", "qb", 2, 0);
    int64_t c = enq(&f, "t", "qa", 3, 0);
    struct job_list l = {0};
    claim(&f, 2, 0, &l);
    ASSERT_EQ(l.n, 2);
    ASSERT_EQ(l.v[0].id, c);
    ASSERT_EQ(l.v[1].id, b);
    job_list_fini(&l);
    claim(&f, 2, 0, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, a);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(claim_limit)
{
    struct fx f;
    fx_open(&f);
    for (int i = 0; i < 7; i++)
        enq(&f, "t", NULL, 0, 0);
    struct job_list l = {0};
    claim(&f, 3, 0, &l);
    ASSERT_EQ(l.n, 3);
    job_list_fini(&l);
    claim(&f, 3, 0, &l);
    ASSERT_EQ(l.n, 3);
    job_list_fini(&l);
    claim(&f, 3, 0, &l);
    ASSERT_EQ(l.n, 1);
    job_list_fini(&l);
    struct claim_req r = {.worker_id = "w", .limit = 0};
    ASSERT_EQ(store_claim(f.st, &r, &l, &f.err), JOBD_E_INVALID);
    r.limit = 1001;
    ASSERT_EQ(store_claim(f.st, &r, &l, &f.err), JOBD_E_INVALID);
    fx_close(&f);
}

TEST(future_jobs_not_claimed)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, T0 + 10 * SEC);
    struct job_list l = {0};
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 0);
    manual_clock_advance(&f.mc, 10 * SEC - 1);
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 0);
    manual_clock_advance(&f.mc, 1); /* run_at <= now */
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, id);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(paused_queue_not_claimed)
{
    struct fx f;
    fx_open(&f);
    int64_t a = enq(&f, "t", "slow", 5, 0);
    int64_t b = enq(&f, "t", "fast", 0, 0);
    ASSERT_OK(store_queue_pause(f.st, "slow", true, &f.err), &f.err);
    struct job_list l = {0};
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, b);
    job_list_fini(&l);
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 0);
    job_list_fini(&l);
    /* pausing twice is fine; resuming makes it claimable */
    ASSERT_OK(store_queue_pause(f.st, "slow", true, &f.err), &f.err);
    ASSERT_OK(store_queue_pause(f.st, "slow", false, &f.err), &f.err);
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, a);
    job_list_fini(&l);
    ASSERT_EQ(store_queue_pause(f.st, "Bad Name", true, &f.err), JOBD_E_INVALID);
    fx_close(&f);
}

TEST(pause_before_jobs_exist)
{
    struct fx f;
    fx_open(&f);
    ASSERT_OK(store_queue_pause(f.st, "later", true, &f.err), &f.err);
    enq(&f, "t", "later", 0, 0);
    struct job_list l = {0};
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 0);
    job_list_fini(&l);
    ASSERT_OK(store_queue_pause(f.st, "later", false, &f.err), &f.err);
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 1);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(claim_filters_types_and_queues)
{
    struct fx f;
    fx_open(&f);
    int64_t ax = enq(&f, "x", "a", 0, 0);
    int64_t ay = enq(&f, "y", "a", 0, 0);
    int64_t bx = enq(&f, "x", "b", 0, 0);
    int64_t cz = enq(&f, "z", "c", 0, 0);
    const char *types_x[] = {"x"};
    const char *queues_b[] = {"b", "nope"};
    struct job_list l = {0};

    struct claim_req r = {.worker_id = "w", .limit = 10, .queues = queues_b, .n_queues = 2,
                          .types = types_x, .n_types = 1};
    ASSERT_OK(store_claim(f.st, &r, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, bx);
    job_list_fini(&l);

    r = (struct claim_req){.worker_id = "w", .limit = 10, .types = types_x, .n_types = 1};
    ASSERT_OK(store_claim(f.st, &r, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, ax);
    job_list_fini(&l);

    const char *types_yz[] = {"z", "y"};
    const char *queues_ac[] = {"a"};
    r = (struct claim_req){.worker_id = "w", .limit = 10, .queues = queues_ac, .n_queues = 1,
                           .types = types_yz, .n_types = 2};
    ASSERT_OK(store_claim(f.st, &r, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, ay);
    job_list_fini(&l);

    r = (struct claim_req){.worker_id = "w", .limit = 10};
    ASSERT_OK(store_claim(f.st, &r, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, cz);
    job_list_fini(&l);
    fx_close(&f);
}

/* ------------------------------------------------------------------ */
/* heartbeat, complete, fail, fencing                                  */

TEST(heartbeat_extends_lease)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id); /* lease until T0+60s */
    manual_clock_advance(&f.mc, 50 * SEC);
    int64_t until = 0;
    bool cancel = true;
    ASSERT_OK(store_heartbeat(f.st, id, a, 60000, &until, &cancel, &f.err), &f.err);
    ASSERT_EQ(until, T0 + 110 * SEC);
    ASSERT(!cancel);
    struct job g = getj(&f, id);
    ASSERT_EQ(g.lease_expires_at_us, T0 + 110 * SEC);
    ASSERT_EQ(g.status, JOB_RUNNING);
    job_fini(&g);
    /* past the first lease but within the extended one: not reaped */
    manual_clock_advance(&f.mc, 30 * SEC);
    int reaped = -1;
    ASSERT_OK(store_reap(f.st, 100, NULL, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 0);
    ASSERT_EQ(status_of(&f, id), JOB_RUNNING);
    /* lease_ms 0 = the default lease */
    ASSERT_OK(store_heartbeat(f.st, id, a, 0, &until, &cancel, &f.err), &f.err);
    ASSERT_EQ(until, T0 + 80 * SEC + JOB_DEFAULT_LEASE_MS * MS);
    fx_close(&f);
}

TEST(heartbeat_stale_cases)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int64_t until = 0;
    bool cancel = false;
    /* pending job, unknown job, wrong attempt */
    ASSERT_EQ(store_heartbeat(f.st, id, 0, 1000, &until, &cancel, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_heartbeat(f.st, id + 99, 1, 1000, &until, &cancel, &f.err), JOBD_E_STALE);
    int32_t a = claim_one(&f, id);
    ASSERT_EQ(store_heartbeat(f.st, id, a + 1, 1000, &until, &cancel, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_heartbeat(f.st, id, a - 1, 1000, &until, &cancel, &f.err), JOBD_E_STALE);
    struct job g = getj(&f, id);
    ASSERT_EQ(g.lease_expires_at_us, T0 + 60 * SEC);
    job_fini(&g);
    fx_close(&f);
}

TEST(complete_succeeds_with_result)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    manual_clock_advance(&f.mc, 3 * SEC);
    struct job j = {0};
    ASSERT_OK(store_complete(f.st, id, a, "{\"ok\":true}", &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_SUCCEEDED);
    ASSERT_STR_EQ(j.result, "{\"ok\":true}");
    ASSERT_EQ(j.finished_at_us, T0 + 3 * SEC);
    ASSERT_EQ(j.started_at_us, T0);
    ASSERT_EQ(j.attempt, 1);
    ASSERT_EQ(j.lease_expires_at_us, 0);
    job_fini(&j);
    /* the finished job is still readable by id */
    struct job g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_SUCCEEDED);
    ASSERT_STR_EQ(g.result, "{\"ok\":true}");
    ASSERT_EQ(g.finished_at_us, T0 + 3 * SEC);
    ASSERT_STR_EQ(g.type, "t");
    ASSERT_STR_EQ(g.worker_id, "w1");
    job_fini(&g);
    /* a second completion of the same attempt is stale */
    ASSERT_EQ(store_complete(f.st, id, a, NULL, NULL, &f.err), JOBD_E_STALE);
    int64_t until;
    bool cancel;
    ASSERT_EQ(store_heartbeat(f.st, id, a, 1000, &until, &cancel, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_fail(f.st, id, a, "x", true, 0, NULL, &f.err), JOBD_E_STALE);
    fx_close(&f);
}

TEST(complete_without_result)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    ASSERT_OK(store_complete(f.st, id, a, NULL, NULL, &f.err), &f.err);
    struct job g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_SUCCEEDED);
    ASSERT_NULL(g.result);
    job_fini(&g);
    /* unknown job */
    ASSERT_EQ(store_complete(f.st, id + 50, 1, NULL, NULL, &f.err), JOBD_E_STALE);
    fx_close(&f);
}

TEST(fail_retryable_goes_pending)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    manual_clock_advance(&f.mc, 4 * SEC);
    struct job j = {0};
    ASSERT_OK(store_fail(f.st, id, a, "boom", true, 7000, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_PENDING);
    ASSERT_EQ(j.run_at_us, T0 + 4 * SEC + 7 * SEC);
    ASSERT_STR_EQ(j.last_error, "boom");
    ASSERT_EQ(j.attempt, 1);
    ASSERT_EQ(j.lease_expires_at_us, 0);
    ASSERT_EQ(j.finished_at_us, 0);
    ASSERT_NULL(j.worker_id);
    job_fini(&j);
    struct job g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_PENDING);
    ASSERT_EQ(g.run_at_us, T0 + 11 * SEC);
    ASSERT_STR_EQ(g.last_error, "boom");
    job_fini(&g);
    /* not due before run_at; the next claim is attempt 2 */
    struct job_list l = {0};
    claim(&f, 1, 0, &l);
    ASSERT_EQ(l.n, 0);
    manual_clock_advance(&f.mc, 7 * SEC);
    ASSERT_EQ(claim_one(&f, id), 2);
    /* the old attempt's reports are fenced */
    ASSERT_EQ(store_complete(f.st, id, a, NULL, NULL, &f.err), JOBD_E_STALE);
    fx_close(&f);
}

TEST(fail_permanent_goes_dead)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    manual_clock_advance(&f.mc, 1 * SEC);
    struct job j = {0};
    ASSERT_OK(store_fail(f.st, id, a, "bad payload", false, 5000, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_DEAD);
    ASSERT_STR_EQ(j.last_error, "bad payload");
    ASSERT_EQ(j.finished_at_us, T0 + 1 * SEC);
    job_fini(&j);
    ASSERT_EQ(status_of(&f, id), JOB_DEAD);
    struct job_list l = {0};
    manual_clock_advance(&f.mc, 3600 * SEC);
    claim(&f, 1, 0, &l);
    ASSERT_EQ(l.n, 0);
    fx_close(&f);
}

TEST(fail_out_of_attempts_goes_dead)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .max_attempts = 2};
    int64_t id = enq_spec(&f, &s);
    int32_t a = claim_one(&f, id);
    ASSERT_OK(store_fail(f.st, id, a, "e1", true, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_PENDING);
    a = claim_one(&f, id);
    ASSERT_EQ(a, 2);
    struct job j = {0};
    ASSERT_OK(store_fail(f.st, id, a, "e2", true, 0, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_DEAD);
    ASSERT_STR_EQ(j.last_error, "e2");
    ASSERT_EQ(j.attempt, 2);
    job_fini(&j);
    fx_close(&f);
}

TEST(fail_truncates_error_to_tail)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    size_t n = JOB_ERROR_MAX + 1000;
    char *e = malloc(n + 1);
    ASSERT(e != NULL);
    for (size_t i = 0; i < n; i++)
        e[i] = (char)('a' + (i % 26));
    e[n] = '\0';
    ASSERT_OK(store_fail(f.st, id, a, e, true, 0, NULL, &f.err), &f.err);
    struct job g = getj(&f, id);
    ASSERT(g.last_error != NULL);
    ASSERT_EQ(strlen(g.last_error), JOB_ERROR_MAX);
    ASSERT_STR_EQ(g.last_error, e + 1000);
    job_fini(&g);
    free(e);
    /* a NULL error is allowed */
    a = claim_one(&f, id);
    ASSERT_OK(store_fail(f.st, id, a, NULL, false, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_DEAD);
    fx_close(&f);
}

/* ------------------------------------------------------------------ */
/* the reaper                                                          */

TEST(reaper_requeues_expired_lease)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id); /* lease until T0+60s */
    struct backoff_policy bp = {.base_ms = 1000, .cap_ms = 1500};
    int reaped = -1;
    manual_clock_advance(&f.mc, 60 * SEC); /* lease_expires_at == now: still live */
    ASSERT_OK(store_reap(f.st, 100, &bp, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 0);
    manual_clock_advance(&f.mc, 1);
    ASSERT_OK(store_reap(f.st, 100, &bp, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 1);
    struct job g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_PENDING);
    ASSERT_EQ(g.attempt, 1);
    ASSERT_STR_EQ(g.last_error, "lease expired");
    ASSERT_EQ(g.lease_expires_at_us, 0);
    /* full jitter within [now, now + min(cap, base * 2^attempt)] */
    ASSERT(g.run_at_us >= now_of(&f));
    ASSERT(g.run_at_us <= now_of(&f) + 1500 * MS);
    job_fini(&g);
    /* the dead worker's late reports are fenced and change nothing */
    int64_t until;
    bool cancel;
    ASSERT_EQ(store_heartbeat(f.st, id, a, 60000, &until, &cancel, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_complete(f.st, id, a, "{}", NULL, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_fail(f.st, id, a, "late", false, 0, NULL, &f.err), JOBD_E_STALE);
    g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_PENDING);
    ASSERT_EQ(g.attempt, 1);
    ASSERT_STR_EQ(g.last_error, "lease expired");
    ASSERT_NULL(g.result);
    job_fini(&g);
    /* again reaping finds nothing */
    ASSERT_OK(store_reap(f.st, 100, &bp, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 0);
    fx_close(&f);
}

/*
 * The reaper's backoff counts attempts since the last manual retry (as the
 * attempts left do), on both backends: a job retried by hand after many
 * attempts starts again from the base delay. With the raw attempt (12
 * here) the ceiling would be base * 2^12 = 4096 s (capped at 1 h), and
 * three jobs landing within 2 s would be a one-in-10^9 chance.
 */
TEST(reaper_backoff_restarts_after_manual_retry)
{
    struct fx f;
    fx_open(&f);
    struct backoff_policy bp = {.base_ms = 1000, .cap_ms = 3600 * 1000};
    int64_t ids[3];
    for (int k = 0; k < 3; k++) { /* one at a time, so claim_one finds it */
        struct job_spec s = {.type = "t", .max_attempts = 2};
        ids[k] = enq_spec(&f, &s);
        for (int round = 0; round < 11; round++) {
            int32_t a = claim_one(&f, ids[k]);
            ASSERT_OK(store_fail(f.st, ids[k], a, "x", false, 0, NULL, &f.err), &f.err);
            ASSERT_OK(store_retry(f.st, ids[k], NULL, &f.err), &f.err);
        }
        ASSERT_EQ(claim_one(&f, ids[k]), 12);
    }
    manual_clock_advance(&f.mc, 61 * SEC);
    int reaped = 0;
    ASSERT_OK(store_reap(f.st, 100, &bp, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 3);
    for (int k = 0; k < 3; k++) {
        struct job g = getj(&f, ids[k]);
        ASSERT_EQ(g.status, JOB_PENDING); /* 1 of 2 attempts counted */
        ASSERT_NULL(g.worker_id);
        ASSERT(g.run_at_us >= now_of(&f));
        ASSERT(g.run_at_us <= now_of(&f) + 2 * SEC); /* base * 2^1 */
        job_fini(&g);
    }
    fx_close(&f);
}

/* A claim says the job's attempt_floor, so a worker's backoff restarts after a retry too. */
TEST(claim_tells_the_attempt_floor)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .max_attempts = 1};
    int64_t id = enq_spec(&f, &s);
    struct job_list l = {0};
    claim(&f, 1, 60000, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].attempt_floor, 0);
    ASSERT_OK(store_fail(f.st, id, l.v[0].attempt, "x", false, 0, NULL, &f.err), &f.err);
    job_list_fini(&l);
    ASSERT_OK(store_retry(f.st, id, NULL, &f.err), &f.err);
    claim(&f, 1, 60000, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].attempt, 2);
    ASSERT_EQ(l.v[0].attempt_floor, 1);
    ASSERT_EQ(job_attempts_counted(l.v[0].attempt, l.v[0].attempt_floor), 1);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(stale_after_reclaim)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a1 = claim_one(&f, id);
    manual_clock_advance(&f.mc, 61 * SEC);
    struct backoff_policy bp = {.base_ms = 1, .cap_ms = 1};
    int reaped = 0;
    ASSERT_OK(store_reap(f.st, 100, &bp, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 1);
    manual_clock_advance(&f.mc, 1 * SEC);
    int32_t a2 = claim_one(&f, id);
    ASSERT_EQ(a2, a1 + 1);
    struct job before = getj(&f, id);
    int64_t until;
    bool cancel;
    ASSERT_EQ(store_heartbeat(f.st, id, a1, 600000, &until, &cancel, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_complete(f.st, id, a1, "{\"x\":1}", NULL, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_fail(f.st, id, a1, "old", false, 0, NULL, &f.err), JOBD_E_STALE);
    struct job after = getj(&f, id);
    ASSERT_EQ(after.status, JOB_RUNNING);
    ASSERT_EQ(after.attempt, a2);
    ASSERT_EQ(after.lease_expires_at_us, before.lease_expires_at_us);
    ASSERT_STR_EQ(after.last_error, before.last_error);
    ASSERT_NULL(after.result);
    job_fini(&before);
    job_fini(&after);
    /* the live attempt still completes */
    ASSERT_OK(store_complete(f.st, id, a2, NULL, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_SUCCEEDED);
    fx_close(&f);
}

TEST(reaper_dead_letters_after_max_attempts)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .max_attempts = 3};
    int64_t id = enq_spec(&f, &s);
    struct backoff_policy bp = {.base_ms = 1000, .cap_ms = 2000};
    for (int i = 1; i <= 3; i++) {
        ASSERT_EQ(claim_one(&f, id), i);
        manual_clock_advance(&f.mc, 61 * SEC);
        int reaped = 0;
        ASSERT_OK(store_reap(f.st, 100, &bp, &reaped, &f.err), &f.err);
        ASSERT_EQ(reaped, 1);
        struct job g = getj(&f, id);
        ASSERT_EQ(g.attempt, i);
        ASSERT_EQ(g.status, i < 3 ? JOB_PENDING : JOB_DEAD);
        ASSERT_STR_EQ(g.last_error, "lease expired");
        if (i == 3)
            ASSERT_EQ(g.finished_at_us, now_of(&f));
        job_fini(&g);
        manual_clock_advance(&f.mc, 2 * SEC); /* past any backoff */
    }
    struct job_list l = {0};
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 0);
    fx_close(&f);
}

TEST(reaper_leaves_live_leases_and_respects_limit)
{
    struct fx f;
    fx_open(&f);
    int64_t ids[5];
    for (int i = 0; i < 5; i++)
        ids[i] = enq(&f, "t", NULL, 0, 0);
    struct job_list l = {0};
    claim(&f, 3, 10000, &l); /* three with 10 s leases */
    ASSERT_EQ(l.n, 3);
    job_list_fini(&l);
    claim(&f, 2, 60000, &l); /* two with 60 s leases */
    ASSERT_EQ(l.n, 2);
    job_list_fini(&l);
    manual_clock_advance(&f.mc, 11 * SEC);
    int reaped = 0;
    ASSERT_OK(store_reap(f.st, 2, NULL, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 2);
    ASSERT_OK(store_reap(f.st, 100, NULL, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 1);
    ASSERT_OK(store_reap(f.st, 100, NULL, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 0);
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(status_of(&f, ids[i]), JOB_PENDING);
    for (int i = 3; i < 5; i++)
        ASSERT_EQ(status_of(&f, ids[i]), JOB_RUNNING);
    fx_close(&f);
}

/* ------------------------------------------------------------------ */
/* cancel and retry                                                    */

TEST(cancel_pending)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, T0 + 100 * SEC);
    manual_clock_advance(&f.mc, 1 * SEC);
    struct job j = {0};
    ASSERT_OK(store_cancel(f.st, id, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_CANCELLED);
    ASSERT_EQ(j.finished_at_us, T0 + 1 * SEC);
    job_fini(&j);
    ASSERT_EQ(status_of(&f, id), JOB_CANCELLED);
    manual_clock_advance(&f.mc, 200 * SEC);
    struct job_list l = {0};
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 0);
    /* terminal: cancelling again is not allowed */
    ASSERT_EQ(store_cancel(f.st, id, &j, &f.err), JOBD_E_STATE);
    ASSERT_EQ(store_cancel(f.st, id + 1000, &j, &f.err), JOBD_E_NOTFOUND);
    fx_close(&f);
}

TEST(cancel_running_requests_then_fail_cancels)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    struct job j = {0};
    ASSERT_OK(store_cancel(f.st, id, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_RUNNING);
    ASSERT(j.cancel_requested);
    ASSERT_EQ(j.attempt, a);
    job_fini(&j);
    struct job g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_RUNNING);
    ASSERT(g.cancel_requested);
    job_fini(&g);
    /* requesting twice is harmless */
    ASSERT_OK(store_cancel(f.st, id, NULL, &f.err), &f.err);
    int64_t until = 0;
    bool cancel = false;
    manual_clock_advance(&f.mc, 5 * SEC);
    ASSERT_OK(store_heartbeat(f.st, id, a, 60000, &until, &cancel, &f.err), &f.err);
    ASSERT(cancel);
    ASSERT_EQ(until, T0 + 65 * SEC);
    /* the worker stops the handler and reports a (retryable) failure */
    ASSERT_OK(store_fail(f.st, id, a, "cancelled by user", true, 1000, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_CANCELLED);
    ASSERT_EQ(j.finished_at_us, T0 + 5 * SEC);
    job_fini(&j);
    ASSERT_EQ(status_of(&f, id), JOB_CANCELLED);
    ASSERT_EQ(store_cancel(f.st, id, NULL, &f.err), JOBD_E_STATE);
    fx_close(&f);
}

TEST(cancel_requested_job_reaped_is_cancelled)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    claim_one(&f, id);
    ASSERT_OK(store_cancel(f.st, id, NULL, &f.err), &f.err);
    manual_clock_advance(&f.mc, 61 * SEC);
    int reaped = 0;
    ASSERT_OK(store_reap(f.st, 10, NULL, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 1);
    ASSERT_EQ(status_of(&f, id), JOB_CANCELLED);
    fx_close(&f);
}

TEST(release_gives_the_attempt_back)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .max_attempts = 2, .run_at_us = T0 + 30 * SEC};
    int64_t id = enq_spec(&f, &s);
    manual_clock_advance(&f.mc, 40 * SEC);
    int32_t a = claim_one(&f, id);
    ASSERT_EQ(a, 1);
    manual_clock_advance(&f.mc, 2 * SEC);
    ASSERT_OK(store_release(f.st, id, a, &f.err), &f.err);
    struct job g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_PENDING);
    ASSERT_EQ(g.attempt, 1); /* the fencing token never goes back */
    ASSERT_EQ(g.run_at_us, T0 + 42 * SEC); /* due now */
    ASSERT_NULL(g.worker_id);
    ASSERT_EQ(g.lease_expires_at_us, 0);
    ASSERT_EQ(g.finished_at_us, 0);
    job_fini(&g);
    /* the old attempt is fenced off; the next claim is attempt 2 */
    ASSERT_EQ(store_complete(f.st, id, a, NULL, NULL, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_release(f.st, id, a, &f.err), JOBD_E_STALE);
    a = claim_one(&f, id);
    ASSERT_EQ(a, 2);
    /* the released attempt did not count: max_attempts 2 still leaves a retry */
    ASSERT_OK(store_fail(f.st, id, a, "x", true, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_PENDING);
    a = claim_one(&f, id);
    ASSERT_EQ(a, 3);
    ASSERT_OK(store_fail(f.st, id, a, "x", true, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_DEAD);
    fx_close(&f);
}

TEST(release_is_fenced)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    ASSERT_EQ(store_release(f.st, id, 0, &f.err), JOBD_E_STALE); /* pending */
    ASSERT_STR_EQ(f.err.field, "attempt");
    int32_t a = claim_one(&f, id);
    ASSERT_EQ(store_release(f.st, id, a + 1, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_release(f.st, id + 1000, 1, &f.err), JOBD_E_STALE);
    ASSERT_EQ(status_of(&f, id), JOB_RUNNING);
    ASSERT_OK(store_complete(f.st, id, a, NULL, NULL, &f.err), &f.err);
    ASSERT_EQ(store_release(f.st, id, a, &f.err), JOBD_E_STALE); /* finished */
    ASSERT_EQ(status_of(&f, id), JOB_SUCCEEDED);
    fx_close(&f);
}

TEST(release_of_cancel_requested_job_cancels)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    ASSERT_OK(store_cancel(f.st, id, NULL, &f.err), &f.err);
    ASSERT_OK(store_release(f.st, id, a, &f.err), &f.err);
    struct job g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_CANCELLED);
    ASSERT_EQ(g.finished_at_us, T0);
    job_fini(&g);
    fx_close(&f);
}

TEST(cancel_terminal_is_state_error)
{
    struct fx f;
    fx_open(&f);
    int64_t ok = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, ok);
    ASSERT_OK(store_complete(f.st, ok, a, NULL, NULL, &f.err), &f.err);
    int64_t dead = enq(&f, "t", NULL, 0, 0);
    a = claim_one(&f, dead);
    ASSERT_OK(store_fail(f.st, dead, a, "x", false, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(store_cancel(f.st, ok, NULL, &f.err), JOBD_E_STATE);
    ASSERT_EQ(store_cancel(f.st, dead, NULL, &f.err), JOBD_E_STATE);
    ASSERT_EQ(status_of(&f, ok), JOB_SUCCEEDED);
    ASSERT_EQ(status_of(&f, dead), JOB_DEAD);
    fx_close(&f);
}

TEST(retry_dead_gives_fresh_attempts)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .max_attempts = 2};
    int64_t id = enq_spec(&f, &s);
    int32_t a = claim_one(&f, id);
    ASSERT_OK(store_fail(f.st, id, a, "e", true, 0, NULL, &f.err), &f.err);
    a = claim_one(&f, id);
    ASSERT_OK(store_fail(f.st, id, a, "e", true, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_DEAD);

    manual_clock_advance(&f.mc, 100 * SEC);
    struct job j = {0};
    ASSERT_OK(store_retry(f.st, id, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_PENDING);
    ASSERT_EQ(j.run_at_us, T0 + 100 * SEC);
    ASSERT_EQ(j.attempt, 2); /* never decreases */
    ASSERT_EQ(j.max_attempts, 2);
    ASSERT_EQ(j.finished_at_us, 0);
    ASSERT_NULL(j.worker_id); /* no worker holds it */
    ASSERT_EQ(j.started_at_us, 0);
    job_fini(&j);
    /* two fresh attempts: 3 fails retryably -> pending, 4 -> dead */
    a = claim_one(&f, id);
    ASSERT_EQ(a, 3);
    ASSERT_OK(store_fail(f.st, id, a, "e", true, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_PENDING);
    a = claim_one(&f, id);
    ASSERT_EQ(a, 4);
    ASSERT_OK(store_fail(f.st, id, a, "e", true, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_DEAD);
    /* and again, through the reaper this time */
    ASSERT_OK(store_retry(f.st, id, NULL, &f.err), &f.err);
    struct backoff_policy bp = {.base_ms = 1, .cap_ms = 1};
    for (int i = 5; i <= 6; i++) {
        ASSERT_EQ(claim_one(&f, id), i);
        manual_clock_advance(&f.mc, 61 * SEC);
        int reaped = 0;
        ASSERT_OK(store_reap(f.st, 10, &bp, &reaped, &f.err), &f.err);
        ASSERT_EQ(reaped, 1);
        manual_clock_advance(&f.mc, 1 * SEC);
    }
    ASSERT_EQ(status_of(&f, id), JOB_DEAD);
    fx_close(&f);
}

TEST(retry_cancelled_and_state_errors)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, T0 + 3600 * SEC);
    ASSERT_EQ(store_retry(f.st, id, NULL, &f.err), JOBD_E_STATE); /* pending */
    ASSERT_OK(store_cancel(f.st, id, NULL, &f.err), &f.err);
    manual_clock_advance(&f.mc, 5 * SEC);
    struct job j = {0};
    ASSERT_OK(store_retry(f.st, id, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_PENDING);
    ASSERT_EQ(j.run_at_us, T0 + 5 * SEC); /* due now, not at its old run_at */
    ASSERT_EQ(j.attempt, 0);
    job_fini(&j);
    int32_t a = claim_one(&f, id);
    ASSERT_EQ(a, 1);
    ASSERT_EQ(store_retry(f.st, id, NULL, &f.err), JOBD_E_STATE); /* running */
    ASSERT_OK(store_complete(f.st, id, a, NULL, NULL, &f.err), &f.err);
    ASSERT_EQ(store_retry(f.st, id, NULL, &f.err), JOBD_E_STATE); /* succeeded */
    ASSERT_EQ(store_retry(f.st, id + 1000, NULL, &f.err), JOBD_E_NOTFOUND);
    fx_close(&f);
}

/* ------------------------------------------------------------------ */
/* list                                                                */

TEST(list_newest_first_across_tables_with_cursor)
{
    struct fx f;
    fx_open(&f);
    int64_t ids[25];
    for (int i = 0; i < 25; i++)
        ids[i] = enq(&f, "t", NULL, 0, 0);
    /* finish a few so the list spans the hot and the finished jobs */
    struct job_list l = {0};
    claim(&f, 5, 0, &l);
    for (size_t i = 0; i < l.n; i++)
        ASSERT_OK(store_complete(f.st, l.v[i].id, l.v[i].attempt, NULL, NULL, &f.err), &f.err);
    job_list_fini(&l);

    struct job_filter flt = {.status = STORE_ANY, .limit = 10};
    int64_t next = 0;
    int seen = 0;
    for (int page = 0; page < 5; page++) {
        ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
        for (size_t i = 0; i < l.n; i++) {
            ASSERT_EQ(l.v[i].id, ids[24 - seen]);
            seen++;
        }
        job_list_fini(&l);
        if (next == 0)
            break;
        flt.before_id = next;
    }
    ASSERT_EQ(seen, 25);
    ASSERT_EQ(next, 0);
    /* default limit 100 */
    flt = (struct job_filter){.status = STORE_ANY};
    ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
    ASSERT_EQ(l.n, 25);
    ASSERT_EQ(next, 0);
    job_list_fini(&l);
    flt.limit = 1001;
    ASSERT_EQ(store_list(f.st, &flt, &l, &next, &f.err), JOBD_E_INVALID);
    fx_close(&f);
}

TEST(list_filters)
{
    struct fx f;
    fx_open(&f);
    int64_t a = enq(&f, "x", "qa", 0, 0);
    int64_t b = enq(&f, "y", "qa", 0, 0);
    int64_t c = enq(&f, "x", "qb", 0, 0);
    struct job_spec s = {.type = "x", .queue = "qb", .schedule = "nightly",
                         .scheduled_for_us = T0};
    int64_t d = enq_spec(&f, &s);
    /* a succeeds, d is running */
    int32_t at = claim_one(&f, a);
    ASSERT_OK(store_complete(f.st, a, at, NULL, NULL, &f.err), &f.err);
    const char *types_x[] = {"x"};
    const char *queues_qb[] = {"qb"};
    struct claim_req r = {.worker_id = "w", .limit = 1, .types = types_x, .n_types = 1,
                          .queues = queues_qb, .n_queues = 1};
    struct job_list l = {0};
    ASSERT_OK(store_claim(f.st, &r, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, c);
    job_list_fini(&l);
    (void)b;
    (void)d;

    struct {
        struct job_filter flt;
        int n;
        int64_t want[4];
    } cases[] = {
        {{.status = STORE_ANY, .queue = "qa"}, 2, {b, a}},
        {{.status = STORE_ANY, .type = "x"}, 3, {d, c, a}},
        {{.status = JOB_SUCCEEDED}, 1, {a}},
        {{.status = JOB_PENDING}, 2, {d, b}},
        {{.status = JOB_RUNNING, .queue = "qb"}, 1, {c}},
        {{.status = STORE_ANY, .schedule = "nightly"}, 1, {d}},
        {{.status = JOB_PENDING, .queue = "qb", .type = "x"}, 1, {d}},
        {{.status = JOB_DEAD}, 0, {0}},
        {{.status = STORE_ANY, .queue = "nope"}, 0, {0}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int64_t next = -1;
        ASSERT_OK(store_list(f.st, &cases[k].flt, &l, &next, &f.err), &f.err);
        if ((int)l.n != cases[k].n)
            TEST_FAIL("case %zu: %zu jobs, want %d", k, l.n, cases[k].n);
        for (int i = 0; i < cases[k].n; i++)
            if (l.v[i].id != cases[k].want[i])
                TEST_FAIL("case %zu: job %d is %lld, want %lld", k, i,
                          (long long)l.v[i].id, (long long)cases[k].want[i]);
        ASSERT_EQ(next, 0);
        job_list_fini(&l);
    }
    fx_close(&f);
}

/* ------------------------------------------------------------------ */
/* idempotency                                                         */

TEST(idempotency_replay_and_conflict)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "email.send", .payload = "{\"to\":\"a@b.c\"}",
                         .idempotency_key = "order-17"};
    struct job j1 = {0}, j2 = {0};
    bool rep = true;
    ASSERT_OK(store_enqueue(f.st, &s, &j1, &rep, &f.err), &f.err);
    ASSERT(!rep);
    ASSERT_OK(store_enqueue(f.st, &s, &j2, &rep, &f.err), &f.err);
    ASSERT(rep);
    ASSERT_EQ(j2.id, j1.id);
    ASSERT_STR_EQ(j2.idempotency_key, "order-17");
    ASSERT_STR_EQ(j2.payload, "{\"to\":\"a@b.c\"}");
    job_fini(&j2);
    /* replay with out == NULL */
    ASSERT_OK(store_enqueue(f.st, &s, NULL, &rep, &f.err), &f.err);
    ASSERT(rep);
    /* same key, different payload / type / queue */
    struct job_spec d = s;
    d.payload = "{\"to\":\"x@y.z\"}";
    ASSERT_EQ(store_enqueue(f.st, &d, &j2, &rep, &f.err), JOBD_E_CONFLICT);
    ASSERT_STR_EQ(f.err.field, "idempotency_key");
    d = s;
    d.type = "email.other";
    ASSERT_EQ(store_enqueue(f.st, &d, &j2, &rep, &f.err), JOBD_E_CONFLICT);
    d = s;
    d.queue = "mail";
    ASSERT_EQ(store_enqueue(f.st, &d, &j2, &rep, &f.err), JOBD_E_CONFLICT);
    /* default queue spelled out is the same request */
    d = s;
    d.queue = "default";
    ASSERT_OK(store_enqueue(f.st, &d, &j2, &rep, &f.err), &f.err);
    ASSERT(rep);
    ASSERT_EQ(j2.id, j1.id);
    job_fini(&j2);
    /* only one job exists */
    struct job_list l = {0};
    int64_t next;
    struct job_filter flt = {.status = STORE_ANY};
    ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    job_list_fini(&l);
    job_fini(&j1);
    fx_close(&f);
}

TEST(idempotency_key_survives_finish)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .payload = "[1]", .idempotency_key = "k"};
    int64_t id = enq_spec(&f, &s);
    int32_t a = claim_one(&f, id);
    ASSERT_OK(store_complete(f.st, id, a, "{\"r\":1}", NULL, &f.err), &f.err);
    struct job j = {0};
    bool rep = false;
    ASSERT_OK(store_enqueue(f.st, &s, &j, &rep, &f.err), &f.err);
    ASSERT(rep);
    ASSERT_EQ(j.id, id);
    ASSERT_EQ(j.status, JOB_SUCCEEDED);
    ASSERT_STR_EQ(j.result, "{\"r\":1}");
    job_fini(&j);
    s.payload = "[2]";
    ASSERT_EQ(store_enqueue(f.st, &s, &j, &rep, &f.err), JOBD_E_CONFLICT);
    /* a dead job retried keeps its key */
    int64_t id2 = enq(&f, "t", NULL, 0, 0);
    (void)id2;
    fx_close(&f);
}

/* ------------------------------------------------------------------ */
/* batch                                                               */

static int
count_jobs(struct fx *f)
{
    struct job_list l = {0};
    int64_t next;
    struct job_filter flt = {.status = STORE_ANY, .limit = 1000};
    ASSERT_OK(store_list(f->st, &flt, &l, &next, &f->err), &f->err);
    int n = (int)l.n;
    job_list_fini(&l);
    return n;
}

/* Without keys the PostgreSQL batch takes one round trip (ids from the
 * statement): every result must still belong to its own item, in order. */
TEST(batch_enqueue_unkeyed_maps_items)
{
    struct fx f;
    fx_open(&f);
    enum { N = 60 };
    struct job_spec specs[N];
    char types[N][16], payloads[N][32];
    for (int i = 0; i < N; i++) {
        snprintf(types[i], sizeof types[i], "t%d", i);
        snprintf(payloads[i], sizeof payloads[i], "{\"i\":%d}", i);
        specs[i] = (struct job_spec){.type = types[i], .payload = payloads[i],
                                     .priority = (N - i) % 7, .queue = i % 2 ? "odd" : NULL};
    }
    struct job out[N];
    memset(out, 0, sizeof out);
    bool rep[N];
    ASSERT_OK(store_enqueue_batch(f.st, specs, N, out, rep, &f.err), &f.err);
    for (int i = 0; i < N; i++) {
        ASSERT_STR_EQ(out[i].type, types[i]);
        ASSERT_STR_EQ(out[i].payload, payloads[i]);
        ASSERT_STR_EQ(out[i].queue, i % 2 ? "odd" : "default");
        ASSERT_EQ(out[i].priority, (N - i) % 7);
        ASSERT(!rep[i]);
        if (i > 0)
            ASSERT(out[i].id > out[i - 1].id);
        struct job g = {0};
        ASSERT_OK(store_get(f.st, out[i].id, &g, &f.err), &f.err);
        ASSERT_STR_EQ(g.type, types[i]);
        job_fini(&g);
        job_fini(&out[i]);
    }
    fx_close(&f);
}

TEST(batch_enqueue)
{
    struct fx f;
    fx_open(&f);
    struct job_spec specs[3] = {
        {.type = "a"},
        {.type = "b", .queue = "q2", .priority = 4, .payload = "{\"n\":2}"},
        {.type = "c", .idempotency_key = "bk", .run_at_us = T0 + SEC},
    };
    struct job out[3] = {{0}};
    bool rep[3] = {true, true, true};
    ASSERT_OK(store_enqueue_batch(f.st, specs, 3, out, rep, &f.err), &f.err);
    ASSERT(out[0].id > 0 && out[1].id > out[0].id && out[2].id > out[1].id);
    ASSERT_STR_EQ(out[0].type, "a");
    ASSERT_STR_EQ(out[0].queue, "default");
    ASSERT_STR_EQ(out[1].queue, "q2");
    ASSERT_EQ(out[1].priority, 4);
    ASSERT_STR_EQ(out[1].payload, "{\"n\":2}");
    ASSERT_EQ(out[2].run_at_us, T0 + SEC);
    ASSERT(!rep[0] && !rep[1] && !rep[2]);
    int64_t keyed = out[2].id;
    for (int i = 0; i < 3; i++)
        job_fini(&out[i]);
    ASSERT_EQ(count_jobs(&f), 3);
    /* a replayed item inside a batch */
    struct job_spec again[2] = {{.type = "d"}, specs[2]};
    ASSERT_OK(store_enqueue_batch(f.st, again, 2, out, rep, &f.err), &f.err);
    ASSERT(!rep[0]);
    ASSERT(rep[1]);
    ASSERT_EQ(out[1].id, keyed);
    job_fini(&out[0]);
    job_fini(&out[1]);
    ASSERT_EQ(count_jobs(&f), 4);
    /* out and replayed may be NULL */
    ASSERT_OK(store_enqueue_batch(f.st, specs, 2, NULL, NULL, &f.err), &f.err);
    ASSERT_EQ(count_jobs(&f), 6);
    fx_close(&f);
}

TEST(batch_all_or_nothing_invalid)
{
    struct fx f;
    fx_open(&f);
    struct job_spec specs[3] = {{.type = "a"}, {.type = "ok", .queue = "Bad"}, {.type = "c"}};
    struct job out[3] = {{0}};
    ASSERT_EQ(store_enqueue_batch(f.st, specs, 3, out, NULL, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "jobs[1].queue");
    ASSERT_EQ(count_jobs(&f), 0);
    fx_close(&f);
}

TEST(batch_all_or_nothing_conflict)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .payload = "1", .idempotency_key = "taken"};
    enq_spec(&f, &s);
    struct job_spec specs[4] = {
        {.type = "a", .idempotency_key = "fresh"},
        {.type = "b"},
        {.type = "t", .payload = "2", .idempotency_key = "taken"},
        {.type = "c"},
    };
    struct job out[4] = {{0}};
    bool rep[4];
    ASSERT_EQ(store_enqueue_batch(f.st, specs, 4, out, rep, &f.err), JOBD_E_CONFLICT);
    ASSERT(strncmp(f.err.field, "jobs[2]", 7) == 0);
    for (int i = 0; i < 4; i++)
        job_fini(&out[i]);
    ASSERT_EQ(count_jobs(&f), 1);
    /* "fresh" was not consumed by the failed batch */
    struct job_spec fresh = {.type = "other", .idempotency_key = "fresh"};
    struct job j = {0};
    bool r = true;
    ASSERT_OK(store_enqueue(f.st, &fresh, &j, &r, &f.err), &f.err);
    ASSERT(!r);
    job_fini(&j);
    /* two items with one key but different requests conflict inside a batch */
    struct job_spec dup[2] = {
        {.type = "t", .payload = "1", .idempotency_key = "dup"},
        {.type = "t", .payload = "2", .idempotency_key = "dup"},
    };
    ASSERT_EQ(store_enqueue_batch(f.st, dup, 2, NULL, NULL, &f.err), JOBD_E_CONFLICT);
    ASSERT(strncmp(f.err.field, "jobs[1]", 7) == 0);
    ASSERT_EQ(count_jobs(&f), 2);
    fx_close(&f);
}

TEST(complete_batch_mixed)
{
    struct fx f;
    fx_open(&f);
    int64_t a = enq(&f, "t", NULL, 2, 0);
    int64_t b = enq(&f, "t", NULL, 1, 0);
    int64_t c = enq(&f, "t", NULL, 0, 0);
    struct job_list l = {0};
    claim(&f, 3, 10000, &l);
    ASSERT_EQ(l.n, 3);
    job_list_fini(&l);
    /* b's lease expires and b is claimed again: attempt 1 is stale */
    int64_t until;
    bool cancel;
    ASSERT_OK(store_heartbeat(f.st, a, 1, 60000, &until, &cancel, &f.err), &f.err);
    ASSERT_OK(store_heartbeat(f.st, c, 1, 60000, &until, &cancel, &f.err), &f.err);
    manual_clock_advance(&f.mc, 11 * SEC);
    struct backoff_policy bp = {.base_ms = 1, .cap_ms = 1};
    int reaped = 0;
    ASSERT_OK(store_reap(f.st, 10, &bp, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 1);
    manual_clock_advance(&f.mc, 1 * SEC);
    ASSERT_EQ(claim_one(&f, b), 2);
    struct completion cs[4] = {
        {.id = a, .attempt = 1, .result = "{\"a\":1}"},
        {.id = b, .attempt = 1, .result = "{\"b\":1}"},
        {.id = c, .attempt = 1, .result = NULL},
        {.id = c + 100, .attempt = 1, .result = NULL},
    };
    int outcome[4] = {99, 99, 99, 99};
    ASSERT_OK(store_complete_batch(f.st, cs, 4, outcome, &f.err), &f.err);
    ASSERT_EQ(outcome[0], JOBD_OK);
    ASSERT_EQ(outcome[1], JOBD_E_STALE);
    ASSERT_EQ(outcome[2], JOBD_OK);
    ASSERT_EQ(outcome[3], JOBD_E_STALE);
    struct job g = getj(&f, a);
    ASSERT_EQ(g.status, JOB_SUCCEEDED);
    ASSERT_STR_EQ(g.result, "{\"a\":1}");
    ASSERT_EQ(g.finished_at_us, now_of(&f));
    job_fini(&g);
    g = getj(&f, b);
    ASSERT_EQ(g.status, JOB_RUNNING);
    ASSERT_EQ(g.attempt, 2);
    ASSERT_NULL(g.result);
    job_fini(&g);
    ASSERT_EQ(status_of(&f, c), JOB_SUCCEEDED);
    /* completing the same attempt again: stale */
    ASSERT_OK(store_complete_batch(f.st, cs, 1, outcome, &f.err), &f.err);
    ASSERT_EQ(outcome[0], JOBD_E_STALE);
    fx_close(&f);
}

/* One batch naming a job twice: its stale attempt first, then its current
 * one, then the current one again (a duplicate report). */
TEST(complete_batch_same_id_two_attempts)
{
    struct fx f;
    fx_open(&f);
    int64_t b = enq(&f, "t", NULL, 0, 0);
    int64_t a = enq(&f, "t", NULL, 0, 0);
    ASSERT_EQ(claim_one(&f, b), 1);
    ASSERT_EQ(claim_one(&f, a), 1);
    /* a's lease is extended, b's runs out and b is claimed again */
    manual_clock_advance(&f.mc, 31 * SEC);
    int64_t until;
    bool cancel;
    ASSERT_OK(store_heartbeat(f.st, a, 1, 60000, &until, &cancel, &f.err), &f.err);
    manual_clock_advance(&f.mc, 30 * SEC);
    struct backoff_policy bp = {.base_ms = 1, .cap_ms = 1};
    int reaped = 0;
    ASSERT_OK(store_reap(f.st, 10, &bp, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 1);
    manual_clock_advance(&f.mc, 1 * SEC);
    ASSERT_EQ(claim_one(&f, b), 2);
    struct completion cs[4] = {
        {.id = b, .attempt = 1, .result = "{\"old\":1}"},
        {.id = a, .attempt = 1, .result = NULL},
        {.id = b, .attempt = 2, .result = "{\"new\":2}"},
        {.id = b, .attempt = 2, .result = "{\"dup\":3}"},
    };
    int outcome[4] = {99, 99, 99, 99};
    ASSERT_OK(store_complete_batch(f.st, cs, 4, outcome, &f.err), &f.err);
    ASSERT_EQ(outcome[0], JOBD_E_STALE);
    ASSERT_EQ(outcome[1], JOBD_OK);
    ASSERT_EQ(outcome[2], JOBD_OK);
    ASSERT_EQ(outcome[3], JOBD_E_STALE);
    struct job g = getj(&f, b);
    ASSERT_EQ(g.status, JOB_SUCCEEDED);
    ASSERT_EQ(g.attempt, 2);
    ASSERT_STR_EQ(g.result, "{\"new\":2}");
    job_fini(&g);
    ASSERT_EQ(status_of(&f, a), JOB_SUCCEEDED);
    fx_close(&f);
}

/* ------------------------------------------------------------------ */
/* queues, prune, next_run_at, wait                                    */

TEST(queue_stats_counts)
{
    struct fx f;
    fx_open(&f);
    ASSERT_OK(store_queue_pause(f.st, "empty_paused", true, &f.err), &f.err);
    int64_t a1 = enq(&f, "t", "alpha", 9, 0);
    int64_t a2 = enq(&f, "t", "alpha", 8, 0);
    int64_t a3 = enq(&f, "t", "alpha", 7, 0);
    enq(&f, "t", "alpha", 0, 0);
    int64_t b1 = enq(&f, "t", "beta", 0, 0);
    enq(&f, "t", "beta", 0, T0 + 100 * SEC);
    int32_t at = claim_one(&f, a1);
    ASSERT_OK(store_complete(f.st, a1, at, NULL, NULL, &f.err), &f.err);
    at = claim_one(&f, a2);
    ASSERT_OK(store_fail(f.st, a2, at, "x", false, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(claim_one(&f, a3), 1); /* running */
    ASSERT_OK(store_cancel(f.st, b1, NULL, &f.err), &f.err);
    manual_clock_advance(&f.mc, 10 * SEC);

    struct queue_stat *qs = NULL;
    size_t n = 0;
    ASSERT_OK(store_queue_stats(f.st, &qs, &n, &f.err), &f.err);
    ASSERT_EQ(n, 3);
    ASSERT_STR_EQ(qs[0].name, "alpha");
    ASSERT(!qs[0].paused);
    ASSERT_EQ(qs[0].count[JOB_PENDING], 1);
    ASSERT_EQ(qs[0].count[JOB_RUNNING], 1);
    ASSERT_EQ(qs[0].count[JOB_SUCCEEDED], 1);
    ASSERT_EQ(qs[0].count[JOB_DEAD], 1);
    ASSERT_EQ(qs[0].count[JOB_CANCELLED], 0);
    ASSERT(qs[0].oldest_pending_age_s > 9.99 && qs[0].oldest_pending_age_s < 10.01);
    ASSERT_STR_EQ(qs[1].name, "beta");
    ASSERT_EQ(qs[1].count[JOB_PENDING], 1);
    ASSERT_EQ(qs[1].count[JOB_CANCELLED], 1);
    ASSERT_EQ(qs[1].count[JOB_RUNNING], 0);
    ASSERT_STR_EQ(qs[2].name, "empty_paused");
    ASSERT(qs[2].paused);
    for (int s = 0; s < JOB_STATUS_COUNT; s++)
        ASSERT_EQ(qs[2].count[s], 0);
    ASSERT(qs[2].oldest_pending_age_s == 0);
    free(qs);
    fx_close(&f);
}

TEST(prune_only_old_terminal_jobs)
{
    struct fx f;
    fx_open(&f);
    int64_t old_ok = enq(&f, "t", NULL, 0, 0);
    int64_t old_dead = enq(&f, "t", NULL, 0, 0);
    int64_t pending = enq(&f, "t", NULL, 0, T0 + 3600 * SEC);
    int64_t running = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, old_ok);
    ASSERT_OK(store_complete(f.st, old_ok, a, NULL, NULL, &f.err), &f.err);
    a = claim_one(&f, old_dead);
    ASSERT_OK(store_fail(f.st, old_dead, a, "x", false, 0, NULL, &f.err), &f.err);
    manual_clock_advance(&f.mc, 100 * SEC);
    int64_t cutoff = now_of(&f);
    struct claim_req r = {.worker_id = "w", .limit = 1, .lease_ms = 3600000};
    struct job_list l = {0};
    ASSERT_OK(store_claim(f.st, &r, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, running);
    job_list_fini(&l);
    int64_t new_ok = enq(&f, "t", NULL, 0, 0);
    a = claim_one(&f, new_ok);
    ASSERT_OK(store_complete(f.st, new_ok, a, NULL, NULL, &f.err), &f.err); /* at cutoff */

    int deleted = -1;
    ASSERT_OK(store_prune(f.st, cutoff, 1, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 1);
    ASSERT_OK(store_prune(f.st, cutoff, 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 1);
    ASSERT_OK(store_prune(f.st, cutoff, 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 0);
    struct job j = {0};
    ASSERT_EQ(store_get(f.st, old_ok, &j, &f.err), JOBD_E_NOTFOUND);
    ASSERT_EQ(store_get(f.st, old_dead, &j, &f.err), JOBD_E_NOTFOUND);
    ASSERT_EQ(status_of(&f, pending), JOB_PENDING);
    ASSERT_EQ(status_of(&f, running), JOB_RUNNING);
    ASSERT_EQ(status_of(&f, new_ok), JOB_SUCCEEDED);
    /* ids are not reused after a prune */
    int64_t after = enq(&f, "t", NULL, 0, 0);
    ASSERT(after > new_ok);
    fx_close(&f);
}

TEST(next_run_at)
{
    struct fx f;
    fx_open(&f);
    struct claim_req r = {.worker_id = "w", .limit = 1};
    int64_t t = -1;
    ASSERT_OK(store_next_run_at(f.st, &r, &t, &f.err), &f.err);
    ASSERT_EQ(t, 0);
    enq(&f, "x", "a", 0, T0 + 30 * SEC);
    enq(&f, "y", "a", 0, T0 + 10 * SEC);
    enq(&f, "x", "b", 0, T0 + 20 * SEC);
    ASSERT_OK(store_next_run_at(f.st, &r, &t, &f.err), &f.err);
    ASSERT_EQ(t, T0 + 10 * SEC);
    const char *types_x[] = {"x"};
    r.types = types_x;
    r.n_types = 1;
    ASSERT_OK(store_next_run_at(f.st, &r, &t, &f.err), &f.err);
    ASSERT_EQ(t, T0 + 20 * SEC);
    const char *queues_a[] = {"a"};
    r.queues = queues_a;
    r.n_queues = 1;
    ASSERT_OK(store_next_run_at(f.st, &r, &t, &f.err), &f.err);
    ASSERT_EQ(t, T0 + 30 * SEC);
    const char *types_z[] = {"z"};
    r.types = types_z;
    ASSERT_OK(store_next_run_at(f.st, &r, &t, &f.err), &f.err);
    ASSERT_EQ(t, 0);
    fx_close(&f);
}

TEST(wait_returns)
{
    struct fx f;
    fx_open(&f);
    int64_t t0 = clock_mono_now_us();
    int rc = store_wait(f.st, 20, &f.err);
    ASSERT(rc == 0 || rc == 1);
    ASSERT(clock_mono_now_us() - t0 < 5 * SEC);
    fx_close(&f);
}

TEST(real_clock_by_default)
{
    struct fx f;
    fx_open(&f);
    store_set_clock(f.st, NULL);
    int64_t before = clock_real_now_us();
    int64_t id = enq(&f, "t", NULL, 0, 0);
    struct job g = getj(&f, id);
    /* PostgreSQL uses the server's clock: allow some skew */
    ASSERT(g.created_at_us > before - 60 * SEC);
    ASSERT(g.created_at_us < clock_real_now_us() + 60 * SEC);
    job_fini(&g);
    fx_close(&f);
}

/* ------------------------------------------------------------------ */
/* concurrency: real processes, one connection each                    */

TEST(concurrent_claimers_never_share_a_job)
{
    struct fx f;
    fx_open(&f);
    enum { NJOBS = 600, NPROC = 3 };
    struct job_spec specs[100];
    for (int i = 0; i < 100; i++)
        specs[i] = (struct job_spec){.type = "t"};
    for (int k = 0; k < NJOBS / 100; k++)
        ASSERT_OK(store_enqueue_batch(f.st, specs, 100, NULL, NULL, &f.err), &f.err);
    fflush(NULL); /* or the children repeat what is buffered */
    pid_t pids[NPROC];
    for (int p = 0; p < NPROC; p++) {
        pids[p] = fork();
        ASSERT(pids[p] >= 0);
        if (pids[p] == 0) {
            struct store *st = NULL;
            struct jobd_error e = {0};
            int rc = store_open(f.url, &st, &e);
            if (rc != JOBD_OK)
                child_exit(2);
            store_set_clock(st, &f.mc.clock);
            char wid[32];
            snprintf(wid, sizeof wid, "p%d", p);
            for (;;) {
                struct job_list l = {0};
                struct claim_req r = {.worker_id = wid, .limit = 7};
                rc = store_claim(st, &r, &l, &e);
                if (rc != JOBD_OK) {
                    fprintf(stderr, "claim: %s\n", e.msg);
                    child_exit(3);
                }
                if (l.n == 0) {
                    job_list_fini(&l);
                    break;
                }
                for (size_t i = 0; i < l.n; i++) {
                    rc = store_complete(st, l.v[i].id, l.v[i].attempt, NULL, NULL, &e);
                    if (rc != JOBD_OK) {
                        fprintf(stderr, "complete %lld: %s\n", (long long)l.v[i].id, e.msg);
                        child_exit(4);
                    }
                }
                job_list_fini(&l);
            }
            store_close(st);
            child_exit(0);
        }
    }
    for (int p = 0; p < NPROC; p++) {
        int status = 0;
        ASSERT_EQ(waitpid(pids[p], &status, 0), pids[p]);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            TEST_FAIL("claimer %d failed (status %d)", p, status);
    }
    struct job_filter flt = {.status = STORE_ANY, .limit = 1000};
    struct job_list l = {0};
    int64_t next = 0;
    ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
    ASSERT_EQ(l.n, NJOBS);
    for (size_t i = 0; i < l.n; i++) {
        ASSERT_EQ(l.v[i].status, JOB_SUCCEEDED);
        ASSERT_EQ(l.v[i].attempt, 1);
    }
    job_list_fini(&l);
    fx_close(&f);
}

#include "conformance_ops.h"
#include "conformance_limits.h"
#include "conformance_archive.h"
#include "conformance_pending.h"
#include "conformance_stats.h"
#include "conformance_failbatch.h"
