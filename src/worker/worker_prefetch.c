/*
 * worker_prefetch.c — how far a C-handler worker claims ahead of its threads
 * (worker_int.h). A claim costs one commit whatever its size, so with short
 * handlers the worker should keep many jobs queued; with long ones a queued
 * job only waits, under lease, while another worker may sit idle.
 *
 * With prefetch = auto the queue is sized by how long handlers run: as many
 * jobs as the threads finish in PREFETCH_WINDOW_US by the moving average of
 * the runs timed so far (concurrency × window / average), from 0 to
 * WORKER_PREFETCH_AUTO_MAX. Until a run is timed it is concurrency, the old
 * fixed default. A job that still waits in the queue after
 * PREFETCH_RETURN_US while every thread is busy was claimed behind long
 * runs: it goes back (store_release, no attempt counted) for a worker with
 * a free thread, and the average is raised to that wait, so the worker
 * stops claiming ahead until fast runs bring it down again. A prefetch set
 * to a number is fixed: that many are claimed ahead and kept, as asked.
 */
#include "worker/cthread.h"
#include "worker/worker_int.h"

#define PREFETCH_WINDOW_US 50000LL   /* queued work the threads finish in this long */
#define PREFETCH_RETURN_US 1000000LL /* a queued job waiting this long goes back */
#define PREFETCH_EWMA_SHIFT 3        /* each timed run weighs 1/8 */

int
wk_prefetch_now(const struct worker *w)
{
    if (!w->prefetch_auto || w->prefetch == 0)
        return w->prefetch;
    if (w->run_ewma_us <= 0)
        return w->cfg.concurrency < w->prefetch ? w->cfg.concurrency : w->prefetch;
    int64_t jobs = (int64_t)w->cfg.concurrency * PREFETCH_WINDOW_US / w->run_ewma_us;
    return jobs >= w->prefetch ? w->prefetch : (int)jobs;
}

void
wk_prefetch_timed(struct worker *w, int64_t ran_us)
{
    if (ran_us <= 0)
        return;
    if (w->run_ewma_us <= 0)
        w->run_ewma_us = ran_us;
    else
        w->run_ewma_us += (ran_us - w->run_ewma_us) / (1 << PREFETCH_EWMA_SHIFT);
    if (w->run_ewma_us < 1)
        w->run_ewma_us = 1;
}

void
wk_prefetch_returned(struct worker *w)
{
    if (w->run_ewma_us < PREFETCH_RETURN_US)
        w->run_ewma_us = PREFETCH_RETURN_US;
}

int64_t
wk_prefetch_check(struct worker *w, int64_t now)
{
    if (!w->prefetch_auto || w->prefetch == 0 || w->n_running <= w->cfg.concurrency)
        return 0; /* a fixed prefetch keeps its queue; or nothing can be queued */
    cthread_runner_return_stale(w->runners[HANDLER_C], PREFETCH_RETURN_US);
    return now + PREFETCH_RETURN_US / 2;
}
