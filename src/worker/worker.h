/*
 * worker.h — the worker plane: claim, run, heartbeat, report.
 *
 * A worker runs on its own threads (see worker.c for the layout) and talks
 * to the store by URL, reconnecting with backoff whenever the store goes
 * away. `jobd worker` runs one; `jobd server --worker-config` embeds one
 * (passing its in-process wake-up so SQLite enqueues start at once);
 * libjobd's jobd_worker_run runs one with C handlers.
 */
#ifndef JOBD_WORKER_WORKER_H
#define JOBD_WORKER_WORKER_H

#include <stdint.h>

#include "jobd.h"
#include "util/wakeup.h"
#include "worker/config.h"

/*
 * Reconnect backoff (the loop, the completion flusher and the wake-up
 * listener, one rule for all three): 100 ms rides out
 * a PostgreSQL restart or failover in a few tries; 5 s caps the load a
 * fleet of workers puts on a database that is coming back.
 */
#define WORKER_RECONNECT_MIN_MS 100
#define WORKER_RECONNECT_MAX_MS 5000
/* A connection that lived this long was healthy: its failure restarts the
 * backoff (the one reset rule, core/backoff.h's struct backoff_conn). */
#define WORKER_RECONNECT_HEALTHY_MS 10000

struct worker;

/* Counters, for tests, logs and benchmarks (a snapshot). */
struct worker_stats {
    uint64_t claimed;    /* jobs claimed */
    uint64_t succeeded;  /* completions the store took */
    uint64_t failed;     /* failures reported (retry, dead or cancelled) */
    uint64_t stale;      /* reports fenced off as stale */
    uint64_t claims;     /* claim statements run */
    uint64_t batches;    /* completion batches written */
    uint64_t reconnects; /* store connections opened after the first */
    uint64_t released;   /* jobs handed back unused (a handler could not start) */
};

/*
 * Starts a worker with a copy of cfg (which must pass worker_config_check)
 * on the store at db_url (a database URL as for store_open, or the
 * http(s):// base URL of a jobd API server: see store/remote/internal.h). wake (may be
 * NULL) is an in-process signal raised after enqueues (the embedding
 * server's); borrowed, must outlive the worker. Does not migrate (callers do, once). The first connection is made
 * here: JOBD_E_UNAVAILABLE/JOBD_E_STORE if the store cannot be opened, so a
 * misconfigured URL fails fast; later outages are ridden out. *out is owned
 * by the caller (worker_stop).
 */
JOBD_MUST_USE int worker_start(const struct worker_config *cfg, const char *db_url,
                               struct wakeup *wake, struct worker **out, struct jobd_error *err);

/*
 * Asks the worker to stop without waiting: it stops claiming at once.
 * Thread-safe (not async-signal-safe).
 */
void worker_request_stop(struct worker *w);

/*
 * Stops the worker: no new claims; running jobs get up to grace_ms to
 * finish (negative = the config's shutdown_grace); then they are stopped
 * (exec: SIGTERM, SIGKILL 5 s later) and reported as retryable failures;
 * finished attempts are written; the threads are joined and w is freed.
 * If the store is unreachable at the end, it gives up reporting after a few
 * seconds: those leases simply run out. NULL-safe.
 */
void worker_stop(struct worker *w, int64_t grace_ms);

/* A snapshot of the counters. Thread-safe. */
void worker_get_stats(struct worker *w, struct worker_stats *out);

/* What the worker talks to, for people: "PostgreSQL", "SQLite", "the API
 * server" (a static string). */
const char *worker_store_label(const struct worker *w);

/* The worker id it claims with (borrowed, valid until worker_stop). */
const char *worker_id(const struct worker *w);

#endif
