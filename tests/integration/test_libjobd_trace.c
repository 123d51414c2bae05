/*
 * test_libjobd_trace.c — a job's traceparent (docs/API.md, Trace context)
 * through the SQL function jobd.enqueue on a fresh PostgreSQL database
 * (docs/MODEL.md, Inside your own transaction): jobd_enqueue_pg passes it as
 * the 8th argument, a call naming it by name works, calls of 7 arguments
 * still mean what they did, and a malformed one is refused by the function
 * itself (raw SQL) and by jobd_enqueue_pg before any SQL. Skipped without
 * JOBD_TEST_PG_URL, failed under JOBD_TEST_REQUIRE_PG (TEST_NEED_PG).
 */
#include <stdlib.h>
#include <string.h>

#include "core/job.h"
#include "jobd.h"
#include "lib/lib.h"
#include "store/store.h"
#include "test.h"

#if __has_include("pgtest.h")
#include <libpq-fe.h>

#include "pgtest.h"

#define TP1 "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
#define TP2 "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"

/* Runs sql (one jobd.enqueue call): the id it returned. */
static int64_t
sql_enqueue(PGconn *conn, const char *sql)
{
    PGresult *r = PQexec(conn, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        TEST_FAIL("%s: %s", sql, PQresultErrorMessage(r));
    int64_t id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return id;
}

/* The traceparent job id has in c's store ("" for none). */
static void
expect_tp(jobd_client *c, int64_t id, const char *want)
{
    struct job j = {0};
    struct jobd_error e = {0};
    ASSERT_OK(store_get(lib_client_store(c), id, &j, &e), &e);
    ASSERT_STR_EQ(j.traceparent != NULL ? j.traceparent : "", want);
    job_fini(&j);
}

TEST(enqueue_pg_and_sql_keep_the_traceparent)
{
    TEST_NEED_PG();
    char url[512];
    if (pgtest_fresh_db(url, sizeof url) != 0)
        TEST_FAIL("no PostgreSQL for this test (see above)");
    jobd_client *c = NULL;
    struct jobd_error e = {0};
    ASSERT_OK(jobd_client_open(url, &c, &e), &e);
    PGconn *conn = PQconnectdb(url);
    ASSERT_EQ(PQstatus(conn), CONNECTION_OK);

    int64_t id = 0;
    struct jobd_job_opts o = {.type = "pg.traced", .traceparent = TP1};
    ASSERT_OK(jobd_enqueue_pg(conn, &o, &id, &e), &e);
    expect_tp(c, id, TP1);
    o.traceparent = NULL;
    ASSERT_OK(jobd_enqueue_pg(conn, &o, &id, &e), &e); /* 7 arguments */
    expect_tp(c, id, "");
    expect_tp(c, sql_enqueue(conn, "SELECT jobd.enqueue('pg.traced', traceparent => '" TP2 "')"),
              TP2);
    expect_tp(c,
              sql_enqueue(conn, "SELECT jobd.enqueue('pg.traced', '{}', 'default', now(), 0, 25, "
                                "NULL)"),
              "");

    /* all-zero trace id: the function's own check */
    PGresult *r = PQexec(conn, "SELECT jobd.enqueue('pg.traced', traceparent => "
                               "'00-00000000000000000000000000000000-b7ad6b7169203331-00')");
    ASSERT_EQ(PQresultStatus(r), PGRES_FATAL_ERROR);
    ASSERT(strstr(PQresultErrorMessage(r), "traceparent must be") != NULL);
    PQclear(r);
    o.traceparent = "bad";
    ASSERT_EQ(jobd_enqueue_pg(conn, &o, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "traceparent");

    PQfinish(conn);
    jobd_client_close(c);
    pgtest_drop_db(url);
}
#endif
