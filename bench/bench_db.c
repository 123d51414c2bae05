/*
 * bench_db.c — a direct connection to the store (libpq or sqlite3), used only
 * to reset it, seed jobs fast and count finished ones: the measured work
 * always goes through jobd itself.
 */
#include "bench.h"

/* ------------------------------------------------------------------- store */

bool
is_pg(const char *url)
{
    return strncmp(url, "postgres://", 11) == 0 || strncmp(url, "postgresql://", 13) == 0;
}

void
db_exec(struct db *d, const char *sql)
{
    if (d->pg) {
        PGresult *r = PQexec(d->pc, sql);
        ExecStatusType st = PQresultStatus(r);
        if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
            die("SQL failed: %s\n  %s", PQerrorMessage(d->pc), sql);
        PQclear(r);
    } else {
        char *msg = NULL;
        if (sqlite3_exec(d->sq, sql, NULL, NULL, &msg) != SQLITE_OK)
            die("SQL failed: %s\n  %s", msg ? msg : "?", sql);
    }
}

long long
db_count(struct db *d, const char *sql)
{
    long long n = -1;
    if (d->pg) {
        PGresult *r = PQexec(d->pc, sql);
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            die("SQL failed: %s\n  %s", PQerrorMessage(d->pc), sql);
        n = atoll(PQgetvalue(r, 0, 0));
        PQclear(r);
    } else {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(d->sq, sql, -1, &st, NULL) != SQLITE_OK)
            die("SQL failed: %s\n  %s", sqlite3_errmsg(d->sq), sql);
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    return n;
}

long long
db_done(struct db *d)
{
    return db_count(d, d->pg ? "SELECT count(*) FROM jobd.all_jobs WHERE status = 'succeeded'"
                             : "SELECT count(*) FROM jobs_done WHERE status = 'succeeded'");
}

long long
db_failed(struct db *d)
{
    return db_count(
        d, d->pg ? "SELECT count(*) FROM jobd.all_jobs WHERE status IN ('dead', 'cancelled')"
                 : "SELECT count(*) FROM jobs_done WHERE status <> 'succeeded'");
}

long long
db_hot(struct db *d)
{
    return db_count(d, d->pg ? "SELECT count(*) FROM jobd.jobs WHERE status <> 'succeeded'"
                             : "SELECT count(*) FROM jobs");
}

/* finished_at (us) of succeeded jobs off .. off + n - 1 in finishing order; returns how many. */
long long
db_finished(struct db *d, long long off, long long n, int64_t *out)
{
    char sql[512];
    long long k = 0;
    if (d->pg) {
        snprintf(sql, sizeof sql,
                 "SELECT (extract(epoch FROM finished_at) * 1000000)::bigint FROM jobd.all_jobs "
                 "WHERE status = 'succeeded' ORDER BY finished_at, id OFFSET %lld LIMIT %lld",
                 off, n);
        PGresult *r = PQexec(d->pc, sql);
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            die("SQL failed: %s", PQerrorMessage(d->pc));
        for (; k < PQntuples(r) && k < n; k++)
            out[k] = atoll(PQgetvalue(r, (int)k, 0));
        PQclear(r);
        return k;
    }
    snprintf(sql, sizeof sql,
             "SELECT finished_at FROM jobs_done WHERE status = 'succeeded' "
             "ORDER BY finished_at, id LIMIT %lld OFFSET %lld",
             n, off);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(d->sq, sql, -1, &st, NULL) != SQLITE_OK)
        die("SQL failed: %s", sqlite3_errmsg(d->sq));
    while (k < n && sqlite3_step(st) == SQLITE_ROW)
        out[k++] = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return k;
}

/* Migrates through libjobd (the schema is jobd's own, created as `jobd migrate` does). */
void
migrate(const char *url)
{
    struct jobd_error err = {0};
    jobd_client *c = NULL;
    if (jobd_client_open(url, &c, &err) != JOBD_OK)
        die("cannot open %s: %s", url, err.msg);
    jobd_client_close(c);
}

/* Opens the store; with reset, empties it first (and migrates). */
void
db_open(struct db *d, const char *url, bool reset)
{
    memset(d, 0, sizeof *d);
    d->url = url;
    d->pg = is_pg(url);
    if (d->pg) {
        d->pc = PQconnectdb(url);
        if (PQstatus(d->pc) != CONNECTION_OK)
            die("cannot connect to %s: %s", url, PQerrorMessage(d->pc));
        pg_note_server(PQbackendPID(d->pc));
        if (reset) {
            db_exec(d, "SET client_min_messages = warning");
            db_exec(d, "DROP SCHEMA IF EXISTS jobd CASCADE");
        }
        migrate(url);
        return;
    }
    const char *p = strncmp(url, "sqlite:", 7) == 0 ? url + 7 : url;
    snprintf(d->path, sizeof d->path, "%s", p);
    if (reset) {
        char f[600];
        unlink(d->path);
        snprintf(f, sizeof f, "%s-wal", d->path);
        unlink(f);
        snprintf(f, sizeof f, "%s-shm", d->path);
        unlink(f);
    }
    migrate(url);
    if (sqlite3_open_v2(d->path, &d->sq, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
        die("cannot open %s: %s", d->path, sqlite3_errmsg(d->sq));
    sqlite3_busy_timeout(d->sq, 10000);
}

void
db_close(struct db *d)
{
    if (d->pc)
        PQfinish(d->pc);
    if (d->sq)
        sqlite3_close(d->sq);
}

const char *
db_version(struct db *d)
{
    static char v[128];
    if (d->pg)
        snprintf(v, sizeof v, "jobd %s, PostgreSQL %s", JOBD_VERSION,
                 PQparameterStatus(d->pc, "server_version"));
    else
        snprintf(v, sizeof v, "jobd %s, SQLite %s", JOBD_VERSION, sqlite3_libversion());
    return v;
}

/*
 * Inserts n pending no-op jobs in one statement: due in the past (run_at
 * spread over the last hour, oldest first) or, with future, due a day from
 * now. One INSERT ... SELECT instead of the API, so that seeding a million
 * jobs takes seconds; the rows are exactly what an enqueue writes. With
 * groups > 0 (due jobs only), job i is in group "g<i mod groups>" of the
 * default queue: the first job of each group goes in through libjobd
 * (jobd_enqueue_batch), so that the queue's mark and its job_groups rows are
 * the ones an enqueue writes (docs/DESIGN.md, Groups), and the rest, n -
 * groups, by the statement, spread over the groups in turn. Those first
 * jobs are due now, behind the others.
 */
void
db_seed(struct db *d, long long n, bool future, int priority, long long groups)
{
    char sql[1024], grp[64] = "NULL";
    if (n <= 0)
        return;
    if (groups > 0) {
        if (future || groups > n || groups > 100000)
            die("--groups must be 1..min(n, 100000), for due jobs");
        struct jobd_job_opts *o = calloc((size_t)groups, sizeof *o);
        char(*name)[24] = calloc((size_t)groups, sizeof *name);
        if (!o || !name)
            die("out of memory");
        for (long long i = 0; i < groups; i++) {
            snprintf(name[i], sizeof name[i], "g%lld", i);
            o[i] = (struct jobd_job_opts){
                .type = "noop", .payload = "{}", .priority = priority, .group = name[i]};
        }
        struct jobd_error err = {0};
        jobd_client *c = NULL;
        if (jobd_client_open(d->url, &c, &err) != JOBD_OK ||
            jobd_enqueue_batch(c, o, (size_t)groups, NULL, &err) != JOBD_OK)
            die("seeding groups: %s", err.msg);
        jobd_client_close(c);
        free(o);
        free(name);
        if ((n -= groups) == 0)
            return;
        snprintf(grp, sizeof grp, "'g' || (%s %% %lld)", d->pg ? "g" : "i", groups);
    }
    if (d->pg)
        snprintf(sql, sizeof sql,
                 "INSERT INTO jobd.jobs (type, payload, priority, run_at, grp) "
                 "SELECT 'noop', json_build_object('i', g), %d, "
                 "       %s + g * interval '1 microsecond', %s "
                 "  FROM generate_series(1, %lld) g",
                 priority, future ? "now() + interval '1 day'" : "now() - interval '1 hour'", grp,
                 n);
    else
        snprintf(sql, sizeof sql,
                 "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < %lld) "
                 "INSERT INTO jobs (queue, type, payload, status, priority, run_at, max_attempts,"
                 "                  created_at, grp) "
                 "SELECT 'default', 'noop', '{\"i\":' || i || '}', 'pending', %d, %lld + i, 25, "
                 "%lld, %s "
                 "  FROM g",
                 n, priority, (long long)(real_us() + (future ? 86400000000LL : -3600000000LL)),
                 (long long)real_us(), grp);
    db_exec(d, sql);
}

/* After seeding: fresh statistics, and no checkpoint debt carried into the timing. */
void
db_settle(struct db *d)
{
    if (d->pg) {
        db_exec(d, "VACUUM ANALYZE jobd.jobs");
        db_exec(d, "CHECKPOINT");
    } else {
        db_exec(d, "ANALYZE");
        db_exec(d, "PRAGMA wal_checkpoint(TRUNCATE)");
    }
}
