/*
 * test_pg_concurrency.c — the PostgreSQL backend under real concurrency and
 * bad conditions: 8 threads with their own connections drain 10,000 jobs
 * (every job claimed once, succeeded once, none missing), a URL that does
 * not answer fails fast with JOBD_E_UNAVAILABLE, jobd.enqueue follows the
 * caller's transaction, concurrent same-key enqueues resolve to one job, and
 * a restarted server is survivable (JOBD_TEST_PG_CTL).
 */
#include <libpq-fe.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>

#include "core/err.h"
#include "pgtest.h"
#include "store/store.h"
#include "test.h"
#include "util/clock.h"

#define N_JOBS 10000
#define N_THREADS 8

PGTEST_DB_PER_RUN(g_url)

static struct store *
open_store(void)
{
    struct store *st = NULL;
    struct jobd_error e = {0};
    ASSERT_OK(store_open(g_url, &st, &e), &e);
    return st;
}

static struct store *
fresh_store(void)
{
    reset_db();
    struct store *st = open_store();
    struct jobd_error e = {0};
    ASSERT_OK(store_migrate(st, &e), &e);
    return st;
}

static PGconn *
sql_conn(void)
{
    PGconn *c = PQconnectdb(g_url);
    if (PQstatus(c) != CONNECTION_OK)
        TEST_FAIL("connect: %s", PQerrorMessage(c));
    PQsetNoticeProcessor(c, NULL, NULL);
    return c;
}

/* Runs sql; returns the first cell as a number (0 for commands). Fails on error. */
static long long
sql_do(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType t = PQresultStatus(r);
    if (t != PGRES_TUPLES_OK && t != PGRES_COMMAND_OK)
        TEST_FAIL("%s: %s", sql, PQresultErrorMessage(r));
    long long v = (t == PGRES_TUPLES_OK && PQntuples(r) > 0) ? atoll(PQgetvalue(r, 0, 0)) : 0;
    PQclear(r);
    return v;
}

/* Runs sql expecting an error; returns its SQLSTATE (static copy). */
static const char *
sql_err(PGconn *c, const char *sql)
{
    static char state[8];
    PGresult *r = PQexec(c, sql);
    ExecStatusType t = PQresultStatus(r);
    if (t == PGRES_TUPLES_OK || t == PGRES_COMMAND_OK)
        TEST_FAIL("%s succeeded but should have failed", sql);
    const char *s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    snprintf(state, sizeof state, "%s", s ? s : "");
    PQclear(r);
    return state;
}

/* ---- 8 claimers over 10,000 jobs ---- */

struct drain {
    int index;
    _Atomic int *claimed; /* per job id: times claimed */
    int64_t first_id;
    long n_claimed, n_completed, n_stale;
    char error[300];
};

static void *
drain_thread(void *arg)
{
    struct drain *d = arg;
    struct store *st = NULL;
    struct jobd_error e = {0};
    if (store_open(g_url, &st, &e) != 0) {
        snprintf(d->error, sizeof d->error, "open: %s", e.msg);
        return NULL;
    }
    char worker[32];
    snprintf(worker, sizeof worker, "w%d", d->index);
    struct claim_req req = {.worker_id = worker, .limit = 10, .lease_ms = 600000};
    int empty = 0;
    while (empty < 3) {
        struct job_list l = {0};
        if (store_claim(st, &req, &l, &e) != 0) {
            snprintf(d->error, sizeof d->error, "claim: %s", e.msg);
            break;
        }
        if (l.n == 0) {
            empty++;
            job_list_fini(&l);
            continue;
        }
        empty = 0;
        struct completion c[10];
        int outcome[10];
        for (size_t i = 0; i < l.n; i++) {
            if (l.v[i].attempt != 1)
                snprintf(d->error, sizeof d->error, "job %lld claimed with attempt %d",
                         (long long)l.v[i].id, l.v[i].attempt);
            d->claimed[l.v[i].id - d->first_id]++;
            c[i] = (struct completion){
                .id = l.v[i].id, .attempt = l.v[i].attempt, .result = "{\"ok\":1}"};
        }
        d->n_claimed += (long)l.n;
        if (store_complete_batch(st, c, l.n, outcome, &e) != 0) {
            snprintf(d->error, sizeof d->error, "complete_batch: %s", e.msg);
            job_list_fini(&l);
            break;
        }
        for (size_t i = 0; i < l.n; i++) {
            if (outcome[i] == JOBD_OK)
                d->n_completed++;
            else
                d->n_stale++;
        }
        job_list_fini(&l);
    }
    store_close(st);
    return NULL;
}

TEST(eight_claimers_drain_ten_thousand_jobs_exactly_once)
{
    struct store *st = fresh_store();
    struct jobd_error e = {0};
    static struct job_spec specs[N_JOBS];
    for (int i = 0; i < N_JOBS; i++)
        specs[i] = (struct job_spec){.type = "load", .payload = "{}", .priority = i % 3};
    struct job first = {0};
    struct job_spec one = {.type = "marker"};
    ASSERT_OK(store_enqueue(st, &one, &first, NULL, &e), &e);
    struct job tmp = {0};
    ASSERT_OK(store_cancel(st, first.id, &tmp, &e), &e); /* not part of the drain */
    job_fini(&tmp);
    ASSERT_OK(store_enqueue_batch(st, specs, N_JOBS, NULL, NULL, &e), &e);
    int64_t first_id = first.id + 1;
    job_fini(&first);

    /* ids are dense after the marker (one batch, preallocated in order) */
    static _Atomic int claimed[N_JOBS + 16];
    struct drain d[N_THREADS];
    pthread_t t[N_THREADS];
    int64_t t0 = clock_mono_now_us();
    for (int i = 0; i < N_THREADS; i++) {
        d[i] = (struct drain){.index = i, .claimed = claimed, .first_id = first_id};
        pthread_create(&t[i], NULL, drain_thread, &d[i]);
    }
    long total_claimed = 0, total_completed = 0, total_stale = 0;
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(t[i], NULL);
        if (d[i].error[0])
            TEST_FAIL("thread %d: %s", i, d[i].error);
        total_claimed += d[i].n_claimed;
        total_completed += d[i].n_completed;
        total_stale += d[i].n_stale;
    }
    int64_t ms = (clock_mono_now_us() - t0) / 1000;
    fprintf(stderr, "drained %d jobs with %d threads in %lld ms\n", N_JOBS, N_THREADS,
            (long long)ms);
    ASSERT_EQ(total_claimed, N_JOBS);
    ASSERT_EQ(total_completed, N_JOBS);
    ASSERT_EQ(total_stale, 0);
    for (int i = 0; i < N_JOBS; i++)
        if (claimed[i] != 1)
            TEST_FAIL("job %lld claimed %d times", (long long)(first_id + i), (int)claimed[i]);
    PGconn *c = sql_conn();
    /* Completed in place: succeeded rows stay in jobs until the archive pass. */
    ASSERT_EQ(sql_do(c, "SELECT count(*) FROM jobd.jobs WHERE status <> 'succeeded'"), 0);
    ASSERT_EQ(sql_do(c, "SELECT count(*) FROM jobd.all_jobs WHERE status = 'succeeded' "
                        "AND attempt = 1 AND type = 'load'"),
              N_JOBS);
    ASSERT_EQ(sql_do(c, "SELECT count(DISTINCT id) FROM jobd.all_jobs"), N_JOBS + 1);
    PQfinish(c);
    store_close(st);
}

/* ---- a server that does not answer ---- */

TEST(open_on_closed_port_is_unavailable_and_quick)
{
    /* A loopback port nobody listens on: bind one, note it, close it. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ASSERT_EQ(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    ASSERT_EQ(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    char url[128];
    snprintf(url, sizeof url, "postgresql://nobody:secret@127.0.0.1:%d/jobd", ntohs(a.sin_port));
    struct store *st = NULL;
    struct jobd_error e = {0};
    int64_t t0 = clock_mono_now_us();
    ASSERT_EQ(store_open(url, &st, &e), JOBD_E_UNAVAILABLE);
    ASSERT(clock_mono_now_us() - t0 < 2000000);
    ASSERT_NULL(st);
    fprintf(stderr, "message: %s\n", e.msg);
    ASSERT(strstr(e.msg, "127.0.0.1") != NULL);
    ASSERT(strstr(e.msg, "secret") == NULL);
    ASSERT(strchr(e.msg, '\n') == NULL); /* one line for the CLI */
    /* A malformed URL is the caller's mistake. */
    ASSERT_EQ(store_open("postgresql://h/db?no_such_option=1", &st, &e), JOBD_E_INVALID);
    ASSERT_NULL(st);
}

/* ---- jobd.enqueue inside the caller's transaction ---- */

TEST(sql_enqueue_follows_the_callers_transaction)
{
    struct store *st = fresh_store();
    PGconn *c = sql_conn();
    sql_do(c, "CREATE TABLE orders (id int PRIMARY KEY)");
    sql_do(c, "BEGIN");
    sql_do(c, "INSERT INTO orders VALUES (1)");
    ASSERT(sql_do(c, "SELECT jobd.enqueue('order.ship', '{\"order\": 1}')") > 0);
    sql_do(c, "ROLLBACK");
    ASSERT_EQ(sql_do(c, "SELECT count(*) FROM jobd.jobs"), 0);
    ASSERT_EQ(sql_do(c, "SELECT count(*) FROM orders"), 0);

    sql_do(c, "BEGIN");
    sql_do(c, "INSERT INTO orders VALUES (2)");
    long long id = sql_do(c, "SELECT jobd.enqueue('order.ship', '{\"order\": 2}', "
                             "queue => 'ship', priority => 3, idempotency_key => 'o2')");
    sql_do(c, "COMMIT");
    ASSERT(id > 0);
    struct jobd_error e = {0};
    struct job j = {0};
    ASSERT_OK(store_get(st, id, &j, &e), &e);
    ASSERT_STR_EQ(j.type, "order.ship");
    ASSERT_STR_EQ(j.queue, "ship");
    ASSERT_EQ(j.priority, 3);
    ASSERT_EQ(j.status, JOB_PENDING);
    ASSERT_STR_EQ(j.idempotency_key, "o2");
    job_fini(&j);
    /* Replays (also through the C store, with canonical payload text) find it. */
    ASSERT_EQ(sql_do(c, "SELECT jobd.enqueue('order.ship', '{\"order\":2}', queue => 'ship', "
                        "idempotency_key => 'o2')"),
              id);
    struct job_spec sp = {
        .type = "order.ship", .payload = "{\"order\":2}", .queue = "ship", .idempotency_key = "o2"};
    bool rep = false;
    ASSERT_OK(store_enqueue(st, &sp, &j, &rep, &e), &e);
    ASSERT(rep);
    ASSERT_EQ(j.id, id);
    job_fini(&j);
    /* A different request under the key, and bad names, are refused. */
    ASSERT_STR_EQ(sql_err(c, "SELECT jobd.enqueue('order.ship', '{\"order\":3}', "
                             "queue => 'ship', idempotency_key => 'o2')"),
                  "23505");
    ASSERT_STR_EQ(sql_err(c, "SELECT jobd.enqueue('bad type')"), "22023");
    ASSERT_STR_EQ(sql_err(c, "SELECT jobd.enqueue('t', queue => 'Upper')"), "22023");
    ASSERT_STR_EQ(sql_err(c, "SELECT jobd.enqueue('t', max_attempts => 0)"), "22023");
    ASSERT_STR_EQ(sql_err(c, "SELECT jobd.enqueue('t', idempotency_key => '')"), "22023");
    /* Blank, leading and trailing blanks (issue 11 item 13): refused like the API does. */
    ASSERT_STR_EQ(sql_err(c, "SELECT jobd.enqueue('t', idempotency_key => ' ')"), "22023");
    ASSERT_STR_EQ(sql_err(c, "SELECT jobd.enqueue('t', idempotency_key => 'o2 ')"), "22023");
    ASSERT_STR_EQ(sql_err(c, "SELECT jobd.enqueue('t', idempotency_key => ' o2')"), "22023");
    ASSERT_STR_EQ(sql_err(c, "SELECT jobd.enqueue('t', idempotency_key => E'o\\t2')"), "22023");
    ASSERT_EQ(sql_do(c, "SELECT count(*) FROM jobd.jobs"), 1);
    PQfinish(c);
    store_close(st);
}

/* ---- same key, many enqueuers at once ---- */

struct keyed {
    int64_t id;
    bool replayed;
    char error[300];
};

static void *
keyed_thread(void *arg)
{
    struct keyed *k = arg;
    struct store *st = NULL;
    struct jobd_error e = {0};
    if (store_open(g_url, &st, &e) != 0) {
        snprintf(k->error, sizeof k->error, "open: %s", e.msg);
        return NULL;
    }
    struct job_spec sp = {.type = "t", .payload = "{\"x\":1}", .idempotency_key = "same"};
    struct job j = {0};
    if (store_enqueue(st, &sp, &j, &k->replayed, &e) != 0)
        snprintf(k->error, sizeof k->error, "enqueue: %s", e.msg);
    k->id = j.id;
    job_fini(&j);
    store_close(st);
    return NULL;
}

TEST(concurrent_same_key_enqueues_make_one_job)
{
    struct store *st = fresh_store();
    struct keyed k[N_THREADS];
    pthread_t t[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        k[i] = (struct keyed){0};
        pthread_create(&t[i], NULL, keyed_thread, &k[i]);
    }
    int fresh = 0;
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(t[i], NULL);
        if (k[i].error[0])
            TEST_FAIL("thread %d: %s", i, k[i].error);
        ASSERT_EQ(k[i].id, k[0].id);
        fresh += !k[i].replayed;
    }
    ASSERT_EQ(fresh, 1);
    PGconn *c = sql_conn();
    ASSERT_EQ(sql_do(c, "SELECT count(*) FROM jobd.jobs"), 1);
    PQfinish(c);
    store_close(st);
}

/* ---- claim plans use the partial indexes ---- */

static void
assert_plan_uses(PGconn *c, const char *sql, const char *index)
{
    char q[2048];
    snprintf(q, sizeof q, "EXPLAIN %s", sql);
    PGresult *r = PQexec(c, q);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        TEST_FAIL("%s: %s", q, PQresultErrorMessage(r));
    bool found = false;
    for (int i = 0; i < PQntuples(r); i++)
        if (strstr(PQgetvalue(r, i, 0), index) != NULL)
            found = true;
    if (!found) {
        for (int i = 0; i < PQntuples(r); i++)
            fprintf(stderr, "  %s\n", PQgetvalue(r, i, 0));
        TEST_FAIL("plan does not use %s", index);
    }
    PQclear(r);
}

TEST(claim_plans_use_the_partial_indexes)
{
    struct store *st = fresh_store();
    struct jobd_error e = {0};
    static struct job_spec specs[5000];
    for (int i = 0; i < 5000; i++)
        specs[i] = (struct job_spec){
            .type = i % 2 ? "a" : "b", .queue = i % 5 ? "q1" : "q2", .priority = i % 4};
    ASSERT_OK(store_enqueue_batch(st, specs, 5000, NULL, NULL, &e), &e);
    PGconn *c = sql_conn();
    sql_do(c, "ANALYZE jobd.jobs");
    /* A claim naming no queue finds them by a skip scan (migration 16). */
    assert_plan_uses(c,
                     "SELECT queue FROM jobd.jobs WHERE status = 'pending' AND queue > 'q1' "
                     "ORDER BY queue LIMIT 1",
                     "Index");
    assert_plan_uses(c,
                     "SELECT id FROM jobd.jobs WHERE queue = 'q2' AND status = 'pending' "
                     "AND run_at <= now() ORDER BY priority DESC, run_at, id LIMIT 10 "
                     "FOR UPDATE SKIP LOCKED",
                     "jobs_claim_queue");
    assert_plan_uses(c,
                     "SELECT id FROM jobd.jobs WHERE status = 'running' AND "
                     "lease_expires_at < now() ORDER BY lease_expires_at LIMIT 100",
                     "jobs_lease");
    PQfinish(c);
    store_close(st);
}

/* ---- a restarted server ---- */

static int
pg_ctl(const char *action)
{
    const char *ctl = getenv("JOBD_TEST_PG_CTL");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s -w -m fast %s >/dev/null 2>&1", ctl, action);
    return system(cmd);
}

/*
 * Restarting the cluster would break the other test programs that ctest runs
 * beside this one, so this test re-runs the program under its own throwaway
 * cluster (scripts/with-pg.sh, nested) with TEST_FILTER=pgrestart_, and the
 * pgrestart_ tests restart that one. Outside it they do nothing.
 */
TEST(private_cluster_restarts)
{
    char src[512], exe[512], cmd[1400];
    /* The source tree: $JOBD_SRC under ctest, else from this file's path. */
    snprintf(src, sizeof src, "%s", getenv("JOBD_SRC") ? getenv("JOBD_SRC") : __FILE__);
    if (getenv("JOBD_SRC") == NULL && strstr(src, "/tests/integration/") != NULL)
        *strstr(src, "/tests/integration/") = '\0';
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ASSERT(n > 0);
    exe[n] = '\0';
    snprintf(cmd, sizeof cmd,
             "JOBD_PG_PRIVATE_CLUSTER=1 TEST_FILTER=pgrestart_ "
             "'%s/scripts/with-pg.sh' '%s' >&2",
             src, exe);
    ASSERT_EQ(system(cmd), 0);
}

static bool
in_private_cluster(void)
{
    if (getenv("JOBD_PG_PRIVATE_CLUSTER") != NULL)
        return true;
    fprintf(stderr, "runs only under private_cluster_restarts\n");
    return false;
}

TEST(pgrestart_reconnects_and_relistens)
{
    if (!in_private_cluster())
        return;
    struct store *st = fresh_store();
    struct jobd_error e = {0};
    struct job_spec sp = {.type = "t"};
    ASSERT_EQ(store_wait(st, 1, &e), 0); /* LISTEN is up */
    ASSERT_OK(store_enqueue(st, &sp, NULL, NULL, &e), &e);
    ASSERT_EQ(store_wait(st, 1000, &e), 1); /* our own NOTIFY arrived */
    ASSERT_EQ(pg_ctl("restart"), 0);
    /* The first call may learn that the connection died; the next reconnects. */
    int rc = store_enqueue(st, &sp, NULL, NULL, &e);
    if (rc != JOBD_OK) {
        ASSERT_EQ(rc, JOBD_E_UNAVAILABLE);
        fprintf(stderr, "first call after restart: %s\n", e.msg);
        ASSERT_OK(store_enqueue(st, &sp, NULL, NULL, &e), &e);
    }
    struct claim_req req = {.worker_id = "w", .limit = 10};
    struct job_list l = {0};
    ASSERT_OK(store_claim(st, &req, &l, &e), &e);
    ASSERT(l.n >= 2);
    job_list_fini(&l);
    /* The wake-up channel is re-established too. */
    int w = store_wait(st, 10, &e);
    ASSERT(w == 0 || w == 1);
    struct store *other = open_store();
    ASSERT_OK(store_enqueue(other, &sp, NULL, NULL, &e), &e);
    ASSERT_EQ(store_wait(st, 5000, &e), 1);
    store_close(other);
    store_close(st);
}

/* ---- a restart under load ---- */

#define LOAD_JOBS 2000
#define LOAD_THREADS 4
#define LOAD_MAX_ATTEMPT 8

struct load {
    int64_t first_id;
    _Atomic int seen[LOAD_JOBS][LOAD_MAX_ATTEMPT]; /* claims of (job, attempt) */
    _Atomic long completed;
    _Atomic long unavailable;
    _Atomic int restarted;
};

/* Claims and completes until the restart happened and nothing is left to claim. */
static void *
load_thread(void *arg)
{
    struct load *ld = arg;
    struct store *st = open_store();
    struct jobd_error e = {0};
    struct claim_req req = {.worker_id = "load", .limit = 10, .lease_ms = 600000};
    int empty = 0;
    int64_t deadline = clock_mono_now_us() + 90 * 1000000LL;
    while (empty < 3 && clock_mono_now_us() < deadline) {
        struct job_list l = {0};
        int rc = store_claim(st, &req, &l, &e);
        if (rc == JOBD_E_UNAVAILABLE) {
            ld->unavailable++;
            poll(NULL, 0, 20); /* back off while the server restarts */
            continue;
        }
        ASSERT_OK(rc, &e);
        empty = (l.n == 0 && ld->restarted) ? empty + 1 : 0;
        struct completion c[10];
        int outcome[10];
        for (size_t i = 0; i < l.n; i++) {
            int64_t k = l.v[i].id - ld->first_id;
            ASSERT(k >= 0 && k < LOAD_JOBS && l.v[i].attempt < LOAD_MAX_ATTEMPT);
            ld->seen[k][l.v[i].attempt]++;
            c[i] = (struct completion){.id = l.v[i].id, .attempt = l.v[i].attempt};
        }
        if (l.n > 0) {
            rc = store_complete_batch(st, c, l.n, outcome, &e);
            if (rc == JOBD_E_UNAVAILABLE)
                ld->unavailable++; /* these may or may not have committed */
            else
                ASSERT_OK(rc, &e);
            for (size_t i = 0; rc == JOBD_OK && i < l.n; i++)
                ld->completed += outcome[i] == JOBD_OK;
        }
        job_list_fini(&l);
    }
    store_close(st);
    return NULL;
}

TEST(pgrestart_under_load_loses_nothing)
{
    if (!in_private_cluster())
        return;
    struct store *st = fresh_store();
    struct jobd_error e = {0};
    static struct job_spec specs[LOAD_JOBS];
    for (int i = 0; i < LOAD_JOBS; i++)
        specs[i] = (struct job_spec){.type = "t"};
    struct job_list ids = {0};
    static struct job out[LOAD_JOBS];
    ASSERT_OK(store_enqueue_batch(st, specs, LOAD_JOBS, out, NULL, &e), &e);
    static struct load ld;
    ld.first_id = out[0].id;
    for (int i = 0; i < LOAD_JOBS; i++) {
        ASSERT_EQ(out[i].id, ld.first_id + i);
        job_fini(&out[i]);
    }
    pthread_t t[LOAD_THREADS];
    for (int i = 0; i < LOAD_THREADS; i++)
        pthread_create(&t[i], NULL, load_thread, &ld);
    int64_t deadline = clock_mono_now_us() + 60 * 1000000LL;
    while (ld.completed < LOAD_JOBS / 4 && clock_mono_now_us() < deadline)
        poll(NULL, 0, 5);
    ASSERT_EQ(pg_ctl("restart"), 0);
    ld.restarted = 1;
    for (int i = 0; i < LOAD_THREADS; i++)
        pthread_join(t[i], NULL);
    fprintf(stderr, "completed %ld before/after the restart, %ld unavailable answers\n",
            (long)ld.completed, (long)ld.unavailable);
    /* Claims whose answer was lost are still leased: an hour later the reaper frees them. */
    struct manual_clock mc;
    manual_clock_init(&mc, clock_real_now_us() + 3600 * 1000000LL);
    store_set_clock(st, &mc.clock);
    int reaped = 0;
    struct backoff_policy bp = {.base_ms = 1, .cap_ms = 1};
    for (int rc = -1; rc != JOBD_OK;) /* the old connection may report the restart first */
        rc = store_reap(st, 10000, &bp, &reaped, &e);
    manual_clock_advance(&mc, 1000000);
    struct claim_req req = {.worker_id = "final", .limit = 1000};
    for (;;) {
        struct job_list l = {0};
        ASSERT_OK(store_claim(st, &req, &l, &e), &e);
        if (l.n == 0)
            break;
        for (size_t i = 0; i < l.n; i++) {
            ld.seen[l.v[i].id - ld.first_id][l.v[i].attempt]++;
            ASSERT_OK(store_complete(st, l.v[i].id, l.v[i].attempt, NULL, NULL, &e), &e);
        }
        job_list_fini(&l);
    }
    job_list_fini(&ids);
    for (int i = 0; i < LOAD_JOBS; i++)
        for (int a = 0; a < LOAD_MAX_ATTEMPT; a++)
            if (ld.seen[i][a] > 1)
                TEST_FAIL("job %lld attempt %d was handed out %d times",
                          (long long)(ld.first_id + i), a, (int)ld.seen[i][a]);
    PGconn *c = sql_conn();
    ASSERT_EQ(sql_do(c, "SELECT count(*) FROM jobd.jobs WHERE status <> 'succeeded'"), 0);
    ASSERT_EQ(sql_do(c, "SELECT count(*) FROM jobd.all_jobs WHERE status = 'succeeded'"),
              LOAD_JOBS);
    PQfinish(c);
    store_close(st);
}
