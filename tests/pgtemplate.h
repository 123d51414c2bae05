/*
 * pgtemplate.h — a fresh PostgreSQL database with jobd's schema already in
 * it, for the tests that start `jobd server` on a new database only to test
 * what the server does with it (tests/integration/apitest.h).
 *
 * Why: the server migrates a new database from nothing at start, and on
 * PostgreSQL that is 38 steps of DDL, a PostgreSQL CPU cost that each of
 * the ~100 servers started on a fresh database paid again. Here the steps
 * run once per cluster, into a template database; each test's database is
 * a copy of it (CREATE DATABASE ... TEMPLATE, what a fresh database costs
 * anyway), which the server's own migrate then finds up to date. The
 * migrations from nothing stay tested where they are the subject: the
 * conformance suite's migrate cases, the migrate CLI's tests.
 *
 * The template's name holds a hash of the migrations' text (pg/schema.c),
 * so a cluster that outlives a change of them (JOBD_TEST_PG_URL of one's
 * own) gets a new template, never a stale one. Whoever makes it holds an
 * advisory lock on the admin database meanwhile, so concurrent tests wait
 * for one template instead of racing to make two; a template left half
 * made by a crash is still sound, since the server migrates whatever is
 * missing.
 */
#ifndef JOBD_TESTS_PGTEMPLATE_H
#define JOBD_TESTS_PGTEMPLATE_H

#include <libpq-fe.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pgtest.h"
#include "store/pg/internal.h"
#include "store/store.h"

/* FNV-1a over every migration's version, name and text. */
static inline uint64_t
pgtemplate_hash(void)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t i = 0; i < pg_migrations_count; i++) {
        char v[16];
        snprintf(v, sizeof v, "%d:", pg_migrations[i].version);
        const char *parts[3] = {v, pg_migrations[i].name, pg_migrations[i].sql};
        for (int k = 0; k < 3; k++)
            for (const char *p = parts[k]; p != NULL && *p; p++)
                h = (h ^ (unsigned char)*p) * UINT64_C(1099511628211);
    }
    return h;
}

/* Runs sql on the open connection c; 0, or -1 after printing why. */
static inline int
pgtemplate_exec(PGconn *c, const char *sql, PGresult **keep)
{
    PGresult *r = PQexec(c, sql);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    if (!ok)
        fprintf(stderr, "pgtemplate: %s: %s", sql, PQresultErrorMessage(r));
    if (ok && keep != NULL)
        *keep = r;
    else
        PQclear(r);
    return ok ? 0 : -1;
}

/* Makes the template tmpl on the admin URL if it is not there; 0 or -1. */
static inline int
pgtemplate_ensure(const char *admin, const char *tmpl)
{
    PGconn *c = PQconnectdb(admin);
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "pgtemplate: cannot connect to %s: %s", admin, PQerrorMessage(c));
        PQfinish(c);
        return -1;
    }
    char sql[200];
    PGresult *r = NULL;
    /* Held until PQfinish: the session's lock, also released if we crash. */
    int rc = pgtemplate_exec(c, "SELECT pg_advisory_lock(7419052611)", NULL);
    snprintf(sql, sizeof sql, "SELECT 1 FROM pg_database WHERE datname = '%s'", tmpl);
    if (rc == 0)
        rc = pgtemplate_exec(c, sql, &r);
    if (rc == 0 && PQntuples(r) == 0) {
        snprintf(sql, sizeof sql, "CREATE DATABASE %s TEMPLATE template0", tmpl);
        rc = pgtemplate_exec(c, sql, NULL);
        char url[700];
        if (rc == 0 && pgtest_url_with_db(admin, tmpl, url, sizeof url) != 0)
            rc = -1;
        struct store *st = NULL;
        struct jobd_error e = {0};
        if (rc == 0 && (store_open(url, &st, &e) != JOBD_OK || store_migrate(st, &e) != JOBD_OK)) {
            fprintf(stderr, "pgtemplate: cannot migrate %s: %s\n", tmpl, e.msg);
            rc = -1;
        }
        store_close(st);
    }
    PQclear(r);
    PQfinish(c);
    return rc;
}

/*
 * Like pgtest_fresh_db (a new database of this test's own, its URL into
 * url), but with jobd's schema migrated in it. 0, or -1 after printing why.
 */
static inline int
pgtemplate_fresh_db(char *url, size_t len)
{
    const char *admin = getenv("JOBD_TEST_PG_URL");
    if (admin == NULL || *admin == '\0')
        return pgtest_fresh_db(url, len); /* which says why it cannot */
    char tmpl[64];
    snprintf(tmpl, sizeof tmpl, "jobd_tmpl_%016llx", (unsigned long long)pgtemplate_hash());
    if (pgtemplate_ensure(admin, tmpl) != 0)
        return -1;
    return pgtest_fresh_db_from(url, len, tmpl);
}

#endif
