/*
 * pgtest.h — a private PostgreSQL database per test (header-only).
 *
 * Tests that run in parallel must never see each other's rows, so each one
 * creates its own database through the superuser URL in JOBD_TEST_PG_URL
 * (exported by scripts/with-pg.sh) and connects to it by replacing the path
 * of that URL. Names are made of pid, a counter and the time, so forked test
 * children and concurrent test programs never collide.
 *
 *   char url[512];
 *   if (pgtest_fresh_db(url, sizeof url) != 0) exit(1);   (message on stderr)
 *   ... store_open(url, ...) ...
 *   pgtest_drop_db(url);                                   (best effort)
 */
#ifndef JOBD_TESTS_PGTEST_H
#define JOBD_TESTS_PGTEST_H

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Where the path of a libpq URI starts (the '/' after host:port), and ends. */
static inline int
pgtest_url_split(const char *url, size_t *path_start, size_t *path_end)
{
    const char *p = strstr(url, "://");
    if (p == NULL)
        return -1;
    p += 3;
    size_t s = (size_t)(p - url) + strcspn(p, "/?");
    size_t e = s;
    if (url[s] == '/')
        e = s + strcspn(url + s, "?");
    *path_start = s;
    *path_end = e;
    return 0;
}

/* Writes base with its database replaced by db into out; -1 if it does not fit. */
static inline int
pgtest_url_with_db(const char *base, const char *db, char *out, size_t len)
{
    size_t s, e;
    if (pgtest_url_split(base, &s, &e) != 0)
        return -1;
    int n = snprintf(out, len, "%.*s/%s%s", (int)s, base, db, base + e);
    return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

static inline void
pgtest_quiet(void *arg, const char *msg)
{
    (void)arg; /* "schema ... does not exist, skipping" is not news */
    (void)msg;
}

/* Runs one utility statement on the admin URL; prints and returns -1 on failure. */
static inline int
pgtest_admin_exec(const char *admin_url, const char *sql, int quiet)
{
    PGconn *c = PQconnectdb(admin_url);
    if (PQstatus(c) != CONNECTION_OK) {
        if (!quiet)
            fprintf(stderr, "pgtest: cannot connect to %s: %s", admin_url, PQerrorMessage(c));
        PQfinish(c);
        return -1;
    }
    PQsetNoticeProcessor(c, pgtest_quiet, NULL);
    PGresult *r = PQexec(c, sql);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    if (!ok && !quiet)
        fprintf(stderr, "pgtest: %s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    PQfinish(c);
    return ok ? 0 : -1;
}

/*
 * Creates a fresh, empty database and writes its URL into url (len bytes).
 * Returns 0, or -1 after printing why on stderr (JOBD_TEST_PG_URL unset,
 * server down, ...). Thread-safe enough for tests: the counter is only a
 * tie-breaker next to pid and nanoseconds.
 */
static inline int pgtest_fresh_db_from(char *url, size_t len, const char *template_db);

static inline int
pgtest_fresh_db(char *url, size_t len)
{
    return pgtest_fresh_db_from(url, len, "template0");
}

/* pgtest_fresh_db, a copy of the database template_db (no one may be
 * connected to it: PostgreSQL waits 5 s for them, then refuses). */
static inline int
pgtest_fresh_db_from(char *url, size_t len, const char *template_db)
{
    static unsigned counter;
    const char *admin = getenv("JOBD_TEST_PG_URL");
    if (admin == NULL || *admin == '\0') {
        fprintf(stderr, "pgtest: JOBD_TEST_PG_URL is not set; run the test under "
                        "scripts/with-pg.sh (e.g. scripts/with-pg.sh ./build-asan/TEST)\n");
        return -1;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char db[64];
    snprintf(db, sizeof db, "jobd_t_%ld_%u_%lld%09ld", (long)getpid(),
             __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED), (long long)ts.tv_sec % 100000,
             ts.tv_nsec);
    if (pgtest_url_with_db(admin, db, url, len) != 0) {
        fprintf(stderr,
                "pgtest: JOBD_TEST_PG_URL '%s' is not a postgresql:// URI or is "
                "too long\n",
                admin);
        return -1;
    }
    char sql[200];
    /* template0 by default: CREATE DATABASE fails if anyone is connected to the template. */
    snprintf(sql, sizeof sql, "CREATE DATABASE %s TEMPLATE %s", db, template_db);
    return pgtest_admin_exec(admin, sql, 0);
}

/*
 * Runs parameterless SQL (e.g. "DROP SCHEMA IF EXISTS jobd CASCADE") on the
 * database at url. Returns 0, or -1 after printing the error on stderr.
 */
static inline int
pgtest_exec(const char *url, const char *sql)
{
    return pgtest_admin_exec(url, sql, 0);
}

/* Drops the database named by url (made by pgtest_fresh_db). Best effort, silent. */
static inline void
pgtest_drop_db(const char *url)
{
    const char *admin = getenv("JOBD_TEST_PG_URL");
    size_t s, e;
    if (admin == NULL || url == NULL || pgtest_url_split(url, &s, &e) != 0 || e <= s + 1)
        return;
    char db[64];
    size_t n = e - s - 1;
    if (n >= sizeof db)
        return;
    memcpy(db, url + s + 1, n);
    db[n] = '\0';
    if (strncmp(db, "jobd_t_", 7) != 0) /* never drop anything we did not make */
        return;
    char sql[160];
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", db);
    (void)pgtest_admin_exec(admin, sql, 1);
}

/* ALTER DATABASE <the database of url> SET setting; 0 or -1 (printed). */
static inline int
pgtest_set_db(const char *url, const char *setting)
{
    size_t s, e;
    if (pgtest_url_split(url, &s, &e) != 0 || e <= s + 1)
        return -1;
    char sql[256];
    snprintf(sql, sizeof sql, "ALTER DATABASE %.*s SET %s", (int)(e - s - 1), url + s + 1, setting);
    return pgtest_exec(url, sql);
}

/*
 * PGTEST_DB_PER_RUN(url): for a test program whose tests share one database.
 * Declares `static char url[512]`, creates the database before main (with
 * synchronous_commit off: correctness tests need no fsync per commit, and
 * nothing in them kills the server), drops it when the parent process exits
 * (forked children leave it alone), and defines reset_db(), which each test
 * calls first to start from an empty schema "jobd". Needs test.h (TEST_FAIL).
 */
#define PGTEST_DB_PER_RUN(url)                                                                     \
    static char url[512];                                                                          \
    static pid_t url##_parent;                                                                     \
    static void url##_drop(void)                                                                   \
    {                                                                                              \
        if (getpid() == url##_parent && url[0] != '\0')                                            \
            pgtest_drop_db(url);                                                                   \
    }                                                                                              \
    __attribute__((constructor)) static void url##_create(void)                                    \
    {                                                                                              \
        url##_parent = getpid();                                                                   \
        if (pgtest_fresh_db(url, sizeof url) != 0) {                                               \
            url[0] = '\0';                                                                         \
            return;                                                                                \
        }                                                                                          \
        atexit(url##_drop);                                                                        \
        (void)pgtest_set_db(url, "synchronous_commit = off");                                      \
    }                                                                                              \
    static void reset_db(void)                                                                     \
    {                                                                                              \
        if (url[0] == '\0')                                                                        \
            TEST_FAIL("no test database (see the pgtest message above)");                          \
        if (pgtest_exec(url, "DROP SCHEMA IF EXISTS jobd CASCADE") != 0)                           \
            TEST_FAIL("cannot reset the test database");                                           \
    }

#endif
