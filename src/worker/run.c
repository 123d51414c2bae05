/*
 * run.c — small helpers around struct run and struct run_result (run.h).
 *
 * Results are normalised here once for every runner: a handler's output is
 * kept as a result only if it parses as JSON within the 64 KiB limit, and
 * error texts are cut to their LAST 4 KiB (the end of stderr is where the
 * reason usually is).
 */
#include "worker/run.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/job.h"
#include "core/json.h"
#include "core/utf8.h"

void
run_free(struct run *r)
{
    if (r == NULL)
        return;
    free(r->type);
    free(r->queue);
    free(r->payload);
    free(r->idempotency_key);
    free(r->parents);
    if (r->parents_path != NULL)
        unlink(r->parents_path); /* docs/WORKER.md, Parents: removed after the run */
    free(r->parents_path);
    free(r->traceparent);
    free(r);
}

void
run_result_free(struct run_result *r)
{
    if (r == NULL)
        return;
    free(r->result);
    free(r->error);
    free(r->log);
    run_free(r->run);
    free(r);
}

struct run_result *
run_result_new(const struct run *run, enum run_outcome outcome, const char *error)
{
    struct run_result *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->id = run->id;
    r->attempt = run->attempt;
    r->outcome = outcome;
    r->retry_after_ms = -1;
    if (error != NULL) {
        /* Handlers print any bytes: keep the last JOB_ERROR_MAX as UTF-8
         * that every store takes (core/utf8.h). */
        r->error = utf8_clean(error, strlen(error), JOB_ERROR_MAX, UTF8_KEEP_TAIL);
        if (r->error == NULL) {
            free(r);
            return NULL;
        }
    }
    return r;
}

char *
run_result_json(const char *text, size_t len)
{
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' ' || text[len - 1] == '\r' ||
                       text[len - 1] == '\t'))
        len--;
    if (len == 0 || len > JOB_RESULT_MAX || !utf8_valid(text, len))
        return NULL; /* output that is not UTF-8 is not JSON, so not a result */
    json_error_t jerr;
    json_t *v = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
    if (v == NULL)
        return NULL;
    /* The canonical form, as the API stores a reported result: the same
     * bytes whichever way the result reaches the store. */
    char *out = NULL;
    int rc = json_value_canonical(v, JOB_RESULT_MAX, &out, "result", NULL);
    json_decref(v);
    return rc == JOBD_OK ? out : NULL;
}

const char *
run_stop_text(enum run_stop why)
{
    switch (why) {
    case RUN_STOP_TIMEOUT: return "timed out";
    case RUN_STOP_CANCEL: return "cancelled";
    case RUN_STOP_SHUTDOWN: return "stopped: the worker is shutting down";
    case RUN_STOP_LOST: return "stopped: the lease was lost";
    case RUN_STOP_RETURNED: return "claimed ahead but every thread stayed busy: handed back";
    default: return "stopped";
    }
}
