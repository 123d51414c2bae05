/*
 * job.h — the job model: the vocabulary every other module speaks.
 *
 * Vocabulary (as in docs/DESIGN.md):
 *   job      one unit of work, one row in the store;
 *   attempt  one claim of a job; the attempt number is the fencing token and
 *            only ever grows (a manual retry does not lower it);
 *   lease    the time a claimer may hold a running job without heartbeating;
 *   schedule a named cron template whose firings become ordinary jobs;
 *   run      one execution of a handler for one attempt.
 *
 * Strings inside struct job are heap-owned by the struct (job_fini frees
 * them). Times are microseconds since the Unix epoch; 0 means "none" (null
 * in JSON). No I/O here.
 */
#ifndef JOBD_CORE_JOB_H
#define JOBD_CORE_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobd.h"

/* Limits (docs/MODEL.md, "Names and limits"). */
#define JOB_NAME_MAX 128  /* job types, schedule names */
#define JOB_QUEUE_MAX 64  /* queue names */
#define JOB_KEY_MAX 255   /* idempotency keys */
#define JOB_GROUP_MAX 128 /* group names (docs/MODEL.md, Groups) */
#define JOB_WORKER_ID_MAX 128
#define JOB_PAYLOAD_MAX (256 * 1024)      /* bytes of payload JSON */
#define JOB_RESULT_MAX (64 * 1024)        /* bytes of result JSON */
#define JOB_ERROR_MAX (4 * 1024)          /* bytes of last_error */
#define JOB_PROGRESS_MESSAGE_MAX 1024     /* bytes of a progress message */
#define JOB_PROGRESS_DATA_MAX (16 * 1024) /* bytes of a progress's data JSON */
#define JOB_MAX_ATTEMPTS_MAX 1000000
#define JOB_PRIORITY_MIN (-1000000)
#define JOB_PRIORITY_MAX 1000000
/* Queue limits (docs/API.md, "PUT /v1/queues/{name}"). */
#define QUEUE_LIMIT_MAX 1000000                /* max_running and rate_limit */
#define QUEUE_RATE_PER_MIN_MS 1000             /* a window of at least 1 s... */
#define QUEUE_RATE_PER_MAX_MS (86400LL * 1000) /* ...and at most a day */
/* Jobs one bulk action may act on (docs/API.md, "POST /v1/jobs/bulk"). */
#define JOB_BULK_MAX 100000
/* A job's own timeout, as "timeout" or "timeout_s": at most 366 days, so
 * deadlines in microseconds never overflow. */
#define JOB_TIMEOUT_MAX_MS (366LL * 86400 * 1000)

/* Defaults (docs/MODEL.md, "Defaults"; docs/WORKER.md, "Configuration"). */
#define JOB_DEFAULT_QUEUE "default"
#define JOB_DEFAULT_MAX_ATTEMPTS 25
#define JOB_DEFAULT_LEASE_MS 60000
#define JOB_DEFAULT_HEARTBEAT_MS 20000
#define JOB_DEFAULT_REAP_MS 30000
#define JOB_DEFAULT_BACKOFF_BASE_MS 5000
#define JOB_DEFAULT_BACKOFF_CAP_MS (15 * 60 * 1000)

/*
 * The most rows one call reads or changes: a page of GET /v1/jobs, a claim,
 * a reap or prune batch. One statement then holds its row locks (and one
 * answer its memory) only briefly, yet a worker fills even a few hundred
 * free slots in one round trip and a reaper clears a backlog in a few
 * statements a tick.
 */
#define JOB_PAGE_MAX 1000
/* A listing's page when the caller asks for no size: a screenful or two. */
#define JOB_PAGE_DEFAULT 100
/*
 * A search (GET /v1/jobs?q=TEXT, docs/API.md, Search) examines the newest
 * jobs that match the other filters, at most this many a call, and keeps
 * those containing TEXT: a scan budget, so it answers in bounded time at any
 * store size (docs/BENCHMARKS.md, Search), and says "partial" with a cursor
 * to go on from where it stopped. A caller may ask for a smaller budget.
 */
#define JOB_SEARCH_SCAN_DEFAULT 10000
/* The largest budget a caller may ask for: slower, never unbounded. */
#define JOB_SEARCH_SCAN_MAX 100000
/* The longest search text, in bytes. */
#define JOB_SEARCH_TEXT_MAX 200
/*
 * Jobs in one batch enqueue (POST /v1/jobs/batch, jobd_enqueue_batch): one
 * transaction, so the batch must fit the 16 MiB body and commit in well
 * under a second; 10,000 small jobs do.
 */
#define JOB_BATCH_MAX 10000
/* Queue + type names one claim may filter on: a worker lists its own, far
 * fewer; the bound keeps a hostile filter from building a huge statement. */
#define JOB_FILTER_NAMES_MAX 1000
/* Parents one job may wait for (docs/MODEL.md, Dependencies). */
#define JOB_DEPS_MAX 1000

enum job_status {
    JOB_PENDING = 0,
    JOB_RUNNING = 1,
    JOB_SUCCEEDED = 2,
    JOB_DEAD = 3,
    JOB_CANCELLED = 4,
    /* Has parents (docs/MODEL.md, Dependencies) not all terminal; never
     * claimed. Last so the numbers of the others stay as they were. */
    JOB_WAITING = 5,
};
#define JOB_STATUS_COUNT 6

/* A job as stored. Zero-initialise; job_fini frees the strings. */
/*
 * What a running attempt last said of its progress (docs/API.md, "The job
 * object"): each report replaces the whole of it.
 */
struct job_progress {
    int32_t attempt; /* the attempt that reported it */
    bool has_percent;
    double percent; /* 0..100 when has_percent */
    char *message;  /* NULL or at most JOB_PROGRESS_MESSAGE_MAX bytes of UTF-8 */
    char *data;     /* NULL or canonical JSON text */
    int64_t at_us;  /* when it was reported (store clock) */
};

struct job {
    int64_t id;
    char *queue;
    char *type;
    char *payload; /* JSON text, never NULL in a stored job */
    enum job_status status;
    int32_t priority;
    int64_t run_at_us;
    int32_t attempt;       /* claims so far; the fencing token */
    int32_t attempt_floor; /* attempts that do not count (job_attempts_counted): those
                                 before the last manual retry, and claims given back */
    int32_t max_attempts;
    char *idempotency_key;    /* NULL if none */
    char *schedule;           /* NULL unless made by a schedule */
    int64_t scheduled_for_us; /* 0 unless made by a schedule */
    char *worker_id;          /* NULL unless claimed */
    int64_t lease_expires_at_us;
    int64_t timeout_ms;    /* 0 = the handler's own timeout */
    bool cancel_requested; /* running job asked to stop */
    char *last_error;      /* NULL if none */
    char *result;          /* JSON text or NULL */
    int64_t created_at_us;
    int64_t started_at_us;
    int64_t finished_at_us;
    /* The W3C traceparent given at enqueue (core/traceparent.h; docs/API.md,
     * Trace context), NULL if none; owned by the job. */
    char *traceparent;
    /* NULL unless the reader asked for it (store_progress_attach, store/progress.h)
     * and the job's current attempt reported progress; owned by the job. */
    struct job_progress *progress;
    /* Its parents (docs/MODEL.md, Dependencies), ascending, owned by the
     * job; NULL and 0 when it has none or the reader did not ask
     * (store_deps_attach). run_on_parent_failure: on_parent_failure "run". */
    int64_t *depends_on;
    size_t n_depends_on;
    bool run_on_parent_failure;
    /* A claimed job's parents as its handler sees them (docs/WORKER.md,
     * Parents): JSON array text of {id, step, type, status, result}; NULL
     * when it has none or the reader is not a claim. Owned by the job. */
    char *parents;
    /* The workflow it is a step of and its ref there (docs/MODEL.md,
     * Workflows): 0 and NULL when none or the reader did not ask
     * (store_deps_attach). step owned by the job. */
    int64_t workflow;
    char *step;
    /* Its group (docs/MODEL.md, Groups), NULL if none; owned by the job. */
    char *group;
};

/*
 * A debounce or a unique window of an enqueue (docs/MODEL.md, Debounce and
 * unique windows): key NULL = none; for_ms (1ms .. JOB_WINDOW_MAX_MS) is
 * the delay of a debounce, or the length of a unique window.
 */
struct job_window {
    const char *key;
    int64_t for_ms;
};
/* The longest debounce delay or unique window: as long as a job's timeout. */
#define JOB_WINDOW_MAX_MS JOB_TIMEOUT_MAX_MS

/*
 * What a client asks to enqueue. All pointers are borrowed for the call.
 * NULL/0 fields take the defaults: queue "default", payload "{}", run_at now,
 * max_attempts 25. payload must be canonical JSON text (see json_canonical in
 * core/json.h) so that idempotent replays compare equal byte for byte.
 */
struct job_spec {
    const char *type;
    const char *payload;
    const char *queue;
    int32_t priority;
    int64_t run_at_us;    /* 0 = now */
    int32_t max_attempts; /* 0 = default */
    const char *idempotency_key;
    int64_t timeout_ms;   /* 0 = none */
    const char *schedule; /* set by the scheduling plane only */
    int64_t scheduled_for_us;
    /* Parents (docs/MODEL.md, Dependencies): n_depends_on ids of existing
     * jobs, at most JOB_DEPS_MAX; the job waits until they are all terminal.
     * run_on_parent_failure: on_parent_failure "run" (else "cancel"). */
    const int64_t *depends_on;
    size_t n_depends_on;
    bool run_on_parent_failure;
    const char *traceparent; /* NULL = none; valid (traceparent_validate) */
    const char *group;       /* NULL = none; valid (job_validate_group) */
    /* Debounce: a pending job of this type and queue enqueued with the same
     * key is replaced in place; unique: one job per key per window
     * (store_enqueue). At most one of them, and neither with an
     * idempotency key (job_spec_validate). */
    struct job_window debounce, unique;
};

/* A growable array of jobs; job_list_fini frees the jobs and the array. */
struct job_list {
    struct job *v;
    size_t n;
    size_t cap;
};

/* Frees the strings of j (not j itself) and zeroes it. NULL-safe. */
void job_fini(struct job *j);
/* Frees a progress and its strings. NULL-safe. */
void job_progress_free(struct job_progress *p);
/* Moves src into dst (dst must be finalised or zero); src is zeroed. */
void job_move(struct job *dst, struct job *src);
/* Appends a zeroed job to l and returns it, or NULL on out-of-memory. */
struct job *job_list_push(struct job_list *l);
void job_list_fini(struct job_list *l);

/* "pending", "running", ...; NULL-free for valid statuses, "?" otherwise. */
const char *job_status_name(enum job_status s);
/* Parses a status name; returns 0 and sets *out, or JOBD_E_INVALID. */
int job_status_parse(const char *name, enum job_status *out);
static inline bool
job_status_terminal(enum job_status s)
{
    return s == JOB_SUCCEEDED || s == JOB_DEAD || s == JOB_CANCELLED;
}

/*
 * Validation. Each returns 0, or JOBD_E_INVALID / JOBD_E_TOOBIG with err
 * naming the field (field_prefix, e.g. "jobs[3].", is prepended; may be NULL).
 * Pure; thread-safe.
 */
int job_validate_type(const char *type, const char *field, struct jobd_error *err);
int job_validate_queue(const char *queue, const char *field, struct jobd_error *err);
int job_validate_key(const char *key, const char *field, struct jobd_error *err);
/* A group name: [A-Za-z0-9._:-]{1,JOB_GROUP_MAX} (docs/MODEL.md, Groups); NULL is valid. */
int job_validate_group(const char *group, const char *field, struct jobd_error *err);
int job_spec_validate(const struct job_spec *spec, const char *field_prefix,
                      struct jobd_error *err);
/* The debounce and unique parts of job_spec_validate (core/window.c). */
int job_spec_validate_windows(const struct job_spec *spec, const char *field_prefix,
                              struct jobd_error *err);

#endif
