/*
 * sqlite/internal.h — internals of the SQLite backend, shared by the files
 * that implement it (sqlite/open.c for jobs and queues, sqlite/sched.c for
 * schedules) so they use one connection, one statement cache and one set of
 * helpers. Not for use outside src/store.
 *
 * Conventions: every helper returns enum jobd_err (0 = OK) and fills err;
 * a statement obtained from sq_prepare is owned by the cache (never
 * finalize it) and must be released with sq_reset before the transaction
 * ends. Times are INTEGER microseconds since the epoch; NULL stands for
 * "none" and maps to 0 in the structs.
 */
#ifndef JOBD_STORE_SQLITE_INT_H
#define JOBD_STORE_SQLITE_INT_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "store/qlimits.h"
#include "store/stats_int.h"
#include "store/store.h"

/* Cached prepared statements per connection (claims add a few variants). */
#define SQ_CACHE_MAX 96

struct sq_cached {
    char *sql;          /* owned copy of the text, the cache key */
    sqlite3_stmt *stmt; /* owned; finalized on close or eviction */
};

/* One SQLite connection. Begins with struct store (see store.h). */
struct sqlite_store {
    struct store base;
    sqlite3 *db;
    char *path;            /* owned */
    uint64_t rng;          /* splitmix64 state for backoff and busy-wait jitter */
    int64_t busy_since_us; /* monotonic start of the current wait for a lock */
    int ckpt_frames;       /* WAL size (frames) at this connection's last checkpoint */
    struct sq_ckpt *ckpt;  /* owned; checkpoints off this thread (sqlite/ckpt.h), if any */
    struct sq_wake *wake;  /* owned; store_wait's WAL watch (sqlite/wake.h), if any */
    bool wake_tried;       /* wake was set up, or found unavailable */
    int64_t wake_version;  /* PRAGMA data_version at the last wake-up */
    char cancel_sig[64];   /* sq_cancel_sig at the last wake-up */
    int64_t last_write_us; /* monotonic: the last WAL write seen (0: none pending) */
    bool sync_known;       /* sync_full reflects the connection's PRAGMA synchronous */
    bool sync_full;        /* synchronous=FULL (else NORMAL); see sq_begin_relaxed */
    struct sq_file *file;  /* the file path named at open (sqlite/txn.c); not owned */
    size_t n_cached;
    size_t next_evict; /* round-robin victim once the cache is full */
    struct sq_cached cache[SQ_CACHE_MAX];
    struct qlimits_cache qlim; /* the limited queues (qlimits.h) */
    int64_t groups_forgot_us;  /* monotonic: the last sq_groups_forget of a claim */
    char *group_cursor;        /* the claimed queue's round-robin cursor (qlimits_cursor) */
    struct sq_stats stats;     /* the open transaction's counts (sqlite/stats.c) */
    bool events_on;            /* the last sq_events_hold found the log recording */
    int64_t events_checked_us; /* monotonic: when (0: never) */
};

/* The event log's clock (migration 16's triggers, sqlite/events_rows.c): the
 * real clock in microseconds, as SQLite reads it (to the millisecond). */
#define SQ_EV_NOW "CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)"

/*
 * The columns of a job, in the order sq_row_job reads them. Both "jobs" and
 * "jobs_done" have exactly these columns, so rows move between them with
 * INSERT INTO … (SQ_JOB_COLS) SELECT SQ_JOB_COLS.
 */
#define SQ_JOB_COLS                                                                                \
    "id, queue, type, payload, status, priority, run_at, attempt, max_attempts, "                  \
    "idempotency_key, schedule, scheduled_for, worker_id, lease_expires_at, "                      \
    "timeout_ms, cancel_requested, last_error, result, created_at, started_at, "                   \
    "finished_at, attempt_floor, traceparent, grp"
#define SQ_JOB_NCOLS 24

static inline struct sqlite_store *
sq_of(struct store *st)
{
    return (struct sqlite_store *)st;
}

/* "Now" in microseconds: the store's clock, else the real clock. */
int64_t sq_now(struct sqlite_store *s);

/*
 * Maps a SQLite result code to a jobd error (BUSY/LOCKED/CANTOPEN ->
 * UNAVAILABLE; FULL/IOERR/READONLY -> UNAVAILABLE and the path marked as
 * failing writes; NOMEM -> NOMEM; NOTADB/CORRUPT/other -> STORE) naming
 * what was being done and SQLite's message. Returns the jobd code.
 */
int sq_error(struct sqlite_store *s, int rc, const char *what, struct jobd_error *err);

/*
 * Returns in *out the cached prepared statement for sql (reset, bindings
 * cleared), preparing and caching it on first use. The statement stays
 * owned by the cache.
 */
int sq_prepare(struct sqlite_store *s, const char *sql, sqlite3_stmt **out, struct jobd_error *err);
/* Resets a statement obtained from sq_prepare (releases its read locks). */
void sq_reset(sqlite3_stmt *stmt);

/* Binds text (NULL binds SQL NULL; copied by SQLite). */
int sq_bind_text(sqlite3_stmt *stmt, int i, const char *text);
/* Binds a time or optional number: 0 binds SQL NULL. */
int sq_bind_opt(sqlite3_stmt *stmt, int i, int64_t v);
/* The n ids as a JSON array ("[1,2]"), for statements that read them with
 * json_each(?) so one cached plan serves any n; malloc'd, the caller frees
 * it; NULL when out of memory. */
char *sq_ids_json(const int64_t *ids, size_t n);

/* Steps a statement that returns no rows to completion, then resets it. */
int sq_step_done(struct sqlite_store *s, sqlite3_stmt *stmt, const char *what,
                 struct jobd_error *err);
/*
 * Steps once: 1 = a row is ready, 0 = done (statement reset), or an error
 * (statement reset). Callers reset after reading the row they wanted.
 */
int sq_step_row(struct sqlite_store *s, sqlite3_stmt *stmt, const char *what,
                struct jobd_error *err);

/* Runs one cached statement without parameters or rows (BEGIN, COMMIT, …). */
int sq_exec(struct sqlite_store *s, const char *sql, struct jobd_error *err);
/* Sets PRAGMA synchronous to FULL or NORMAL for the next transaction (cached). */
int sq_set_sync(struct sqlite_store *s, bool full, struct jobd_error *err);
/*
 * BEGIN IMMEDIATE: takes the write lock now (waits up to the busy timeout),
 * with synchronous=FULL, so the commit is durable when it returns.
 */
int sq_begin(struct sqlite_store *s, struct jobd_error *err);
/*
 * The same with synchronous=NORMAL: the commit may be lost with the machine
 * (never with a process). Only for writes whose loss on power failure is
 * harmless because every party to them is lost too (claims, heartbeats).
 */
int sq_begin_relaxed(struct sqlite_store *s, struct jobd_error *err);
/*
 * sqlite/events_rows.c: a batch of claims or of successes writes its own
 * event rows (migration 25; docs/DESIGN.md, Events). Inside the batch's
 * open write transaction, before its statements: sq_events_hold sets
 * *told when the log records (event_log.told set: the triggers leave the
 * batch's claims, or successes, to it). Then, when *told, each job the
 * batch moved goes into a struct sq_tell (sq_tell_add: strings copied; a
 * failure to allocate is remembered), and sq_events_tell writes its rows,
 * one per queue and type (at most SQ_TELL_ROW_MAX jobs: the readers look
 * for an event's row among the 1,024 ids from it), claimed (pending ->
 * running) or succeeded (running -> succeeded), frees the sq_tell and
 * clears told. An error leaves the transaction to roll back.
 */
#define SQ_TELL_ROW_MAX 1024
struct sq_tell_row;
struct sq_tell {
    struct sq_tell_row *v;
    size_t n;
    bool oom;
};
int sq_events_hold(struct sqlite_store *s, bool *told, struct jobd_error *err);
void sq_tell_add(struct sq_tell *t, int64_t id, int32_t attempt, const char *queue,
                 const char *type);
void sq_tell_fini(struct sq_tell *t);
int sq_events_tell(struct sqlite_store *s, bool successes, struct sq_tell *t,
                   struct jobd_error *err);
int sq_commit(struct sqlite_store *s, struct jobd_error *err);
/* Rolls back if a transaction is open; never fails (errors are ignored). */
void sq_rollback(struct sqlite_store *s);

/*
 * Claims (sqlite/read.c) and queue limits (sqlite/qlimits.c). held is
 * the predicate on queues whose jobs are skipped (QLIMITS_HELD_SQ for the
 * ordinary claim). sq_any_due: 1 if a job req could claim is due at now, 0
 * if none, or an error. sq_claim_due: claims up to limit due jobs of req
 * onto out, in the caller's write transaction. sq_qlimits_covers: whether
 * req covers a limited queue (re-reading the cache when stale).
 * sq_qlimits_claim: the limited path, in the claim's write transaction,
 * lowering *left and setting *req->held_until_us. sq_qlimits_fill: the
 * limits of the limited queues among v[0..n). sq_claim_check: the claim's
 * filter is within what one statement binds. sq_op_claim (sqlite/claim.c)
 * uses them all.
 */
int sq_claim_check(const struct claim_req *req, struct jobd_error *err);
int sq_any_due(struct sqlite_store *s, const struct claim_req *req, int64_t now, const char *held,
               struct jobd_error *err);
int sq_claim_due(struct sqlite_store *s, const struct claim_req *req, int limit, int64_t now,
                 const char *held, struct job_list *out, struct jobd_error *err);
int sq_qlimits_covers(struct sqlite_store *s, const struct claim_req *req, bool *covers,
                      struct jobd_error *err);
int sq_qlimits_claim(struct sqlite_store *s, const struct claim_req *req, struct job_list *out,
                     int *left, struct jobd_error *err);
int sq_qlimits_fill(struct sqlite_store *s, struct queue_stat *v, size_t n, struct jobd_error *err);

/*
 * Groups (sqlite/groups.c; docs/DESIGN.md, Groups). sq_groups_noted: a job
 * of group (NULL = none) was just enqueued into queue: marks the queue
 * grouped and notes the group ('' for none, in a grouped queue). sq_groups_claim: the fair claim of grouped queue q, up to n
 * due jobs of req's types onto out, within lim's group limits (NULL =
 * none), in the caller's write transaction; window_us starts lim's
 * group_rate window. sq_groups_forget: forgets q's groups with nothing
 * pending and no running rate window (rate_per_ms 0 = no group_rate), and
 * unmarks q when none of its pending jobs has a group.
 */
int sq_groups_noted(struct sqlite_store *s, const char *queue, const char *group,
                    struct jobd_error *err);
int sq_groups_claim(struct sqlite_store *s, const char *q, const struct claim_req *req, int n,
                    int64_t now, const struct qlimits_row *lim, int64_t window_us,
                    struct job_list *out, struct jobd_error *err);
int sq_groups_forget(struct sqlite_store *s, const char *q, int64_t rate_per_ms, int64_t now,
                     struct jobd_error *err);

/*
 * Tags (sqlite/groups_tag.c; docs/DESIGN.md, Groups, "Tags on SQLite").
 * sq_groups_tag: tags queue q's untagged due jobs and keeps each (group,
 * priority)'s last tag, in the caller's write transaction. sq_groups_untag:
 * clears the tags of q's pending jobs (a queue with group limits is
 * claimed by probes of untagged jobs), likewise. sq_groups_walk: up to n due
 * tagged jobs of q of the JSON array types (NULL = any) in claim order, their
 * ids into the caller's ids (room for n). SQ_GR_NOGROUP_TAGGED(q): an SQL
 * condition, whether queue q's jobs without a group have a tagged pending
 * one. SQ_GR_TAGGED_GROUPS(q): an SQL query, the groups ('' = none) of
 * queue q's tagged pending jobs (a tagged job is in no index in group
 * order: this walks them, for a check of many groups at once).
 */
int sq_groups_tag(struct sqlite_store *s, const char *q, int64_t now, struct jobd_error *err);
int sq_groups_untag(struct sqlite_store *s, const char *q, struct jobd_error *err);
int sq_groups_walk(struct sqlite_store *s, const char *q, int n, int64_t now, const char *types,
                   int64_t *ids, size_t *n_ids, struct jobd_error *err);
#define SQ_GR_NOGROUP_TAGGED(q)                                                                    \
    "EXISTS (SELECT 1 FROM jobs jt INDEXED BY jobs_tagged_nogroup WHERE jt.queue = " q             \
    "   AND jt.status = 'pending' AND jt.tag IS NOT NULL AND jt.grp IS NULL)"
#define SQ_GR_TAGGED_GROUPS(q)                                                                     \
    "SELECT COALESCE(jt.grp, '') FROM jobs jt INDEXED BY jobs_fair_claim WHERE jt.queue = " q      \
    "   AND jt.status = 'pending' AND jt.tag IS NOT NULL"

/*
 * The file behind the path (sqlite/file.c). sq_file_before_open: a
 * path this process opened before must still name the same file
 * (JOBD_E_UNAVAILABLE otherwise, so it is not re-created empty).
 * sq_file_opened: records (or checks) the file s->path names and sets
 * s->file. sq_file_check: the path still names s->file (called by
 * sq_begin*). sq_file_write_failed: a write failed for room or I/O (sq_error
 * calls it); from then on sq_file_probe (store_ping; sqlite/txn.c) proves
 * a write works before answering JOBD_OK, and sq_file_writes_work clears
 * the mark. sq_file_failing: whether it is set.
 */
int sq_file_before_open(const char *path, struct jobd_error *err);
int sq_file_opened(struct sqlite_store *s, struct jobd_error *err);
int sq_file_check(struct sqlite_store *s, struct jobd_error *err);
void sq_file_write_failed(struct sqlite_store *s);
int sq_file_probe(struct sqlite_store *s, struct jobd_error *err);
bool sq_file_failing(const struct sqlite_store *s);
void sq_file_writes_work(struct sqlite_store *s);

/*
 * Reads a job row (the SQ_JOB_COLS starting at column col) into *out,
 * which must be zeroed or finalised. JOBD_E_NOMEM leaves *out finalised.
 */
int sq_row_job(sqlite3_stmt *stmt, int col, struct job *out);
/* Loads job id from jobs or jobs_done. JOBD_E_NOTFOUND if neither has it. */
int sq_load_job(struct sqlite_store *s, int64_t id, struct job *out, struct jobd_error *err);

/*
 * A heap copy of a column's text, or NULL for SQL NULL. *oom is set to 1 if
 * the copy failed (so NULL can mean either).
 */
char *sq_col_strdup(sqlite3_stmt *stmt, int col, int *oom);

/* Whether sq_finish_job keeps a column or sets it to the given text (NULL too). */
enum sq_column { SQ_KEEP, SQ_SET };
/* sq_finish_job's attempt when the move is not fenced (a cancel of a pending job). */
#define SQ_ANY_ATTEMPT (-1)

/* How a job ends (sq_finish_job). Strings borrowed for the call. */
struct sq_finish {
    enum job_status from; /* the guard: the status it must have */
    int32_t attempt;      /* the guard: its attempt, or SQ_ANY_ATTEMPT */
    enum job_status to;   /* succeeded, dead or cancelled */
    int64_t now_us;       /* finished_at */
    enum sq_column error; /* last_error := error_text, or kept */
    const char *error_text;
    enum sq_column result; /* result := result_text, or kept */
    const char *result_text;
};

/*
 * Moves job id from jobs to jobs_done as f says, if the guard (f->from,
 * f->attempt) holds. Returns 1 if moved, 0 if the guard matched nothing, or
 * an error. Runs inside a transaction.
 */
int sq_finish_job(struct sqlite_store *s, int64_t id, const struct sq_finish *f,
                  struct jobd_error *err);
/*
 * Ends the transaction of an operation on one job: rc < 0 (an error) rolls
 * back and is returned; otherwise the job is loaded into *out (if not NULL;
 * the caller's to job_fini on JOBD_OK) and the transaction committed.
 */
int sq_end_with_job(struct sqlite_store *s, int rc, int64_t id, struct job *out,
                    struct jobd_error *err);

/*
 * The job and queue operations of the vtable (sqlite/enqueue.c,
 * sqlite/read.c, sqlite/report.c, sqlite/admin.c); see
 * store.h for their contracts.
 */
int sq_op_enqueue(struct store *st, const struct job_spec *spec, struct job *out, bool *replayed,
                  struct jobd_error *err);
int sq_op_enqueue_batch(struct store *st, const struct job_spec *specs, size_t n, struct job *out,
                        bool *replayed, struct jobd_error *err);
int sq_op_get(struct store *st, int64_t id, struct job *out, struct jobd_error *err);
/* sqlite/deps.c: dependencies (docs/MODEL.md, Dependencies) */
/* Settles what the open transaction's ends queued in deps_todo (before COMMIT). */
int sq_deps_flush(struct sqlite_store *s, struct jobd_error *err);
/* Job id, just inserted pending from spec, gets its parents and waits or settles. */
int sq_deps_enqueued(struct sqlite_store *s, const struct job_spec *spec, const char *field_prefix,
                     int64_t id, int64_t now, struct jobd_error *err);
/*
 * Enqueues one job inside the open transaction (sqlite/enqueue.c).
 * field_prefix ("jobs[3].") names the item in errors. On a replay *out is
 * the existing job; *id_out (may be NULL) the job's id when inserted.
 */
int sq_enqueue_one(struct sqlite_store *s, const struct job_spec *given, int64_t now,
                   const char *field_prefix, struct job *out, bool *replayed, int64_t *id_out,
                   struct jobd_error *err);
/*
 * Enqueues one spec as sq_enqueue_one, or, with a debounce or a unique
 * window, as sq_enqueue_window (sqlite/enqkeys.c): a debounced replacement
 * or a job inside its window is answered with *replayed true. Inside the
 * open transaction.
 */
int sq_enqueue_item(struct sqlite_store *s, const struct job_spec *sp, int64_t now,
                    const char *prefix, struct job *out, bool *replayed, struct jobd_error *err);
int sq_enqueue_window(struct sqlite_store *s, const struct job_spec *sp, int64_t now,
                      const char *prefix, struct job *out, bool *replayed, struct jobd_error *err);
/* Deletes up to limit expired unique windows (store_keys_expire). */
int sq_op_keys_expire(struct store *st, int limit, int *deleted, struct jobd_error *err);
/*
 * Retention (sqlite/admin.c, sqlite/prune.c): a step of a workflow is
 * never in a batch of jobs; it goes only with its whole workflow
 * (sq_prune_workflows). t is the jobs_done row's table name.
 */
#define SQ_WF_SETTLED(t)                                                                           \
    " AND NOT EXISTS (SELECT 1 FROM workflow_steps ws WHERE ws.job_id = " t ".id)"
/*
 * Whole workflows (sqlite/prune.c): those whose every step ended before
 * ok_cut (all succeeded) or failed_cut (some did not; either may be
 * SQ_NO_CUT: that kind is kept), oldest first, while the steps taken number
 * fewer than limit, in a transaction of their own; *deleted gets the jobs
 * added. sq_workflow_delete_rows (sqlite/workflow_ops.c) deletes one,
 * inside the open transaction.
 */
#define SQ_NO_CUT INT64_MIN
int sq_prune_workflows(struct sqlite_store *s, int64_t ok_cut, int64_t failed_cut, int limit,
                       int *deleted, struct jobd_error *err);
int sq_workflow_delete_rows(struct sqlite_store *s, int64_t id, struct jobd_error *err);
/* Workflows (store/workflow.h; sqlite/workflow.c). */
struct workflow;
struct workflow_spec;
struct workflow_plan;
int sq_op_workflow_submit(struct store *st, const struct workflow_spec *spec,
                          const struct workflow_plan *plan, int64_t *id, int64_t *job_ids,
                          bool *replayed, struct jobd_error *err);
int sq_op_workflow_get(struct store *st, int64_t id, struct workflow *out, struct jobd_error *err);
int sq_op_workflow_ids(struct store *st, const char *name, int64_t before_id, int limit,
                       int64_t *ids, size_t *n, struct jobd_error *err);
/* sqlite/workflow_ops.c (store/workflow.h) */
struct workflow_add;
struct workflow_change;
int sq_op_workflow_add(struct store *st, int64_t id, const struct workflow_add *add,
                       int64_t *job_ids, struct jobd_error *err);
int sq_op_workflow_cancel(struct store *st, int64_t id, struct workflow_change *c,
                          struct jobd_error *err);
int sq_op_workflow_retry(struct store *st, int64_t id, const int64_t *ids, size_t n,
                         struct workflow_change *c, struct jobd_error *err);
int sq_op_workflow_delete(struct store *st, int64_t id, struct jobd_error *err);
int sq_op_deps_attach(struct store *st, struct job *v, size_t n, struct jobd_error *err);
int sq_op_parents_attach(struct store *st, struct job *v, size_t n, struct jobd_error *err);
/* Waiting job id -> cancelled: 1, or 0 if it is not waiting, or an error. */
int sq_deps_cancel_waiting(struct sqlite_store *s, int64_t id, int64_t now, struct jobd_error *err);
/* sqlite/cancels.c: store_cancels_requested */
int sq_op_cancels_requested(struct store *st, const int64_t *ids, size_t n, bool *requested,
                            struct jobd_error *err);
int sq_op_job_states(struct store *st, const int64_t *ids, size_t n, int *status,
                     struct jobd_error *err);
int sq_op_list(struct store *st, const struct job_filter *f, struct job_list *out,
               int64_t *next_cursor, struct jobd_error *err);
/* store_search (sqlite/search.c); f->search already folded by store_search. */
int sq_op_search(struct store *st, const struct job_filter *f, struct job_list *out,
                 int64_t *next_cursor, bool *partial, struct jobd_error *err);
int sq_op_claim(struct store *st, const struct claim_req *req, struct job_list *out,
                struct jobd_error *err);
int sq_op_heartbeat(struct store *st, int64_t id, int32_t attempt, int64_t lease_ms,
                    int64_t *lease_expires_at_us, bool *cancel_requested, struct jobd_error *err);
/* sqlite/progress.c (store/progress.h) */
struct progress_report;
int sq_op_progress(struct store *st, int64_t id, int32_t attempt, const struct progress_report *p,
                   int64_t lease_ms, int64_t *lease_expires_at_us, bool *cancel_requested,
                   struct jobd_error *err);
int sq_op_progress_attach(struct store *st, struct job *v, size_t n, struct jobd_error *err);
/* sqlite/attemptlog.c (store/attemptlog.h) */
struct attempt_log;
int sq_op_attempt_logs_put(struct store *st, const struct attempt_log *v, size_t n, int *outcome,
                           struct jobd_error *err);
int sq_op_attempt_log_get(struct store *st, int64_t id, int32_t attempt, char **text,
                          struct jobd_error *err);
struct attempt_log_size;
int sq_op_attempt_log_sizes(struct store *st, int64_t id, struct attempt_log_size **out, size_t *n,
                            struct jobd_error *err);
/* store/events.h (sqlite/events.c) */
int sq_op_events_listen(struct store *st, struct events_head *head, struct jobd_error *err);
int sq_op_events_head(struct store *st, struct events_head *head, struct jobd_error *err);
int sq_op_events_read(struct store *st, int64_t after, int64_t upto, int limit,
                      struct store_event **out, size_t *n, struct jobd_error *err);
int sq_op_events_resumable(struct store *st, int64_t after, bool *ok, struct jobd_error *err);
int sq_op_complete(struct store *st, int64_t id, int32_t attempt, const char *result,
                   struct job *out, struct jobd_error *err);
int sq_op_complete_batch(struct store *st, const struct completion *c, size_t n, int *outcome,
                         struct jobd_error *err);
int sq_op_fail(struct store *st, int64_t id, int32_t attempt, const char *error, bool retryable,
               int64_t retry_delay_ms, const struct backoff_policy *bp, struct job *out,
               struct jobd_error *err);
int sq_op_fail_batch(struct store *st, const struct fail_report *f, size_t n, int *outcome,
                     enum job_status *status, struct jobd_error *err);
int sq_op_reap(struct store *st, int limit, const struct backoff_policy *bp, struct reaped_job *out,
               size_t cap, int *reaped, struct jobd_error *err);
int sq_op_release(struct store *st, int64_t id, int32_t attempt, struct jobd_error *err);
int sq_op_cancel(struct store *st, int64_t id, struct job *out, struct jobd_error *err);
int sq_op_retry(struct store *st, int64_t id, struct job *out, struct jobd_error *err);
int sq_op_queue_pause(struct store *st, const char *queue, bool paused, struct jobd_error *err);
int sq_op_queue_stats(struct store *st, struct queue_stat **out, size_t *n, struct jobd_error *err);
int sq_op_prune(struct store *st, int64_t finished_before_us, int limit, int *deleted,
                struct jobd_error *err);
int sq_op_next_run_at(struct store *st, const struct claim_req *req, int64_t *run_at_us,
                      struct jobd_error *err);

/* The schedule operations of the vtable (sqlite/sched.c); see store.h. */
int sq_op_schedule_put(struct store *st, const struct schedule_spec *spec, bool replace,
                       int64_t max_schedules, struct schedule *out, bool *created,
                       struct jobd_error *err);
int sq_op_schedule_get(struct store *st, const char *name, struct schedule *out,
                       struct jobd_error *err);
int sq_op_schedule_list(struct store *st, const struct name_page *pg, struct schedule_list *out,
                        struct jobd_error *err);
int sq_op_schedule_delete(struct store *st, const char *name, struct jobd_error *err);
int sq_op_schedule_pause(struct store *st, const char *name, bool paused, struct schedule *out,
                         struct jobd_error *err);
int sq_op_schedule_trigger(struct store *st, const char *name, struct job *out,
                           struct jobd_error *err);
int sq_op_schedule_materialize(struct store *st, int limit, int64_t grace_us, int *made,
                               int64_t *soonest_us, struct jobd_error *err);
/* store_clock_went_back (sqlite/clockjump.c). */
int sq_op_clock_went_back(struct store *st, int64_t back_us, int *jobs, int *schedules,
                          struct jobd_error *err);

/* The listing statement of GET /v1/jobs for f (sqlite/read.c), malloc'd
 * (the caller frees it), NULL when out of memory; f->status must be valid. Its
 * parameters are bound by sq_filter_bind, ?8 before id, ?9 limit, and
 * sq_list_bind_group. Exposed for the test that checks its query plan uses
 * an index (test_list_plans). */
struct job_filter;
char *sq_list_sql(const struct job_filter *f);
/* The group filter's parameter of sq_list_sql's statement: a number that
 * neither SQ_FILTER_WHERE (?1..?7), the listing (?8..?10) nor a search
 * (?10, ?11) uses. sq_list_bind_group binds f->group to it (NULL = none). */
#define SQ_LIST_GROUP_PARAM 12
#define SQ_LIST_GROUP_PARAM_S "12"
/* The bucket of a job's id in the indexes by group of jobs and jobs_done,
 * (SQ_GRP_BUCKET, grp) since migration 26: the same expression as there,
 * or the planner does not match it to the index. */
#define SQ_GRP_BUCKET_IDS "1024"
#define SQ_GRP_BUCKET "id / " SQ_GRP_BUCKET_IDS
void sq_list_bind_group(sqlite3_stmt *stmt, const struct job_filter *f);

/* sqlite/schema.c: store_migrate and store_schema_status for SQLite. */
int sq_migrate(struct store *st, struct jobd_error *err);
int sq_schema_status(struct store *st, int *current, int *newest, struct jobd_error *err);

#endif
