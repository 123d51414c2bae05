/*
 * worker_claim.c — claiming (worker_int.h): when to claim and how many,
 * the timer for the soonest future run_at, a long poll where the store
 * offers one, and handing claimed jobs to their runners in one call per
 * kind.
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

/* ---- claiming (loop thread) ---- */

static struct slot *
free_slot(struct worker *w)
{
    for (int i = 0; i < w->n_slots; i++)
        if (!w->slots[i].used)
            return &w->slots[i];
    return NULL;
}

static char *
steal(char **p)
{
    char *s = *p;
    *p = NULL;
    return s;
}

/*
 * Readies j in a free slot; its run is collected in w->batch
 * (start_batch). lease_end_us: when its lease surely ends (monotonic).
 */
static void
dispatch(struct worker *w, struct job *j, int64_t now, int64_t lease_end_us)
{
    struct slot *s = free_slot(w);
    const struct handler_conf *h = worker_config_handler(&w->cfg, j->type);
    /* Cannot happen: we claim only our types, and no more than free slots. */
    if (NEVER(s == NULL || h == NULL)) {
        wk_push_failure(w, j->id, j->attempt, strdup("no handler for this job type here"),
                        REPORT_RETRY, 0);
        return;
    }
    struct run *run = calloc(1, sizeof *run);
    if (run == NULL) {
        wk_push_failure(w, j->id, j->attempt, NULL, REPORT_RETRY, 0);
        return;
    }
    run->id = j->id;
    run->attempt = j->attempt;
    run->type = steal(&j->type);
    run->queue = steal(&j->queue);
    run->payload = steal(&j->payload);
    run->parents = steal(&j->parents);
    if (run->payload == NULL)
        run->payload = strdup("{}");
    if (j->idempotency_key != NULL) {
        run->idempotency_key = steal(&j->idempotency_key);
    } else {
        char key[32];
        snprintf(key, sizeof key, "job-%" PRId64, j->id);
        run->idempotency_key = strdup(key);
    }
    run->scheduled_for_us = j->scheduled_for_us;
    run->traceparent = j->traceparent != NULL ? strdup(j->traceparent) : NULL;
    run->timeout_ms = j->timeout_ms > 0 ? j->timeout_ms : h->timeout_ms;
    run->handler = h;
    if (run->type == NULL || run->queue == NULL || run->payload == NULL ||
        run->idempotency_key == NULL || (j->traceparent != NULL && run->traceparent == NULL)) {
        run_free(run);
        wk_push_failure(w, j->id, j->attempt, NULL, REPORT_RETRY, 0);
        return;
    }
    *s = (struct slot){.used = true,
                       .id = j->id,
                       .attempt = j->attempt,
                       .attempt_floor = j->attempt_floor,
                       .h = h,
                       .next_hb_us = now + w->cfg.heartbeat_ms * 1000,
                       .lease_end_us = lease_end_us,
                       .started_us = clock_mono_now_us()};
    snprintf(s->queue, sizeof s->queue, "%s", run->queue);
    snprintf(s->traceparent, sizeof s->traceparent, "%s",
             run->traceparent != NULL ? run->traceparent : "");
    wlog(w, LOGL_DEBUG, "job started", LF_INT("job", run->id), LF_STR("type", run->type),
         LF_INT("attempt", run->attempt), LF_TRACE(s->traceparent));
    if (w->cfg.events.started != NULL) {
        j->queue = run->queue; /* lent back for the event: the run owns it */
        w->cfg.events.started(w->cfg.events.arg, j);
        j->queue = NULL;
    }
    w->n_running++;
    assert(w->n_running <= w->n_slots && w->n_batch < (size_t)w->n_slots);
    w->batch[w->n_batch++] = run;
}

/* Hands the claimed batch to the runners: one call per kind (runner.h). */
static void
start_batch(struct worker *w)
{
    size_t left = w->n_batch;
    for (int k = 0; k < HANDLER_KIND_COUNT && left > 0; k++) {
        size_t n = 0;
        for (size_t i = 0; i < left; i++) { /* this kind's runs to the front, in order */
            struct run *r = w->batch[i];
            if ((int)r->handler->kind == k) {
                memmove(&w->batch[n + 1], &w->batch[n], (i - n) * sizeof *w->batch);
                w->batch[n++] = r;
            }
        }
        if (n > 0)
            runner_kinds[k].start_many(w->runners[k], w->batch, n);
        memmove(w->batch, w->batch + n, (left - n) * sizeof *w->batch);
        left -= n;
    }
    assert(left == 0); /* every run's kind has a runner */
    w->n_batch = 0;
}

/* held: when a queue limit held back a due job, when it may let one go (or 0). */
static void
arm_timer(struct worker *w, const struct claim_req *req, int64_t now, bool timer_fired, size_t got,
          int64_t held)
{
    struct jobd_error err = {0};
    int64_t run_at = 0;
    int rc = store_next_run_at(w->st, req, &run_at, &err);
    if (rc != JOBD_OK) {
        wk_store_trouble(w, rc, &err, "next_run_at");
        return;
    }
    /* A held-back job is due already: wait for its limit, not a busy loop. */
    run_at = store_claim_timer(run_at, held, clock_real_now_us());
    if (run_at == 0) {
        w->timer_us = 0;
        return;
    }
    /* The store's clock may run ahead of ours: when the timer fired and there
     * was nothing to claim, wait a little longer each time, not a busy loop. */
    if (got > 0 || held != 0)
        w->timer_floor_ms = 1;
    else if (timer_fired)
        w->timer_floor_ms = backoff_next(w->timer_floor_ms, 1, w->poll_ms);
    int64_t delta_ms = (run_at - clock_real_now_us() + 999) / 1000;
    if (delta_ms < w->timer_floor_ms)
        delta_ms = w->timer_floor_ms;
    w->timer_us = now + delta_ms * 1000;
}

/*
 * Room for a claim: free slots, and, with prefetch (as far as
 * wk_prefetch_now allows now), no more than half of the prefetch queue
 * still waiting for a thread. Waiting for the queue to
 * drain that far makes each claim carry many jobs (one commit for all),
 * while the jobs still queued and running keep the threads busy during the
 * claim's round trip. 0 = do not claim now.
 */
int
wk_claim_room(const struct worker *w)
{
    int prefetch = wk_prefetch_now(w);
    int free_n = w->cfg.concurrency + prefetch - w->n_running;
    if (free_n <= 0 || w->n_running - w->cfg.concurrency > prefetch / 2)
        return 0;
    /* No claim for more jobs than free slots: dispatch has nowhere else. */
    assert(prefetch <= w->prefetch && free_n <= w->n_slots - w->n_running);
    return free_n < JOB_PAGE_MAX ? free_n : JOB_PAGE_MAX; /* the most one claim takes */
}

/*
 * How long a claim may wait for a job (a long poll, stores with
 * caps.claim_waits): only when the loop has nothing else to do meanwhile —
 * no run to heartbeat, no report to write — since it is blocked in the
 * claim. A quarter of what the lease leaves beyond a heartbeat: a store
 * that cannot say when the claim itself was made (claim_req.lease_end_us)
 * has the worker count the lease from when it asked, and an answer after a
 * wait that long still leaves the run more than a heartbeat interval
 * before the fence (fence_margin is at most half of that slack). The
 * remote store says, so its wait costs no lease at all.
 */
static int
claim_wait_ms(const struct worker *w)
{
    if (!w->caps->claim_waits || w->n_running > 0 || w->comp.n > 0 || w->fails != NULL ||
        (w->fl != NULL && flusher_pending(w->fl) > 0))
        return 0;
    int64_t ms = (w->cfg.lease_ms - w->cfg.heartbeat_ms) / 4;
    return ms > 30000 ? 30000 : (int)ms;
}

/* Claims if there may be work; returns true if every free slot got a job. */
bool
wk_maybe_claim(struct worker *w, int64_t now)
{
    int free_n = wk_claim_room(w);
    if (free_n <= 0 || now < w->claim_after_us)
        return false;
    bool timer_fired = w->timer_us != 0 && now >= w->timer_us;
    bool hint = atomic_exchange(&w->hint, false);
    if (!hint && !w->backlog && !timer_fired && now < w->next_poll_us)
        return false;
    struct claim_req req = {
        .worker_id = w->id,
        .queues = (const char *const *)w->cfg.queues,
        .n_queues = w->cfg.n_queues,
        .types = w->types,
        .n_types = w->n_types,
        .limit = free_n,
        .lease_ms = w->cfg.lease_ms,
        .wait_ms = !hint && !w->backlog && !timer_fired ? claim_wait_ms(w) : 0,
        .interrupt = &w->stop_req,
        /* heard of a cancel: break off the long poll to heartbeat now */
        .interrupt_also = &w->cancel_hint,
        .run_only = true, /* dispatch, the sort and events.started use no more */
    };
    int64_t held = 0, lease_end_us = 0;
    req.held_until_us = &held;
    req.lease_end_us = &lease_end_us;
    struct job_list got = {0};
    struct jobd_error err = {0};
    int64_t asked_us = clock_mono_now_us();
    int rc = store_claim(w->st, &req, &got, &err);
    if (rc != JOBD_OK) {
        job_list_fini(&got);
        atomic_store(&w->hint, hint || atomic_load(&w->hint));
        wk_store_trouble(w, rc, &err, "claim");
        return false;
    }
    assert(got.n <= (size_t)free_n); /* store_claim never gives more than the limit */
    wk_stat_add(w, &w->stats.claims, 1);
    wk_stat_add(w, &w->stats.claimed, got.n);
    /* The leases began after asked_us, or, when the store says so, end at
     * lease_end_us (the remote store: not counting the server's long poll).
     * An answer that took a whole lease to arrive (a network that held it,
     * a stopped process) may carry leases that are already gone and jobs
     * that another worker already runs: starting them would run a job
     * under a dead lease. Drop them; the reaper hands them on. Measured on
     * our own monotonic clock, so the store's clock does not matter. */
    int64_t got_us = clock_mono_now_us();
    if (lease_end_us == 0 || lease_end_us > got_us + w->cfg.lease_ms * 1000)
        lease_end_us = asked_us + w->cfg.lease_ms * 1000; /* unsaid, or more than we asked for */
    if (got.n > 0 && lease_end_us - got_us <= w->fence_margin_us) {
        wlog(w, LOGL_WARN, "claim answered too close to the lease's end; handing the jobs back",
             LF_INT("jobs", got.n), LF_INT("took_ms", (got_us - asked_us) / 1000),
             LF_INT("lease_left_ms", (lease_end_us - got_us) / 1000),
             LF_INT("lease_ms", w->cfg.lease_ms));
        /* Fenced by attempt: refused if someone has claimed them since. */
        for (size_t i = 0; i < got.n; i++)
            wk_push_failure(w, got.v[i].id, got.v[i].attempt,
                            strdup("claimed too close to the lease's end to start"), REPORT_RETRY,
                            0);
        job_list_fini(&got);
        w->next_poll_us = now + w->poll_ms * 1000;
        return false;
    }
    w->n_batch = 0;
    for (size_t i = 0; i < got.n; i++)
        dispatch(w, &got.v[i], now, lease_end_us);
    start_batch(w);       /* the whole claimed batch, one call per kind */
    wk_watch_new_runs(w); /* after the starts: a stop must not overtake its run */
    w->next_poll_us = now + w->poll_ms * 1000;
    w->backlog = got.n == (size_t)free_n;
    if (!w->backlog)
        arm_timer(w, &req, now, timer_fired, got.n, held);
    else
        w->timer_us = 0;
    job_list_fini(&got);
    return w->backlog;
}
