/*
 * worker_api.c — libjobd's embedded worker (the "embedded worker" section
 * of include/jobd.h) on top of the worker loop in src/worker/.
 *
 * A jobd_worker is a config (INI file and/or options) plus C handlers; run
 * migrates, starts the same worker `jobd worker` runs and parks the calling
 * thread on a pipe until jobd_worker_stop writes one byte to it. A pipe
 * (not a condition variable) because stop must be callable from a signal
 * handler: write(2) is async-signal-safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/utf8.h"
#include "core/err.h"
#include "core/job.h"
#include "jobd.h"
#include "store/store.h"
#include "util/clock.h"
#include "worker/config.h"
#include "worker/cthread.h"
#include "worker/run.h"
#include "worker/worker.h"

struct jobd_worker {
    struct worker_config cfg;
    char *db_url;
    int stop_pipe[2];
    atomic_bool running;
};

/* ---- the run accessors ---- */

JOBD_API int64_t
jobd_run_id(const jobd_run *run)
{
    return run->run->id;
}

JOBD_API int32_t
jobd_run_attempt(const jobd_run *run)
{
    return run->run->attempt;
}

JOBD_API const char *
jobd_run_type(const jobd_run *run)
{
    return run->run->type;
}

JOBD_API const char *
jobd_run_queue(const jobd_run *run)
{
    return run->run->queue;
}

JOBD_API const char *
jobd_run_payload(const jobd_run *run)
{
    return run->run->payload;
}

JOBD_API const char *
jobd_run_parents(const jobd_run *run)
{
    return run->run->parents;
}

JOBD_API const char *
jobd_run_idempotency_key(const jobd_run *run)
{
    return run->run->idempotency_key;
}

JOBD_API const char *
jobd_run_traceparent(const jobd_run *run)
{
    return run->run->traceparent;
}

JOBD_API bool
jobd_run_should_stop(const jobd_run *run)
{
    jobd_run *j = (jobd_run *)run;
    if (atomic_load(&j->stop) != RUN_STOP_NONE)
        return true;
    /* The timeout counts from when a pool thread took the run (cthread.c),
     * not from the claim: a prefetched job may have waited in the queue. */
    if (j->deadline_us != 0 && clock_mono_now_us() >= j->deadline_us) {
        int none = RUN_STOP_NONE;
        atomic_compare_exchange_strong(&j->stop, &none, RUN_STOP_TIMEOUT);
        return true;
    }
    return false;
}

JOBD_API int
jobd_run_set_result(jobd_run *run, const char *json)
{
    if (json == NULL) {
        free(run->result);
        run->result = NULL;
        return JOBD_OK;
    }
    size_t len = strlen(json);
    if (len > JOB_RESULT_MAX)
        return JOBD_E_TOOBIG;
    char *canon = run_result_json(json, len);
    if (canon == NULL)
        return JOBD_E_INVALID;
    free(run->result);
    run->result = canon;
    return JOBD_OK;
}

JOBD_API int
jobd_run_set_error(jobd_run *run, const char *message)
{
    /* Its last JOB_ERROR_MAX bytes, as UTF-8 the store takes. */
    char *copy = message != NULL
                     ? utf8_clean(message, strlen(message), JOB_ERROR_MAX, UTF8_KEEP_TAIL)
                     : NULL;
    if (message != NULL && copy == NULL)
        return JOBD_E_NOMEM;
    free(run->error);
    run->error = copy;
    return JOBD_OK;
}

JOBD_API void
jobd_run_retry_after(jobd_run *run, int64_t delay_ms)
{
    run->retry_after_ms = delay_ms < 0 ? -1 : delay_ms;
}

JOBD_API int
jobd_progress(jobd_run *run, double percent, const char *message, const char *data_json)
{
    if (percent > 100 || isnan(percent))
        return JOBD_E_INVALID; /* percent: 0..100, or < 0 for none */
    if (message != NULL &&
        (strlen(message) > JOB_PROGRESS_MESSAGE_MAX || !utf8_valid(message, strlen(message))))
        return JOBD_E_INVALID; /* message: at most 1 KiB of UTF-8 */
    if (data_json != NULL && strlen(data_json) > JOB_PROGRESS_DATA_MAX)
        return JOBD_E_INVALID; /* data: at most 16 KiB */
    json_t *o = json_object();
    if (o == NULL)
        return JOBD_E_NOMEM;
    int rc = JOBD_OK;
    if (percent >= 0)
        rc |= json_object_set_new(o, "percent", json_real(percent));
    if (message != NULL)
        rc |= json_object_set_new(o, "message", json_string(message));
    if (data_json != NULL) {
        json_t *d = json_loads(data_json, JSON_DECODE_ANY, NULL);
        if (d == NULL) {
            json_decref(o);
            return JOBD_E_INVALID; /* data: not JSON */
        }
        rc |= json_object_set_new(o, "data", d);
    }
    /* One line, as an exec handler writes it on fd 3: the loop takes both alike. */
    char *line = rc == 0 ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (line == NULL)
        return JOBD_E_NOMEM;
    if (run->sink == NULL || run->sink->progress == NULL) {
        free(line); /* a runner without progress: nothing to tell */
        return JOBD_OK;
    }
    run->sink->progress(run->sink->ctx, run->run->id, run->run->attempt, line);
    return JOBD_OK;
}

/* ---- the worker ---- */

JOBD_API int
jobd_worker_new(const char *db_url, const char *config_path, jobd_worker **out,
                struct jobd_error *err)
{
    *out = NULL;
    struct jobd_worker *w = calloc(1, sizeof *w);
    if (w == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    worker_config_init(&w->cfg);
    w->stop_pipe[0] = w->stop_pipe[1] = -1;
    if (db_url == NULL || *db_url == '\0')
        db_url = getenv("JOBD_DB");
    if (db_url == NULL || *db_url == '\0')
        db_url = "sqlite:jobd.db";
    w->db_url = strdup(db_url);
    if (w->db_url == NULL || pipe(w->stop_pipe) != 0) {
        jobd_worker_free(w);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "cannot allocate the worker");
    }
    for (int i = 0; i < 2; i++)
        fcntl(w->stop_pipe[i], F_SETFD, FD_CLOEXEC);
    fcntl(w->stop_pipe[1], F_SETFL, O_NONBLOCK);
    if (config_path != NULL) {
        int rc = worker_config_load(&w->cfg, config_path, err);
        if (rc != JOBD_OK) {
            jobd_worker_free(w);
            return rc;
        }
    }
    *out = w;
    return JOBD_OK;
}

JOBD_API int
jobd_worker_set_option(jobd_worker *w, const char *key, const char *value, struct jobd_error *err)
{
    if (atomic_load(&w->running))
        return jobd_error_set(err, JOBD_E_STATE, key, "the worker is running");
    return worker_config_set(&w->cfg, key, value, err);
}

JOBD_API int
jobd_worker_register(jobd_worker *w, const char *type, jobd_handler_fn fn, void *ctx)
{
    if (atomic_load(&w->running))
        return JOBD_E_STATE;
    return worker_config_add_c(&w->cfg, type, fn, ctx, 0, NULL);
}

JOBD_API int
jobd_worker_run(jobd_worker *w, struct jobd_error *err)
{
    bool was = false;
    if (!atomic_compare_exchange_strong(&w->running, &was, true))
        return jobd_error_set(err, JOBD_E_STATE, NULL, "the worker is already running");
    int rc = worker_config_check(&w->cfg, err);
    struct store *st = NULL;
    if (rc == JOBD_OK)
        rc = store_open(w->db_url, &st, err);
    if (rc == JOBD_OK)
        rc = store_migrate(st, err);
    store_close(st);
    struct worker *wk = NULL;
    if (rc == JOBD_OK)
        rc = worker_start(&w->cfg, w->db_url, NULL, &wk, err);
    if (rc != JOBD_OK) {
        atomic_store(&w->running, false);
        return rc;
    }
    char c;
    for (;;) {
        ssize_t n = read(w->stop_pipe[0], &c, 1);
        if (n == 1 || (n < 0 && errno != EINTR) || n == 0)
            break;
    }
    worker_stop(wk, -1);
    atomic_store(&w->running, false);
    return JOBD_OK;
}

JOBD_API void
jobd_worker_stop(jobd_worker *w)
{
    char c = 1;
    ssize_t n = write(w->stop_pipe[1], &c, 1);
    (void)n; /* a full pipe already holds a stop */
}

JOBD_API void
jobd_worker_free(jobd_worker *w)
{
    if (w == NULL)
        return;
    worker_config_fini(&w->cfg);
    free(w->db_url);
    for (int i = 0; i < 2; i++)
        if (w->stop_pipe[i] >= 0)
            close(w->stop_pipe[i]);
    free(w);
}
