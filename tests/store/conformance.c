/*
 * conformance.c — the store conformance suite: the same tests, run against
 * each backend (`store_conformance sqlite`, `store_conformance pg`).
 *
 * Every test opens a fresh store (a new SQLite file in the test's temp dir,
 * or, on PostgreSQL, the run's own database with jobd's schema dropped),
 * migrates it and sets a manual clock, so lease expiry and backoff are driven
 * by moving the clock, never by sleeping. The tests pin down every transition
 * and guard of docs/MODEL.md, "Transitions" through the public store_*()
 * interface only, so a backend passes exactly when it keeps them.
 *
 * This file holds the fixture and the cases of opening, enqueue and claim;
 * the other topics are in conformance_*.h, included below.
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
 * jobd's schema (everything lives in schema "jobd", docs/MODEL.md). CREATE
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

#include "conformance_reports.h"
#include "conformance_cancel.h"
#include "conformance_list.h"
#include "conformance_batch.h"
#include "conformance_queues.h"

#include "conformance_ops.h"
#include "conformance_limits.h"
#include "conformance_archive.h"
#include "conformance_pending.h"
#include "conformance_stats.h"
#include "conformance_failbatch.h"
