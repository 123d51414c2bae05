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
 * transaction, and jobd_enqueue_pg refuses a window (jobd.enqueue takes
 * none) naming it. The pg cases are skipped without JOBD_TEST_PG_URL,
 * failed under JOBD_TEST_REQUIRE_PG (TEST_NEED_PG).
 */
#include <stdlib.h>
#include <string.h>

#include "core/job.h"
#include "jobd.h"
#include "lib/lib.h"
#include "store/store.h"
#include "test.h"

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

    struct jobd_job_opts d = {.type = "index", .debounce_key = "k", .debounce_ms = 1000};
    ASSERT_EQ(jobd_enqueue_pg(conn, &d, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "debounce_key");
    PQfinish(conn);
    close_client(c);
}
#endif
