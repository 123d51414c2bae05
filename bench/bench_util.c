/*
 * bench_util.c — what every jobd_bench measurement shares: options, clocks,
 * child processes and their CPU and memory, a `jobd server` on a free port,
 * and the common head of a result line.
 */
#include "bench.h"

/* ------------------------------------------------------------------ clocks */

double
mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000) * 1e6)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* --------------------------------------------------------------- processes */

pid_t
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
int
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

bool
alive(pid_t pid)
{
    return waitpid(pid, NULL, WNOHANG) == 0;
}

/* Peak resident set size (VmHWM) in kB, or -1. */
long
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

/*
 * Reads /proc/PID/stat into buf (cap bytes) and returns what follows the
 * command's closing parenthesis (" S PPID ..."), or NULL: the command may
 * hold spaces and parentheses, the last ')' cannot.
 */
static char *
proc_stat_after_comm(const char *pid, char *buf, size_t cap)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%s/stat", pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = 0;
    return strrchr(buf, ')');
}

/* utime+stime (+ reaped children's) of a process, in clock ticks. */
long long
proc_ticks(const char *pid)
{
    char buf[1024];
    char *s = proc_stat_after_comm(pid, buf, sizeof buf);
    if (!s || !s[1])
        return 0;
    long long v[16] = {0};
    int k = 0;
    for (char *t = strtok(s + 2, " "); t && k < 15; t = strtok(NULL, " "))
        v[k++] = atoll(t);
    return v[11] + v[12] + v[13] + v[14];
}

/* The parent of a process, or 0. */
static pid_t
proc_ppid(const char *pid)
{
    char buf[1024];
    char *s = proc_stat_after_comm(pid, buf, sizeof buf);
    return s && s[1] ? (pid_t)atol(s + 4) : 0; /* ") S PPID" */
}

pid_t g_pg_postmaster;

void
pg_note_server(int backend_pid)
{
    char p[24];
    snprintf(p, sizeof p, "%d", backend_pid);
    g_pg_postmaster = backend_pid > 0 ? proc_ppid(p) : 0;
}

/* Ticks of the postmaster (its reaped backends' in its own) and its live
 * children: this server's work alone, not other servers' on the machine. */
static long long
server_ticks(pid_t pm)
{
    char p[24];
    snprintf(p, sizeof p, "%d", (int)pm);
    long long t = proc_ticks(p);
    DIR *dir = opendir("/proc");
    struct dirent *e;
    if (!dir)
        return t;
    while ((e = readdir(dir)))
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && proc_ppid(e->d_name) == pm)
            t += proc_ticks(e->d_name);
    closedir(dir);
    return t;
}

/* Ticks of every process named comm (PostgreSQL's backends count through the postmaster). */
long long
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

void
machine_ticks(long long *total, long long *busy)
{
    FILE *f = fopen("/proc/stat", "r");
    long long v[10] = {0};
    *total = *busy = 0;
    if (!f)
        return;
    if (fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7]) == 8) {
        for (int i = 0; i < 8; i++)
            *total += v[i];
        *busy = *total - v[3] - v[4];
    }
    fclose(f);
}

void
cpu_snap(struct cpu_snap *s, const pid_t *pids, int n, pid_t server_pid, bool pg)
{
    s->t = mono_s();
    s->workers = 0;
    for (int i = 0; i < n; i++) {
        char p[24];
        snprintf(p, sizeof p, "%d", (int)pids[i]);
        s->workers += proc_ticks(p);
    }
    /* the store's server when db_open found it on this machine, else every postgres */
    s->server = !pg                   ? 0
                : g_pg_postmaster > 0 ? server_ticks(g_pg_postmaster)
                                      : comm_ticks("postgres");
    if (server_pid > 0) {
        char p[24];
        snprintf(p, sizeof p, "%d", (int)server_pid);
        s->server += proc_ticks(p);
    }
    machine_ticks(&s->total, &s->busy);
}

void
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
const char *
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

/* Starts `jobd server` on a free loopback port and waits for its "listening" line. */
void
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
int
head(char *out, size_t len, const char *bench, struct db *d, const char *variant, const char *mode,
     long long n, long long conc, const char *settings)
{
    int k =
        snprintf(out, len,
                 "{\"system\":\"jobd\",\"bench\":\"%s\",\"backend\":\"%s\",\"variant\":\"%s, %s\","
                 "\"version\":\"%s\",\"mode\":\"%s\",\"n\":%lld,\"concurrency\":%lld,"
                 "\"settings\":%s,\"durability\":\"%s\"",
                 bench, d->pg ? "pg" : "sqlite", d->pg ? "pg" : "sqlite", variant, db_version(d),
                 mode, n, conc, settings, d->pg ? PG_DURABILITY : SQ_DURABILITY);
    /* --round R: which round of bench/run.sh's interleaved features block */
    if (opt("round", NULL) != NULL)
        k += snprintf(out + k, len - (size_t)k, ",\"round\":%lld", opt_ll("round", 0));
    return k;
}
