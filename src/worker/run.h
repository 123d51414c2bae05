/*
 * run.h — what the worker loop hands a handler runner and what comes back.
 *
 * The loop thread owns the store connection; runners (exec.c: child
 * processes, http.c: one curl multi thread, cthread.c: C-handler threads)
 * never touch the store. A runner gets a struct run (a copy of the claimed
 * job's fields it needs) and, when the run ends for whatever reason, hands
 * back exactly one struct run_result through the sink; the loop reports it.
 */
#ifndef JOBD_WORKER_RUN_H
#define JOBD_WORKER_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "worker/config.h"

/* How a run ended. */
enum run_outcome {
    RUN_SUCCEEDED = 0, /* result (JSON or NULL) */
    RUN_RETRY = 1,     /* retryable failure: error, retry_after_ms (-1 = use backoff) */
    RUN_DEAD = 2,      /* permanent failure: dead at once */
    RUN_RELEASE = 3,   /* never started: a local failure (no file descriptors, no
                          fork), not the job's; hand it back unused (store_release) */
};

/* Why the loop asks a runner to stop a run early. */
enum run_stop {
    RUN_STOP_NONE = 0,
    RUN_STOP_TIMEOUT = 1,
    RUN_STOP_CANCEL = 2,   /* a user cancelled the job */
    RUN_STOP_SHUTDOWN = 3, /* the worker is stopping and the grace ran out */
    RUN_STOP_LOST = 4,     /* the lease is gone (stale): nobody wants the result */
    RUN_STOP_RETURNED = 5, /* claimed ahead, never started: every thread stayed busy, so it
                              goes back for other workers (store_release) */
};

/* One run. Strings are owned by the struct (run_free). */
struct run {
    int64_t id;
    int32_t attempt;
    char *type;
    char *queue;
    char *payload;                      /* JSON text */
    char *idempotency_key;              /* the job's key, or "job-<id>" */
    char *traceparent;                  /* the job's W3C traceparent, or NULL (docs/WORKER.md,
                                           Trace context) */
    int64_t scheduled_for_us;           /* 0 unless made by a schedule */
    int64_t timeout_ms;                 /* effective: the job's, else the handler's; 0 = none */
    const struct handler_conf *handler; /* borrowed from the worker's config */
    /* The job's parents (docs/WORKER.md, Parents): a JSON array of
     * {id, step, type, status, result}, or NULL when it has none (owned). */
    char *parents;
    /* exec handlers: the file JOBD_PARENTS names (owned); run_free removes it. */
    char *parents_path;
};

struct run_result {
    int64_t id;
    int32_t attempt;
    enum run_outcome outcome;
    char *result;            /* RUN_SUCCEEDED: canonical JSON or NULL (owned) */
    char *error;             /* failures: last_error text (owned, <= JOB_ERROR_MAX) */
    int64_t retry_after_ms;  /* RUN_RETRY: -1 = backoff; else the server's Retry-After */
    enum run_stop stopped;   /* why it was stopped early, if it was */
    int64_t ran_us;          /* how long the handler itself ran (C handlers; 0 = not timed) */
    char *log;               /* exec handlers: the end of its stderr kept as the attempt's log
                                (docs/WORKER.md, Attempt logs): UTF-8, owned; NULL = none */
    struct run *run;         /* the run it answers when its runner hands that back (owned,
                                 freed by run_result_free; NULL otherwise): so the loop
                                 thread frees it, not a C handler thread (cthread.c) */
    struct run_result *next; /* for the worker's queue */
};

/* Where runners deliver results: called from any thread; takes ownership of r. */
struct run_sink {
    void (*deliver)(void *ctx, struct run_result *r);
    void *ctx;
    /* NULL, or where a running attempt's progress goes (docs/WORKER.md,
     * Progress): one line of JSON as the handler wrote it (without its
     * newline; owned by the callee). Any thread; cheap (the loop writes it). */
    void (*progress)(void *ctx, int64_t id, int32_t attempt, char *line);
};

/* Frees a run and its strings. NULL-safe. */
void run_free(struct run *r);
/* Frees a result, its strings and the run it carries (if any). NULL-safe. */
void run_result_free(struct run_result *r);
/*
 * A new result for run with outcome; error is copied (its last JOB_ERROR_MAX
 * bytes, cleaned to UTF-8 by utf8_clean) and may be NULL. NULL on out-of-memory.
 */
struct run_result *run_result_new(const struct run *run, enum run_outcome outcome,
                                  const char *error);
/*
 * Turns a handler's output into a result: if text (len bytes) is JSON of at
 * most JOB_RESULT_MAX bytes (nesting at most JSON_DEPTH_MAX, as the API
 * takes results), returns its canonical form (core/json.h: reals in their
 * shortest round-trip form; malloc'd, caller frees); otherwise (empty, not
 * JSON, too big, too deep, out of memory) NULL: the job still succeeds.
 */
char *run_result_json(const char *text, size_t len);
/* "timed out after 30s", "cancelled", ... for a stop reason (static). */
const char *run_stop_text(enum run_stop why);

#endif
