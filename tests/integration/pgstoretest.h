/*
 * pgstoretest.h — what test_pg_store.c and test_pg_layout.c share: one
 * database for the program (tests/pgtest.h, PGTEST_DB_PER_RUN) named
 * g_url, a fresh migrated store on it, and one-cell SQL reads. Header-only
 * and static, for those two programs; each includes it once.
 */
#ifndef JOBD_TESTS_PGSTORETEST_H
#define JOBD_TESTS_PGSTORETEST_H

#include <libpq-fe.h>

#include "core/err.h"
#include "pgtest.h"
#include "store/store.h"
#include "test.h"
#include "util/clock.h"

PGTEST_DB_PER_RUN(g_url)

/* A fresh database, migrated, with a store on it (manual clock if mc); the
 * caller closes it (store_close). */
static struct store *
fresh_store(struct manual_clock *mc)
{
    reset_db();
    struct store *st = NULL;
    struct jobd_error e = {0};
    ASSERT_OK(store_open(g_url, &st, &e), &e);
    ASSERT_OK(store_migrate(st, &e), &e);
    if (mc != NULL)
        store_set_clock(st, &mc->clock);
    return st;
}

/* The first cell of a query on the test database, as text the caller frees. */
static inline char *
sql_text(const char *sql)
{
    PGconn *c = PQconnectdb(g_url);
    ASSERT_EQ(PQstatus(c), CONNECTION_OK);
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        TEST_FAIL("%s: %s", sql, PQresultErrorMessage(r));
    char *v = strdup(PQgetvalue(r, 0, 0));
    PQclear(r);
    PQfinish(c);
    return v;
}

/* The first cell of a query on the test database, as a number. */
static inline long long
sql_num(const char *sql)
{
    char *t = sql_text(sql);
    long long v = atoll(t);
    free(t);
    return v;
}

#endif
