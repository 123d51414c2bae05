/*
 * bench.h — what the parts of jobd_bench share (see jobd_bench.c for the
 * subcommands). jobd_bench is a measurement tool, not a library: a failure
 * anywhere is fatal (die), strings returned are static or borrowed, and
 * every result goes out as one JSON line on stdout.
 */
#ifndef JOBD_BENCH_H
#define JOBD_BENCH_H

#include <jobd.h>

#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
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

/* A direct connection to the store, for seeding and counting only. */
struct db {
    bool pg;
    const char *url;
    char path[512]; /* SQLite file */
    PGconn *pc;
    sqlite3 *sq;
};

/* CPU over a window: workers (listed pids), the store's server processes, the machine. */
struct cpu_snap {
    double t;
    long long workers, server, total, busy;
};

struct server {
    pid_t pid;
    char base[64]; /* http://127.0.0.1:PORT */
};

/* Worker processes of one run: C-handler workers (this binary) or `jobd worker` (exec). */
struct workers {
    int n;
    pid_t pid[64];
    char out[64][300]; /* latency files (cworker --out) */
};


/* The command line, for opt*(): argv[1] is the subcommand. */
extern int g_argc;
extern char **g_argv;

/* bench_opt.c and bench_util.c: options (every option takes a value; opt_req
 * exits 2 when missing), clocks, child processes, CPU accounting, a server, a line's head.
 * tmpdir() and db_version() return static storage. */
const char *opt(const char *name, const char *dflt);
long long opt_ll(const char *name, long long dflt);
const char *opt_req(const char *name);
__attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...);
double mono_s(void);
int64_t real_us(void);
void sleep_ms(double ms);
pid_t spawn(char *const argv[], const char *log);
int stop_proc(pid_t pid);
bool alive(pid_t pid);
long vm_hwm_kb(pid_t pid);
long long proc_ticks(const char *pid);
long long comm_ticks(const char *comm);
void machine_ticks(long long *total, long long *busy);
/* pg_note_server: the PostgreSQL server of a backend (its postmaster, if on this
 * machine) is the one cpu_snap counts, instead of every process named postgres. */
extern pid_t g_pg_postmaster;
void pg_note_server(int backend_pid);
void cpu_snap(struct cpu_snap *s, const pid_t *pids, int n, pid_t server_pid, bool pg);
void cpu_json(char *out, size_t len, const struct cpu_snap *a, const struct cpu_snap *b);
const char *tmpdir(void);
void server_start(struct server *s, const char *jobd, const char *url);
int head(char *out, size_t len, const char *bench, struct db *d, const char *variant,
         const char *mode, long long n, long long conc, const char *settings);

/* bench_lat.c: latencies. read_lat appends the samples of a cworker --out
 * file to *v (grown with realloc) and returns its "handled" count, or -1;
 * pct is the nearest-rank percentile of a sorted array (NAN when empty);
 * jnum prints x with two decimals or null into one of 6 static slots. */
int cmp_dbl(const void *a, const void *b);
double pct(const double *v, size_t n, double p);
const char *jnum(double x, int slot);
long long read_lat(const char *path, double **v, size_t *n, size_t *cap);

/* bench_db.c: seeding and counting straight in the store (db_open resets it). */
bool is_pg(const char *url);
void db_exec(struct db *d, const char *sql);
long long db_count(struct db *d, const char *sql);
long long db_done(struct db *d);
long long db_failed(struct db *d);
long long db_hot(struct db *d);
long long db_finished(struct db *d, long long off, long long n, int64_t *out);
void migrate(const char *url);
void db_open(struct db *d, const char *url, bool reset);
void db_close(struct db *d);
const char *db_version(struct db *d);
void db_seed(struct db *d, long long n, bool future, int priority, long long groups);
void db_settle(struct db *d);

/* bench_workers.c: the worker processes of a run; bench_cworker.c: the C-handler
 * worker (its own executable, jobd_bench_cworker). */
void workers_start(struct workers *w, int n, const char *handler, const char *url, long long conc,
                   const char *jobd, bool lat);
long workers_rss_max(struct workers *w);
void workers_stop(struct workers *w);
bool wait_done(struct db *d, long long target, double timeout_s, struct workers *w);
int cmd_cworker(void);

/* The subcommands (bench_enqueue.c, bench_run.c): each prints one JSON line, returns the exit code. */
int cmd_enqueue1(void);
int cmd_enqueue(void);
int cmd_process(void);
int cmd_lateness(void);
int cmd_scaling(void);
int cmd_deps_chain(void);
int cmd_deps_fanout(void);

#endif
