/*
 * test_libjobd_groups.c — a group, a debounce and a unique window given
 * through libjobd (docs/MODEL.md, Groups; Debounce and unique windows):
 * jobd_enqueue keeps the group and honours the windows on both stores;
 * jobd_enqueue_pg and the SQL function jobd.enqueue (schema version 31)
 * take the group in the caller's transaction, and jobd_enqueue_pg refuses
 * a window (jobd.enqueue takes none) naming it. The pg cases are skipped
 * without JOBD_TEST_PG_URL, failed under JOBD_TEST_REQUIRE_PG.
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

static jobd_client *
open_client(const char *backend)
{
    const char *url = "sqlite:groups.db";
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
