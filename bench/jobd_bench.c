/*
 * jobd_bench.c — jobd's own benchmark driver (docs/BENCHMARKS.md, bench/run.sh).
 *
 * One subcommand per measurement; each run prints exactly ONE JSON line on
 * stdout in the shared harness's contract (../shared/bench/README.md:
 * system, variant, version, mode, n, concurrency, settings, notes, figures,
 * durability), plus `backend` ("pg" | "sqlite") and `bench` (the subcommand)
 * so that bench/report.py can find its rows. Logs go to stderr.
 *
 * It drives the real thing: `jobd server` and `jobd worker` processes (paths
 * given), and C-handler workers that are this same binary re-executed as
 * `jobd_bench cworker` (libjobd's jobd_worker_* API), so that a worker's
 * peak RSS and CPU are its own process's. The store is read directly (libpq
 * or sqlite3) only to seed jobs fast and to count finished ones.
 *
 *   jobd_bench enqueue1   --db URL --jobd BIN [--n 20000] [--clients 10]
 *   jobd_bench enqueue    --db URL --via http|lib|sql --jobd BIN [--n 20000] [--batch 1000]
 *   jobd_bench process    --db URL --handler c|exec --jobd BIN [--workers 1] [--concurrency 100] [--n 20000]
 *                         [--prefetch P: a C worker's [worker] prefetch; default: its own]
 *   jobd_bench lateness   --db URL [--n 2000] [--spread-ms 10000] [--lead-ms 1000] [--lat-file F]
 *                         [--due-now 1: one enqueue at a time, each due at once]
 *   jobd_bench scaling    --db URL --pending N [--future 10000] [--k 5000] [--concurrency 100]
 *   jobd_bench cworker    --db URL [--concurrency C] [--prefetch P] [--out FILE]   (a worker; used by the others)
 *
 * --db is a postgres:// URL or sqlite:PATH; every run but cworker starts
 * from an empty store (PostgreSQL: DROP SCHEMA jobd; SQLite: a new file).
 */
#include <jobd.h>

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define PG_DURABILITY "PostgreSQL commit, fsync on every commit (synchronous_commit=on)"
#define SQ_DURABILITY "SQLite WAL, synchronous=FULL (fsync on every commit)"

/* ---------------------------------------------------------------- options */

static int g_argc;
static char **g_argv;

/* The value after --name, or dflt. Every option takes a value. */
static const char *
opt(const char *name, const char *dflt)
{
    for (int i = 2; i + 1 < g_argc; i++)
        if (strncmp(g_argv[i], "--", 2) == 0 && strcmp(g_argv[i] + 2, name) == 0)
            return g_argv[i + 1];
    return dflt;
}

static long long
opt_ll(const char *name, long long dflt)
{
    const char *v = opt(name, NULL);
    if (v == NULL)
        return dflt;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || *end || end == v) {
        fprintf(stderr, "jobd_bench: --%s %s: not an integer\n", name, v);
        exit(2);
    }
    return x;
}

static const char *
opt_req(const char *name)
{
    const char *v = opt(name, NULL);
    if (v == NULL) {
        fprintf(stderr, "jobd_bench %s: --%s is required\n", g_argv[1], name);
        exit(2);
    }
    return v;
}

static void
die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "jobd_bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

/* ------------------------------------------------------------------ clocks */

static double
mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t
real_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void
sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000) * 1e6)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ------------------------------------------------------------------- store */

/* A direct connection to the store, for seeding and counting only. */
struct db {
    bool pg;
    const char *url;
    char path[512]; /* SQLite file */
    PGconn *pc;
    sqlite3 *sq;
};

static bool
is_pg(const char *url)
{
    return strncmp(url, "postgres://", 11) == 0 || strncmp(url, "postgresql://", 13) == 0;
}

static void
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

static long long
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

static long long
db_done(struct db *d)
{
    return db_count(d, d->pg ? "SELECT count(*) FROM jobd.jobs_done WHERE status = 'succeeded'"
                             : "SELECT count(*) FROM jobs_done WHERE status = 'succeeded'");
}

static long long
db_failed(struct db *d)
{
    return db_count(d, d->pg ? "SELECT count(*) FROM jobd.jobs_done WHERE status <> 'succeeded'"
                             : "SELECT count(*) FROM jobs_done WHERE status <> 'succeeded'");
}

static long long
db_hot(struct db *d)
{
    return db_count(d, d->pg ? "SELECT count(*) FROM jobd.jobs" : "SELECT count(*) FROM jobs");
}

/* finished_at (us) of succeeded jobs off .. off + n - 1 in finishing order; returns how many. */
static long long
db_finished(struct db *d, long long off, long long n, int64_t *out)
{
    char sql[512];
    long long k = 0;
    if (d->pg) {
        snprintf(sql, sizeof sql,
                 "SELECT (extract(epoch FROM finished_at) * 1000000)::bigint FROM jobd.jobs_done "
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
             "ORDER BY finished_at, id LIMIT %lld OFFSET %lld", n, off);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(d->sq, sql, -1, &st, NULL) != SQLITE_OK)
        die("SQL failed: %s", sqlite3_errmsg(d->sq));
    while (k < n && sqlite3_step(st) == SQLITE_ROW)
        out[k++] = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return k;
}

/* Migrates through libjobd (the schema is jobd's own, created as `jobd migrate` does). */
static void
migrate(const char *url)
{
    struct jobd_error err = {0};
    jobd_client *c = NULL;
    if (jobd_client_open(url, &c, &err) != JOBD_OK)
        die("cannot open %s: %s", url, err.msg);
    jobd_client_close(c);
}

/* Opens the store; with reset, empties it first (and migrates). */
static void
db_open(struct db *d, const char *url, bool reset)
{
    memset(d, 0, sizeof *d);
    d->url = url;
    d->pg = is_pg(url);
    if (d->pg) {
        d->pc = PQconnectdb(url);
        if (PQstatus(d->pc) != CONNECTION_OK)
            die("cannot connect to %s: %s", url, PQerrorMessage(d->pc));
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

static void
db_close(struct db *d)
{
    if (d->pc)
        PQfinish(d->pc);
    if (d->sq)
        sqlite3_close(d->sq);
}

static const char *
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
 * jobs takes seconds; the rows are exactly what an enqueue writes.
 */
static void
db_seed(struct db *d, long long n, bool future, int priority)
{
    char sql[1024];
    if (n <= 0)
        return;
    if (d->pg)
        snprintf(sql, sizeof sql,
                 "INSERT INTO jobd.jobs (type, payload, priority, run_at) "
                 "SELECT 'noop', json_build_object('i', g), %d, "
                 "       %s + g * interval '1 microsecond' "
                 "  FROM generate_series(1, %lld) g",
                 priority, future ? "now() + interval '1 day'" : "now() - interval '1 hour'", n);
    else
        snprintf(sql, sizeof sql,
                 "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < %lld) "
                 "INSERT INTO jobs (queue, type, payload, status, priority, run_at, max_attempts,"
                 "                  created_at) "
                 "SELECT 'default', 'noop', '{\"i\":' || i || '}', 'pending', %d, %lld + i, 25, %lld "
                 "  FROM g",
                 n, priority, (long long)(real_us() + (future ? 86400000000LL : -3600000000LL)),
                 (long long)real_us());
    db_exec(d, sql);
}

/* After seeding: fresh statistics, and no checkpoint debt carried into the timing. */
static void
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

/* --------------------------------------------------------------- processes */

static pid_t
spawn(char *const argv[], const char *log)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        die("cannot start %s: %s", argv[0], strerror(rc));
    return pid;
}

/* SIGTERM, then wait up to 30 s (SIGKILL after). Returns the exit status or -1. */
static int
stop_proc(pid_t pid)
{
    kill(pid, SIGTERM);
    int st;
    double t0 = mono_s();
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (r < 0)
            return -1;
        if (mono_s() - t0 > 30) {
            fprintf(stderr, "jobd_bench: pid %d did not stop in 30 s, killing it\n", (int)pid);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        sleep_ms(10);
    }
}

static bool
alive(pid_t pid)
{
    return waitpid(pid, NULL, WNOHANG) == 0;
}

/* Peak resident set size (VmHWM) in kB, or -1. */
static long
vm_hwm_kb(pid_t pid)
{
    char p[64], line[256];
    snprintf(p, sizeof p, "/proc/%d/status", (int)pid);
    FILE *f = fopen(p, "r");
    long kb = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* utime+stime (+ reaped children's) of a process, in clock ticks. */
static long long
proc_ticks(const char *pid)
{
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%s/stat", pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *s = strrchr(buf, ')');
    if (!s)
        return 0;
    long long v[16] = {0};
    int k = 0;
    for (char *t = strtok(s + 2, " "); t && k < 15; t = strtok(NULL, " "))
        v[k++] = atoll(t);
    return v[11] + v[12] + v[13] + v[14];
}

/* Ticks of every process named comm (PostgreSQL's backends count through the postmaster). */
static long long
comm_ticks(const char *comm)
{
    long long t = 0;
    DIR *dir = opendir("/proc");
    struct dirent *e;
    if (!dir)
        return 0;
    while ((e = readdir(dir))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char p[300], c[64] = "";
        snprintf(p, sizeof p, "/proc/%s/comm", e->d_name);
        FILE *f = fopen(p, "r");
        if (!f)
            continue;
        if (fgets(c, sizeof c, f))
            c[strcspn(c, "\n")] = 0;
        fclose(f);
        if (strcmp(c, comm) == 0)
            t += proc_ticks(e->d_name);
    }
    closedir(dir);
    return t;
}

static void
machine_ticks(long long *total, long long *busy)
{
    FILE *f = fopen("/proc/stat", "r");
    long long v[10] = {0};
    *total = *busy = 0;
    if (!f)
        return;
    if (fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3],
               &v[4], &v[5], &v[6], &v[7]) == 8) {
        for (int i = 0; i < 8; i++)
            *total += v[i];
        *busy = *total - v[3] - v[4];
    }
    fclose(f);
}

/* CPU over a window: workers (listed pids), the store's server processes, the machine. */
struct cpu_snap {
    double t;
    long long workers, server, total, busy;
};

static void
cpu_snap(struct cpu_snap *s, const pid_t *pids, int n, pid_t server_pid, bool pg)
{
    s->t = mono_s();
    s->workers = 0;
    for (int i = 0; i < n; i++) {
        char p[24];
        snprintf(p, sizeof p, "%d", (int)pids[i]);
        s->workers += proc_ticks(p);
    }
    s->server = pg ? comm_ticks("postgres") : 0;
    if (server_pid > 0) {
        char p[24];
        snprintf(p, sizeof p, "%d", (int)server_pid);
        s->server += proc_ticks(p);
    }
    machine_ticks(&s->total, &s->busy);
}

static void
cpu_json(char *out, size_t len, const struct cpu_snap *a, const struct cpu_snap *b)
{
    double secs = b->t - a->t, tck = (double)sysconf(_SC_CLK_TCK);
    if (secs <= 0)
        secs = 1e-9;
    long long tot = b->total - a->total;
    snprintf(out, len,
             "{\"worker_pct\":%.1f,\"server_pct\":%.1f,\"machine_busy_pct\":%.1f,\"cores\":%ld}",
             100.0 * (double)(b->workers - a->workers) / tck / secs,
             100.0 * (double)(b->server - a->server) / tck / secs,
             tot > 0 ? 100.0 * (double)(b->busy - a->busy) / (double)tot : 0.0,
             sysconf(_SC_NPROCESSORS_ONLN));
}

/* A temporary folder for logs, configs and latency files (kept: logs help). */
static const char *
tmpdir(void)
{
    static char dir[256];
    if (!dir[0]) {
        const char *base = getenv("JOBD_BENCH_TMP");
        snprintf(dir, sizeof dir, "%s", base ? base : "/tmp/jobd-bench");
        mkdir(dir, 0755);
    }
    return dir;
}

/* ------------------------------------------------------------------ server */

struct server {
    pid_t pid;
    char base[64];  /* http://127.0.0.1:PORT */
};

/* Starts `jobd server` on a free loopback port and waits for its "listening" line. */
static void
server_start(struct server *s, const char *jobd, const char *url)
{
    char log[300];
    snprintf(log, sizeof log, "%s/server-%d.log", tmpdir(), (int)getpid());
    unlink(log);
    char *argv[] = {(char *)jobd, "server", "--db", (char *)url, "--listen", "127.0.0.1:0", NULL};
    s->pid = spawn(argv, log);
    double t0 = mono_s();
    while (mono_s() - t0 < 30) {
        FILE *f = fopen(log, "r");
        char line[512];
        if (f) {
            while (fgets(line, sizeof line, f)) {
                char *p = strstr(line, "listening on http://");
                if (p) {
                    snprintf(s->base, sizeof s->base, "%s", p + strlen("listening on "));
                    s->base[strcspn(s->base, " \r\n")] = 0;
                    fclose(f);
                    return;
                }
            }
            fclose(f);
        }
        if (!alive(s->pid))
            die("jobd server exited at start (log: %s)", log);
        sleep_ms(20);
    }
    die("jobd server did not listen within 30 s (log: %s)", log);
}

/* ------------------------------------------------------------------ output */

/* The common head of a line; the caller appends figures and the closing brace. */
static int
head(char *out, size_t len, const char *bench, struct db *d, const char *variant,
     const char *mode, long long n, long long conc, const char *settings)
{
    return snprintf(out, len,
                    "{\"system\":\"jobd\",\"bench\":\"%s\",\"backend\":\"%s\",\"variant\":\"%s, %s\","
                    "\"version\":\"%s\",\"mode\":\"%s\",\"n\":%lld,\"concurrency\":%lld,"
                    "\"settings\":%s,\"durability\":\"%s\"",
                    bench, d->pg ? "pg" : "sqlite", d->pg ? "pg" : "sqlite", variant,
                    db_version(d), mode, n, conc, settings,
                    d->pg ? PG_DURABILITY : SQ_DURABILITY);
}

/* --------------------------------------------------------------- enqueue1 */

struct http_ctx {
    const char *url;
    long long n;
    atomic_llong next;
    atomic_llong bad;
    long long per_req; /* jobs per request */
};

static size_t
discard(char *p, size_t sz, size_t n, void *u)
{
    return sz * n;
}

static void *
http_client(void *arg)
{
    struct http_ctx *c = arg;
    CURL *h = curl_easy_init();
    struct curl_slist *hd = curl_slist_append(NULL, "Content-Type: application/json");
    hd = curl_slist_append(hd, "Expect:");
    curl_easy_setopt(h, CURLOPT_URL, c->url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    char *body = NULL;
    for (;;) {
        long long i = atomic_fetch_add(&c->next, c->per_req);
        if (i >= c->n)
            break;
        free(body);
        body = NULL;
        if (c->per_req == 1) {
            body = malloc(128);
            if (!body)
                die("out of memory");
            snprintf(body, 128, "{\"type\":\"noop\",\"payload\":{\"i\":%lld}}", i);
        } else {
            /* {"jobs":[{...},{...}]} of min(per_req, n - i) jobs */
            long long k = c->n - i < c->per_req ? c->n - i : c->per_req;
            size_t cap = (size_t)k * 64 + 32, len = 0;
            body = malloc(cap);
            if (!body)
                die("out of memory");
            len += (size_t)snprintf(body, cap, "{\"jobs\":[");
            for (long long j = 0; j < k; j++)
                len += (size_t)snprintf(body + len, cap - len,
                                        "%s{\"type\":\"noop\",\"payload\":{\"i\":%lld}}",
                                        j ? "," : "", i + j);
            snprintf(body + len, cap - len, "]}");
        }
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        long code = 0;
        if (curl_easy_perform(h) != CURLE_OK ||
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK || code != 201)
            atomic_fetch_add(&c->bad, 1);
    }
    free(body);
    curl_slist_free_all(hd);
    curl_easy_cleanup(h);
    return NULL;
}

/* Runs clients threads against url until n jobs are sent; returns seconds. */
static double
http_run(struct http_ctx *c, int clients)
{
    pthread_t th[256];
    if (clients < 1 || clients > 256)
        die("--clients must be 1..256");
    double t0 = mono_s();
    for (int i = 0; i < clients; i++)
        pthread_create(&th[i], NULL, http_client, c);
    for (int i = 0; i < clients; i++)
        pthread_join(th[i], NULL);
    return mono_s() - t0;
}

static int
cmd_enqueue1(void)
{
    const char *url = opt_req("db"), *jobd = opt_req("jobd");
    long long n = opt_ll("n", 20000), clients = opt_ll("clients", 10);
    struct db d;
    db_open(&d, url, true);
    struct server s;
    server_start(&s, jobd, url);
    char ep[128];
    snprintf(ep, sizeof ep, "%s/v1/jobs", s.base);
    struct http_ctx c = {.url = ep, .n = n, .per_req = 1};
    struct cpu_snap a, b;
    cpu_snap(&a, NULL, 0, s.pid, d.pg);
    double secs = http_run(&c, (int)clients);
    cpu_snap(&b, NULL, 0, s.pid, d.pg);
    long rss = vm_hwm_kb(s.pid);
    stop_proc(s.pid);
    long long held = db_hot(&d);
    char line[4096], cpu[256], set[256];
    cpu_json(cpu, sizeof cpu, &a, &b);
    snprintf(set, sizeof set, "{\"clients\":%lld,\"http\":\"libcurl keep-alive, one POST per job\"}",
             clients);
    int k = head(line, sizeof line, "enqueue1", &d, "POST /v1/jobs, one job per request", "enqueue1",
                 n, clients, set);
    snprintf(line + k, sizeof line - (size_t)k,
             ",\"enqueue_single_jobs_per_s\":%.0f,\"enqueue_s\":%.3f,\"failed_requests\":%lld,"
             "\"held\":%lld,\"server_peak_rss_kb\":%ld,\"cpu\":%s,"
             "\"notes\":\"%lld callers in parallel (threads), each waiting for its 201 before the next "
             "request; the server answers 201 only after the commit; held = rows in the store after\"%s}",
             (double)n / secs, secs, (long long)atomic_load(&c.bad), held, rss, cpu, clients,
             held == n ? "" : ",\"error\":\"the store does not hold every acknowledged job\"");
    puts(line);
    db_close(&d);
    return 0;
}

/* ---------------------------------------------------------------- enqueue */

static double
enqueue_lib(const char *url, long long n, long long batch)
{
    struct jobd_error err = {0};
    jobd_client *c = NULL;
    if (jobd_client_open(url, &c, &err) != JOBD_OK)
        die("open: %s", err.msg);
    struct jobd_job_opts *o = calloc((size_t)batch, sizeof *o);
    char (*pl)[32] = calloc((size_t)batch, sizeof *pl);
    if (!o || !pl)
        die("out of memory");
    double t0 = mono_s();
    for (long long i = 0; i < n; i += batch) {
        long long k = n - i < batch ? n - i : batch;
        for (long long j = 0; j < k; j++) {
            snprintf(pl[j], sizeof pl[j], "{\"i\":%lld}", i + j);
            o[j] = (struct jobd_job_opts){.type = "noop", .payload = pl[j]};
        }
        if (jobd_enqueue_batch(c, o, (size_t)k, NULL, &err) != JOBD_OK)
            die("jobd_enqueue_batch: %s", err.msg);
    }
    double secs = mono_s() - t0;
    free(o);
    free(pl);
    jobd_client_close(c);
    return secs;
}

/* `SELECT jobd.enqueue(...)` one statement per job, batch statements per transaction. */
static double
enqueue_sql(struct db *d, long long n, long long batch)
{
    PGconn *pc = PQconnectdb(d->url);
    if (PQstatus(pc) != CONNECTION_OK)
        die("connect: %s", PQerrorMessage(pc));
    PGresult *r = PQprepare(pc, "enq", "SELECT jobd.enqueue('noop', $1::jsonb)", 1, NULL);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        die("prepare: %s", PQerrorMessage(pc));
    PQclear(r);
    double t0 = mono_s();
    for (long long i = 0; i < n; i += batch) {
        long long k = n - i < batch ? n - i : batch;
        PQclear(PQexec(pc, "BEGIN"));
        for (long long j = 0; j < k; j++) {
            char pl[32];
            snprintf(pl, sizeof pl, "{\"i\":%lld}", i + j);
            const char *v[1] = {pl};
            r = PQexecPrepared(pc, "enq", 1, v, NULL, NULL, 0);
            if (PQresultStatus(r) != PGRES_TUPLES_OK)
                die("jobd.enqueue: %s", PQerrorMessage(pc));
            PQclear(r);
        }
        r = PQexec(pc, "COMMIT");
        if (PQresultStatus(r) != PGRES_COMMAND_OK)
            die("commit: %s", PQerrorMessage(pc));
        PQclear(r);
    }
    double secs = mono_s() - t0;
    PQfinish(pc);
    return secs;
}

static int
cmd_enqueue(void)
{
    const char *url = opt_req("db"), *via = opt_req("via");
    long long n = opt_ll("n", 20000), batch = opt_ll("batch", 1000);
    if (batch < 1 || batch > 10000)
        die("--batch must be 1..10000");
    struct db d;
    db_open(&d, url, true);
    double secs;
    long rss = -1;
    char variant[128], notes[256];
    if (strcmp(via, "http") == 0) {
        struct server s;
        server_start(&s, opt_req("jobd"), url);
        char ep[128];
        snprintf(ep, sizeof ep, "%s/v1/jobs/batch", s.base);
        struct http_ctx c = {.url = ep, .n = n, .per_req = batch};
        secs = http_run(&c, 1);
        rss = vm_hwm_kb(s.pid);
        stop_proc(s.pid);
        if (atomic_load(&c.bad))
            die("%lld batch requests failed", (long long)atomic_load(&c.bad));
        snprintf(variant, sizeof variant, "POST /v1/jobs/batch, %lld jobs per request", batch);
        snprintf(notes, sizeof notes, "one client, one request at a time, each answered after its commit");
    } else if (strcmp(via, "lib") == 0) {
        secs = enqueue_lib(url, n, batch);
        snprintf(variant, sizeof variant, "libjobd jobd_enqueue_batch, %lld jobs per call", batch);
        snprintf(notes, sizeof notes, "one client, directly on the store, one transaction per call");
    } else if (strcmp(via, "sql") == 0) {
        if (!d.pg)
            die("--via sql needs PostgreSQL");
        secs = enqueue_sql(&d, n, batch);
        snprintf(variant, sizeof variant, "SELECT jobd.enqueue() per job, %lld per transaction",
                 batch);
        snprintf(notes, sizeof notes,
                 "libpq, prepared statement, one round trip per job, COMMIT every %lld", batch);
    } else {
        die("--via must be http, lib or sql");
    }
    long long held = db_hot(&d);
    char line[4096], set[128];
    snprintf(set, sizeof set, "{\"batch\":%lld}", batch);
    int k = head(line, sizeof line, "enqueue", &d, variant, "enqueue", n, 1, set);
    k += snprintf(line + k, sizeof line - (size_t)k,
                  ",\"via\":\"%s\",\"enqueue_jobs_per_s\":%.0f,\"enqueue_s\":%.3f,\"held\":%lld,"
                  "\"notes\":\"%s\"",
                  via, (double)n / secs, secs, held, notes);
    if (rss >= 0)
        k += snprintf(line + k, sizeof line - (size_t)k, ",\"server_peak_rss_kb\":%ld", rss);
    if (held != n)
        k += snprintf(line + k, sizeof line - (size_t)k,
                      ",\"error\":\"the store holds %lld jobs, expected %lld\"", held, n);
    snprintf(line + k, sizeof line - (size_t)k, "}");
    puts(line);
    db_close(&d);
    return 0;
}

/* ----------------------------------------------------------------- workers */

/* Worker processes of one run: C-handler workers (this binary) or `jobd worker` (exec). */
struct workers {
    int n;
    pid_t pid[64];
    char out[64][300]; /* latency files (cworker --out) */
};

static void
workers_start(struct workers *w, int n, const char *handler, const char *url, long long conc,
              const char *jobd, bool lat)
{
    if (n < 1 || n > 64)
        die("--workers must be 1..64");
    w->n = n;
    char log[300], cs[32];
    snprintf(log, sizeof log, "%s/workers-%d.log", tmpdir(), (int)getpid());
    snprintf(cs, sizeof cs, "%lld", conc);
    if (strcmp(handler, "exec") == 0) {
        char ini[300];
        snprintf(ini, sizeof ini, "%s/worker-exec-%d.ini", tmpdir(), (int)getpid());
        FILE *f = fopen(ini, "w");
        if (!f)
            die("cannot write %s", ini);
        fprintf(f, "[worker]\nconcurrency = %lld\n\n[handler \"noop\"]\nexec = /bin/true\n", conc);
        fclose(f);
        for (int i = 0; i < n; i++) {
            char *argv[] = {(char *)jobd, "worker", "--db", (char *)url, "--config", ini, NULL};
            w->pid[i] = spawn(argv, log);
        }
        return;
    }
    if (strcmp(handler, "c") != 0)
        die("--handler must be c or exec");
    for (int i = 0; i < n; i++) {
        snprintf(w->out[i], sizeof w->out[i], "%s/lat-%d-%d.json", tmpdir(), (int)getpid(), i);
        unlink(w->out[i]);
        /* --prefetch passes through to the C worker (empty: its default). */
        const char *pf = opt("prefetch", "");
        char *argv[] = {"/proc/self/exe", "cworker", "--db", (char *)url, "--concurrency", cs,
                        "--prefetch", (char *)pf, lat ? "--out" : NULL, w->out[i], NULL};
        w->pid[i] = spawn(argv, log);
    }
}

static long
workers_rss_max(struct workers *w)
{
    long m = -1;
    for (int i = 0; i < w->n; i++) {
        long r = vm_hwm_kb(w->pid[i]);
        if (r > m)
            m = r;
    }
    return m;
}

static void
workers_stop(struct workers *w)
{
    for (int i = 0; i < w->n; i++)
        kill(w->pid[i], SIGTERM);
    for (int i = 0; i < w->n; i++)
        if (stop_proc(w->pid[i]) != 0)
            fprintf(stderr, "jobd_bench: worker %d did not exit cleanly\n", (int)w->pid[i]);
}

/* Waits until `target` jobs have succeeded; polls often near the end only. */
static bool
wait_done(struct db *d, long long target, double timeout_s, struct workers *w)
{
    double t0 = mono_s();
    for (;;) {
        long long done = db_done(d);
        if (done >= target)
            return true;
        double el = mono_s() - t0;
        if (el > timeout_s) {
            fprintf(stderr, "jobd_bench: timed out with %lld/%lld done\n", done, target);
            return false;
        }
        for (int i = 0; w && i < w->n; i++)
            if (!alive(w->pid[i]))
                die("worker %d exited during the run (log in %s)", (int)w->pid[i], tmpdir());
        double rate = done > 0 ? (double)done / el : 0;
        double left_ms = rate > 0 ? (double)(target - done) / rate * 1000 : 1000;
        sleep_ms(fmin(250, fmax(10, left_ms / 4)));
    }
}

/* ----------------------------------------------------------------- process */

static int
cmd_process(void)
{
    const char *url = opt_req("db"), *handler = opt_req("handler");
    const char *jobd = opt("jobd", "build/jobd");
    long long n = opt_ll("n", 20000), nw = opt_ll("workers", 1);
    long long conc = opt_ll("concurrency", strcmp(handler, "exec") == 0 ? 16 : 100);
    double timeout = (double)opt_ll("timeout-s", 240);
    struct db d;
    db_open(&d, url, true);
    double s0 = mono_s();
    db_seed(&d, n, false, 0);
    double seed_s = mono_s() - s0;
    db_settle(&d);
    struct workers w;
    struct cpu_snap a, b;
    cpu_snap(&a, NULL, 0, 0, d.pg);
    double t0 = mono_s();
    workers_start(&w, (int)nw, handler, url, conc, jobd, false);
    bool ok = wait_done(&d, n, timeout, &w);
    double secs = mono_s() - t0;
    cpu_snap(&b, w.pid, w.n, 0, d.pg);
    long rss = workers_rss_max(&w);
    workers_stop(&w);
    long long failed = db_failed(&d);
    char line[4096], cpu[256], set[256], variant[128];
    cpu_json(cpu, sizeof cpu, &a, &b);
    snprintf(set, sizeof set, "{\"workers\":%lld,\"concurrency_per_worker\":%lld,\"handler\":\"%s\"}",
             nw, conc, strcmp(handler, "c") == 0 ? "C no-op (libjobd)" : "exec /bin/true");
    snprintf(variant, sizeof variant, "%s handler, %lld worker%s", handler, nw, nw > 1 ? "s" : "");
    int k = head(line, sizeof line, "process", &d, variant, "throughput", n, conc, set);
    k += snprintf(line + k, sizeof line - (size_t)k,
                  ",\"handler\":\"%s\",\"workers\":%lld,\"process_jobs_per_s\":%.0f,\"process_s\":%.3f,"
                  "\"seed_s\":%.3f,\"failed\":%lld,\"worker_peak_rss_kb\":%ld,\"cpu\":%s,"
                  "\"notes\":\"jobs seeded by one INSERT ... SELECT, then %lld worker process%s started "
                  "and timed until the store holds n succeeded rows in jobd's jobs_done; worker "
                  "start-up is inside the time; worker_pct sums the workers (exec: with their "
                  "children)\"",
                  handler, nw, (double)n / secs, secs, seed_s, failed, rss, cpu, nw,
                  nw > 1 ? "es" : "");
    if (!ok)
        k += snprintf(line + k, sizeof line - (size_t)k, ",\"error\":\"timed out after %.0f s\"",
                      timeout);
    snprintf(line + k, sizeof line - (size_t)k, "}");
    puts(line);
    db_close(&d);
    return 0;
}

/* ---------------------------------------------------------------- lateness */

static int
cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array, as the shared harness computes it. */
static double
pct(const double *v, size_t n, double p)
{
    if (n == 0)
        return NAN;
    size_t r = (size_t)ceil(p / 100 * (double)n);
    if (r < 1)
        r = 1;
    if (r > n)
        r = n;
    return v[r - 1];
}

/* x with two decimals, or null (JSON has no NaN); slot picks one of 6 buffers. */
static const char *
jnum(double x, int slot)
{
    static char b[6][32];
    if (isnan(x))
        return "null";
    snprintf(b[slot], sizeof b[slot], "%.2f", x);
    return b[slot];
}

/* Reads {"handled":H,"lat":[...]} written by cworker --out; appends to *v. */
static long long
read_lat(const char *path, double **v, size_t *n, size_t *cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long long handled = -1;
    if (fscanf(f, "{\"handled\":%lld,\"lat\":[", &handled) != 1) {
        fclose(f);
        return -1;
    }
    double x;
    while (fscanf(f, "%lf", &x) == 1) {
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 4096;
            *v = realloc(*v, *cap * sizeof **v);
            if (!*v)
                die("out of memory");
        }
        (*v)[(*n)++] = x;
        if (fgetc(f) != ',')
            break;
    }
    fclose(f);
    return handled;
}

static int
cmd_lateness(void)
{
    const char *url = opt_req("db"), *latfile = opt("lat-file", NULL);
    long long n = opt_ll("n", 2000), spread = opt_ll("spread-ms", 10000);
    long long lead = opt_ll("lead-ms", 1000), conc = opt_ll("concurrency", 16);
    if (n < 1 || n > 10000)
        die("--n must be 1..10000 (one batch)");
    struct db d;
    db_open(&d, url, true);
    struct workers w;
    workers_start(&w, 1, "c", url, conc, NULL, true);
    sleep_ms(1500); /* started, migrated, idle */
    struct jobd_error err = {0};
    jobd_client *c = NULL;
    if (jobd_client_open(url, &c, &err) != JOBD_OK)
        die("open: %s", err.msg);
    struct jobd_job_opts *o = calloc((size_t)n, sizeof *o);
    char (*pl)[48] = calloc((size_t)n, sizeof *pl);
    if (!o || !pl)
        die("out of memory");
    bool now_mode = strcmp(opt("due-now", "0"), "1") == 0;
    struct cpu_snap a, b;
    cpu_snap(&a, w.pid, 1, 0, d.pg);
    int64_t first = real_us() + lead * 1000, e0 = real_us(), e1;
    if (now_mode) {
        /* one job at a time, due the instant it is enqueued, spread/n apart */
        double t0 = mono_s();
        for (long long i = 0; i < n; i++) {
            int64_t due = real_us();
            snprintf(pl[0], sizeof pl[0], "{\"due_us\":%lld}", (long long)due);
            o[0] = (struct jobd_job_opts){.type = "noop", .payload = pl[0], .run_at_us = due};
            if (jobd_enqueue(c, &o[0], NULL, &err) != JOBD_OK)
                die("jobd_enqueue: %s", err.msg);
            double next = t0 + ((double)i + 1) * (double)spread / 1000 / (double)n;
            if (next > mono_s())
                sleep_ms((next - mono_s()) * 1000);
        }
        e1 = real_us();
        first = e0;
    } else {
        for (long long i = 0; i < n; i++) {
            int64_t due = first + (int64_t)(((double)i + 0.5) * (double)spread * 1000 / (double)n);
            snprintf(pl[i], sizeof pl[i], "{\"due_us\":%lld}", (long long)due);
            o[i] = (struct jobd_job_opts){.type = "noop", .payload = pl[i], .run_at_us = due};
        }
        e0 = real_us();
        if (jobd_enqueue_batch(c, o, (size_t)n, NULL, &err) != JOBD_OK)
            die("jobd_enqueue_batch: %s", err.msg);
        e1 = real_us();
    }
    jobd_client_close(c);
    free(o);
    free(pl);
    bool ok = wait_done(&d, n, (double)(spread + lead) / 1000 + 60, &w);
    cpu_snap(&b, w.pid, 1, 0, d.pg);
    long rss = workers_rss_max(&w);
    workers_stop(&w);
    double *lat = NULL;
    size_t nl = 0, cap = 0;
    long long handled = read_lat(w.out[0], &lat, &nl, &cap);
    qsort(lat, nl, sizeof *lat, cmp_dbl);
    if (latfile) {
        FILE *f = fopen(latfile, "w");
        if (!f)
            die("cannot write %s", latfile);
        for (size_t i = 0; i < nl; i++)
            fprintf(f, "%.3f\n", lat[i]);
        fclose(f);
    }
    double sum = 0;
    size_t early = 0;
    for (size_t i = 0; i < nl; i++) {
        sum += lat[i];
        early += lat[i] < 0;
    }
    char line[4096], cpu[256], set[256];
    cpu_json(cpu, sizeof cpu, &a, &b);
    snprintf(set, sizeof set, "{\"concurrency\":%lld,\"spread_ms\":%lld,\"lead_ms\":%lld}", conc,
             spread, lead);
    snprintf(set + strlen(set) - 1, sizeof set - strlen(set) + 1, ",\"due_now\":%s}",
             now_mode ? "true" : "false");
    int k = head(line, sizeof line, "lateness", &d,
                 now_mode ? "C handler, idle worker, due now (one enqueue at a time)"
                          : "C handler, idle worker, due at known future instants",
                 "latency", n, conc, set);
    k += snprintf(line + k, sizeof line - (size_t)k,
                  ",\"due_now\":%s,\"poll\":\"%s\",\"enqueue_ms\":%.1f,\"enqueue_done_before_first_due\":%s,"
                  "\"started\":%zu,\"handled\":%lld,\"p50_ms\":%s,\"p90_ms\":%s,\"p99_ms\":%s,"
                  "\"max_ms\":%s,\"min_ms\":%s,\"mean_ms\":%s,\"early\":%zu,"
                  "\"worker_peak_rss_kb\":%ld,\"cpu\":%s,"
                  "\"notes\":\"%s; the C handler records its first instant minus run_at (both "
                  "CLOCK_REALTIME, same machine)\"",
                  now_mode ? "true" : "false",
                  d.pg ? "LISTEN/NOTIFY + timer for the soonest run_at"
                       : "timer for the soonest run_at + inotify on the WAL (1 s poll; 100 ms without inotify)",
                  (double)(e1 - e0) / 1000, e1 <= first ? "true" : "false", nl, handled,
                  jnum(pct(lat, nl, 50), 0), jnum(pct(lat, nl, 90), 1), jnum(pct(lat, nl, 99), 2),
                  jnum(nl ? lat[nl - 1] : NAN, 3), jnum(nl ? lat[0] : NAN, 4),
                  jnum(nl ? sum / (double)nl : NAN, 5), early,
                  rss, cpu,
                  now_mode ? "jobs enqueued one at a time (jobd_enqueue, one commit each), spread_ms/n "
                             "apart, each with run_at = the instant just before its enqueue call"
                           : "jobs enqueued in one jobd_enqueue_batch with run_at spread evenly over "
                             "spread_ms from lead_ms ahead");
    if (!ok || (long long)nl != n)
        k += snprintf(line + k, sizeof line - (size_t)k,
                      ",\"error\":\"%zu of %lld jobs recorded\"", nl, n);
    snprintf(line + k, sizeof line - (size_t)k, "}");
    puts(line);
    free(lat);
    db_close(&d);
    return 0;
}

/* ----------------------------------------------------------------- scaling */

static int
cmd_scaling(void)
{
    const char *url = opt_req("db");
    long long pending = opt_ll("pending", 10000), future = opt_ll("future", 0);
    long long kk = opt_ll("k", 5000), warm = opt_ll("warm", 1000);
    long long conc = opt_ll("concurrency", 100);
    if (warm + kk + 1 > pending || kk < 5)
        die("--warm + --k must be below --pending, and --k at least 5");
    struct db d;
    db_open(&d, url, true);
    double s0 = mono_s();
    db_seed(&d, future, true, 1);
    db_seed(&d, pending, false, 0);
    double seed_s = mono_s() - s0;
    db_settle(&d);
    struct workers w;
    workers_start(&w, 1, "c", url, conc, NULL, false);
    /*
     * The worker runs until warm + k + 1 jobs have succeeded; the rate then
     * comes from the store's own finished_at of jobs warm .. warm + k (in
     * finishing order), so polling and start-up do not blur it. The rates
     * of 5 sub-windows of k/5 jobs go along, to show how steady it was.
     */
    struct cpu_snap a, b;
    cpu_snap(&a, w.pid, 1, 0, d.pg);
    long long target = warm + kk + 1 < pending ? warm + kk + 1 : pending;
    bool ok = wait_done(&d, target, 300, &w);
    cpu_snap(&b, w.pid, 1, 0, d.pg);
    long rss = workers_rss_max(&w);
    workers_stop(&w);
    int64_t *fin = calloc((size_t)kk + 1, sizeof *fin);
    if (!fin)
        die("out of memory");
    long long nf = db_finished(&d, warm, kk + 1, fin);
    double rates[5] = {0}, whole = 0;
    if (ok && nf == kk + 1 && fin[kk] > fin[0]) {
        whole = (double)kk / ((double)(fin[kk] - fin[0]) / 1e6);
        for (int i = 0; i < 5; i++) {
            long long lo = kk * i / 5, hi = kk * (i + 1) / 5;
            double dt = (double)(fin[hi] - fin[lo]) / 1e6;
            rates[i] = dt > 0 ? (double)(hi - lo) / dt : INFINITY;
        }
        qsort(rates, 5, sizeof *rates, cmp_dbl);
    } else {
        ok = false;
    }
    free(fin);
    double t0 = 0, t1 = whole > 0 ? (double)kk / whole : 0;
    long long d0 = 0, d1 = ok ? kk : 0;
    char line[4096], cpu[256], set[256], variant[128];
    cpu_json(cpu, sizeof cpu, &a, &b);
    snprintf(set, sizeof set, "{\"concurrency\":%lld,\"future\":%lld,\"k\":%lld}", conc, future,
             kk);
    if (future)
        snprintf(variant, sizeof variant, "%lld pending + %lld future-dated ahead in the index",
                 pending, future);
    else
        snprintf(variant, sizeof variant, "%lld pending", pending);
    int k = head(line, sizeof line, "scaling", &d, variant, "scaling", pending, conc, set);
    k += snprintf(line + k, sizeof line - (size_t)k,
                  ",\"pending\":%lld,\"future\":%lld,\"claim_complete_jobs_per_s\":%.0f,"
                  "\"whole_window_jobs_per_s\":%.0f,\"subwindow_jobs_per_s\":[%.0f,%.0f,%.0f,%.0f,%.0f],"
                  "\"measured_jobs\":%lld,\"measured_s\":%.3f,\"seed_s\":%.3f,"
                  "\"worker_peak_rss_kb\":%ld,\"cpu\":%s,"
                  "\"notes\":\"one C-handler worker; jobs %lld to %lld in finishing order, timed by "
                  "their finished_at in the store (subwindow_jobs_per_s: the same window in 5 "
                  "parts, sorted, to show the noise); future-dated jobs have priority 1, so they sort before the due ones in "
                  "the claim index and must be skipped by run_at\"",
                  pending, future, ok ? whole : 0.0, whole, rates[0], rates[1], rates[2], rates[3],
                  rates[4], d1 - d0, t1 - t0, seed_s, rss, cpu, warm, warm + kk);
    if (!ok)
        k += snprintf(line + k, sizeof line - (size_t)k,
                      ",\"error\":\"no window of %lld jobs after the first %lld (timed out?)\"",
                      kk, warm);
    snprintf(line + k, sizeof line - (size_t)k, "}");
    puts(line);
    db_close(&d);
    return 0;
}

/* ----------------------------------------------------------------- cworker */

static jobd_worker *g_worker;
static atomic_llong g_handled;
static double *g_lat;
static long long g_lat_cap;
static atomic_llong g_lat_n;

static void
on_term(int sig)
{
    (void)sig;
    jobd_worker_stop(g_worker);
}

/* The no-op handler; with --out it records now - due ("due_us" or the harness's "due" in ms). */
static int
noop(jobd_run *run, void *ctx)
{
    (void)ctx;
    int64_t now = real_us();
    atomic_fetch_add(&g_handled, 1);
    if (g_lat) {
        const char *p = jobd_run_payload(run), *q;
        double due_ms = NAN;
        if ((q = strstr(p, "\"due_us\":")))
            due_ms = (double)strtoll(q + 9, NULL, 10) / 1000;
        else if ((q = strstr(p, "\"due\":")))
            due_ms = strtod(q + 6, NULL);
        if (!isnan(due_ms)) {
            long long i = atomic_fetch_add(&g_lat_n, 1);
            if (i < g_lat_cap)
                g_lat[i] = (double)now / 1000 - due_ms;
        }
    }
    return JOBD_HANDLER_OK;
}

static int
cmd_cworker(void)
{
    const char *url = opt_req("db"), *out = opt("out", NULL), *conc = opt("concurrency", "100");
    const char *prefetch = opt("prefetch", "");
    const char *types = opt("type", "noop");
    struct jobd_error err = {0};
    if (out) {
        g_lat_cap = opt_ll("lat-cap", 200000);
        g_lat = malloc((size_t)g_lat_cap * sizeof *g_lat);
        if (!g_lat)
            die("out of memory");
    }
    if (jobd_worker_new(url, NULL, &g_worker, &err) != JOBD_OK ||
        jobd_worker_set_option(g_worker, "concurrency", conc, &err) != JOBD_OK ||
        (*prefetch && jobd_worker_set_option(g_worker, "prefetch", prefetch, &err) != JOBD_OK) ||
        jobd_worker_register(g_worker, types, noop, NULL) != JOBD_OK)
        die("worker: %s", err.msg);
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    int rc = jobd_worker_run(g_worker, &err);
    jobd_worker_free(g_worker);
    if (rc != JOBD_OK)
        die("worker: %s", err.msg);
    if (out) {
        char tmp[600];
        snprintf(tmp, sizeof tmp, "%s.tmp", out);
        FILE *f = fopen(tmp, "w");
        if (!f)
            die("cannot write %s", tmp);
        long long n = atomic_load(&g_lat_n);
        if (n > g_lat_cap)
            n = g_lat_cap;
        fprintf(f, "{\"handled\":%lld,\"lat\":[", (long long)atomic_load(&g_handled));
        for (long long i = 0; i < n; i++)
            fprintf(f, "%s%.3f", i ? "," : "", g_lat[i]);
        fprintf(f, "]}\n");
        fclose(f);
        rename(tmp, out);
    }
    free(g_lat);
    return 0;
}

/* -------------------------------------------------------------------- main */

int
main(int argc, char **argv)
{
    g_argc = argc;
    g_argv = argv;
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        fprintf(stderr, "usage: jobd_bench enqueue1|enqueue|process|lateness|scaling|cworker "
                        "--db URL [options] (see the header of bench/jobd_bench.c)\n");
        return 2;
    }
    const char *c = argv[1];
    if (strcmp(c, "cworker") == 0)
        return cmd_cworker();
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc;
    if (strcmp(c, "enqueue1") == 0)
        rc = cmd_enqueue1();
    else if (strcmp(c, "enqueue") == 0)
        rc = cmd_enqueue();
    else if (strcmp(c, "process") == 0)
        rc = cmd_process();
    else if (strcmp(c, "lateness") == 0)
        rc = cmd_lateness();
    else if (strcmp(c, "scaling") == 0)
        rc = cmd_scaling();
    else {
        fprintf(stderr, "jobd_bench: unknown subcommand '%s'\n", c);
        rc = 2;
    }
    curl_global_cleanup();
    return rc;
}
