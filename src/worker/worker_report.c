/*
 * worker_report.c — the worker's store connection (worker_int.h): reconnects
 * with backoff, completions and failure reports (a store that refuses a
 * report for its content is never retried as if it were an outage),
 * heartbeats, and self-fencing of runs whose lease ran out by our clock.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backoff.h"
#include "core/err.h"
#include "core/utf8.h"
#include "util/check.h"
#include "util/clock.h"
#include "worker/exec.h"
#include "worker/fence.h"
#include "worker/flusher.h"
#include "worker/worker_int.h"

/* ---- the store connection (loop thread) ---- */

void
wk_store_trouble(struct worker *w, int rc, const struct jobd_error *err, const char *what)
{
    wlog(w, LOGL_WARN, "store error; reconnecting", LF_STR("during", what),
         LF_STR("error", err->msg[0] ? err->msg : jobd_strerror(rc)));
    store_close(w->st);
    w->st = NULL;
    /*
     * A store that opens but fails at once (a full disk, a server that
     * accepts and then errors) must not be retried at the minimum pace
     * forever: the backoff starts over only after a connection that lasted
     * (struct backoff_conn's one reset rule).
     */
    int64_t now = clock_mono_now_us();
    w->reconnect_at_us = now + backoff_conn_failed(&w->recon, now / 1000) * 1000;
}

void
wk_ensure_store(struct worker *w, int64_t now)
{
    if (w->st != NULL || now < w->reconnect_at_us)
        return;
    struct jobd_error err = {0};
    int rc = store_open(w->db_url, &w->st, &err);
    if (rc != JOBD_OK) {
        w->st = NULL;
        int64_t delay_ms = backoff_conn_failed(&w->recon, now / 1000);
        w->reconnect_at_us = now + delay_ms * 1000;
        wlog(w, LOGL_WARN, "store still unreachable",
             LF_STR("error", err.msg[0] ? err.msg : jobd_strerror(rc)),
             LF_INT("retry_ms", delay_ms));
        return;
    }
    store_offload(w->st);
    backoff_conn_opened(&w->recon, now / 1000);
    wlog(w, LOGL_INFO, "reconnected to the store");
    wk_stat_add(w, &w->stats.reconnects, 1);
    atomic_store(&w->hint, true); /* whatever was enqueued meanwhile */
}

/*
 * The store refused a failure report for its content, not for an outage
 * (store_error_is_outage): sending it again unchanged would fail again, for
 * ever, and hold back every report, heartbeat and claim behind it. The
 * first time, its error text is replaced by a plain one that says so (true:
 * send it again); the second time it is dropped (false) and the job is left
 * to its lease, whose reaper records the attempt.
 */
static bool
refused_failure(struct worker *w, struct failure *f, const struct jobd_error *err)
{
    if (f->plain) {
        wlog(w, LOGL_ERROR, "failure report refused; leaving the job to its lease",
             LF_INT("job", f->id), LF_INT("attempt", f->attempt), LF_STR("error", err->msg),
             LF_TRACE(f->traceparent));
        return false;
    }
    wlog(w, LOGL_WARN, "failure report refused; sending it with a plain message",
         LF_INT("job", f->id), LF_INT("attempt", f->attempt), LF_STR("error", err->msg),
         LF_TRACE(f->traceparent));
    char msg[512];
    snprintf(msg, sizeof msg, "the store refused this attempt's error text: %s", err->msg);
    char *plain = utf8_clean(msg, strlen(msg), sizeof msg, UTF8_KEEP_HEAD);
    if (plain == NULL)
        return false;
    free(f->error);
    f->error = plain;
    f->plain = true;
    return true;
}

/* The first queued report is done with (written, stale or given up). */
static void
drop_head(struct worker *w)
{
    struct failure *f = w->fails;
    assert(f != NULL && *w->fails_tail == NULL);
    w->fails = f->next;
    if (w->fails == NULL)
        w->fails_tail = &w->fails;
    free(f->error);
    free(f);
}

/* A report that left its job dead says so at info (docs/LOGGING.md, Access log). */
static void
log_dead(struct worker *w, const struct failure *f, enum job_status now)
{
    if (now == JOB_DEAD)
        wlog(w, LOGL_INFO, "job dead", LF_INT("job", f->id), LF_INT("attempt", f->attempt),
             LF_STR("type", f->type), LF_STR("error", f->error), LF_TRACE(f->traceparent));
}

/* The most failure reports written by one store_fail_batch. */
#define FAIL_BATCH_MAX 256

/* Counts the applied reports of a batch by new status, for events.finished. */
static void
fail_batch_counted(struct worker *w, const int *outcome, const enum job_status *status, size_t n)
{
    uint64_t by[JOB_STATUS_COUNT] = {0}, applied = 0, stale = 0;
    for (size_t i = 0; i < n; i++) {
        /* A failure report ends the attempt: pending again, dead, or
         * cancelled (docs/MODEL.md, Jobs and their states); never running, never
         * succeeded. A store that says otherwise is not counted. */
        if (outcome[i] == JOBD_OK && ALWAYS(status[i] == JOB_PENDING || status[i] == JOB_DEAD ||
                                            status[i] == JOB_CANCELLED)) {
            applied++;
            by[status[i]]++;
        } else if (outcome[i] != JOBD_OK) {
            assert(outcome[i] == JOBD_E_STALE);
            stale++;
        }
    }
    wk_stat_add(w, &w->stats.failed, applied);
    wk_stat_add(w, &w->stats.stale, stale);
    for (int k = 0; k < JOB_STATUS_COUNT && w->cfg.events.finished != NULL; k++)
        if (by[k] > 0)
            w->cfg.events.finished(w->cfg.events.arg, (enum job_status)k, by[k]);
}

/*
 * Writes the failure reports at the head of the queue (up to the first
 * release, at most FAIL_BATCH_MAX) with one store_fail_batch: one commit
 * for a burst of failures instead of one each, so a handler that fails
 * every job (a downstream outage) does not cut the worker to the store's
 * commit rate. Returns 1 if it wrote a batch, 0 if there was none to write
 * (fewer than two reports, or the store refused the batch for its content:
 * the one-by-one path then finds the report at fault), -1 if the store
 * failed (and was dropped).
 */
static int
fail_batched(struct worker *w)
{
    size_t n = 0;
    for (struct failure *f = w->fails; f != NULL && f->kind != REPORT_RELEASE; f = f->next)
        if (++n == FAIL_BATCH_MAX)
            break;
    if (n < 2)
        return 0;
    struct fail_report *r = calloc(n, sizeof *r);
    int *outcome = calloc(n, sizeof *outcome);
    enum job_status *status = calloc(n, sizeof *status);
    struct jobd_error err = {0};
    int rc = JOBD_E_NOMEM;
    if (r != NULL && outcome != NULL && status != NULL) {
        struct failure *f = w->fails;
        for (size_t i = 0; i < n; i++, f = f->next)
            r[i] = (struct fail_report){.id = f->id,
                                        .attempt = f->attempt,
                                        .error = f->error,
                                        .retryable = f->kind == REPORT_RETRY,
                                        .retry_delay_ms = f->delay_ms};
        rc = store_fail_batch(w->st, r, n, outcome, status, &err);
    }
    int done = 0;
    if (rc == JOBD_OK) {
        fail_batch_counted(w, outcome, status, n);
        for (size_t i = 0; i < n; i++) {
            if (outcome[i] == JOBD_OK)
                log_dead(w, w->fails, status[i]);
            drop_head(w);
        }
        done = 1;
    } else if (store_error_is_outage(rc)) {
        wk_store_trouble(w, rc, &err, "failure report");
        done = -1;
    }
    free(r);
    free(outcome);
    free(status);
    return done;
}

/* Writes completions and failures. False if the store failed (and was dropped). */
bool
wk_report(struct worker *w)
{
    struct jobd_error err = {0};
    if (w->comp.n > 0 && w->fl == NULL) {
        uint64_t written = w->comp.written, stale = w->comp.stale, batches = w->comp.batches;
        int rc = completer_flush(&w->comp, w->st, &err);
        wk_stat_add(w, &w->stats.succeeded, w->comp.written - written);
        wk_stat_add(w, &w->stats.stale, w->comp.stale - stale);
        wk_stat_add(w, &w->stats.batches, w->comp.batches - batches);
        if (rc != JOBD_OK) {
            wk_store_trouble(w, rc, &err, "completion");
            return false;
        }
    }
    int batched;
    while ((batched = fail_batched(w)) == 1)
        ;
    if (batched < 0)
        return false;
    while (w->fails != NULL) {
        struct failure *f = w->fails;
        /* The job as the report left it, only when someone wants its status. */
        struct job after = {0};
        bool want = w->cfg.events.finished != NULL || log_enabled(LOGL_INFO);
        struct job *out = want ? &after : NULL;
        int rc;
        if (f->kind == REPORT_RELEASE) {
            rc = store_release(w->st, f->id, f->attempt, &err);
            if (rc == JOBD_OK) {
                wk_stat_add(w, &w->stats.released, 1);
                drop_head(w);
                continue;
            }
            if (!store_error_is_outage(rc) && rc != JOBD_E_STALE) {
                /* A store (or server: 404 from one without the route) that
                 * cannot give attempts back: a retryable failure due now is
                 * the next best thing (a job really gone answers it stale). */
                f->kind = REPORT_RETRY;
                continue;
            }
        } else {
            rc = store_fail(w->st, f->id, f->attempt, f->error, f->kind == REPORT_RETRY,
                            f->delay_ms, out, &err);
        }
        if (rc == JOBD_OK) {
            wk_stat_add(w, &w->stats.failed, 1);
            if (out != NULL) {
                log_dead(w, f, after.status);
                if (w->cfg.events.finished != NULL)
                    w->cfg.events.finished(w->cfg.events.arg, after.status, 1);
                job_fini(&after);
            }
        } else if (rc == JOBD_E_STALE || rc == JOBD_E_NOTFOUND) {
            wk_stat_add(w, &w->stats.stale, 1);
        } else if (store_error_is_outage(rc)) {
            wk_store_trouble(w, rc, &err, "failure report");
            return false;
        } else if (refused_failure(w, f, &err)) {
            continue; /* sent again, with a plain message */
        }
        drop_head(w);
    }
    return true;
}

bool
wk_heartbeats(struct worker *w, int64_t now)
{
    for (int i = 0; i < w->n_slots; i++) {
        struct slot *s = &w->slots[i];
        if (!s->used || s->lost || s->next_hb_us > now)
            continue;
        struct jobd_error err = {0};
        int64_t exp = 0;
        bool cancel = false;
        int64_t sent_us = clock_mono_now_us();
        int rc = store_heartbeat(w->st, s->id, s->attempt, w->cfg.lease_ms, &exp, &cancel, &err);
        if (rc == JOBD_OK) {
            assert(!s->lost); /* a lost run's heartbeat is not sent */
            s->next_hb_us = now + w->cfg.heartbeat_ms * 1000;
            s->lease_end_us = sent_us + w->cfg.lease_ms * 1000;
            if (s->watched && !fence_extend(w->fence, i, s->lease_end_us - w->fence_margin_us)) {
                /* The answer came too late: the watchdog is stopping the run. */
                wk_unwatch(w, s);
                wk_fenced(s);
                continue;
            }
            if (cancel)
                wk_stop_run(w, s, RUN_STOP_CANCEL);
        } else if (rc == JOBD_E_STALE || rc == JOBD_E_NOTFOUND) {
            bool fired = wk_unwatch(w, s); /* the watchdog sent its stop already */
            wlog(w, LOGL_WARN,
                 fired ? "lost the lease (stopped when it ran out by our clock)"
                       : "lost the lease; stopping it",
                 LF_INT("job", s->id), LF_INT("attempt", s->attempt), LF_TRACE(s->traceparent));
            s->lost = true;
            wk_stat_add(w, &w->stats.stale, 1);
            if (fired)
                wk_fenced(s);
            wk_stop_run(w, s, RUN_STOP_LOST);
        } else {
            wk_store_trouble(w, rc, &err, "heartbeat");
            return false;
        }
    }
    return true;
}

/*
 * Self-fencing: a run whose lease was not renewed in time (the store did
 * not answer its heartbeats: a partition, a database down) is stopped when
 * the lease runs out by our own clock, counted from when the last renewal
 * that got an answer was sent, so never later than the store's. From then
 * on the reaper may hand the job to another worker, which must not find
 * this one still at work. A stopped run's failure is dropped; a success
 * that beat the stop is still reported (the store's fencing decides). It
 * is stopped fence_margin_us before the lease's end, so that even an exec
 * handler that waits out SIGTERM is gone by then. The watchdog thread (fence.h) does the stopping
 * on time even while this thread is blocked in a store call (a silent
 * network); here the loop catches up: it marks the runs the watchdog
 * stopped, and stops itself any run it finds past its lease first.
 */
void
wk_fence_expired(struct worker *w)
{
    int64_t now = clock_mono_now_us();
    /* Only when the watchdog fired since the last turn is each slot's entry
     * asked (under its lock): a loop turn must not take the lock once per
     * slot, hundreds of times, when nothing happened. */
    uint64_t fired_n = fence_fired_count(w->fence);
    bool any_fired = fired_n != w->fence_seen;
    w->fence_seen = fired_n;
    for (int i = 0; i < w->n_slots; i++) {
        struct slot *s = &w->slots[i];
        if (!s->used || s->lost)
            continue;
        bool fired = any_fired && s->watched && fence_fired(w->fence, i);
        if (!fired && now < s->lease_end_us - w->fence_margin_us)
            continue;
        if (wk_unwatch(w, s)) /* the watchdog fired first, or just now */
            fired = true;
        if (fired) {
            wk_fenced(s);
            continue;
        }
        wlog(w, LOGL_WARN, "the lease ran out without a heartbeat answer; stopping it",
             LF_INT("job", s->id), LF_INT("attempt", s->attempt), LF_TRACE(s->traceparent));
        s->lost = true;
        wk_stop_run(w, s, RUN_STOP_LOST);
    }
}
