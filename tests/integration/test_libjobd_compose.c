/*
 * test_libjobd_compose.c — what composes jobs, given through libjobd.
 * Parents (docs/MODEL.md, Dependencies): jobd_enqueue's depends_on on both stores (the child waits,
 * becomes pending when its parent succeeds, is cancelled or run by its
 * policy when the parent dies), and jobd_enqueue_pg / the SQL function
 * jobd.enqueue (schema version 27) inside the caller's own transaction:
 * committed and rolled back with it, an unknown parent refused naming
 * depends_on, a call by named arguments. A group, a debounce and a unique
 * window (docs/MODEL.md, Groups; Debounce and unique windows): jobd_enqueue
 * keeps the group and honours the windows on both stores; jobd_enqueue_pg
 * and jobd.enqueue (schema version 31) take the group in the caller's
 * transaction, and the windows (schema version 32): 16 callers at once of
 * one key, by SQL with named arguments and by jobd_enqueue_pg, make one job
 * and all get its id; a debounce replaces the pending job and pushes its
 * run_at, a claimed one leaves the key to a new job; a unique window
 * answers its job whatever its status and a new one after it; a rolled
 * back enqueue frees its key; earlier calls of the function still work.
 * The pg cases are skipped without JOBD_TEST_PG_URL, failed under
 * JOBD_TEST_REQUIRE_PG (TEST_NEED_PG).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/job.h"
#include "jobd.h"
#include "lib/lib.h"
#include "store/store.h"
#include "test.h"
#include "util/clock.h"

#if __has_include("pgtest.h")
#define HAVE_PGTEST 1
#include <libpq-fe.h>

#include "pgtest.h"
#endif

#ifdef HAVE_PGTEST
static char pg_url[512];
#endif

/* A client on "sqlite" (a file in the test's temp dir) or "pg" (a fresh database). */
static jobd_client *
open_client(const char *backend)
{
    const char *url = "sqlite:deps.db";
    if (strcmp(backend, "pg") == 0) {
#ifdef HAVE_PGTEST
        TEST_NEED_PG();
        if (pgtest_fresh_db(pg_url, sizeof pg_url) != 0)
            TEST_FAIL("no PostgreSQL for this test (see above)");
        url = pg_url;
#else
        TEST_SKIP("tests/pgtest.h is not there");
#endif
    }
    jobd_client *c = NULL;
    struct jobd_error e = {0};
    ASSERT_OK(jobd_client_open(url, &c, &e), &e);
    return c;
}

static void
close_client(jobd_client *c)
{
    jobd_client_close(c);
#ifdef HAVE_PGTEST
    if (pg_url[0] != '\0')
        pgtest_drop_db(pg_url);
    pg_url[0] = '\0';
#endif
}

static void
expect_status(jobd_client *c, int64_t id, const char *want)
{
    const char *s = NULL;
    struct jobd_error e = {0};
    ASSERT_OK(jobd_get_status(c, id, &s, NULL, &e), &e);
    if (strcmp(s, want) != 0)
        TEST_FAIL("job %lld is %s, want %s", (long long)id, s, want);
}

/* Claims the one due job of type and ends it: completed, or failed for good. */
static void
run_one(jobd_client *c, const char *type, int64_t want_id, bool succeed)
{
    const char *types[] = {type};
    struct jobd_claim_opts co = {.worker_id = "w1", .types = types, .n_types = 1, .limit = 1};
    jobd_job_batch *b = NULL;
    struct jobd_error e = {0};
    ASSERT_OK(jobd_claim(c, &co, &b, &e), &e);
    ASSERT_EQ(jobd_job_batch_count(b), 1);
    const jobd_job *j = jobd_job_batch_get(b, 0);
    ASSERT_EQ(jobd_job_id(j), want_id);
    if (succeed)
        ASSERT_OK(jobd_complete(c, want_id, jobd_job_attempt(j), "{}", &e), &e);
    else
        ASSERT_OK(jobd_fail(c, want_id, jobd_job_attempt(j), "broken", false, NULL, &e), &e);
    jobd_job_batch_free(b);
}

static void
enqueue_waits_for_its_parents(const char *backend)
{
    jobd_client *c = open_client(backend);
    struct jobd_error e = {0};
    int64_t p1 = 0, p2 = 0, child = 0, runs = 0;
    struct jobd_job_opts o = {.type = "parent"};
    ASSERT_OK(jobd_enqueue(c, &o, &p1, &e), &e);
    ASSERT_OK(jobd_enqueue(c, &o, &p2, &e), &e);
    int64_t both[] = {p1, p2};
    struct jobd_job_opts oc = {.type = "child", .depends_on = both, .n_depends_on = 2};
    ASSERT_OK(jobd_enqueue(c, &oc, &child, &e), &e);
    struct jobd_job_opts orun = {
        .type = "after", .depends_on = &p2, .n_depends_on = 1, .run_on_parent_failure = true};
    ASSERT_OK(jobd_enqueue(c, &orun, &runs, &e), &e);
    expect_status(c, child, "waiting");
    expect_status(c, runs, "waiting");

    run_one(c, "parent", p1, true);
    expect_status(c, child, "waiting"); /* p2 is not done yet */
    run_one(c, "parent", p2, false);    /* dead: the child is cancelled, "after" runs */
    expect_status(c, child, "cancelled");
    expect_status(c, runs, "pending");

    /* An id that names no job fails the enqueue and names the field. */
    int64_t none = p1 + 1000;
    oc.depends_on = &none;
    oc.n_depends_on = 1;
    ASSERT_EQ(jobd_enqueue(c, &oc, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "depends_on");
    /* A count without an array is the caller's mistake, said before the store. */
    oc.depends_on = NULL;
    ASSERT_EQ(jobd_enqueue(c, &oc, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "depends_on");
    close_client(c);
}

TEST(enqueue_waits_for_its_parents_sqlite)
{
    enqueue_waits_for_its_parents("sqlite");
}

TEST(enqueue_waits_for_its_parents_pg)
{
    enqueue_waits_for_its_parents("pg");
}

#ifdef HAVE_PGTEST
static void
pg_ok(PGconn *conn, const char *sql)
{
    PGresult *r = PQexec(conn, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
        TEST_FAIL("%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
}

TEST(enqueue_pg_and_sql_take_parents)
{
    jobd_client *c = open_client("pg");
    PGconn *conn = PQconnectdb(pg_url);
    ASSERT_EQ(PQstatus(conn), CONNECTION_OK);
    struct jobd_error e = {0};

    /* Parent and child in one transaction of the application's. */
    pg_ok(conn, "BEGIN");
    int64_t p = 0, child = 0;
    struct jobd_job_opts o = {.type = "parent"};
    ASSERT_OK(jobd_enqueue_pg(conn, &o, &p, &e), &e);
    struct jobd_job_opts oc = {.type = "child", .depends_on = &p, .n_depends_on = 1};
    ASSERT_OK(jobd_enqueue_pg(conn, &oc, &child, &e), &e);
    ASSERT_EQ(jobd_get_status(c, child, NULL, NULL, &e), JOBD_E_NOTFOUND); /* not committed */
    pg_ok(conn, "COMMIT");
    expect_status(c, child, "waiting");
    run_one(c, "parent", p, true);
    expect_status(c, child, "pending");

    /* Rolled back: neither exists. */
    pg_ok(conn, "BEGIN");
    int64_t p2 = 0, c2 = 0;
    ASSERT_OK(jobd_enqueue_pg(conn, &o, &p2, &e), &e);
    oc.depends_on = &p2;
    ASSERT_OK(jobd_enqueue_pg(conn, &oc, &c2, &e), &e);
    pg_ok(conn, "ROLLBACK");
    ASSERT_EQ(jobd_get_status(c, p2, NULL, NULL, &e), JOBD_E_NOTFOUND);
    ASSERT_EQ(jobd_get_status(c, c2, NULL, NULL, &e), JOBD_E_NOTFOUND);

    /* An unknown parent: refused by the function, named. */
    int64_t none = c2 + 1000;
    oc.depends_on = &none;
    ASSERT_EQ(jobd_enqueue_pg(conn, &oc, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "depends_on");
    ASSERT(strstr(e.msg, "no job with id") != NULL);

    /* Raw SQL by named arguments; a parent already succeeded counts at once. */
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT jobd.enqueue('child', depends_on => ARRAY[%lld], on_parent_failure => 'run')",
             (long long)p);
    PGresult *r = PQexec(conn, sql);
    ASSERT_EQ(PQresultStatus(r), PGRES_TUPLES_OK);
    expect_status(c, strtoll(PQgetvalue(r, 0, 0), NULL, 10), "pending");
    PQclear(r);
    r = PQexec(conn, "SELECT jobd.enqueue('child', on_parent_failure => 'maybe')");
    ASSERT_EQ(PQresultStatus(r), PGRES_FATAL_ERROR);
    ASSERT(strstr(PQresultErrorMessage(r), "on_parent_failure must be") != NULL);
    PQclear(r);

    PQfinish(conn);
    close_client(c);
}
#endif

/* The group job id has in c's store ("" for none). */
static void
expect_group(jobd_client *c, int64_t id, const char *want)
{
    struct job j = {0};
    struct jobd_error e = {0};
    ASSERT_OK(store_get(lib_client_store(c), id, &j, &e), &e);
    ASSERT_STR_EQ(j.group != NULL ? j.group : "", want);
    job_fini(&j);
}

static void
group_and_windows(const char *backend)
{
    jobd_client *c = open_client(backend);
    struct jobd_error e = {0};
    int64_t a = 0, b = 0;
    struct jobd_job_opts o = {.type = "mail.send", .group = "customer-17"};
    ASSERT_OK(jobd_enqueue(c, &o, &a, &e), &e);
    expect_group(c, a, "customer-17");
    o.group = "bad group";
    ASSERT_EQ(jobd_enqueue(c, &o, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "group");

    /* debounce: the second replaces the first, pending */
    struct jobd_job_opts d = {.type = "index", .debounce_key = "site-9", .debounce_ms = 30000};
    ASSERT_OK(jobd_enqueue(c, &d, &a, &e), &e);
    d.payload = "{\"v\":2}";
    ASSERT_OK(jobd_enqueue(c, &d, &b, &e), &e);
    ASSERT_EQ(a, b);
    /* unique: the same job inside the window */
    struct jobd_job_opts u = {.type = "report", .unique_key = "daily", .unique_ms = 60000};
    ASSERT_OK(jobd_enqueue(c, &u, &a, &e), &e);
    ASSERT_OK(jobd_enqueue(c, &u, &b, &e), &e);
    ASSERT_EQ(a, b);
    close_client(c);
}

TEST(group_and_windows_sqlite)
{
    group_and_windows("sqlite");
}

TEST(group_and_windows_pg)
{
    group_and_windows("pg");
}

#ifdef HAVE_PGTEST
TEST(enqueue_pg_and_sql_take_a_group)
{
    jobd_client *c = open_client("pg");
    PGconn *conn = PQconnectdb(pg_url);
    ASSERT_EQ(PQstatus(conn), CONNECTION_OK);
    struct jobd_error e = {0};
    int64_t id = 0;
    struct jobd_job_opts o = {.type = "mail.send", .group = "customer-17"};
    ASSERT_OK(jobd_enqueue_pg(conn, &o, &id, &e), &e);
    expect_group(c, id, "customer-17");

    PGresult *r = PQexec(conn, "SELECT jobd.enqueue('mail.send', \"group\" => 'customer-18')");
    ASSERT_EQ(PQresultStatus(r), PGRES_TUPLES_OK);
    expect_group(c, strtoll(PQgetvalue(r, 0, 0), NULL, 10), "customer-18");
    PQclear(r);
    /* both groups are known to the fair claim */
    r = PQexec(conn, "SELECT count(*) FROM jobd.job_groups WHERE grp IN ('customer-17', "
                     "'customer-18')");
    ASSERT_EQ(PQresultStatus(r), PGRES_TUPLES_OK);
    ASSERT_STR_EQ(PQgetvalue(r, 0, 0), "2");
    PQclear(r);
    r = PQexec(conn, "SELECT jobd.enqueue('mail.send', \"group\" => 'no spaces')");
    ASSERT_EQ(PQresultStatus(r), PGRES_FATAL_ERROR);
    ASSERT(strstr(PQresultErrorMessage(r), "group must match") != NULL);
    PQclear(r);
    PQfinish(conn);
    close_client(c);
}
#endif

#ifdef HAVE_PGTEST
/* ---- debounce and unique windows in the caller's transaction (schema version 32) ---- */

#define WIN_CALLERS 16

/* One caller of a burst: its own connection, released with the others at once. */
struct win_caller {
    pthread_barrier_t *go;
    const char *sql; /* NULL: jobd_enqueue_pg with opts */
    const struct jobd_job_opts *opts;
    int n;      /* the caller's number, its payload's "n" */
    int64_t id; /* the id it was answered, 0 on error */
    char error[256];
};

static void *
win_call(void *arg)
{
    struct win_caller *w = arg;
    PGconn *conn = PQconnectdb(pg_url);
    bool up = PQstatus(conn) == CONNECTION_OK;
    if (!up)
        snprintf(w->error, sizeof w->error, "connect: %s", PQerrorMessage(conn));
    pthread_barrier_wait(w->go);
    char payload[32];
    snprintf(payload, sizeof payload, "{\"n\": %d}", w->n);
    if (up && w->sql != NULL) {
        const char *params[1] = {payload};
        PGresult *r = PQexecParams(conn, w->sql, 1, NULL, params, NULL, NULL, 0);
        if (PQresultStatus(r) == PGRES_TUPLES_OK)
            w->id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        else
            snprintf(w->error, sizeof w->error, "%s", PQresultErrorMessage(r));
        PQclear(r);
    } else if (up) {
        struct jobd_job_opts o = *w->opts;
        o.payload = payload;
        struct jobd_error e = {0};
        if (jobd_enqueue_pg(conn, &o, &w->id, &e) != JOBD_OK)
            snprintf(w->error, sizeof w->error, "%s", e.msg);
    }
    PQfinish(conn);
    return NULL;
}

/* WIN_CALLERS callers at once, by sql (one parameter: the payload) or
 * jobd_enqueue_pg with opts; every one must get the same id, which is returned. */
static int64_t
win_burst(const char *sql, const struct jobd_job_opts *opts)
{
    pthread_barrier_t go;
    ASSERT_EQ(pthread_barrier_init(&go, NULL, WIN_CALLERS), 0);
    struct win_caller w[WIN_CALLERS];
    pthread_t t[WIN_CALLERS];
    for (int i = 0; i < WIN_CALLERS; i++) {
        w[i] = (struct win_caller){.go = &go, .sql = sql, .opts = opts, .n = i};
        ASSERT_EQ(pthread_create(&t[i], NULL, win_call, &w[i]), 0);
    }
    for (int i = 0; i < WIN_CALLERS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&go);
    for (int i = 0; i < WIN_CALLERS; i++) {
        if (w[i].id == 0)
            TEST_FAIL("caller %d: %s", i, w[i].error);
        if (w[i].id != w[0].id)
            TEST_FAIL("caller %d got job %lld, caller 0 job %lld", i, (long long)w[i].id,
                      (long long)w[0].id);
    }
    return w[0].id;
}

/* One row, one column of sql on conn, as a number (the test fails on an error). */
static int64_t
sql_num(PGconn *conn, const char *sql)
{
    PGresult *r = PQexec(conn, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        TEST_FAIL("%s: %s", sql, PQresultErrorMessage(r));
    int64_t v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return v;
}

/* sql must fail, with want in its message. */
static void
sql_refused(PGconn *conn, const char *sql, const char *want)
{
    PGresult *r = PQexec(conn, sql);
    if (PQresultStatus(r) != PGRES_FATAL_ERROR || strstr(PQresultErrorMessage(r), want) == NULL)
        TEST_FAIL("%s: want an error saying \"%s\", got %s", sql, want,
                  PQresultStatus(r) == PGRES_FATAL_ERROR ? PQresultErrorMessage(r) : "success");
    PQclear(r);
}

/* The job id in c's store; the test fails without it. */
static struct job
job_of(jobd_client *c, int64_t id)
{
    struct job j = {0};
    struct jobd_error e = {0};
    ASSERT_OK(store_get(lib_client_store(c), id, &j, &e), &e);
    return j;
}

/* Claims job want of type once it is due (a deadline of 30 s), and completes it. */
static void
run_when_due(jobd_client *c, const char *type, int64_t want)
{
    const char *types[] = {type};
    struct jobd_claim_opts co = {.worker_id = "w1", .types = types, .n_types = 1, .limit = 1};
    struct jobd_error e = {0};
    int64_t deadline = clock_mono_now_us() + 30 * 1000000LL;
    for (;;) {
        jobd_job_batch *b = NULL;
        ASSERT_OK(jobd_claim(c, &co, &b, &e), &e);
        if (jobd_job_batch_count(b) == 1) {
            const jobd_job *j = jobd_job_batch_get(b, 0);
            ASSERT_EQ(jobd_job_id(j), want);
            ASSERT_OK(jobd_complete(c, want, jobd_job_attempt(j), "{}", &e), &e);
            jobd_job_batch_free(b);
            return;
        }
        jobd_job_batch_free(b);
        if (clock_mono_now_us() > deadline)
            TEST_FAIL("job %lld of type %s never became due", (long long)want, type);
        struct timespec ts = {0, 5 * 1000000};
        nanosleep(&ts, NULL);
    }
}

TEST(sql_debounce_exactly_once)
{
    jobd_client *c = open_client("pg");
    PGconn *conn = PQconnectdb(pg_url);
    ASSERT_EQ(PQstatus(conn), CONNECTION_OK);

    /* 16 debounced enqueues at once, by named arguments: one job, due 30 s
     * after the last, with one of their payloads. */
    int64_t before_us = clock_real_now_us();
    int64_t d = win_burst("SELECT jobd.enqueue('search.reindex', payload => $1::jsonb, "
                          "debounce_key => 'doc-42', debounce_for => '30s')",
                          NULL);
    ASSERT_EQ(sql_num(conn, "SELECT count(*) FROM jobd.all_jobs WHERE type = 'search.reindex'"), 1);
    struct job j = job_of(c, d);
    ASSERT_EQ(j.status, JOB_PENDING);
    ASSERT(j.run_at_us >= before_us + 29 * 1000000LL);
    ASSERT(strstr(j.payload, "\"n\"") != NULL);
    int64_t first_run_at = j.run_at_us;
    job_fini(&j);

    /* The next one replaces payload and priority and pushes run_at; the
     * same key in another queue is another job. */
    int64_t again = sql_num(conn, "SELECT jobd.enqueue('search.reindex', '{\"rev\": 18}', "
                                  "priority => 5, debounce_key => 'doc-42', "
                                  "debounce_for => '1 hour')");
    ASSERT_EQ(again, d);
    j = job_of(c, d);
    ASSERT(strstr(j.payload, "\"rev\"") != NULL && strstr(j.payload, "18") != NULL);
    ASSERT_EQ(j.priority, 5);
    ASSERT(j.run_at_us >= first_run_at + 3500 * 1000000LL);
    job_fini(&j);
    int64_t other = sql_num(conn, "SELECT jobd.enqueue('search.reindex', queue => 'other', "
                                  "debounce_key => 'doc-42', debounce_for => '1s')");
    ASSERT(other != d);

    /* Once the job was claimed, the key makes a new job. */
    int64_t soon = sql_num(conn, "SELECT jobd.enqueue('flush', debounce_key => 'f', "
                                 "debounce_for => '1 millisecond')");
    run_when_due(c, "flush", soon);
    int64_t next = sql_num(conn, "SELECT jobd.enqueue('flush', debounce_key => 'f', "
                                 "debounce_for => '1 hour')");
    ASSERT(next != soon);
    expect_status(c, next, "pending");
    PQfinish(conn);
    close_client(c);
}

TEST(sql_unique_exactly_once)
{
    jobd_client *c = open_client("pg");
    PGconn *conn = PQconnectdb(pg_url);
    ASSERT_EQ(PQstatus(conn), CONNECTION_OK);

    /* 16 unique enqueues at once: one job; inside the window, its id
     * whatever its status, the payload dropped. */
    int64_t u = win_burst("SELECT jobd.enqueue('report.build', $1::jsonb, "
                          "unique_key => 'report-2026-12-06', unique_for => '1 day')",
                          NULL);
    ASSERT_EQ(sql_num(conn, "SELECT count(*) FROM jobd.all_jobs WHERE type = 'report.build'"), 1);
    run_when_due(c, "report.build", u);
    ASSERT_EQ(sql_num(conn, "SELECT jobd.enqueue('report.build', '{\"x\": 1}', "
                            "unique_key => 'report-2026-12-06', unique_for => '1 day')"),
              u);
    expect_status(c, u, "succeeded");
    /* The key is global: another type gets the same job. */
    ASSERT_EQ(sql_num(conn, "SELECT jobd.enqueue('other.type', unique_key => "
                            "'report-2026-12-06', unique_for => '1 day')"),
              u);

    /* After the window, a new job (and a new window). */
    int64_t t1 = sql_num(conn, "SELECT jobd.enqueue('tick', unique_key => 'tick', "
                               "unique_for => '1 millisecond')");
    int64_t t2 = t1, deadline = clock_mono_now_us() + 30 * 1000000LL;
    while (t2 == t1 && clock_mono_now_us() < deadline)
        t2 = sql_num(conn, "SELECT jobd.enqueue('tick', unique_key => 'tick', "
                           "unique_for => '1 hour')");
    ASSERT(t2 != t1);
    ASSERT_EQ(sql_num(conn, "SELECT jobd.enqueue('tick', unique_key => 'tick', "
                            "unique_for => '1 hour')"),
              t2);
    ASSERT_EQ(sql_num(conn, "SELECT count(*) FROM jobd.all_jobs WHERE type = 'tick'"), 2);

    /* A rolled back enqueue takes its key with it. */
    pg_ok(conn, "BEGIN");
    int64_t gone = sql_num(conn, "SELECT jobd.enqueue('tx', unique_key => 'tx-key', "
                                 "unique_for => '1 day')");
    pg_ok(conn, "ROLLBACK");
    int64_t kept = sql_num(conn, "SELECT jobd.enqueue('tx', unique_key => 'tx-key', "
                                 "unique_for => '1 day')");
    ASSERT(kept != gone);
    expect_status(c, kept, "pending");
    PQfinish(conn);
    close_client(c);
}

TEST(sql_windows_refused_and_earlier_calls_kept)
{
    jobd_client *c = open_client("pg");
    PGconn *conn = PQconnectdb(pg_url);
    ASSERT_EQ(PQstatus(conn), CONNECTION_OK);

    /* What the API refuses, the function refuses. */
    sql_refused(conn, "SELECT jobd.enqueue('t', debounce_key => 'k')", "go together");
    sql_refused(conn, "SELECT jobd.enqueue('t', unique_for => '1s')", "go together");
    sql_refused(conn, "SELECT jobd.enqueue('t', debounce_key => 'k', debounce_for => '0s')",
                "debounce_for must be from 1ms to 366 days");
    sql_refused(conn, "SELECT jobd.enqueue('t', unique_key => 'k', unique_for => '367 days')",
                "unique_for must be from 1ms to 366 days");
    sql_refused(conn, "SELECT jobd.enqueue('t', unique_key => ' k', unique_for => '1s')",
                "unique_key must be 1 to 255 bytes");
    sql_refused(conn,
                "SELECT jobd.enqueue('t', debounce_key => 'k', debounce_for => '1s', "
                "unique_key => 'k', unique_for => '1s')",
                "cannot be combined with debounce_key");
    sql_refused(conn,
                "SELECT jobd.enqueue('t', run_at => now() + interval '1 hour', "
                "debounce_key => 'k', debounce_for => '1s')",
                "sets run_at itself");
    sql_refused(conn,
                "SELECT jobd.enqueue('t', depends_on => ARRAY[1], debounce_key => 'k', "
                "debounce_for => '1s')",
                "cannot be combined with depends_on");
    sql_refused(conn,
                "SELECT jobd.enqueue('t', idempotency_key => 'i', unique_key => 'k', "
                "unique_for => '1s')",
                "unique_key cannot be combined with idempotency_key");

    /* Calls of the earlier versions mean what they did: seven positional
     * arguments, and all eleven of version 31. */
    int64_t p7 = sql_num(conn, "SELECT jobd.enqueue('old', '{}', 'default', now(), 0, 25, NULL)");
    int64_t p11 = sql_num(conn, "SELECT jobd.enqueue('old', '{}', 'default', now(), 0, 25, NULL, "
                                "NULL, NULL, 'cancel', 'customer-1')");
    ASSERT(p7 > 0 && p11 > p7);
    expect_group(c, p11, "customer-1");
    PQfinish(conn);
    close_client(c);
}

TEST(enqueue_pg_debounce_and_unique_exactly_once)
{
    jobd_client *c = open_client("pg");
    PGconn *conn = PQconnectdb(pg_url);
    ASSERT_EQ(PQstatus(conn), CONNECTION_OK);
    struct jobd_error e = {0};

    struct jobd_job_opts d = {.type = "index", .debounce_key = "site-9", .debounce_ms = 30000};
    int64_t before_us = clock_real_now_us();
    int64_t id = win_burst(NULL, &d);
    ASSERT_EQ(sql_num(conn, "SELECT count(*) FROM jobd.all_jobs WHERE type = 'index'"), 1);
    struct job j = job_of(c, id);
    ASSERT(j.run_at_us >= before_us + 29 * 1000000LL);
    int64_t first_run_at = j.run_at_us;
    job_fini(&j);
    /* In the caller's transaction: the replacement is seen once committed. */
    pg_ok(conn, "BEGIN");
    d.debounce_ms = 3600 * 1000;
    d.payload = "{\"v\": 2}";
    d.priority = 7;
    int64_t same = 0;
    ASSERT_OK(jobd_enqueue_pg(conn, &d, &same, &e), &e);
    ASSERT_EQ(same, id);
    j = job_of(c, id);
    ASSERT_EQ(j.run_at_us, first_run_at); /* not committed yet */
    job_fini(&j);
    pg_ok(conn, "COMMIT");
    j = job_of(c, id);
    ASSERT(j.run_at_us >= first_run_at + 3500 * 1000000LL);
    ASSERT_EQ(j.priority, 7);
    ASSERT(strstr(j.payload, "\"v\"") != NULL && strstr(j.payload, "2") != NULL);
    job_fini(&j);

    struct jobd_job_opts u = {.type = "report", .unique_key = "daily", .unique_ms = 60000};
    int64_t uid = win_burst(NULL, &u);
    ASSERT_EQ(sql_num(conn, "SELECT count(*) FROM jobd.all_jobs WHERE type = 'report'"), 1);
    int64_t again = 0;
    ASSERT_OK(jobd_enqueue_pg(conn, &u, &again, &e), &e);
    ASSERT_EQ(again, uid);
    /* jobd_enqueue (the server's path) and jobd.enqueue share the key. */
    ASSERT_OK(jobd_enqueue(c, &u, &again, &e), &e);
    ASSERT_EQ(again, uid);

    /* Refused before the connection, naming the option. */
    struct jobd_job_opts bad = {.type = "t", .debounce_key = "k"};
    ASSERT_EQ(jobd_enqueue_pg(conn, &bad, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "debounce.for");
    PQfinish(conn);
    close_client(c);
}
#endif
