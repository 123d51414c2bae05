/*
 * runner.c — the table of handler kinds (runner.h).
 *
 * Each runner keeps its own typed API (exec.h, http.h, cthread.h, which
 * their unit tests use); the adapters below give them the one shape the
 * table needs. A row is the only place a kind is tied to its key and runner.
 */
#include "worker/runner.h"

#include <stdio.h>
#include <string.h>

#include "worker/cthread.h"
#include "worker/exec.h"
#include "worker/http.h"

/* ---- exec: a child process per run (exec.c, exec_conf.c) ---- */

static int
exec_create(struct run_sink sink, int concurrency, void **out, struct jobd_error *err)
{
    (void)concurrency;
    struct exec_runner *x = NULL;
    int rc = exec_runner_new(sink, &x, err);
    *out = x;
    return rc;
}

static void
exec_start_many(void *r, struct run **runs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        exec_runner_start(r, runs[i]);
}

static void
exec_stop(void *r, int64_t id, int32_t attempt, enum run_stop why)
{
    exec_runner_stop(r, id, attempt, why);
}

static void
exec_destroy(void *r)
{
    exec_runner_free(r);
}

/* ---- http: one curl multi thread (http.c) ---- */

static int
http_create(struct run_sink sink, int concurrency, void **out, struct jobd_error *err)
{
    (void)concurrency;
    struct http_runner *h = NULL;
    int rc = http_runner_new(sink, &h, err);
    *out = h;
    return rc;
}

static void
http_start_many(void *r, struct run **runs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        http_runner_start(r, runs[i]);
}

static void
http_stop(void *r, int64_t id, int32_t attempt, enum run_stop why)
{
    http_runner_stop(r, id, attempt, why);
}

static void
http_destroy(void *r)
{
    http_runner_free(r);
}

/* ---- C: a thread pool with a queue (cthread.c) ---- */

static int
c_create(struct run_sink sink, int concurrency, void **out, struct jobd_error *err)
{
    struct cthread_runner *c = NULL;
    int rc = cthread_runner_new(sink, concurrency, &c, err);
    *out = c;
    return rc;
}

static void
c_start_many(void *r, struct run **runs, size_t n)
{
    cthread_runner_start_many(r, runs, n);
}

static void
c_stop(void *r, int64_t id, int32_t attempt, enum run_stop why)
{
    cthread_runner_stop(r, id, attempt, why);
}

static size_t
c_drop_queued(void *r, enum run_stop why)
{
    return cthread_runner_drop_queued(r, why);
}

static void
c_destroy(void *r)
{
    cthread_runner_free(r);
}

const struct runner_kind runner_kinds[HANDLER_KIND_COUNT] = {
    [HANDLER_EXEC] = {"exec", exec_configure, exec_check, exec_create, exec_start_many, exec_stop,
                      NULL, exec_destroy},
    [HANDLER_HTTP] = {"http", http_configure, NULL, http_create, http_start_many, http_stop, NULL,
                      http_destroy},
    [HANDLER_C] = {NULL, NULL, NULL, c_create, c_start_many, c_stop, c_drop_queued, c_destroy},
};

enum handler_kind
runner_kind_by_key(const char *name)
{
    for (int k = 0; k < HANDLER_KIND_COUNT; k++)
        if (runner_kinds[k].key != NULL && strcmp(runner_kinds[k].key, name) == 0)
            return (enum handler_kind)k;
    return HANDLER_NONE;
}

void
runner_kind_keys(char *buf, size_t len, const char *sep)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < HANDLER_KIND_COUNT && used < len; k++) {
        if (runner_kinds[k].key == NULL)
            continue;
        int n = snprintf(buf + used, len - used, "%s%s=", used ? sep : "", runner_kinds[k].key);
        used += n > 0 ? (size_t)n : 0;
    }
}
