/*
 * jobd.h — the public C API of libjobd, the only public header.
 *
 * libjobd lets a C program enqueue jobs into a jobd store (also inside the
 * caller's own PostgreSQL transaction) and run the jobd worker loop with C
 * handlers in its own process. Everything here is jobd_ / JOBD_; handles are
 * opaque. Errors are negative enum jobd_err values (0 = success); a function
 * that can fail for a reason worth telling also fills a caller-provided
 * struct jobd_error, whose msg names what is wrong.
 *
 * Times are microseconds since the Unix epoch (int64_t, suffix _us);
 * durations carry their unit in the name (_ms, _s).
 */
#ifndef JOBD_H
#define JOBD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(JOBD_BUILDING_LIB)
#define JOBD_API __attribute__((visibility("default")))
#else
#define JOBD_API
#endif
#define JOBD_MUST_USE __attribute__((warn_unused_result))

/* Error codes: 0 is success, every error is negative. */
enum jobd_err {
    JOBD_OK = 0,
    JOBD_E_INVALID = -1,         /* bad input; jobd_error.field names the field */
    JOBD_E_NOTFOUND = -2,        /* no such job, schedule or queue */
    JOBD_E_CONFLICT = -3,        /* idempotency key reused with another request; name taken */
    JOBD_E_STALE = -4,           /* fenced: the report's attempt is not the live one */
    JOBD_E_STATE = -5,           /* transition not allowed from the current status */
    JOBD_E_UNAVAILABLE = -6,     /* the store (or server) could not be reached */
    JOBD_E_NOMEM = -7,           /* out of memory */
    JOBD_E_TOOBIG = -8,          /* over a size limit */
    JOBD_E_STORE = -9,           /* the store failed otherwise (not a database, SQL error) */
    JOBD_E_IO = -10,             /* a file or socket operation failed */
    JOBD_E_UNAUTHORIZED = -11,   /* missing or wrong token */
    JOBD_E_INTERNAL = -12,       /* a bug: an invariant did not hold */
    JOBD_E_COMMIT_UNKNOWN = -13, /* the connection broke at COMMIT and the outcome could not
                                  * be learned: the write may or may not have happened */
};

/* Detail of an error. Caller-provided; zero-initialise before use. */
struct jobd_error {
    int code;       /* an enum jobd_err value */
    char field[64]; /* the offending field ("payload", "jobs[3].type"), or "" */
    char msg[256];  /* one human sentence naming what is wrong */
};

/* A static, never-NULL name for an error code ("stale attempt"). Thread-safe. */
JOBD_API const char *jobd_strerror(int code);

/* ====================================================================== */
/* Client: enqueue jobs, read their status, and the worker primitives.    */
/* ====================================================================== */
/*
 * A jobd_client is one connection to a jobd store, opened by URL exactly as
 * `jobd --db` takes it ("postgres://…", "postgresql://…", "sqlite:PATH" or a
 * plain path). It talks to the store directly, not to an API server.
 *
 * Thread-safety: a client is one connection; use it from one thread at a
 * time (open one client per thread). Distinct clients are independent.
 * Functions taking a struct jobd_error accept NULL there.
 */
typedef struct jobd_client jobd_client;

/*
 * Opens the store at url and creates or upgrades its schema (as `jobd
 * migrate`). On success *out is owned by the caller (jobd_client_close).
 * Errors: JOBD_E_INVALID (url names no backend), JOBD_E_UNAVAILABLE (the
 * server does not answer), JOBD_E_STORE (not a database, migration failed),
 * JOBD_E_NOMEM. *out is NULL on error.
 */
JOBD_API JOBD_MUST_USE int jobd_client_open(const char *url, jobd_client **out,
                                            struct jobd_error *err);

/* Closes the connection and frees the client. NULL-safe. */
JOBD_API void jobd_client_close(jobd_client *client);

/*
 * Sets the full-jitter backoff jobd_fail uses: delay = random(0, min(cap_ms,
 * base_ms * 2^n)), n the attempts since the job's last manual retry. 0 (the initial setting) takes the defaults, 5 s and
 * 15 min. Never fails.
 */
JOBD_API void jobd_client_set_backoff(jobd_client *client, int64_t base_ms, int64_t cap_ms);

/*
 * What to enqueue. Zero-initialise, then set what you need; zero/NULL takes
 * the default. Every pointer is borrowed for the duration of the call only.
 */
struct jobd_job_opts {
    const char *type;            /* required: [A-Za-z0-9._:-]{1,128} */
    const char *payload;         /* any JSON text up to 256 KiB; NULL = "{}" */
    const char *queue;           /* [a-z0-9_-]{1,64}; NULL = "default" */
    int32_t priority;            /* higher runs first; -1e6..1e6; default 0 */
    int64_t run_at_us;           /* due time, us since the epoch; 0 = now */
    int32_t max_attempts;        /* 1..1e6; 0 = 25 */
    const char *idempotency_key; /* NULL = none; at most 255 bytes */
    int64_t timeout_ms;          /* the handler's time limit; 0 = the handler's own */
    /* NULL = none; a W3C traceparent (version 00) the job carries to its
     * handlers and log lines (docs/API.md, Trace context). Borrowed for the call. */
    const char *traceparent;
    /* Parents (docs/MODEL.md, Dependencies): n_depends_on ids of existing
     * jobs (at most 1,000), borrowed for the call; the job waits, status
     * "waiting", until they are all terminal. run_on_parent_failure: run it
     * even when a parent did not succeed (on_parent_failure "run"); false
     * cancels it then. */
    const int64_t *depends_on;
    size_t n_depends_on;
    bool run_on_parent_failure;
    /* NULL = none; the job's group, e.g. a tenant ([A-Za-z0-9._:-]{1,128}):
     * a queue's due jobs of different groups are claimed in turn, and its
     * group limits count per group (docs/MODEL.md, Groups). */
    const char *group;
    /* Debounce (docs/MODEL.md, Debounce and unique windows): with a key, a
     * pending job of the same type and queue enqueued with that key is
     * replaced in place (new payload and priority, due debounce_ms from
     * now), else a job due debounce_ms from now is made. Not with
     * run_at_us, depends_on, an idempotency key or a unique window. */
    const char *debounce_key;
    int64_t debounce_ms;
    /* Unique window: with a key, at most one job per key in unique_ms from
     * the first one's creation; inside it the enqueue returns that job's id.
     * Not with an idempotency key. */
    const char *unique_key;
    int64_t unique_ms;
};

/*
 * Enqueues one job. The payload is parsed strictly (duplicate keys, depth
 * over 64 and invalid UTF-8 are refused) and stored in canonical form.
 * With an idempotency key already used for the same type, queue and payload
 * this is a replay: it returns 0 and the existing job's id. *id_out (may be
 * NULL) receives the id. Errors: JOBD_E_INVALID (err->field names the
 * option), JOBD_E_TOOBIG (payload), JOBD_E_CONFLICT (the key was used for a
 * different job), JOBD_E_UNAVAILABLE, JOBD_E_STORE, JOBD_E_NOMEM.
 */
JOBD_API JOBD_MUST_USE int jobd_enqueue(jobd_client *client, const struct jobd_job_opts *opts,
                                        int64_t *id_out, struct jobd_error *err);

/*
 * Enqueues n jobs (at most 10,000), all or nothing. ids_out (NULL or an
 * array of n) receives their ids in order. An invalid item fails the whole
 * batch and err->field names it ("jobs[3].payload"). Errors as jobd_enqueue,
 * plus JOBD_E_TOOBIG for more than 10,000 jobs.
 */
JOBD_API JOBD_MUST_USE int jobd_enqueue_batch(jobd_client *client, const struct jobd_job_opts *opts,
                                              size_t n, int64_t *ids_out, struct jobd_error *err);

/* libpq's connection (PGconn is `typedef struct pg_conn PGconn`). */
struct pg_conn;

/*
 * Enqueues one job INSIDE the caller's own PostgreSQL transaction on conn (a
 * libpq PGconn *, borrowed), by calling the SQL function jobd.enqueue(...)
 * (docs/MODEL.md, "Inside your own transaction (PostgreSQL)"): the job
 * commits or rolls back with the caller's data. The schema must exist
 * (jobd_client_open or `jobd migrate` made it). conn must be idle or in a
 * transaction block; if the statement fails inside a transaction, that
 * transaction is aborted, as with any failed statement. opts as jobd_enqueue,
 * except that timeout_ms must be 0 (jobd.enqueue has no such parameter); a
 * traceparent needs schema version 22 (jobd.enqueue's 8th argument),
 * depends_on version 27 (its depends_on and on_parent_failure; a parent
 * that names no job is JOBD_E_INVALID with err->field "depends_on"), a
 * group version 31, a debounce or a unique window version 32 (its
 * debounce_key/debounce_for and unique_key/unique_for): decided as by
 * jobd_enqueue, holding the key's row until the caller's transaction ends,
 * so concurrent callers of one key get one job and all its id (a debounce
 * replaces the pending job in place and *id_out is its id).
 * jobd.enqueue takes the payload as jsonb, so it is stored as PostgreSQL
 * prints jsonb ({"a": 1}), not in jobd's canonical form. With an idempotency
 * key, a replay (same type, queue and payload, compared as jsonb) returns the
 * existing id. Errors: JOBD_E_INVALID, JOBD_E_TOOBIG, JOBD_E_CONFLICT (the
 * key was used for another job), JOBD_E_UNAVAILABLE (conn is not connected),
 * JOBD_E_STORE (any other SQL error, message included). Thread-safety: that
 * of conn.
 */
JOBD_API JOBD_MUST_USE int jobd_enqueue_pg(struct pg_conn *conn, const struct jobd_job_opts *opts,
                                           int64_t *id_out, struct jobd_error *err);

/*
 * Reads a job's status. *status_out (may be NULL) points to a static string,
 * "pending", "running", "succeeded", "dead" or "cancelled"; *attempt_out
 * (may be NULL) is the attempt count. Errors: JOBD_E_NOTFOUND,
 * JOBD_E_UNAVAILABLE, JOBD_E_STORE.
 */
JOBD_API JOBD_MUST_USE int jobd_get_status(jobd_client *client, int64_t id, const char **status_out,
                                           int32_t *attempt_out, struct jobd_error *err);

/* ---- worker primitives: claim, heartbeat, complete, fail ---- */

/* One claimed job: a read-only view with accessors. */
typedef struct jobd_job jobd_job;

/*
 * Accessors. Strings are owned by the job (valid until the batch holding it
 * is freed); never NULL except jobd_job_idempotency_key (NULL if none).
 * Thread-safe (they only read).
 */
JOBD_API int64_t jobd_job_id(const jobd_job *job);
JOBD_API int32_t jobd_job_attempt(const jobd_job *job); /* the fencing token */
JOBD_API const char *jobd_job_type(const jobd_job *job);
JOBD_API const char *jobd_job_queue(const jobd_job *job);
/* JSON text: canonical if enqueued through libjobd or the API; as jsonb prints
 * it if enqueued with the SQL function jobd.enqueue (jobd_enqueue_pg). */
JOBD_API const char *jobd_job_payload(const jobd_job *job);
JOBD_API const char *jobd_job_idempotency_key(const jobd_job *job);
JOBD_API int64_t jobd_job_timeout_ms(const jobd_job *job); /* 0 = none given */
JOBD_API int64_t jobd_job_lease_expires_at_us(const jobd_job *job);
JOBD_API int64_t jobd_job_scheduled_for_us(const jobd_job *job); /* 0 unless from a schedule */

/* The jobs one jobd_claim returned, in claim order. */
typedef struct jobd_job_batch jobd_job_batch;

/* How many jobs the batch holds (0 if none were due). */
JOBD_API size_t jobd_job_batch_count(const jobd_job_batch *batch);
/* The i-th job (borrowed from the batch), or NULL if i is out of range. */
JOBD_API const jobd_job *jobd_job_batch_get(const jobd_job_batch *batch, size_t i);
/* Frees the batch and its jobs. NULL-safe. */
JOBD_API void jobd_job_batch_free(jobd_job_batch *batch);

/* What to claim. Zero-initialise; pointers borrowed for the call. */
struct jobd_claim_opts {
    const char *worker_id;     /* required: who holds the lease */
    const char *const *queues; /* n_queues names; NULL/0 = every queue */
    size_t n_queues;
    const char *const *types; /* n_types names; NULL/0 = every type */
    size_t n_types;
    int limit;        /* 1..1000; 0 = 1 */
    int64_t lease_ms; /* 0 = 60 s */
};

/*
 * Claims up to opts->limit due jobs (run_at <= now, queue not paused) in the
 * order priority DESC, run_at, id: each becomes running with attempt + 1 and
 * a lease of lease_ms. A job is never handed to two claimers. On success
 * *out is a batch owned by the caller (jobd_job_batch_free), possibly
 * empty. Errors: JOBD_E_INVALID (worker_id missing, limit out of range),
 * JOBD_E_UNAVAILABLE, JOBD_E_STORE, JOBD_E_NOMEM; *out is NULL on error.
 */
JOBD_API JOBD_MUST_USE int jobd_claim(jobd_client *client, const struct jobd_claim_opts *opts,
                                      jobd_job_batch **out, struct jobd_error *err);

/*
 * Extends the lease of attempt `attempt` of job id to now + lease_ms (0 =
 * 60 s). *cancel_requested (may be NULL) tells whether a user asked to
 * cancel the job: stop working and report with jobd_fail. Errors:
 * JOBD_E_STALE (the job is no longer running with that attempt: stop and do
 * not report), JOBD_E_UNAVAILABLE, JOBD_E_STORE.
 */
JOBD_API JOBD_MUST_USE int jobd_heartbeat(jobd_client *client, int64_t id, int32_t attempt,
                                          int64_t lease_ms, bool *cancel_requested,
                                          struct jobd_error *err);

/*
 * Marks the attempt succeeded. result (borrowed; NULL = none) is JSON text of
 * at most 64 KiB, stored canonical. Errors: JOBD_E_INVALID / JOBD_E_TOOBIG
 * (result), JOBD_E_STALE, JOBD_E_UNAVAILABLE, JOBD_E_STORE.
 */
JOBD_API JOBD_MUST_USE int jobd_complete(jobd_client *client, int64_t id, int32_t attempt,
                                         const char *result, struct jobd_error *err);

/*
 * Reports a failed attempt. error (borrowed; may be NULL) becomes the job's
 * last_error (its last 4 KiB). If retryable and attempts remain, the job
 * goes back to pending, due after the client's full-jitter backoff for the
 * attempts counted since the job's last manual retry (attempt minus its
 * attempt_floor; the job is read first to learn it); otherwise (or if !retryable) it is dead; if a cancel was
 * requested it is cancelled. *status_out (may be NULL) receives the new
 * status as a static string. Errors: JOBD_E_STALE, JOBD_E_UNAVAILABLE,
 * JOBD_E_STORE.
 */
JOBD_API JOBD_MUST_USE int jobd_fail(jobd_client *client, int64_t id, int32_t attempt,
                                     const char *error, bool retryable, const char **status_out,
                                     struct jobd_error *err);

/* ====================== end of the client section ====================== */
/* ==== embedded worker: C handlers in your own process ====
 *
 * A program registers `type -> function` and runs jobd's worker loop (the
 * same one `jobd worker` runs: batched claims, heartbeats, fenced reports,
 * wake-ups, graceful stop). Exec and http handlers from a config file may
 * be mixed in.
 *
 *   jobd_worker *w;
 *   jobd_worker_new("postgresql://…", NULL, &w, &err);
 *   jobd_worker_register(w, "email.send", send_email, my_ctx);
 *   jobd_worker_run(w, &err);        // until jobd_worker_stop(w)
 *   jobd_worker_free(w);
 */
typedef struct jobd_worker jobd_worker;
/*
 * One running attempt as a C handler sees it; borrowed for the handler call.
 * (Distinct from the client section's jobd_job, a claimed job you report
 * on yourself: here the worker loop does the reporting.)
 */
typedef struct jobd_run jobd_run;

/* What a handler returns. */
enum jobd_handler_result {
    JOBD_HANDLER_OK = 0,    /* succeeded (result: see jobd_run_set_result) */
    JOBD_HANDLER_RETRY = 1, /* retryable failure: backoff, or jobd_run_retry_after */
    JOBD_HANDLER_DEAD = 2,  /* permanent failure: the job is dead at once */
};

/*
 * A handler. Runs on one of the worker's threads (as many as its
 * concurrency), so it must be thread-safe with respect to ctx. It should
 * return soon after jobd_run_should_stop() turns true (timeout, cancel,
 * shutdown): threads are never killed.
 */
typedef int (*jobd_handler_fn)(jobd_run *run, void *ctx);

/* The job's fields; strings are borrowed until the handler returns. */
JOBD_API int64_t jobd_run_id(const jobd_run *run);
JOBD_API int32_t jobd_run_attempt(const jobd_run *run);
JOBD_API const char *jobd_run_type(const jobd_run *run);
JOBD_API const char *jobd_run_queue(const jobd_run *run);
JOBD_API const char *jobd_run_payload(const jobd_run *run);         /* JSON text */
JOBD_API const char *jobd_run_idempotency_key(const jobd_run *run); /* or "job-<id>" */
/*
 * The jobs this one depends on (docs/WORKER.md, Parents), as JSON text: an
 * array of {"id", "step", "type", "status", "result"}, as they were when the
 * job was claimed; NULL when it has none. Borrowed: owned by the run, valid
 * until the handler returns (copy it to keep it).
 */
JOBD_API const char *jobd_run_parents(const jobd_run *run);

/* The job's W3C traceparent, or NULL when it was enqueued without one
 * (docs/WORKER.md, Trace context): a handler that traces starts its span
 * with it as parent. Borrowed like the others. */
JOBD_API const char *jobd_run_traceparent(const jobd_run *run);
/* True once the run should end: its timeout passed, it was cancelled, or the worker stops. */
JOBD_API bool jobd_run_should_stop(const jobd_run *run);
/*
 * Sets the result reported with JOBD_HANDLER_OK (JSON text of at most
 * 64 KiB, copied). JOBD_E_INVALID if it is not JSON, JOBD_E_TOOBIG.
 */
JOBD_API int jobd_run_set_result(jobd_run *run, const char *json);
/* Sets the failure message (copied; its last 4 KiB are kept). JOBD_E_NOMEM. */
JOBD_API int jobd_run_set_error(jobd_run *run, const char *message);
/* Asks for this retry delay instead of the backoff (with JOBD_HANDLER_RETRY). */
JOBD_API void jobd_run_retry_after(jobd_run *run, int64_t delay_ms);
/*
 * Reports the run's progress (docs/WORKER.md, "Progress"): percent 0..100,
 * or < 0 for none; message (copied; NULL = none) of at most 1 KiB; data
 * (JSON text, copied; NULL = none) of at most 16 KiB. It replaces what the
 * job showed, and reaches the store from the worker's loop, at most one
 * write per job every 250 ms (the newest report wins), so a handler may
 * call it per item. JOBD_E_INVALID naming what is out of bounds (nothing is
 * reported), JOBD_E_NOMEM.
 */
JOBD_API int jobd_progress(jobd_run *run, double percent, const char *message,
                           const char *data_json);

/*
 * A new worker on the store at db_url (as --db; NULL = $JOBD_DB, else
 * sqlite:jobd.db). config_path (NULL = none) is an INI file as for
 * `jobd worker`. Nothing runs until jobd_worker_run. *out is owned by the
 * caller (jobd_worker_free). JOBD_E_INVALID/JOBD_E_IO naming the problem.
 */
JOBD_API int jobd_worker_new(const char *db_url, const char *config_path, jobd_worker **out,
                             struct jobd_error *err);
/* Sets a [worker] option by its INI key ("concurrency", "queues", "lease", …). */
JOBD_API int jobd_worker_set_option(jobd_worker *w, const char *key, const char *value,
                                    struct jobd_error *err);
/*
 * Registers fn for jobs of type (replacing a handler of that type). fn and
 * ctx are borrowed: they must stay valid until jobd_worker_free. Before
 * jobd_worker_run only. JOBD_E_INVALID for a bad type, JOBD_E_STATE if running.
 */
JOBD_API int jobd_worker_register(jobd_worker *w, const char *type, jobd_handler_fn fn, void *ctx);
/*
 * Migrates the store, then runs the worker loop on this thread's behalf
 * until jobd_worker_stop: stops claiming, lets running jobs finish for up to
 * shutdown_grace, stops the rest and reports them, then returns 0. Errors
 * only at start (no handlers, the store cannot be opened or migrated).
 */
JOBD_API int jobd_worker_run(jobd_worker *w, struct jobd_error *err);
/* Makes jobd_worker_run return (gracefully). Thread-safe and async-signal-safe. */
JOBD_API void jobd_worker_stop(jobd_worker *w);
/* Frees a worker that is not running. NULL-safe. */
JOBD_API void jobd_worker_free(jobd_worker *w);

#ifdef __cplusplus
}
#endif
#endif /* JOBD_H */
