/*
 * worker_loop.c — the worker loop's turn (worker.c's top comment says what
 * a turn does and why), the shutdown sequence inside it, and how long the
 * loop may sleep.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backoff.h"
#include "core/err.h"
#include "core/utf8.h"
#include "util/clock.h"
#include "worker/exec.h"
#include "worker/fence.h"
#include "worker/flusher.h"
#include "worker/worker_int.h"

/* ---- the loop ---- */

static int64_t
earlier(int64_t a, int64_t b)
{
    if (a == 0)
        return b;
    if (b == 0)
        return a;
    return a < b ? a : b;
}

static int
sleep_ms_until(int64_t now, int64_t wake_at)
{
    if (wake_at == 0)
        return MAX_SLEEP_MS;
    if (wake_at <= now)
        return 0;
    int64_t ms = (wake_at - now + 999) / 1000;
    return ms > MAX_SLEEP_MS ? MAX_SLEEP_MS : (int)ms;
}

static void
stop_all(struct worker *w, enum run_stop why)
{
    for (int i = 0; i < w->n_slots; i++)
        if (w->slots[i].used)
            wk_stop_run(w, &w->slots[i], why);
}

/*
 * A cancel was requested somewhere: every job this worker holds is due for
 * a heartbeat now, whose answer (cancel_requested) stops the one cancelled
 * within a loop turn instead of at its next heartbeat (docs/WORKER.md,
 * Cancellation). A burst of cancels costs one heartbeat per held job: the
 * hint is a flag, not a count.
 */
static void
heartbeat_all_now(struct worker *w, int64_t now)
{
    for (int i = 0; i < w->n_slots; i++)
        if (w->slots[i].used && !w->slots[i].lost && w->slots[i].next_hb_us > now)
            w->slots[i].next_hb_us = now;
}

/* The shutdown's progress, loop thread only. Times are monotonic, 0 = not yet. */
struct shutdown {
    bool stopping;  /* a stop was asked: no more claims */
    bool stop_sent; /* the grace ran out: running jobs were told to stop */
    int64_t grace_end, give_up_at, hard_end;
};

/* A stop was just asked: prefetched jobs go back, the grace starts. */
static void
begin_stop(struct worker *w, struct shutdown *sd, int64_t now)
{
    sd->stopping = true;
    /* Prefetched jobs that no thread has started go back at once, as
     * retryable failures due again now (take_results): another worker may
     * run them while this one drains. */
    size_t back = 0;
    for (int k = 0; k < HANDLER_KIND_COUNT; k++)
        if (w->runners[k] != NULL && runner_kinds[k].drop_queued != NULL)
            back += runner_kinds[k].drop_queued(w->runners[k], RUN_STOP_SHUTDOWN);
    if (back > 0) {
        wlog(w, LOGL_INFO, "stopping: handing back prefetched jobs not yet started",
             LF_INT("jobs", back));
        wk_take_results(w);
    }
    sd->grace_end = now + atomic_load(&w->grace_ms) * 1000;
    sd->hard_end = sd->grace_end + (EXEC_KILL_GRACE_MS + FINAL_REPORT_MS + 5000) * 1000LL;
    if (w->n_running > 0)
        wlog(w, LOGL_INFO, "stopping: waiting for running jobs",
             LF_INT("grace_ms", atomic_load(&w->grace_ms)), LF_INT("running", w->n_running));
}

/* While stopping: true when the loop may end (everything reported, or given up). */
static bool
stop_done(struct worker *w, struct shutdown *sd, int64_t now)
{
    if (sd->stopping && !sd->stop_sent && now >= sd->grace_end) {
        if (w->n_running > 0)
            wlog(w, LOGL_WARN, "grace period over: stopping jobs", LF_INT("running", w->n_running));
        stop_all(w, RUN_STOP_SHUTDOWN);
        sd->stop_sent = true;
    }
    if (!sd->stopping)
        return false;
    if (w->n_running == 0) {
        size_t flushing = w->fl != NULL ? flusher_pending(w->fl) : 0;
        if (w->comp.n == 0 && w->fails == NULL && flushing == 0)
            return true;
        if (sd->give_up_at == 0)
            sd->give_up_at = now + FINAL_REPORT_MS * 1000LL;
        if (now >= sd->give_up_at) {
            wlog(w, LOGL_ERROR,
                 "giving up reporting completions and failures: their leases "
                 "will run out",
                 LF_INT("completions", w->comp.n + flushing));
            return true;
        }
    }
    if (now >= sd->hard_end) {
        wlog(w, LOGL_WARN, "jobs did not stop in time; leaving them to their leases",
             LF_INT("running", w->n_running));
        return true;
    }
    return false;
}

/* When the loop must look around next (monotonic; 0 = nothing due). */
static int64_t
next_wake(const struct worker *w, const struct shutdown *sd, int64_t now)
{
    int64_t wake_at = 0;
    bool may_claim = !sd->stopping && w->st != NULL && wk_claim_room(w) > 0;
    if (may_claim && now < w->claim_after_us) {
        wake_at = w->claim_after_us; /* backing off: see release_run */
    } else if (may_claim) {
        wake_at = earlier(w->next_poll_us, w->timer_us);
        if (w->backlog || atomic_load(&w->hint))
            wake_at = now;
    }
    for (int i = 0; i < w->n_slots; i++) {
        const struct slot *s = &w->slots[i];
        if (!s->used || s->lost)
            continue;
        if (w->st != NULL)
            wake_at = earlier(wake_at, s->next_hb_us);
        wake_at = earlier(wake_at, s->lease_end_us - w->fence_margin_us);
    }
    if (!sd->stopping)
        wake_at = earlier(wake_at, w->prefetch_check_us);
    if (w->st == NULL)
        wake_at = earlier(wake_at, w->reconnect_at_us);
    else
        wake_at = earlier(wake_at, presence_next_us(&w->presence));
    if (sd->stopping) {
        wake_at = earlier(wake_at, sd->stop_sent ? sd->hard_end : sd->grace_end);
        wake_at = earlier(wake_at, sd->give_up_at);
    }
    if (w->st != NULL) /* the cast: only pmu is taken, nothing changes */
        wake_at = earlier(wake_at, wk_progress_wake((struct worker *)w));
    if (w->st != NULL && (w->comp.n > 0 || w->fails != NULL))
        wake_at = now; /* results came in while we reported */
    return wake_at;
}

void *
wk_loop_main(void *arg)
{
    struct worker *w = arg;
    uint64_t seen = 0;
    struct shutdown sd = {0};
    for (;;) {
        int64_t now = clock_mono_now_us();
        wk_take_results(w);
        if (!sd.stopping && atomic_load(&w->stop_req))
            begin_stop(w, &sd, now);
        wk_ensure_store(w, now);
        presence_tick(&w->presence, w->st, now, sd.stopping);
        if (w->st != NULL && w->lnotes != NULL)
            wk_logs_flush(w); /* before the reports of the same runs */
        if (w->fl != NULL && !flusher_push(w->fl, &w->comp))
            wlog(w, LOGL_ERROR, "out of memory handing completions over; retrying");
        if (atomic_exchange(&w->cancel_hint, false))
            heartbeat_all_now(w, now);
        if (w->st != NULL && wk_report(w) && wk_heartbeats(w, now))
            wk_progress_flush(w, now);
        wk_fence_expired(w);
        if (!sd.stopping)
            w->prefetch_check_us = wk_prefetch_check(w, now);
        wk_publish_counts(w);
        if (stop_done(w, &sd, now))
            break;
        if (!sd.stopping && w->st != NULL && wk_maybe_claim(w, now) && wk_claim_room(w) > 0)
            continue; /* every free slot got a job: there may be more */
        int ms = sleep_ms_until(now, next_wake(w, &sd, now));
        if (ms > 0)
            wakeup_wait(&w->wake, &seen, ms);
    }
    presence_withdraw(&w->presence, w->st);
    wk_publish_counts(w);
    return NULL;
}
