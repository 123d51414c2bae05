/*
 * conformance.c — the store conformance suite: the same tests, run against
 * each backend (`store_conformance sqlite`, `store_conformance pg`), and
 * through the remote store to a `jobd server` on each (`remote_sqlite`,
 * `remote_pg`: tests/store/remote.c).
 *
 * Every test opens a fresh store (a new SQLite file in the test's temp dir,
 * or, on PostgreSQL, a new database of its slot), migrated, and sets a
 * manual clock, so lease expiry and backoff are driven by moving the clock,
 * never by sleeping. The migrations run once per run, into a template the
 * harness makes before the first case (conf_make_template); each case's
 * store is a copy of it, which store_migrate then finds up to date. The
 * migrations themselves are cases of their own (conformance_open.c: from
 * nothing, by four processes at once). The tests pin down every transition
 * and guard of docs/MODEL.md, "Transitions" through the public store_*()
 * interface only, so a backend passes exactly when it keeps them.
 *
 * This file holds the fixture (declared in conformance.h) and the harness's
 * main(); the cases are in conformance_*.c, one file per topic, all linked
 * into the one store_conformance program.
 */
#define TEST_SHARED_MAIN
/* Cases may run side by side (TEST_JOBS, tests/test.h): each slot has its
 * own PostgreSQL database (pg_run_db_name), each case its own SQLite file
 * and server in its own temporary directory. */
#define TEST_PARALLEL_SAFE
#include "conformance.h"

#include <fcntl.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include "store/operator.h"

/* Ends a forked child, flushing what it wrote (stderr is a file here). */
void
child_exit(int code)
{
    fflush(NULL);
    _exit(code);
}

const char *
backend(void)
{
    static const char *const known[] = {"sqlite", "pg", "pg_pooled", "remote_sqlite", "remote_pg"};
    if (test_argv == NULL || test_argv[1] == NULL)
        TEST_FAIL("usage: store_conformance sqlite|pg|pg_pooled|remote_sqlite|remote_pg");
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(test_argv[1], known[i]) == 0)
            return test_argv[1];
    TEST_FAIL("unknown backend '%s' (sqlite, pg, pg_pooled, remote_sqlite or remote_pg)",
              test_argv[1]);
}

/* pg_pooled: PostgreSQL with ?pooler=transaction, i.e. as behind PgBouncer in
 * transaction mode: every statement unnamed, no LISTEN (pg/conn.c). */
bool
is_pg(void)
{
    const char *b = backend();
    return strncmp(b, "pg", 2) == 0 || strcmp(b, "remote_pg") == 0;
}

/*
 * PostgreSQL: one database per run of this program and slot (the cases that
 * run at once, TEST_JOBS), made through the
 * superuser URL in JOBD_TEST_PG_URL and named after the harness's (parent)
 * pid and the slot, so parallel runs and cases never share rows; every test starts by dropping
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
pg_run_db_name(char *buf, size_t len, int slot)
{
    snprintf(buf, len, "jobd_t_conf_%ld_%d", (long)conf_parent_pid, slot);
}

/* The run's migrated template database (conf_make_template). */
static void
pg_template_name(char *buf, size_t len)
{
    snprintf(buf, len, "jobd_t_conf_%ld_tmpl", (long)conf_parent_pid);
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

/* Runs sql on url; ok_state is an SQLSTATE also taken as success (or NULL).
 * sql2, when not NULL, runs next on the same connection if sql succeeded
 * (CREATE and DROP DATABASE cannot share one string: each must be a
 * statement of its own, outside a transaction). */
static int
pg_exec2(const char *url, const char *sql, const char *ok_state, const char *sql2)
{
    PGconn *c = PQconnectdb(url);
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "cannot connect to %s: %s", url, PQerrorMessage(c));
        PQfinish(c);
        return -1;
    }
    int ok = 1;
    for (const char *q = sql; ok && q != NULL; q = q == sql ? sql2 : NULL) {
        PGresult *r = PQexec(c, q);
        ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        if (!ok && q == sql && ok_state != NULL && state != NULL && strcmp(state, ok_state) == 0)
            ok = 1;
        if (!ok)
            fprintf(stderr, "%s: %s", q, PQresultErrorMessage(r));
        PQclear(r);
    }
    PQfinish(c);
    return ok ? 0 : -1;
}

static int
pg_exec(const char *url, const char *sql, const char *ok_state)
{
    return pg_exec2(url, sql, ok_state, NULL);
}

/* The fixture's URL as libpq takes it: without jobd's own pooler=transaction,
 * which pg_fresh appends last for pg_pooled. */
const char *
libpq_url(const char *url, char *buf, size_t n)
{
    snprintf(buf, n, "%s", url);
    char *p = strstr(buf, "pooler=transaction");
    if (p != NULL && p > buf)
        p[-1] = '\0'; /* the '?' or '&' before it */
    return buf;
}

/* pg_pooled: the URL says pooler=transaction (appended last, libpq_url
 * takes it off). */
static void
pg_pooled_suffix(char *url, size_t len)
{
    if (strcmp(backend(), "pg_pooled") != 0)
        return;
    size_t n = strlen(url);
    snprintf(url + n, len - n, "%spooler=transaction", strchr(url, '?') ? "&" : "?");
}

/* Points fx->url at the run's database, created if needed, without jobd's schema. */
void
pg_fresh(struct fx *f)
{
    const char *base = pg_admin_url();
    char db[64], sql[160];
    pg_run_db_name(db, sizeof db, test_slot);
    /* template0: CREATE DATABASE fails while anyone is connected to template1. */
    snprintf(sql, sizeof sql, "CREATE DATABASE %s TEMPLATE template0", db);
    if (pg_exec(base, sql, "42P04" /* duplicate_database */) != 0)
        TEST_FAIL("cannot create the test database %s", db);
    pg_url_with_db(base, db, f->url, sizeof f->url);
    if (pg_exec(f->url, "DROP SCHEMA IF EXISTS jobd CASCADE", NULL) != 0)
        TEST_FAIL("cannot reset schema jobd in %s", db);
    pg_pooled_suffix(f->url, sizeof f->url);
}

/*
 * Points fx->url at a new database of the slot, a copy of the run's
 * migrated template: what pg_fresh and a migration from nothing give, for
 * less (measured on this 2-core machine: DROP and CREATE DATABASE ...
 * STRATEGY FILE_COPY 0.16 s, against 0.37 s for DROP SCHEMA and the
 * migrations; the default strategy, WAL_LOG, writes the copy through the
 * log and took 0.36 s). WITH (FORCE): a connection the previous case left
 * (a forked child killed at its end) cannot hold the name.
 */
static void
pg_fresh_migrated(struct fx *f)
{
    const char *base = pg_admin_url();
    char db[64], tmpl[64], drop[160], create[200];
    pg_run_db_name(db, sizeof db, test_slot);
    pg_template_name(tmpl, sizeof tmpl);
    snprintf(drop, sizeof drop, "DROP DATABASE IF EXISTS %s WITH (FORCE)", db);
    snprintf(create, sizeof create, "CREATE DATABASE %s TEMPLATE %s STRATEGY FILE_COPY", db, tmpl);
    if (pg_exec2(base, drop, NULL, create) != 0)
        TEST_FAIL("cannot make the test database %s from %s", db, tmpl);
    pg_url_with_db(base, db, f->url, sizeof f->url);
    pg_pooled_suffix(f->url, sizeof f->url);
}

/* In the harness process only (not in a test child that exits): drop the
 * run's databases, one per slot. */
__attribute__((destructor)) static void
conf_drop_run_db(void)
{
    if (getpid() != conf_parent_pid || test_argv == NULL || test_argv[1] == NULL ||
        (strcmp(test_argv[1], "pg") != 0 && strcmp(test_argv[1], "pg_pooled") != 0 &&
         strcmp(test_argv[1], "remote_pg") != 0))
        return;
    const char *base = getenv("JOBD_TEST_PG_URL");
    if (base == NULL || *base == '\0')
        return;
    for (int slot = -1; slot < (test_jobs > 0 ? test_jobs : 1); slot++) {
        char db[64], sql[160];
        if (slot < 0)
            pg_template_name(db, sizeof db);
        else
            pg_run_db_name(db, sizeof db, slot);
        snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", db);
        (void)pg_exec(base, sql, NULL);
    }
}

/* SQLite: the run's migrated template file, in a folder of the harness's
 * own under $TMPDIR (removed at its exit). */
static char conf_sqlite_template[600];

/* Opens url and migrates it from nothing; the harness fails if it cannot. */
static void
migrate_template(const char *url)
{
    struct store *st = NULL;
    struct jobd_error e = {0};
    int rc = store_open(url, &st, &e);
    if (rc == JOBD_OK)
        rc = store_migrate(st, &e);
    store_close(st);
    if (rc != JOBD_OK)
        TEST_FAIL("cannot migrate the template store %s: %s", url, e.msg);
}

/*
 * test_before_all (tests/test.h): the run's migrated template store, which
 * fx_open copies for each case. Made in the harness process, before any
 * case is forked, so the slots never race to make it.
 */
static void
conf_make_template(void)
{
    if (is_pg()) {
        char tmpl[64], sql[160], url[1200];
        pg_template_name(tmpl, sizeof tmpl);
        snprintf(sql, sizeof sql, "CREATE DATABASE %s TEMPLATE template0", tmpl);
        if (pg_exec(pg_admin_url(), sql, NULL) != 0)
            TEST_FAIL("cannot create the template database %s", tmpl);
        pg_url_with_db(pg_admin_url(), tmpl, url, sizeof url);
        pg_pooled_suffix(url, sizeof url);
        migrate_template(url);
        return;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[500];
    snprintf(dir, sizeof dir, "%s/jobd-conf-tmpl.XXXXXX",
             tmp != NULL && *tmp == '/' ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL)
        TEST_FAIL("cannot make a folder for the template store: %s", dir);
    snprintf(conf_sqlite_template, sizeof conf_sqlite_template, "%s/tmpl.db", dir);
    char url[700];
    snprintf(url, sizeof url, "sqlite:%s", conf_sqlite_template);
    migrate_template(url);
    /* Closed by its last connection, the file holds everything: SQLite
     * checkpoints the write-ahead log into it and deletes the log. */
    char wal[620];
    snprintf(wal, sizeof wal, "%s-wal", conf_sqlite_template);
    if (access(wal, F_OK) == 0)
        TEST_FAIL("the template store %s kept its write-ahead log", conf_sqlite_template);
}

__attribute__((constructor)) static void
conf_register_template(void)
{
    test_before_all = conf_make_template;
}

__attribute__((destructor)) static void
conf_remove_sqlite_template(void)
{
    if (getpid() != conf_parent_pid || conf_sqlite_template[0] == '\0')
        return;
    char dir[600];
    snprintf(dir, sizeof dir, "%s", conf_sqlite_template);
    *strrchr(dir, '/') = '\0';
    (void)unlink(conf_sqlite_template);
    (void)rmdir(dir);
}

/* Copies the SQLite template to path, a file that must not exist yet, 0600
 * as the store makes its files (sqlite/open.c). */
static void
copy_sqlite_template(const char *path)
{
    int in = open(conf_sqlite_template, O_RDONLY | O_CLOEXEC);
    int out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (in < 0 || out < 0)
        TEST_FAIL("cannot copy the template store %s to %s", conf_sqlite_template, path);
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            TEST_FAIL("cannot write %s", path);
    if (n < 0 || close(out) != 0)
        TEST_FAIL("cannot copy the template store to %s", path);
    close(in);
}

/* raw_count's PostgreSQL connection, its process and its URL (libpq's). */
static PGconn *raw_pg;
static pid_t raw_pg_pid;
static char raw_pg_url[1200];

/* Opens another connection to the fixture's database, migrated, same clock. */
struct store *
fx_connect(struct fx *f)
{
    struct store *st = NULL;
    struct jobd_error e = {0};
    ASSERT_OK(store_open(f->url, &st, &e), &e);
    ASSERT_OK(store_migrate(st, &e), &e);
    store_set_clock(st, &f->mc.clock);
    return st;
}

void
fx_open(struct fx *f)
{
    memset(f, 0, sizeof *f);
    manual_clock_init(&f->mc, T0);
    if (is_pg()) {
        pg_fresh_migrated(f);
    } else {
        copy_sqlite_template(test_path("conf.db"));
        snprintf(f->url, sizeof f->url, "sqlite:%s", test_path("conf.db"));
    }
    f->st = fx_connect(f);
    ASSERT_STR_EQ(store_backend(f->st), is_pg() ? "pg" : "sqlite");
    if (is_remote())
        remote_attach(f);
}

void
fx_close(struct fx *f)
{
    if (raw_pg != NULL && raw_pg_pid == getpid()) {
        PQfinish(raw_pg);
        raw_pg = NULL;
    }
    remote_detach(f);
    store_close(f->st);
    f->st = NULL;
}

int64_t
now_of(struct fx *f)
{
    return atomic_load(&f->mc.now_us);
}

/* Enqueues a job and returns its id. */
int64_t
enq(struct fx *f, const char *type, const char *queue, int32_t priority, int64_t run_at_us)
{
    struct job_spec s = {
        .type = type, .queue = queue, .priority = priority, .run_at_us = run_at_us};
    struct job j = {0};
    ASSERT_OK(store_enqueue(f->st, &s, &j, NULL, &f->err), &f->err);
    ASSERT(j.id > 0);
    int64_t id = j.id;
    job_fini(&j);
    return id;
}

int64_t
enq_spec(struct fx *f, const struct job_spec *s)
{
    struct job j = {0};
    ASSERT_OK(store_enqueue(f->st, s, &j, NULL, &f->err), &f->err);
    int64_t id = j.id;
    job_fini(&j);
    return id;
}

/* Claims up to limit jobs of any queue/type as worker "w1". */
void
claim(struct fx *f, int limit, int64_t lease_ms, struct job_list *out)
{
    struct claim_req r = {.worker_id = "w1", .limit = limit, .lease_ms = lease_ms};
    ASSERT_OK(store_claim(f->st, &r, out, &f->err), &f->err);
}

/* Claims exactly one job and returns its attempt; the job must be id. */
int32_t
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

struct job
getj(struct fx *f, int64_t id)
{
    struct job j = {0};
    ASSERT_OK(store_get(f->st, id, &j, &f->err), &f->err);
    return j;
}

enum job_status
status_of(struct fx *f, int64_t id)
{
    struct job j = getj(f, id);
    enum job_status s = j.status;
    job_fini(&j);
    return s;
}

/*
 * A libpq connection to f's database, for reads under the interface
 * (raw_count, and the remote suites' look-up of the pending types): one
 * per case process and database, kept between the reads, closed by
 * fx_close. A connection per read cost more than the read (PostgreSQL
 * starts a backend for each, ~50-80 ms of its CPU under load, measured
 * with log_statement_stats), and a case may read dozens of times. One
 * inherited from another process (a forked child) is left alone.
 */
struct pg_conn *
fx_pg(struct fx *f)
{
    char url[sizeof f->url];
    libpq_url(f->url, url, sizeof url);
    if (raw_pg == NULL || raw_pg_pid != getpid() || strcmp(raw_pg_url, url) != 0 ||
        PQstatus(raw_pg) != CONNECTION_OK) {
        if (raw_pg != NULL && raw_pg_pid == getpid())
            PQfinish(raw_pg);
        raw_pg = PQconnectdb(url);
        raw_pg_pid = getpid();
        snprintf(raw_pg_url, sizeof raw_pg_url, "%s", url);
    }
    return raw_pg;
}

/* SELECT count(*) ... run directly on the fixture's database. */
long
raw_count(struct fx *f, const char *sql)
{
    long n = -1;
    if (is_pg()) {
        PGconn *c = fx_pg(f);
        PGresult *r = PQexec(c, sql);
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
            n = atol(PQgetvalue(r, 0, 0));
        else
            fprintf(stderr, "%s: %s", sql, PQerrorMessage(c));
        PQclear(r);
    } else {
        sqlite3 *db = NULL;
        sqlite3_stmt *st = NULL;
        if (sqlite3_open(f->url + strlen("sqlite:"), &db) == SQLITE_OK &&
            sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
        else
            fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
        sqlite3_finalize(st);
        sqlite3_close(db);
    }
    if (n < 0)
        TEST_FAIL("cannot count: %s", sql);
    return n;
}

void
attempts_of(struct fx *f, int64_t id, struct attempt_list *l)
{
    attempt_list_fini(l);
    ASSERT_OK(store_job_attempts(f->st, id, l, &f->err), &f->err);
}
