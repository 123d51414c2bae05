/*
 * worker_logs.c — attempt logs on their way to the store (docs/WORKER.md,
 * Attempt logs).
 *
 * An exec runner hands the kept end of an attempt's stderr over with the
 * attempt's result (run_result.log), never line by line; the loop thread
 * queues it here when it takes the result, and writes the queue at the top
 * of its next store turn, before the completions and failures of the same
 * results: so a --server worker's log still finds its attempt running and
 * its lease token valid (the route is fenced like a report), and a reader
 * who sees the job finished finds its log. A run whose lease was lost has
 * no report, yet its log is written all the same (the store keeps the log
 * of any attempt the job has had; a --server worker's is refused as stale).
 * Each log is one row; several finished in one turn go in one call.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/err.h"
#include "store/attemptlog.h"
#include "worker/worker_int.h"

/* The most logs one store call writes. */
#define LOG_BATCH_MAX 64

struct log_note {
    int64_t id;
    int32_t attempt;
    char *text;
    char traceparent[TRACEPARENT_LEN + 1]; /* the job's, "" if none (LF_TRACE) */
    struct log_note *next;
};

void
wk_log_keep(struct worker *w, struct run_result *r)
{
    if (r->log == NULL)
        return;
    struct log_note *n = calloc(1, sizeof *n);
    if (n == NULL) {
        wlog(w, LOGL_WARN, "out of memory keeping an attempt's log; dropped", LF_INT("job", r->id),
             LF_INT("attempt", r->attempt), LF_TRACE(wk_trace_of(w, r->id, r->attempt)));
        return; /* r keeps its log and frees it */
    }
    n->id = r->id;
    n->attempt = r->attempt;
    n->text = r->log;
    r->log = NULL;
    snprintf(n->traceparent, sizeof n->traceparent, "%s", wk_trace_of(w, r->id, r->attempt));
    *w->lnotes_tail = n;
    w->lnotes_tail = &n->next;
}

/* Drops the first k notes of the queue. */
static void
drop(struct worker *w, size_t k)
{
    for (size_t i = 0; i < k && w->lnotes != NULL; i++) {
        struct log_note *n = w->lnotes;
        w->lnotes = n->next;
        free(n->text);
        free(n);
    }
    if (w->lnotes == NULL)
        w->lnotes_tail = &w->lnotes;
}

bool
wk_logs_flush(struct worker *w)
{
    while (w->lnotes != NULL) {
        struct attempt_log v[LOG_BATCH_MAX];
        const char *tp[LOG_BATCH_MAX]; /* each note's traceparent, for its line */
        int outcome[LOG_BATCH_MAX];
        size_t n = 0;
        for (struct log_note *x = w->lnotes; x != NULL && n < LOG_BATCH_MAX; x = x->next) {
            tp[n] = x->traceparent;
            v[n++] = (struct attempt_log){.id = x->id, .attempt = x->attempt, .text = x->text};
        }
        struct jobd_error err = {0};
        int rc = store_attempt_logs_put(w->st, v, n, outcome, &err);
        if (rc != JOBD_OK && store_error_is_outage(rc)) {
            wk_store_trouble(w, rc, &err, "attempt log");
            return false;
        }
        if (rc != JOBD_OK)
            wlog(w, LOGL_WARN, "attempt logs refused; dropped", LF_INT("job", v[0].id),
                 LF_INT("attempt", v[0].attempt), LF_INT("logs", n),
                 LF_STR("error", err.msg[0] ? err.msg : jobd_strerror(rc)), LF_TRACE(tp[0]));
        for (size_t i = 0; rc == JOBD_OK && i < n; i++)
            if (outcome[i] != JOBD_OK)
                wlog(w, LOGL_DEBUG, "attempt log not kept: the attempt is over",
                     LF_INT("job", v[i].id), LF_INT("attempt", v[i].attempt), LF_TRACE(tp[i]));
        drop(w, n);
    }
    return true;
}

void
wk_logs_fini(struct worker *w)
{
    drop(w, SIZE_MAX);
}
