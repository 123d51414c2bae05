/*
 * store.h — the seam between jobd and its durable store.
 *
 * One interface, two backends: pg/open.c (libpq) and sqlite/open.c (SQLite
 * 3.40, WAL). The store is the single source of truth: every state transition
 * of docs/MODEL.md, "Transitions" is ONE conditional statement (or one
 * transaction on SQLite, which serializes writers), never select-then-update.
 * Every report (heartbeat, complete, fail) carries the fencing predicate
 * `status = 'running' AND attempt = $attempt` and answers JOBD_E_STALE when
 * it matched nothing.
 *
 * Layout of the data (both backends; PostgreSQL in schema "jobd"):
 *   jobs       the hot set: pending and running jobs, with the partial
 *              index (queue, priority DESC, run_at, id) WHERE status='pending'
 *              (on PostgreSQL also succeeded jobs until the archive pass,
 *              store_archive, moves them: a completion is one UPDATE there)
 *   jobs_done  terminal jobs (succeeded, dead, cancelled); rows move here in
 *              the same statement/transaction that ends them (or, succeeded
 *              on PostgreSQL, by the archive pass), and back on a manual
 *              retry. A job is readable by id wherever it lives; ids
 *              come from one sequence and are never reused.
 *   job_keys   idempotency_key -> job_id (unique across both tables)
 *   enqueue_keys  debounce and unique keys -> job_id (pg/enqkeys.c)
 *   queues     name -> paused
 *   schedules  cron templates (see the schedule section below)
 *
 * Threading: a struct store is one connection; use it from one thread at a
 * time. Open one per thread. Functions return enum jobd_err (0 = OK) and,
 * on error, fill err (which may be NULL). Out-structs are caller-provided;
 * strings placed in them are heap-owned by the caller afterwards (free with
 * job_fini / job_list_fini / schedule_fini).
 *
 * Time: the store reads "now" from its clock. With no clock set, PostgreSQL
 * uses the database server's now() (one clock for every host, so clock skew
 * between workers cannot expire a lease early) and SQLite the local real
 * clock. Tests set a manual clock with store_set_clock.
 */
#ifndef JOBD_STORE_STORE_H
#define JOBD_STORE_STORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/job.h"
#include "core/traceparent.h"
#include "core/schedule.h"
#include "jobd.h"
#include "util/clock.h"

struct store;
struct store_operator_ops;
struct progress_report;
struct attempt_log;
struct attempt_log_size;
struct events_head;
struct store_event;
struct workflow;
struct workflow_spec;
struct workflow_plan;
struct workflow_add;
struct workflow_change;

/*
 * Which jobs a list returns. Zero-initialise, then set status: 0 is
 * JOB_PENDING, so a filter for any status must say STORE_ANY explicitly.
 */
#define STORE_ANY (-1)
struct job_filter {
    int status;                /* enum job_status or STORE_ANY */
    const char *queue;         /* NULL = any */
    const char *type;          /* NULL = any */
    const char *schedule;      /* NULL = any */
    int limit;                 /* 1..JOB_PAGE_MAX; 0 = JOB_PAGE_DEFAULT */
    int64_t before_id;         /* cursor: only ids < before_id; 0 = from the newest */
    int64_t created_after_us;  /* only created_at >= this; 0 = any */
    int64_t created_before_us; /* only created_at < this; 0 = any */
    const char *key;           /* exact idempotency key; NULL = any */
    /* Exact group (docs/MODEL.md, Groups); NULL = any. Read by store_list and
     * store_search only: the bulk actions (struct bulk_req) ignore it. */
    const char *group;
    /* Pending jobs by when they may run (docs/API.md, Jobs): JOB_DUE_ANY,
     * JOB_DUE_NOW (run_at <= now) or JOB_DUE_LATER (run_at > now). Either of
     * the last two lists pending jobs only: store_list takes status STORE_ANY
     * as pending and refuses any other status. */
    int due;
    /* store_search only: jobs whose type, idempotency key, payload or last
     * error contain this text, ASCII letters in either case. */
    const char *search;
    int scan; /* store_search: examine at most this many; 0 = JOB_SEARCH_SCAN_DEFAULT */
};
enum { JOB_DUE_ANY = 0, JOB_DUE_NOW = 1, JOB_DUE_LATER = 2 };

/*
 * One page of a list ordered by name, bytewise (schedules by name, workers by
 * id): the rows whose name sorts after `after`. Pointers borrowed.
 */
struct name_page {
    const char *after; /* NULL = from the first */
    int limit;         /* at most this many rows; 0 = every row */
    bool payload;      /* schedules: read the payload (else it is NULL) */
};

/* A claim request. Pointers borrowed for the call. */
struct claim_req {
    const char *worker_id;
    const char *const *queues; /* n_queues names, or NULL = every queue */
    size_t n_queues;
    const char *const *types; /* n_types names, or NULL = every type */
    size_t n_types;
    int limit;        /* 1..JOB_PAGE_MAX */
    int64_t lease_ms; /* 0 = JOB_DEFAULT_LEASE_MS (store_claim applies it) */
    /* With caps.claim_waits: when nothing is claimable, wait up to this
     * long for a job before answering empty (0 = answer at once). Other
     * backends ignore it. While it waits, a true *interrupt (may be NULL;
     * borrowed) ends the wait at once with no jobs, and so does a true
     * *interrupt_also (a worker's cancel hint: it heartbeats at once). */
    int wait_ms;
    const atomic_bool *interrupt;
    const atomic_bool *interrupt_also;
    /* Out, may be NULL: 0, or when a queue limit (operator.h) held back a
     * due job of this request, the soonest instant (store clock, us) it may
     * let one go; see store_claim_timer. */
    int64_t *held_until_us;
    /* Out, may be NULL: 0, or, from a backend that knows it better than
     * "when the claim was sent + lease_ms", the monotonic instant
     * (clock_mono_now_us) until which the claimed jobs' leases surely run.
     * The remote store does: the server says how long it held the claim
     * and how much lease it left (docs/API.md, POST /v1/claim), so a long
     * poll does not count against the lease. */
    int64_t *lease_end_us;
    /* The caller only runs the jobs (a worker loop): the store may fill
     * only what a run needs (id, queue, type, payload, priority, run_at_us,
     * attempt, attempt_floor, idempotency_key, scheduled_for_us, timeout_ms,
     * started_at_us; status JOB_RUNNING) and leave the rest zero or NULL.
     * PostgreSQL does, for the claim by types (a worker's): less to convert
     * and send per row; the other backends fill every field anyway. */
    bool run_only;
};

/* One finished attempt for store_complete_batch. Pointers borrowed. */
struct completion {
    int64_t id;
    int32_t attempt;
    const char *result; /* JSON text or NULL */
};

/* One failed attempt for store_fail_batch. Pointers borrowed. */
struct fail_report {
    int64_t id;
    int32_t attempt;
    const char *error; /* NULL or text, cleaned and cut as store_fail does */
    bool retryable;
    int64_t retry_delay_ms; /* < 0 is taken as 0 */
};

/* Backoff parameters the reaper uses for a reaped attempt (full jitter). */
struct backoff_policy {
    int64_t base_ms; /* 0 = JOB_DEFAULT_BACKOFF_BASE_MS */
    int64_t cap_ms;  /* 0 = JOB_DEFAULT_BACKOFF_CAP_MS */
};

/* A lease the reaper took back (store_reap_jobs), for its log line. */
struct reaped_job {
    int64_t id;
    int32_t attempt;     /* the attempt whose lease expired */
    enum job_status now; /* pending (retried), dead or cancelled */
    char type[JOB_NAME_MAX + 1];
    char queue[JOB_QUEUE_MAX + 1];
    char worker_id[JOB_WORKER_ID_MAX + 1]; /* "" if none was recorded */
    char traceparent[TRACEPARENT_LEN + 1]; /* the job's, "" if none (its log line's trace id) */
};

/* Per-queue counts (GET /v1/queues). */
struct queue_stat {
    char name[JOB_QUEUE_MAX + 1];
    bool paused;
    int64_t count[JOB_STATUS_COUNT]; /* indexed by enum job_status */
    bool any_due;                    /* a pending job is due (run_at <= now) */
    double oldest_pending_age_s;     /* its age past run_at; 0 if !any_due */
    int32_t max_running;             /* queue limits (operator.h); 0 = none */
    int32_t rate_limit;              /* 0 = none */
    int64_t rate_per_ms;
    int32_t group_max_running; /* limits per group (docs/MODEL.md, Groups); 0 = none */
    int32_t group_rate_limit;  /* 0 = none */
    int64_t group_rate_per_ms;
    struct {
        int64_t succeeded, failed, dead;
    } throughput_1m; /* store/stats.h */
};

/*
 * What differs between backends, for callers to act on (store_caps()):
 * nobody outside src/store compares backend names or URL prefixes.
 */
struct store_caps {
    /* store_wait on any connection reports other processes' enqueues
     * (PostgreSQL NOTIFY), and store_wait(0) drains them cheaply. Without
     * it, only store_wait_ready tells whether a cross-process signal exists. */
    bool push_wakeups;
    /* A second connection writes without queueing behind the first, so a
     * worker gains by writing completions on a connection of its own. */
    bool parallel_writers;
    /* store_claim honours claim_req.wait_ms: it waits for a job (long poll). */
    bool claim_waits;
    /* A worker's safety-net poll (ms) when a wake-up source watches the
     * store, and when nothing does (no push, no watch, no in-process signal).
     * PostgreSQL 5 s / 1 s: NOTIFY wakes it, the poll only covers a lost
     * notification; without a listener the poll is the wake-up, one cheap
     * query a second. SQLite 1 s / 100 ms: inotify on the WAL (or the
     * in-process signal) wakes it; without either, 100 ms is the latency
     * docs/WORKER.md promises. The API server 250 ms: nothing is pushed over
     * HTTP, so the poll is the wake-up, four cheap requests a second. */
    int watched_poll_ms;
    int blind_poll_ms;
    /* For people: "PostgreSQL", "SQLite", "the API server". */
    const char *label;
};

/* ---- the backend vtable (implementations only; callers use store_*()) ---- */
struct store_ops {
    const char *name; /* "pg", "sqlite" or "remote": for messages and tests only */
    struct store_caps caps;
    void (*close)(struct store *st);
    int (*migrate)(struct store *st, struct jobd_error *err);
    /* NULL: the backend has no schema of its own (the remote store). */
    int (*schema_status)(struct store *st, int *current, int *newest, struct jobd_error *err);
    const char *(*migration_name)(int version); /* NULL or returning NULL: unnamed */
    int (*ping)(struct store *st, struct jobd_error *err);
    int (*enqueue)(struct store *st, const struct job_spec *spec, struct job *out, bool *replayed,
                   struct jobd_error *err);
    int (*enqueue_batch)(struct store *st, const struct job_spec *specs, size_t n, struct job *out,
                         bool *replayed, struct jobd_error *err);
    int (*get)(struct store *st, int64_t id, struct job *out, struct jobd_error *err);
    int (*list)(struct store *st, const struct job_filter *f, struct job_list *out,
                int64_t *next_cursor, struct jobd_error *err);
    /* NULL: the backend cannot search (the remote store). */
    int (*search)(struct store *st, const struct job_filter *f, struct job_list *out,
                  int64_t *next_cursor, bool *partial, struct jobd_error *err);
    int (*claim)(struct store *st, const struct claim_req *req, struct job_list *out,
                 struct jobd_error *err);
    int (*heartbeat)(struct store *st, int64_t id, int32_t attempt, int64_t lease_ms,
                     int64_t *lease_expires_at_us, bool *cancel_requested, struct jobd_error *err);
    int (*complete)(struct store *st, int64_t id, int32_t attempt, const char *result,
                    struct job *out, struct jobd_error *err);
    int (*complete_batch)(struct store *st, const struct completion *c, size_t n, int *outcome,
                          struct jobd_error *err);
    /* retry_delay_ms < 0: bp's delay (NULL: the defaults) over the attempts
     * counted, read in the transaction that writes the failure */
    int (*fail)(struct store *st, int64_t id, int32_t attempt, const char *error, bool retryable,
                int64_t retry_delay_ms, const struct backoff_policy *bp, struct job *out,
                struct jobd_error *err);
    /* NULL: store_fail_batch sends one store_fail per report (remote) */
    int (*fail_batch)(struct store *st, const struct fail_report *f, size_t n, int *outcome,
                      enum job_status *status, struct jobd_error *err);
    /* out: NULL, or room for cap entries (store_reap_jobs) */
    int (*reap)(struct store *st, int limit, const struct backoff_policy *bp,
                struct reaped_job *out, size_t cap, int *reaped, struct jobd_error *err);
    /* NULL in a backend that cannot give an attempt back (store_release fails) */
    int (*release)(struct store *st, int64_t id, int32_t attempt, struct jobd_error *err);
    int (*cancel)(struct store *st, int64_t id, struct job *out, struct jobd_error *err);
    int (*retry)(struct store *st, int64_t id, struct job *out, struct jobd_error *err);
    int (*queue_pause)(struct store *st, const char *queue, bool paused, struct jobd_error *err);
    int (*queue_stats)(struct store *st, struct queue_stat **out, size_t *n,
                       struct jobd_error *err);
    int (*prune)(struct store *st, int64_t finished_before_us, int limit, int *deleted,
                 struct jobd_error *err);
    int (*next_run_at)(struct store *st, const struct claim_req *req, int64_t *run_at_us,
                       struct jobd_error *err);
    int (*wait)(struct store *st, int timeout_ms, struct jobd_error *err);
    /* NULL: store_wait only naps (remote) */
    bool (*wait_ready)(struct store *st);
    /* NULL: nothing to move off the caller's thread (store_offload) */
    void (*offload)(struct store *st);
    /* schedules (sqlite/sched.c, pg/sched.c); NULL in a backend without them */
    int (*schedule_put)(struct store *st, const struct schedule_spec *spec, bool replace,
                        int64_t max_schedules, struct schedule *out, bool *created,
                        struct jobd_error *err);
    int (*schedule_get)(struct store *st, const char *name, struct schedule *out,
                        struct jobd_error *err);
    int (*schedule_list)(struct store *st, const struct name_page *pg, struct schedule_list *out,
                         struct jobd_error *err);
    int (*schedule_delete)(struct store *st, const char *name, struct jobd_error *err);
    int (*schedule_pause)(struct store *st, const char *name, bool paused, struct schedule *out,
                          struct jobd_error *err);
    int (*schedule_trigger)(struct store *st, const char *name, struct job *out,
                            struct jobd_error *err);
    int (*schedule_materialize)(struct store *st, int limit, int64_t grace_us, int *made,
                                int64_t *soonest_us, struct jobd_error *err);
    /* clock jumps (sqlite/clockjump.c, pg/clockjump.c). now: NULL = the real clock;
     * clock_went_back: NULL where no scheduling plane runs */
    int (*now)(struct store *st, int64_t *now_us, struct jobd_error *err);
    int (*clock_went_back)(struct store *st, int64_t back_us, int *jobs, int *schedules,
                           struct jobd_error *err);
    /* the operator's operations (store/operator.h); NULL in a backend without them */
    const struct store_operator_ops *oper;
    /* waiting for results (store_job_states, store_wait_ends); NULL in a
     * backend without them (remote). wait_ends NULL: store_wait serves.
     * job_states gets its ids ascending, each once (store_ids_find). */
    int (*job_states)(struct store *st, const int64_t *ids, size_t n, int *status,
                      struct jobd_error *err);
    int (*wait_ends)(struct store *st, int timeout_ms, struct jobd_error *err);
    /* which running jobs have a cancel requested (store_cancels_requested);
     * NULL in a backend without it (remote) */
    int (*cancels_requested)(struct store *st, const int64_t *ids, size_t n, bool *requested,
                             struct jobd_error *err);
    /* progress (store/progress.h): validated arguments; NULL in a backend
     * without it (attach: the remote store, which only reports) */
    int (*progress)(struct store *st, int64_t id, int32_t attempt, const struct progress_report *p,
                    int64_t lease_ms, int64_t *lease_expires_at_us, bool *cancel_requested,
                    struct jobd_error *err);
    int (*progress_attach)(struct store *st, struct job *v, size_t n, struct jobd_error *err);
    /* parents as the job object shows them (store/deps.h); NULL in a backend
     * without dependencies (remote) */
    int (*deps_attach)(struct store *st, struct job *v, size_t n, struct jobd_error *err);
    /* claimed jobs' parents for their handlers (job.parents, store/deps.h);
     * NULL in a backend that fills them itself (remote) */
    int (*parents_attach)(struct store *st, struct job *v, size_t n, struct jobd_error *err);
    /* attempt logs (store/attemptlog.h): validated arguments; NULL in a backend
     * without them (get: the remote store, which only writes) */
    int (*attempt_logs_put)(struct store *st, const struct attempt_log *v, size_t n, int *outcome,
                            struct jobd_error *err);
    int (*attempt_log_get)(struct store *st, int64_t id, int32_t attempt, char **text,
                           struct jobd_error *err);
    int (*attempt_log_sizes)(struct store *st, int64_t id, struct attempt_log_size **out, size_t *n,
                             struct jobd_error *err);
    /* the event log (store/events.h); NULL in a backend without it (remote) */
    int (*events_listen)(struct store *st, struct events_head *head, struct jobd_error *err);
    int (*events_head)(struct store *st, struct events_head *head, struct jobd_error *err);
    int (*events_read)(struct store *st, int64_t after, int64_t upto, int limit,
                       struct store_event **out, size_t *n, struct jobd_error *err);
    int (*events_resumable)(struct store *st, int64_t after, bool *ok, struct jobd_error *err);
    /* workflows (store/workflow.h): spec checked and planned; NULL in a
     * backend without them (remote) */
    int (*workflow_submit)(struct store *st, const struct workflow_spec *spec,
                           const struct workflow_plan *plan, int64_t *id, int64_t *job_ids,
                           bool *replayed, struct jobd_error *err);
    int (*workflow_get)(struct store *st, int64_t id, struct workflow *out, struct jobd_error *err);
    /* at most limit workflow ids, newest first, below before_id (0 = any),
     * of that name (NULL = any), into ids (room for limit) */
    int (*workflow_ids)(struct store *st, const char *name, int64_t before_id, int limit,
                        int64_t *ids, size_t *n, struct jobd_error *err);
    /* store/workflow_ops.c: steps checked (job specs); retry: the dead and
     * cancelled steps' job ids, parents first; NULL without workflows */
    int (*workflow_add)(struct store *st, int64_t id, const struct workflow_add *add,
                        int64_t *job_ids, struct jobd_error *err);
    int (*workflow_cancel)(struct store *st, int64_t id, struct workflow_change *c,
                           struct jobd_error *err);
    int (*workflow_retry)(struct store *st, int64_t id, const int64_t *ids, size_t n,
                          struct workflow_change *c, struct jobd_error *err);
    int (*workflow_delete)(struct store *st, int64_t id, struct jobd_error *err);
};

/* Every backend's struct begins with this. */
struct store {
    const struct store_ops *ops;
    const struct jobd_clock *clock; /* NULL = the backend's own (see above) */
};

/* ---- opening ---- */

/* What a URL names, without opening it. */
enum store_url_kind {
    STORE_URL_INVALID,  /* a scheme no backend knows, or empty */
    STORE_URL_DATABASE, /* postgres://, postgresql://, sqlite:PATH or a plain path */
    STORE_URL_SERVER,   /* http:// or https://: a jobd API server (remote/internal.h) */
};
enum store_url_kind store_url_kind(const char *url);
/*
 * Whether url names a backend that can deliver push wake-ups on a session of
 * its own (PostgreSQL's LISTEN): what --notify-db / notify_db must name.
 */
bool store_url_notifies(const char *url);

/*
 * Opens a store by URL: "postgres://…" / "postgresql://…" (libpq URI),
 * "sqlite:PATH" / a plain path, or "http://…" / "https://…" (a jobd API
 * server speaking the worker protocol: only the worker's operations work
 * there, the others answer JOBD_E_INVALID; see remote/internal.h). Does not migrate. On success *out is owned
 * by the caller (store_close). JOBD_E_UNAVAILABLE if the server does not
 * answer, JOBD_E_STORE if the file is not a database, JOBD_E_INVALID for a
 * URL that names no backend.
 */
JOBD_MUST_USE int store_open(const char *url, struct store **out, struct jobd_error *err);
/* Closes and frees. NULL-safe. */
void store_close(struct store *st);
/* Uses clock for "now" from here on (borrowed; must outlive st). NULL = own. */
void store_set_clock(struct store *st, const struct jobd_clock *clock);
/* "pg", "sqlite" or "remote" (messages and tests; decide by store_caps). */
const char *store_backend(const struct store *st);
/*
 * True if rc says the store could not be asked (connection lost, server
 * down, out of memory) or could not confirm a commit (JOBD_E_COMMIT_UNKNOWN:
 * a report sent again then finds the job moved on, JOBD_E_STALE): the same
 * request may work after a reconnect. Any
 * other error is the store refusing this request (its content, a rule):
 * sending it again unchanged will fail again, so callers must not loop on it.
 */
static inline bool
store_error_is_outage(int rc)
{
    return rc == JOBD_E_UNAVAILABLE || rc == JOBD_E_IO || rc == JOBD_E_NOMEM ||
           rc == JOBD_E_COMMIT_UNKNOWN;
}
/* The backend's capabilities (static; never NULL). */
const struct store_caps *store_caps(const struct store *st);

/*
 * url with its password replaced by "***" (the user:PASSWORD@ of a URI and
 * any password= parameter), for messages and logs; other URLs unchanged.
 * Writes into buf (len bytes, truncated if short) and returns buf.
 */
const char *store_url_redact(const char *url, char *buf, size_t len);

/* Creates or upgrades the schema; safe when several processes run it at once. */
JOBD_MUST_USE int store_migrate(struct store *st, struct jobd_error *err);
/*
 * Reads, changing nothing, the schema version the store is at (*current;
 * 0 when it was never migrated) and the newest this jobd knows (*newest),
 * for `jobd migrate --status`. JOBD_E_INVALID for a backend without a
 * schema of its own.
 */
JOBD_MUST_USE int store_schema_status(struct store *st, int *current, int *newest,
                                      struct jobd_error *err);
/* The name of migration step version (static), or NULL when unnamed or unknown. */
const char *store_migration_name(const struct store *st, int version);
/* Checks that the store answers (GET /healthz). */
JOBD_MUST_USE int store_ping(struct store *st, struct jobd_error *err);

/* ---- jobs ---- */

/*
 * Enqueues one job (validated with job_spec_validate first). With an
 * idempotency key already used: the same type, queue and payload -> *replayed
 * = true and *out is the existing job; anything else -> JOBD_E_CONFLICT.
 * With spec->debounce (docs/MODEL.md, Debounce and unique windows): a
 * pending job of the same type and queue holding the key is replaced in
 * place (payload, priority, run_at = now + for) -> *replayed = true and *out
 * is that job; otherwise a job due at now + for is made. With spec->unique:
 * inside the window of the job holding the key -> *replayed = true and *out
 * is that job, whatever its status; otherwise a job is made and opens a new
 * window. Either is exactly once under concurrent enqueues of one key.
 * out may be NULL. replayed may be NULL. JOBD_E_UNAVAILABLE means nothing
 * was written. When the connection broke after COMMIT was sent, PostgreSQL
 * asks the server how it ended (pg/tx.c): written -> JOBD_OK,
 * not -> JOBD_E_UNAVAILABLE, and only if that cannot be learned
 * JOBD_E_COMMIT_UNKNOWN (docs/API.md, Errors). SQLite has no such case.
 */
JOBD_MUST_USE int store_enqueue(struct store *st, const struct job_spec *spec, struct job *out,
                                bool *replayed, struct jobd_error *err);
/*
 * Enqueues n jobs, all or nothing. out (NULL or an array of n zeroed jobs)
 * receives them in order; replayed (NULL or n bools) marks idempotent
 * replays. An invalid or conflicting item fails the whole batch and err
 * names it ("jobs[3].type"). Outage errors as store_enqueue.
 */
JOBD_MUST_USE int store_enqueue_batch(struct store *st, const struct job_spec *specs, size_t n,
                                      struct job *out, bool *replayed, struct jobd_error *err);
/* Reads one job by id, wherever it lives. JOBD_E_NOTFOUND. */
JOBD_MUST_USE int store_get(struct store *st, int64_t id, struct job *out, struct jobd_error *err);
/*
 * Lists jobs newest first (id descending) matching f. *next_cursor is the
 * before_id for the next page, or 0 when there is none.
 */
JOBD_MUST_USE int store_list(struct store *st, const struct job_filter *f, struct job_list *out,
                             int64_t *next_cursor, struct jobd_error *err);

/*
 * A search: of the newest f->scan jobs (0: JOB_SEARCH_SCAN_DEFAULT) that
 * match f's other filters from f->before_id down, those containing
 * f->search (see struct job_filter), newest first, at most f->limit. When
 * the budget ran out before the page was full and older jobs remain,
 * *partial is true and *next_cursor is where the scan stopped; otherwise as
 * store_list. docs/API.md, Search. JOBD_E_INVALID for an empty or over-long
 * text or a budget out of 1..JOB_SEARCH_SCAN_MAX.
 */
JOBD_MUST_USE int store_search(struct store *st, const struct job_filter *f, struct job_list *out,
                               int64_t *next_cursor, bool *partial, struct jobd_error *err);

/* ---- the worker protocol ---- */

/*
 * Claims up to req->limit due jobs (run_at <= now, queue not paused, of the
 * given queues and types) in order priority DESC, run_at, id: each becomes
 * running with attempt + 1, worker_id, lease_expires_at = now + lease,
 * started_at = now. Appends them to out in claim order. Never hands one job
 * to two claimers (SKIP LOCKED on PostgreSQL, BEGIN IMMEDIATE on SQLite).
 */
JOBD_MUST_USE int store_claim(struct store *st, const struct claim_req *req, struct job_list *out,
                              struct jobd_error *err);
/*
 * When a claimer should look again, from store_next_run_at's answer and the
 * claim's *held_until_us (both store clock, 0 = none) at now_us: a held-back
 * job is due already, so a next_run_at at or before now is the held job and
 * waits for held_until; otherwise the sooner of the two. 0 = nothing to wait for.
 */
int64_t store_claim_timer(int64_t next_run_at_us, int64_t held_until_us, int64_t now_us);
/*
 * Extends the lease of a running attempt to now + lease_ms and tells whether
 * a cancel was requested. JOBD_E_STALE if the job is not running with that
 * attempt (or does not exist).
 */
JOBD_MUST_USE int store_heartbeat(struct store *st, int64_t id, int32_t attempt, int64_t lease_ms,
                                  int64_t *lease_expires_at_us, bool *cancel_requested,
                                  struct jobd_error *err);
/* running -> succeeded with result (JSON or NULL). JOBD_E_STALE. out may be NULL. */
JOBD_MUST_USE int store_complete(struct store *st, int64_t id, int32_t attempt, const char *result,
                                 struct job *out, struct jobd_error *err);
/*
 * Completes n attempts in one statement. outcome[i] is JOBD_OK or
 * JOBD_E_STALE. Returns an error only if the whole statement failed.
 */
JOBD_MUST_USE int store_complete_batch(struct store *st, const struct completion *c, size_t n,
                                       int *outcome, struct jobd_error *err);
/*
 * A failed attempt. If a cancel was requested -> cancelled. Else if
 * retryable and the job has attempts left (attempt - attempts used before the
 * last manual retry < max_attempts) -> pending with run_at = now +
 * retry_delay_ms (< 0 is taken as 0); else -> dead. error (may be NULL) becomes last_error,
 * truncated to its last JOB_ERROR_MAX bytes. JOBD_E_STALE. out may be NULL.
 */
JOBD_MUST_USE int store_fail(struct store *st, int64_t id, int32_t attempt, const char *error,
                             bool retryable, int64_t retry_delay_ms, struct job *out,
                             struct jobd_error *err);
/*
 * store_fail with the delay of the backoff policy bp (NULL: the defaults),
 * as the reaper's (store_reap): full jitter over the attempts counted since
 * the job's last manual retry (job_retry_delay_ms, core/rules.h), with the
 * job's attempt_floor read in the transaction that writes the failure, so a
 * manual retry cannot slip between the read and the write. For a report that
 * names no delay (POST /v1/jobs/{id}/fail without retry_in_s, jobd_fail).
 * The remote store leaves the delay to its server's policy (bp unused).
 */
JOBD_MUST_USE int store_fail_backoff(struct store *st, int64_t id, int32_t attempt,
                                     const char *error, bool retryable,
                                     const struct backoff_policy *bp, struct job *out,
                                     struct jobd_error *err);
/*
 * Fails n attempts as store_fail does each, in one transaction (one commit
 * for the lot: a burst of failures, say a downstream outage, must not cost
 * one fsync per job). outcome[i] is JOBD_OK or JOBD_E_STALE; status (may be
 * NULL) gets each applied report's new status (pending, dead or
 * cancelled). Returns an error only if the batch as a whole failed: then
 * nothing of it was applied, except by a backend without a batch operation
 * (the remote store), where reports before the failing one were, and
 * sending the batch again finds them stale. JOBD_E_NOMEM.
 */
JOBD_MUST_USE int store_fail_batch(struct store *st, const struct fail_report *f, size_t n,
                                   int *outcome, enum job_status *status, struct jobd_error *err);
/*
 * Reaps up to limit running jobs whose lease expired (lease_expires_at < now):
 * each counts as a failed attempt (pending with full-jitter backoff from bp,
 * or dead when out of attempts, or cancelled if a cancel was requested), with
 * last_error "lease expired". *reaped = how many.
 */
JOBD_MUST_USE int store_reap(struct store *st, int limit, const struct backoff_policy *bp,
                             int *reaped, struct jobd_error *err);
/*
 * store_reap that also says which leases it took back: out (caller-owned,
 * cap entries) receives the first min(cap, *reaped) of them.
 */
JOBD_MUST_USE int store_reap_jobs(struct store *st, int limit, const struct backoff_policy *bp,
                                  struct reaped_job *out, size_t cap, int *reaped,
                                  struct jobd_error *err);

/*
 * Gives a running attempt back unused: running -> pending, due now, with
 * worker_id and lease cleared, and the attempt not counted against
 * max_attempts (attempt_floor + 1; attempt itself never decreases, it stays
 * the fencing token, so the next claim is attempt + 1). For a worker that
 * claimed a job it cannot start (its handler failed to launch) or a long
 * poll whose client left before receiving it. A job with a cancel requested
 * becomes cancelled instead. Guard: status = running AND attempt = attempt;
 * JOBD_E_STALE otherwise (also for a job that does not exist).
 */
JOBD_MUST_USE int store_release(struct store *st, int64_t id, int32_t attempt,
                                struct jobd_error *err);

/* ---- operator actions ---- */

/*
 * pending -> cancelled (out->status = cancelled); running -> cancel requested
 * (out->status stays running, out->cancel_requested = true); out may be NULL. JOBD_E_STATE if
 * terminal, JOBD_E_NOTFOUND.
 */
JOBD_MUST_USE int store_cancel(struct store *st, int64_t id, struct job *out,
                               struct jobd_error *err);
/*
 * dead / cancelled -> pending, due now, with max_attempts fresh attempts (out may be NULL);
 * attempt is kept (never decreases). JOBD_E_STATE otherwise, JOBD_E_NOTFOUND.
 */
JOBD_MUST_USE int store_retry(struct store *st, int64_t id, struct job *out,
                              struct jobd_error *err);
/* Pauses or resumes a queue (it need not have jobs yet). */
JOBD_MUST_USE int store_queue_pause(struct store *st, const char *queue, bool paused,
                                    struct jobd_error *err);
/*
 * Counts per queue (every queue with jobs or a paused flag), sorted by name.
 * *out is a malloc'd array of *n, owned by the caller (free()).
 */
JOBD_MUST_USE int store_queue_stats(struct store *st, struct queue_stat **out, size_t *n,
                                    struct jobd_error *err);
/* Deletes up to limit terminal jobs finished before the cutoff. */
JOBD_MUST_USE int store_prune(struct store *st, int64_t finished_before_us, int limit, int *deleted,
                              struct jobd_error *err);

/* ---- wake-ups ---- */

/*
 * The soonest run_at of a pending job that req could claim (queues, types),
 * or 0 if there is none. For a worker's timer.
 */
JOBD_MUST_USE int store_next_run_at(struct store *st, const struct claim_req *req,
                                    int64_t *run_at_us, struct jobd_error *err);
/*
 * Waits up to timeout_ms for a sign that new jobs may be claimable, or that
 * a cancel of a running job was requested. Returns a positive set of
 * STORE_WAKE_* bits if woken, 0 on timeout, or an error (the caller
 * reopens the store). PostgreSQL: NOTIFY jobd_jobs, sent by every enqueue
 * and retry (STORE_WAKE_JOBS), and jobd_cancel, sent when a running job's
 * cancel_requested is set (STORE_WAKE_CANCEL). SQLite: any commit by any
 * process, seen by inotify on the database's WAL (sqlite/wake.c; spurious
 * wake-ups included — a heartbeat, a completion), is STORE_WAKE_JOBS, and
 * STORE_WAKE_CANCEL too when the set of running jobs with a cancel requested
 * changed since the last wait (one read of a partial index); where inotify
 * is unavailable it sleeps min(timeout_ms, 50) and returns STORE_WAKE_JOBS,
 * and store_wait_ready says so beforehand. A worker heartbeats the jobs it
 * holds on STORE_WAKE_CANCEL, and so hears of a cancel at once
 * (docs/WORKER.md, Cancellation).
 */
#define STORE_WAKE_JOBS 1
#define STORE_WAKE_CANCEL 2
int store_wait(struct store *st, int timeout_ms, struct jobd_error *err);
/*
 * The status of each of n jobs by id, in one query: status[i] (caller's
 * array of n) becomes the enum job_status of ids[i], or -1 when no such job
 * exists (never made, or pruned). For a thread that answers waiting
 * requests (docs/API.md, Waiting for a result): it asks once per wake-up
 * about every job waited for. JOBD_E_INVALID for a backend without it.
 */
JOBD_MUST_USE int store_job_states(struct store *st, const int64_t *ids, size_t n, int *status,
                                   struct jobd_error *err);
/*
 * The index of id in ids[0..n), which is ascending; SIZE_MAX when it is not
 * there. For backends placing the rows they read (job_states).
 */
size_t store_ids_find(const int64_t *ids, size_t n, int64_t id);
/*
 * Of n jobs by id, which are running with a cancel requested, in one
 * query: requested[i] (caller's array of n) says it of ids[i] (false for a
 * job that is not running, has no cancel requested, or does not exist).
 * For the parked cancel requests of remote workers (docs/WORKER.md,
 * Cancellation). JOBD_E_INVALID for a backend without it.
 */
JOBD_MUST_USE int store_cancels_requested(struct store *st, const int64_t *ids, size_t n,
                                          bool *requested, struct jobd_error *err);
/*
 * store_wait for ends of jobs instead of new work: waits up to timeout_ms
 * for a sign that a job may have become terminal (succeeded, dead,
 * cancelled). PostgreSQL: NOTIFY jobd_done, sent once by each transaction
 * that ends jobs (a completion statement itself; every other end moves a
 * row into jobs_done, whose statement trigger notifies: schema version
 * 18). SQLite: any commit, as store_wait. Returns as store_wait. Use a
 * connection for one of the two only: each LISTENs to its own channel and
 * drains every notification.
 */
int store_wait_ends(struct store *st, int timeout_ms, struct jobd_error *err);
/*
 * Sets up what store_wait needs on st (SQLite: the WAL watch) and returns
 * true if store_wait will block until a real cross-process signal, false if
 * it can only nap (then poll instead). Cheap to call again.
 */
bool store_wait_ready(struct store *st);
/*
 * Says st is a worker loop's connection, whose claims should not wait for
 * housekeeping: the backend moves what it can off the caller's thread
 * (SQLite: WAL checkpoints, to a thread of st's own: sqlite/ckpt.h). Call
 * once after store_open; a no-op where there is nothing to move.
 */
void store_offload(struct store *st);

/* ---- schedules ----
 *
 * Table "schedules": name (primary key), cron, timezone, type, payload,
 * queue, priority, max_attempts, catchup, paused, next_run_at (the first
 * firing not yet materialized), last_fired_at, created_at. Jobs made by a
 * schedule carry schedule = its name and scheduled_for = the firing, unique
 * per (schedule, scheduled_for). Out-structs are caller-owned (schedule_fini,
 * schedule_list_fini, job_fini).
 */

/*
 * Creates the schedule (spec validated with schedule_spec_validate) or, with
 * replace, replaces its definition (created_at, paused and last_fired_at
 * stay). next_run_at becomes the first firing after now, except when a
 * replace keeps the cron expression and the time zone: then it stays, so
 * re-applying a definition (a deploy script) neither skips nor repeats a
 * firing that is due but not yet made. Without replace an
 * existing name is JOBD_E_CONFLICT. *created (may be NULL) tells which
 * happened; out may be NULL.
 */
JOBD_MUST_USE int store_schedule_put(struct store *st, const struct schedule_spec *spec,
                                     bool replace, struct schedule *out, bool *created,
                                     struct jobd_error *err);
/*
 * store_schedule_put, refusing a new name while max_schedules (> 0; 0 = no
 * cap) schedules exist: JOBD_E_CONFLICT with field "max_schedules" (a
 * replace of an existing name is always allowed). The count and the insert
 * are one transaction, serialized with other capped puts, so the cap holds
 * exactly whatever the number of servers.
 */
JOBD_MUST_USE int store_schedule_put_capped(struct store *st, const struct schedule_spec *spec,
                                            bool replace, int64_t max_schedules,
                                            struct schedule *out, bool *created,
                                            struct jobd_error *err);
/* Reads one schedule. JOBD_E_NOTFOUND. */
JOBD_MUST_USE int store_schedule_get(struct store *st, const char *name, struct schedule *out,
                                     struct jobd_error *err);
/* Every schedule, by name, with its payload. */
JOBD_MUST_USE int store_schedule_list(struct store *st, struct schedule_list *out,
                                      struct jobd_error *err);
/* One page of the schedules, by name (bytewise); out as store_schedule_list. */
JOBD_MUST_USE int store_schedule_page(struct store *st, const struct name_page *pg,
                                      struct schedule_list *out, struct jobd_error *err);
/* Deletes a schedule; the jobs it made stay. JOBD_E_NOTFOUND. */
JOBD_MUST_USE int store_schedule_delete(struct store *st, const char *name, struct jobd_error *err);
/*
 * Pauses or resumes. A paused schedule makes no jobs; resuming sets
 * next_run_at to the first firing after now (firings while paused are not
 * caught up). out may be NULL. JOBD_E_NOTFOUND.
 */
JOBD_MUST_USE int store_schedule_pause(struct store *st, const char *name, bool paused,
                                       struct schedule *out, struct jobd_error *err);
/*
 * Makes one job from the schedule now (scheduled_for = now, due now), paused
 * or not, without moving next_run_at. out may be NULL. JOBD_E_NOTFOUND.
 */
JOBD_MUST_USE int store_schedule_trigger(struct store *st, const char *name, struct job *out,
                                         struct jobd_error *err);
/*
 * The materializer: takes up to limit due schedules (not paused,
 * next_run_at <= now) that no other scheduler holds (SKIP LOCKED on
 * PostgreSQL), and for each, in one transaction, inserts the jobs that
 * schedule_plan decides and advances next_run_at and last_fired_at. Any
 * number of processes may run it at once; a firing becomes a job at most
 * once. grace_us: 0 for the plain catch-up rule (a firing more than
 * SCHEDULE_GRACE_US overdue is missed), as after an outage; a running plane
 * passes the time since its previous pass, to which the store adds the time
 * it waited before it read its clock (a lock, a slow round trip): what fell
 * due meanwhile is late, not missed. *made (may be NULL) = jobs inserted;
 * *soonest_us (may be NULL) = the smallest next_run_at of any unpaused
 * schedule afterwards, 0 if none.
 */
JOBD_MUST_USE int store_schedule_materialize(struct store *st, int limit, int64_t grace_us,
                                             int *made, int64_t *soonest_us,
                                             struct jobd_error *err);

/* ---- clock jumps ----
 *
 * Due times are wall-clock instants: run_at, next_run_at, lease_expires_at.
 * When the clock the store reads jumps forward, what fell due meanwhile is
 * simply late (schedules follow their catch-up policy). When it jumps back,
 * those instants would wait for the clock to pass them again, so the
 * scheduling plane notices (its "now" fell behind the monotonic clock) and
 * calls store_clock_went_back.
 */

/* The store's "now": its clock, else PostgreSQL's now(), else real time. */
JOBD_MUST_USE int store_now(struct store *st, int64_t *now_us, struct jobd_error *err);
/*
 * Re-evaluates due times after the store's clock went back by back_us (>= 0),
 * in one transaction at now: pending jobs that were already due by the old
 * clock (now < run_at <= now + back_us) become due now; leases still running
 * end back_us sooner (not before now), so they keep the length they were
 * given; and every unpaused schedule whose next_run_at lies beyond its first
 * firing after now gets that firing (a firing that already made a job is
 * not made again: jobs(schedule, scheduled_for) stays unique). back_us = 0
 * does only the schedule part, which is safe at any time. *jobs and
 * *schedules (may be NULL) count the rows changed.
 */
JOBD_MUST_USE int store_clock_went_back(struct store *st, int64_t back_us, int *jobs,
                                        int *schedules, struct jobd_error *err);

#endif
