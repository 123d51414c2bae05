/*
 * worker_slots.c — a worker's slots (worker_int.h): stopping a run through
 * its kind's runner, the loop's side of the lease watchdog (fence.h), and
 * taking the results the runners deliver: successes to the completer,
 * failures to the report queue, runs that never started handed back.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backoff.h"
#include "core/err.h"
#include "core/rules.h"
#include "core/utf8.h"
#include "util/check.h"
#include "util/clock.h"
#include "worker/exec.h"
#include "worker/fence.h"
#include "worker/flusher.h"
#include "worker/worker_int.h"

/* ---- slots and runners (loop thread) ---- */

#ifndef NDEBUG
/* The slot bookkeeping's invariant: n_running counts the used slots. */
static bool
slots_add_up(const struct worker *w)
{
    int used = 0;
    for (int i = 0; i < w->n_slots; i++)
        used += w->slots[i].used;
    return used == w->n_running;
}
#endif

static struct slot *
find_slot(struct worker *w, int64_t id, int32_t attempt)
{
    for (int i = 0; i < w->n_slots; i++)
        if (w->slots[i].used && w->slots[i].id == id && w->slots[i].attempt == attempt)
            return &w->slots[i];
    return NULL;
}

const char *
wk_trace_of(struct worker *w, int64_t id, int32_t attempt)
{
    struct slot *s = find_slot(w, id, attempt);
    return s != NULL ? s->traceparent : "";
}

void
wk_stop_run(struct worker *w, struct slot *s, enum run_stop why)
{
    assert(s->used && why != RUN_STOP_NONE);
    if (s->stop_sent != RUN_STOP_NONE)
        return;
    s->stop_sent = why;
    runner_kinds[s->h->kind].stop(w->runners[s->h->kind], s->id, s->attempt, why);
}

/*
 * The lease watchdog (fence.h) and the loop: the loop arms a slot's entry
 * once its run is with the runner, extends it after each answered heartbeat
 * and disarms it when the slot ends or is stopped for another reason. The
 * watchdog, on its own thread, stops a run whose entry's lease end passed
 * (lease_ran_out), whatever store call the loop is blocked in; the loop
 * learns of it from fence_extend / fence_disarm / fence_fired.
 */

/* Stops watching s. True if the watchdog had fired for it. */
bool
wk_unwatch(struct worker *w, struct slot *s)
{
    assert(s >= w->slots && s < w->slots + w->n_slots);
    if (!s->watched)
        return false;
    assert(s->used); /* a slot is disarmed before it is freed */
    s->watched = false;
    return fence_disarm(w->fence, (int)(s - w->slots));
}

/* The watchdog stopped s's run: its result is nobody's; no second stop. */
void
wk_fenced(struct slot *s)
{
    s->lost = true;
    if (s->stop_sent == RUN_STOP_NONE)
        s->stop_sent = RUN_STOP_LOST;
}

/* Watchdog thread: the lease of (id, attempt) ran out by our clock. */
void
wk_lease_ran_out(void *arg, int64_t id, int32_t attempt, const void *tag)
{
    struct worker *w = arg;
    const struct handler_conf *h = tag;
    wlog(w, LOGL_WARN, "the lease ran out without a heartbeat answer; stopping it",
         LF_INT("job", id), LF_INT("attempt", attempt));
    /* The runners' stops are thread-safe and match (id, attempt): a slot
     * reused meanwhile by another run is not touched. */
    runner_kinds[h->kind].stop(w->runners[h->kind], id, attempt, RUN_STOP_LOST);
    wakeup_signal(&w->wake); /* the loop marks the slot, when it is free to */
}

/* Arms the watchdog for every slot whose run was just handed to its runner. */
void
wk_watch_new_runs(struct worker *w)
{
    for (int i = 0; i < w->n_slots; i++) {
        struct slot *s = &w->slots[i];
        if (s->used && !s->watched && !s->lost && s->stop_sent == RUN_STOP_NONE) {
            assert(s->attempt >= 1 && s->h != NULL && s->lease_end_us > 0);
            fence_arm(w->fence, i, s->id, s->attempt, s->lease_end_us - w->fence_margin_us, s->h);
            s->watched = true;
        }
    }
}

/* Queues a failure report (error: owned, may be NULL); the entry, or NULL on OOM. */
struct failure *
wk_push_failure(struct worker *w, int64_t id, int32_t attempt, char *error, enum report_kind kind,
                int64_t delay_ms)
{
    /* A report names a claimed attempt, and its delay does not run backwards. */
    assert(id > 0 && attempt >= 1 && delay_ms >= 0);
    assert(kind == REPORT_RETRY || kind == REPORT_DEAD || kind == REPORT_RELEASE);
    assert(*w->fails_tail == NULL); /* the tail is the last entry's next */
    struct failure *f = calloc(1, sizeof *f);
    if (f == NULL) { /* the lease will run out and the reaper will retry it */
        free(error);
        return NULL;
    }
    *f = (struct failure){
        .id = id, .attempt = attempt, .error = error, .kind = kind, .delay_ms = delay_ms};
    snprintf(f->traceparent, sizeof f->traceparent, "%s", wk_trace_of(w, id, attempt));
    *w->fails_tail = f;
    w->fails_tail = &f->next;
    return f;
}

/* What became of a run, for the per-job log line. */
static const char *
outcome_word(const struct slot *s, const struct run_result *r)
{
    if (s->lost && r->outcome != RUN_SUCCEEDED)
        return "lost";
    switch (r->outcome) {
    case RUN_SUCCEEDED: return "succeeded";
    case RUN_DEAD: return "dead";
    case RUN_RELEASE: return "released";
    default: return r->stopped != RUN_STOP_NONE ? run_stop_text(r->stopped) : "failed";
    }
}

/*
 * A run that could not start for a local reason: the job goes back unused
 * (store_release) and claims pause, 100 ms doubling to 5 s, so a worker
 * out of descriptors does not claim and hand back jobs in a tight loop.
 */
static void
release_run(struct worker *w, const struct slot *s, struct run_result *r)
{
    wlog(w, LOGL_WARN, "could not start a handler; handing the job back", LF_INT("job", r->id),
         LF_INT("attempt", r->attempt), LF_STR("error", r->error != NULL ? r->error : ""),
         LF_TRACE(s->traceparent));
    wk_push_failure(w, r->id, r->attempt, r->error, REPORT_RELEASE, 0);
    r->error = NULL;
    w->start_backoff_ms = backoff_next(w->start_backoff_ms, RECONNECT_MIN_MS, RECONNECT_MAX_MS);
    w->claim_after_us = clock_mono_now_us() + w->start_backoff_ms * 1000;
}

void
wk_take_results(struct worker *w)
{
    pthread_mutex_lock(&w->rmu);
    struct run_result *r = w->rhead;
    w->rhead = w->rtail = NULL;
    pthread_mutex_unlock(&w->rmu);
    while (r != NULL) {
        struct run_result *next = r->next;
        struct slot *s = find_slot(w, r->id, r->attempt);
        if (s != NULL && wk_unwatch(w, s))
            s->lost = true; /* the watchdog stopped it at its lease's end */
        /* A lost run's failure is the stop's doing and nobody's result; a
         * success is real work, reported anyway: fenced by attempt, it is
         * taken only if nobody claimed the job since. */
        if (r->ran_us > 0)
            wk_prefetch_timed(w, r->ran_us);
        if (s != NULL)
            wk_log_keep(w, r); /* written before the report (worker_logs.c) */
        if (s != NULL && !s->lost && r->outcome == RUN_RELEASE && r->stopped == RUN_STOP_RETURNED) {
            wk_prefetch_returned(w); /* not the host's trouble: no pause */
            wk_push_failure(w, r->id, r->attempt, r->error, REPORT_RELEASE, 0);
            r->error = NULL;
        } else if (s != NULL && !s->lost && r->outcome == RUN_RELEASE) {
            release_run(w, s, r);
        } else if (s != NULL && (!s->lost || r->outcome == RUN_SUCCEEDED)) {
            w->start_backoff_ms = 0; /* a handler started: the host is fine again */
            if (r->outcome == RUN_SUCCEEDED) {
                if (!completer_add(&w->comp, r->id, r->attempt, r->result))
                    wlog(w, LOGL_ERROR, "out of memory queueing a completion", LF_INT("job", r->id),
                         LF_TRACE(s->traceparent));
                r->result = NULL;
            } else {
                int64_t delay = r->retry_after_ms;
                if (s->stop_sent == RUN_STOP_SHUTDOWN || r->stopped == RUN_STOP_SHUTDOWN)
                    delay = 0; /* not the job's fault: due again at once */
                else if (delay < 0)
                    delay =
                        job_retry_delay_ms(r->attempt, s->attempt_floor, w->cfg.backoff_base_ms,
                                           w->cfg.backoff_cap_ms, backoff_rand_splitmix, &w->rng);
                struct failure *f =
                    wk_push_failure(w, r->id, r->attempt, r->error,
                                    r->outcome == RUN_RETRY ? REPORT_RETRY : REPORT_DEAD, delay);
                if (f != NULL)
                    f->type = s->h->type;
                r->error = NULL;
            }
        }
        if (s != NULL) {
            double took_s = (double)(clock_mono_now_us() - s->started_us) / 1e6;
            wlog(w, LOGL_DEBUG, "job finished", LF_INT("job", r->id), LF_STR("type", s->h->type),
                 LF_INT("attempt", r->attempt), LF_STR("outcome", outcome_word(s, r)),
                 LF_DBL("duration_s", took_s), LF_TRACE(s->traceparent));
            if (w->cfg.events.ran != NULL)
                w->cfg.events.ran(w->cfg.events.arg, s->queue, took_s);
            s->used = false;
            if (ALWAYS(w->n_running > 0))
                w->n_running--;
        }
        run_result_free(r);
        r = next;
    }
    assert(w->n_running >= 0 && w->n_running <= w->n_slots);
    assert(slots_add_up(w));
}
