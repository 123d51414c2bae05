/*
 * limitstest.h — what the queue-limit tests through the real binary share
 * (test_limits_running.c, test_limits_rate.c): an exec handler that
 * appends its own start and end instants to a file, N `jobd worker --db`
 * processes running it, and reading those records back. The records are
 * the handlers' own view, independent of the store: if the store let more
 * jobs run or start than a limit allows, they show it.
 */
#ifndef JOBD_TESTS_LIMITSTEST_H
#define JOBD_TESTS_LIMITSTEST_H

#include <sys/stat.h>

#include "apitest.h"

/* One record: the handler of job id started (start) or ended, at ns since the epoch. */
struct lt_rec {
    bool start;
    int64_t ns;
    int64_t id;
};

/*
 * Writes the handler script (records to rec_path, sleeps sleep_s, which
 * may be "0") and a worker INI for type in queue q; returns the INI's path
 * in ini (len bytes).
 */
static inline void
lt_setup(const char *type, const char *q, const char *sleep_s, const char *rec_path, char *ini,
         size_t len)
{
    char sh[600];
    snprintf(sh, sizeof sh, "%s", test_path("handler.sh"));
    FILE *f = fopen(sh, "w");
    fprintf(f, "#!/bin/sh\necho \"s $(date +%%s%%N) $JOBD_JOB_ID\" >> '%s'\n", rec_path);
    if (strcmp(sleep_s, "0") != 0)
        fprintf(f, "sleep %s\n", sleep_s);
    fprintf(f, "echo \"e $(date +%%s%%N) $JOBD_JOB_ID\" >> '%s'\n", rec_path);
    fclose(f);
    chmod(sh, 0755);
    snprintf(ini, len, "%s", test_path("limits.ini"));
    f = fopen(ini, "w");
    fprintf(f,
            "[worker]\nconcurrency = 16\nqueues = %s\n[handler \"%s\"]\nexec = %s\n"
            "timeout = 60s\n",
            q, type, sh);
    fclose(f);
}

/* Starts n `jobd worker --db DB --config INI --concurrency 16` processes into pids. */
static inline void
lt_start_workers(const struct srv *s, const char *ini, int n, pid_t *pids)
{
    for (int i = 0; i < n; i++) {
        char log[64];
        snprintf(log, sizeof log, "worker%d.log", i);
        char *argv[] = {getenv("JOBD_BIN"), "worker",        "--db", (char *)s->db, "--config",
                        (char *)ini,        "--concurrency", "16",   NULL};
        pids[i] = apitest_spawn(argv, test_path(log), NULL);
    }
}

/* SIGTERM to every worker; each must exit 0 within 20 s. */
static inline void
lt_stop_workers(int n, const pid_t *pids)
{
    for (int i = 0; i < n; i++)
        kill(pids[i], SIGTERM);
    for (int i = 0; i < n; i++) {
        int st = 0;
        int64_t deadline = apitest_now_ms() + 20000;
        while (waitpid(pids[i], &st, WNOHANG) == 0) {
            if (apitest_now_ms() > deadline) {
                kill(pids[i], SIGKILL);
                TEST_FAIL("worker %d did not stop on SIGTERM", i);
            }
            apitest_nap_ms(10);
        }
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            TEST_FAIL("worker %d exited with status %d", i, st);
    }
}

/* Enqueues n jobs of type in queue q, in batches of 100. */
static inline void
lt_enqueue(const struct srv *s, const char *type, const char *q, int n)
{
    while (n > 0) {
        int k = n > 100 ? 100 : n;
        json_t *jobs = json_array();
        for (int i = 0; i < k; i++)
            json_array_append_new(jobs, json_pack("{s:s,s:s}", "type", type, "queue", q));
        json_t *body = json_pack("{s:o}", "jobs", jobs);
        char *text = json_dumps(body, JSON_COMPACT);
        struct resp r;
        long st = req(s, "POST", "/v1/jobs/batch", text, &r);
        if (st != 201)
            TEST_FAIL("POST /v1/jobs/batch: %ld %s", st, r.body);
        resp_fini(&r);
        free(text);
        json_decref(body);
        n -= k;
    }
}

/* How many jobs of queue q have status (GET /v1/jobs, exact on both stores). */
static inline long
lt_count(const struct srv *s, const char *q, const char *status)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/jobs?queue=%s&status=%s&limit=1000", q, status);
    json_t *o = get_json(s, path);
    long n = (long)json_array_size(json_object_get(o, "jobs"));
    json_decref(o);
    return n;
}

static inline int
lt_rec_cmp(const void *a, const void *b)
{
    const struct lt_rec *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? -1 : 1;
    return (int)x->start - (int)y->start; /* an end before a start at the same instant */
}

/* Reads the records, sorted by time; returns how many (malloc'd into *out). */
static inline size_t
lt_read(const char *rec_path, struct lt_rec **out)
{
    FILE *f = fopen(rec_path, "r");
    size_t n = 0, cap = 256;
    struct lt_rec *v = malloc(cap * sizeof *v);
    char kind;
    long long ns, id;
    while (f != NULL && fscanf(f, " %c %lld %lld", &kind, &ns, &id) == 3) {
        if (n == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        v[n++] = (struct lt_rec){kind == 's', (int64_t)ns, (int64_t)id};
    }
    if (f != NULL)
        fclose(f);
    qsort(v, n, sizeof *v, lt_rec_cmp);
    *out = v;
    return n;
}

#endif
