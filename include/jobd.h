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
    JOBD_E_INVALID = -1,     /* bad input; jobd_error.field names the field */
    JOBD_E_NOTFOUND = -2,    /* no such job, schedule or queue */
    JOBD_E_CONFLICT = -3,    /* idempotency key reused with another request; name taken */
    JOBD_E_STALE = -4,       /* fenced: the report's attempt is not the live one */
    JOBD_E_STATE = -5,       /* transition not allowed from the current status */
    JOBD_E_UNAVAILABLE = -6, /* the store (or server) could not be reached */
    JOBD_E_NOMEM = -7,       /* out of memory */
    JOBD_E_TOOBIG = -8,      /* over a size limit */
    JOBD_E_STORE = -9,       /* the store failed otherwise (not a database, SQL error) */
    JOBD_E_IO = -10,         /* a file or socket operation failed */
    JOBD_E_UNAUTHORIZED = -11, /* missing or wrong token */
    JOBD_E_INTERNAL = -12,   /* a bug: an invariant did not hold */
};

/* Detail of an error. Caller-provided; zero-initialise before use. */
struct jobd_error {
    int code;        /* an enum jobd_err value */
    char field[64];  /* the offending field ("payload", "jobs[3].type"), or "" */
    char msg[256];   /* one human sentence naming what is wrong */
};

/* A static, never-NULL name for an error code ("stale attempt"). Thread-safe. */
JOBD_API const char *jobd_strerror(int code);

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
JOBD_API const char *jobd_run_payload(const jobd_run *run);       /* JSON text */
JOBD_API const char *jobd_run_idempotency_key(const jobd_run *run); /* or "job-<id>" */
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
JOBD_API int jobd_worker_register(jobd_worker *w, const char *type, jobd_handler_fn fn,
                                  void *ctx);
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
