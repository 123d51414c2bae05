/*
 * cthread.h — the C handler runner: handlers registered through libjobd
 * (include/jobd.h) run on a fixed pool of threads, one per slot.
 *
 * A thread cannot be killed safely, so stopping a C handler (timeout,
 * cancel, shutdown) is cooperative: the runner raises a flag the handler
 * reads with jobd_run_should_stop() and the run ends when the function
 * returns. The lease keeps being extended meanwhile.
 */
#ifndef JOBD_WORKER_CTHREAD_H
#define JOBD_WORKER_CTHREAD_H

#include <stdatomic.h>

#include "worker/run.h"

/* What a C handler sees (opaque in jobd.h as jobd_run). */
struct jobd_run {
    const struct run *run;
    atomic_int stop;             /* enum run_stop; RUN_STOP_NONE while it may go on */
    char *result;                /* set by jobd_run_set_result (canonical JSON) */
    char *error;                 /* set by jobd_run_set_error */
    int64_t retry_after_ms;      /* -1 = backoff */
    int64_t deadline_us;         /* monotonic: the timeout, from when a thread took it; 0 = none */
    struct jobd_run *next;       /* the runner's list of running jobs */
    const struct run_sink *sink; /* the runner's, for jobd_progress (borrowed) */
};

struct cthread_runner;

/* Starts nthreads threads; results go to sink (on those threads). */
JOBD_MUST_USE int cthread_runner_new(struct run_sink sink, int nthreads,
                                     struct cthread_runner **out, struct jobd_error *err);
/* Queues run (ownership passes); exactly one result will come. Thread-safe. */
void cthread_runner_start(struct cthread_runner *c, struct run *run);
/*
 * Queues n runs at once (ownership of each passes; runs[] itself stays the
 * caller's): one lock for the whole claimed batch, and only as many idle
 * threads woken as there are runs. Thread-safe.
 */
void cthread_runner_start_many(struct cthread_runner *c, struct run **runs, size_t n);
/*
 * Raises the stop flag of (id, attempt); a run still queued (not yet taken
 * by a thread) is marked and will be answered as stopped without running.
 * Thread-safe.
 */
void cthread_runner_stop(struct cthread_runner *c, int64_t id, int32_t attempt, enum run_stop why);
/*
 * Takes every queued run that no thread has started and answers each at
 * once through the sink as a RUN_RETRY stopped by why (or by the stop it was
 * marked with). Returns how many. Running handlers are not touched. NULL c
 * is fine (0). Thread-safe; the sink is called on the calling thread.
 */
size_t cthread_runner_drop_queued(struct cthread_runner *c, enum run_stop why);
/*
 * Takes the queued runs that have waited more than max_wait_us while every
 * thread was busy (claimed ahead behind handlers that run long) and answers
 * each at once through the sink as RUN_RELEASE stopped by RUN_STOP_RETURNED
 * (a run marked stopped while queued is answered as that stop), so the
 * loop hands them back for workers with idle threads. Returns how many.
 * NULL c is fine (0). Thread-safe; the sink is called on the calling thread.
 */
size_t cthread_runner_return_stale(struct cthread_runner *c, int64_t max_wait_us);
/*
 * Raises every stop flag, waits for the handlers to return and joins the
 * threads; results of runs that end now are dropped. NULL-safe.
 */
void cthread_runner_free(struct cthread_runner *c);

#endif
