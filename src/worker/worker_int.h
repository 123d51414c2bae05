/*
 * worker_int.h — what the worker's files share: the worker struct and the
 * functions one file calls in another. Not for use outside src/worker/.
 *
 * The worker is split by concern: worker.c (start-up, shutdown, helper
 * threads, counters), worker_loop.c (the loop's turn), worker_slots.c
 * (slots, the lease watchdog, finished runs), worker_report.c (the store
 * connection, reports, heartbeats), worker_claim.c (claiming and
 * dispatching), worker_progress.c (progress on its way to the store). worker.c's top comment describes the threads and the turn.
 */
#ifndef JOBD_WORKER_WORKER_INT_H
#define JOBD_WORKER_WORKER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/backoff.h"
#include "core/job.h"
#include "core/traceparent.h"
#include "store/store.h"
#include "util/log.h"
#include "util/wakeup.h"
#include "worker/completer.h"
#include "worker/config.h"
#include "worker/presence.h"
#include "worker/run.h"
#include "worker/runner.h"
#include "worker/worker.h"

struct fence;
struct flusher;
struct progress_note;
struct log_note;

/* After the last job ended in a shutdown, how long to keep trying to report. */
#define FINAL_REPORT_MS 5000
/* Reconnect backoff bounds. */
#define RECONNECT_MIN_MS WORKER_RECONNECT_MIN_MS
#define RECONNECT_MAX_MS WORKER_RECONNECT_MAX_MS
#define RECONNECT_HEALTHY_MS WORKER_RECONNECT_HEALTHY_MS
/* The longest the loop sleeps without looking around. */
#define MAX_SLEEP_MS 1000

struct slot {
    bool used;
    int64_t id;
    int32_t attempt;
    int32_t attempt_floor; /* the job's, for the retry delay (job_retry_delay_ms) */
    const struct handler_conf *h;
    char queue[JOB_QUEUE_MAX + 1]; /* the job's, for the events' run duration */
    int64_t next_hb_us;            /* monotonic */
    int64_t next_progress_us;      /* monotonic: no progress write before (worker_progress.c) */
    int64_t lease_end_us;          /* monotonic: the lease is surely live until then (see fence) */
    int64_t started_us;            /* monotonic, for the events' run duration */
    enum run_stop stop_sent;
    bool lost;                             /* stale lease: the result belongs to nobody */
    bool watched;                          /* armed in w->fence (the lease watchdog) */
    char traceparent[TRACEPARENT_LEN + 1]; /* the job's, "" if none: its log lines' LF_TRACE */
};

/* What a queued report asks of the store. */
enum report_kind {
    REPORT_RETRY,   /* a retryable failure (store_fail): pending after delay_ms */
    REPORT_DEAD,    /* a permanent failure (store_fail): dead at once */
    REPORT_RELEASE, /* never started: hand the attempt back unused (store_release) */
};

struct failure {
    int64_t id;
    int32_t attempt;
    char *error;
    enum report_kind kind;
    int64_t delay_ms;
    bool plain;       /* error replaced after the store refused the original */
    const char *type; /* the job's type, for the log: w->cfg's handler's, or NULL */
    char traceparent[TRACEPARENT_LEN + 1]; /* the job's, "" if none, for the log (LF_TRACE) */
    struct failure *next;
};

struct worker {
    struct worker_config cfg;
    char *db_url;
    char id[JOB_WORKER_ID_MAX + 1];
    struct wakeup *ext;
    struct wakeup wake;
    pthread_t loop_thread, listen_thread, bridge_thread;
    bool has_listener, has_bridge;
    atomic_bool quit_helpers;
    atomic_bool stop_req;
    _Atomic int64_t grace_ms;
    atomic_bool hint;
    /* A cancel of a running job was requested somewhere (the listener's
     * STORE_WAKE_CANCEL, or the bridge's wakeup_signal_cancel): the loop
     * heartbeats every job it holds at once, and the answer stops the one
     * cancelled (docs/WORKER.md, Cancellation). */
    atomic_bool cancel_hint;

    pthread_mutex_t rmu; /* guards the result queue */
    struct run_result *rhead, *rtail;
    pthread_mutex_t pmu;          /* guards pnotes */
    struct progress_note *pnotes; /* progress waiting for the loop (worker_progress.c) */

    void *runners[HANDLER_KIND_COUNT]; /* by kind (runner.h); NULL if no handler has it */
    struct flusher *fl;                /* PostgreSQL: completions on their own connection */
    struct fence *fence;               /* the lease watchdog: stops runs whose lease ran out */
    uint64_t fence_seen;               /* fence_fired_count at the last wk_fence_expired */
    struct presence presence;          /* loop thread: its row in GET /v1/workers */

    /* loop thread only */
    struct store *st;
    const struct store_caps *caps; /* the backend's, static */
    struct store *listen_st;       /* SQLite: the listener's connection, until it takes it */
    struct slot *slots;            /* n_slots: concurrency + prefetch (claimed, under lease) */
    int n_slots;
    int prefetch;              /* effective: 0 unless every handler is a C handler; with
                                 prefetch_auto the most wk_prefetch_now allows */
    bool prefetch_auto;        /* prefetch = auto: adapts to how long handlers run */
    int64_t run_ewma_us;       /* C handlers' run time, moving average; 0 = none timed yet */
    int64_t prefetch_check_us; /* when to look for queued jobs to hand back; 0 = never */
    struct run **batch;        /* runs of the claim being dispatched (n_slots entries) */
    size_t n_batch;
    int n_running;
    struct completer comp;
    struct failure *fails, **fails_tail;
    struct log_note *lnotes, **lnotes_tail; /* attempt logs to write (worker_logs.c) */
    const char **types;
    size_t n_types;
    uint64_t rng;
    int64_t poll_ms;
    int64_t next_poll_us, timer_us, timer_floor_ms;
    bool backlog;
    /* A handler could not start here (no descriptors, no fork): no claim
     * before claim_after_us (monotonic); the pause doubles while it lasts. */
    int64_t claim_after_us, start_backoff_ms;
    int64_t reconnect_at_us;   /* no reopen before this (monotonic) */
    struct backoff_conn recon; /* the loop connection's backoff (ms of the monotonic clock) */

    pthread_mutex_t smu; /* guards stats */
    struct worker_stats stats;
    uint64_t told_succeeded, told_stale; /* loop thread: what cfg.events has heard */
    /* A run is stopped this long before its lease ends by our clock, so that
     * even an exec handler that waits for SIGKILL is gone by then. */
    int64_t fence_margin_us;
};

/* Logs one line for worker w (util/log): its id goes in a field. A line
 * about a job ends with LF_TRACE of the job's traceparent (docs/LOGGING.md). */
#define wlog(w, lvl, msg, ...)                                                                     \
    log_at((lvl), "worker", (msg), LF_STR("worker", (w)->id), __VA_ARGS__)

/* ---- shared by the worker's files (all loop thread unless said) ---- */

/* Adds n to a counter under smu. Any thread. */
void wk_stat_add(struct worker *w, uint64_t *field, uint64_t n);
/* Tells cfg.events what the counters gained since the last call. */
void wk_publish_counts(struct worker *w);
/* The runners' sink: queues a result and wakes the loop. Any thread. */
void wk_deliver(void *ctx, struct run_result *r);

/* worker_slots.c: slots, the lease watchdog's side, finished runs. */
void wk_stop_run(struct worker *w, struct slot *s, enum run_stop why);
/* Stops watching s; true if the watchdog had fired for it. */
bool wk_unwatch(struct worker *w, struct slot *s);
/* The watchdog stopped s's run: its result is nobody's. */
void wk_fenced(struct slot *s);
/* The watchdog's callback (its thread): the lease of (id, attempt) ran out. */
void wk_lease_ran_out(void *arg, int64_t id, int32_t attempt, const void *tag);
/* Arms the watchdog for every slot whose run was just handed to its runner. */
void wk_watch_new_runs(struct worker *w);
/* The traceparent of the run (id, attempt) this worker holds, for LF_TRACE:
 * "" when it has none or is not held here. */
const char *wk_trace_of(struct worker *w, int64_t id, int32_t attempt);
/* Queues a failure report (error: owned, may be NULL); the entry, or NULL on
 * OOM. It copies the held run's traceparent (wk_trace_of) for its log lines. */
struct failure *wk_push_failure(struct worker *w, int64_t id, int32_t attempt, char *error,
                                enum report_kind kind, int64_t delay_ms);
/* Takes every delivered result: completions, failures, hand-backs. */
void wk_take_results(struct worker *w);

/* worker_report.c: the store connection, reports, heartbeats, self-fencing. */
/* Drops the store connection after an outage; reconnects with backoff. */
void wk_store_trouble(struct worker *w, int rc, const struct jobd_error *err, const char *what);
void wk_ensure_store(struct worker *w, int64_t now);
/* Writes completions and failures. False if the store failed (and was dropped). */
bool wk_report(struct worker *w);
/* Heartbeats every slot whose time has come. False if the store failed. */
bool wk_heartbeats(struct worker *w, int64_t now);
/* Stops runs whose lease ran out by our clock. */
void wk_fence_expired(struct worker *w);

/* worker_progress.c: progress from runners to the store (docs/WORKER.md, Progress). */
/* The runners' progress sink (run.h): keeps the newest line per attempt. Any thread. */
void wk_progress_note(void *ctx, int64_t id, int32_t attempt, char *line);
/* Writes the progress whose time has come (at most one per job per 250 ms). */
void wk_progress_flush(struct worker *w, int64_t now);
/* When progress waits to be written (monotonic; 0 = none). */
int64_t wk_progress_wake(struct worker *w);
/* Frees what waits and pmu (the worker's end). */
void wk_progress_fini(struct worker *w);

/* worker_logs.c: attempt logs from results to the store (docs/WORKER.md, Attempt logs). */
/* Queues r's log (taking it from r; NULL-safe), whether or not r is reported. */
void wk_log_keep(struct worker *w, struct run_result *r);
/* Writes the queued logs. False if the store failed (and was dropped). */
bool wk_logs_flush(struct worker *w);
/* Frees what waits (the worker's end). */
void wk_logs_fini(struct worker *w);
/* worker_claim.c */
/* Free slots for a claim now (0 = do not claim). */
int wk_claim_room(const struct worker *w);
/* Claims if there may be work; true if every free slot got a job. */
bool wk_maybe_claim(struct worker *w, int64_t now);

/* worker_prefetch.c: how far to claim ahead of the C-handler threads. */
/* Jobs that may be queued beyond concurrency now (0..prefetch). */
int wk_prefetch_now(const struct worker *w);
/* A C handler ran for ran_us (0 = not timed: ignored). */
void wk_prefetch_timed(struct worker *w, int64_t ran_us);
/* A queued job was handed back after waiting behind busy threads. */
void wk_prefetch_returned(struct worker *w);
/*
 * Hands back queued jobs that waited too long behind busy threads (their
 * results arrive through the sink); returns when to look again (monotonic),
 * 0 when nothing is queued.
 */
int64_t wk_prefetch_check(struct worker *w, int64_t now);

/* worker_loop.c: the loop thread's body (arg: the worker). */
void *wk_loop_main(void *arg);

#endif
