/*
 * operator.h — the operator's store operations (attempt history, and the other
 * operator routes as they come): what an operator needs to see and act on
 * jobs without SQL.
 *
 * They live in their own vtable, struct store_operator_ops, reached through one
 * pointer in struct store_ops, so the hot-path vtable of store.h stays as it
 * is and a backend without them (the remote store of a --server worker)
 * simply leaves the pointer NULL: the wrappers then answer JOBD_E_INTERNAL
 * naming the backend.
 *
 * Attempt history costs nothing in the common case: the job row already
 * carries its current attempt (attempt, worker_id, started_at, finished_at,
 * status). A row of the history table job_attempts is written only when an
 * attempt ends other than in success (failed, dead, reaped, cancelled,
 * released), in the same statement or transaction that ends it. Reading the
 * history merges those rows with the current attempt of the job row, in one
 * statement (one snapshot).
 *
 * Ownership as in store.h: out-structs are caller-provided; the strings put
 * in them are heap-owned by the caller afterwards (attempt_list_fini).
 */
#ifndef JOBD_STORE_OPERATOR_H
#define JOBD_STORE_OPERATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/*
 * How an attempt ended (docs/API.md, "GET /v1/jobs/{id}/attempts"), or
 * ATT_RUNNING while it runs.
 */
enum attempt_outcome {
    ATT_RUNNING = 0,
    ATT_SUCCEEDED,
    ATT_FAILED,    /* retryable failure or timeout: the job goes back to pending */
    ATT_DEAD,      /* permanent failure or the last attempt */
    ATT_REAPED,    /* its lease expired */
    ATT_CANCELLED, /* a cancel was requested and the worker stopped it */
    ATT_RELEASED,  /* handed back at shutdown */
};
#define ATT_OUTCOME_COUNT 7

/* One attempt. worker_id and error are heap-owned (attempt_list_fini). */
struct job_attempt {
    int32_t attempt;
    char *worker_id;        /* NULL if unknown */
    int64_t started_at_us;  /* 0 = unknown */
    int64_t finished_at_us; /* 0 while running */
    enum attempt_outcome outcome;
    char *error; /* that attempt's error text, or NULL */
};

/* A growable array of attempts, oldest first. Zero-initialise. */
struct attempt_list {
    struct job_attempt *v;
    size_t n, cap;
};

/* A bulk action (POST /v1/jobs/bulk): each job takes its single-job transition. */
enum bulk_action {
    BULK_RETRY,  /* dead / cancelled -> pending, as store_retry */
    BULK_CANCEL, /* pending -> cancelled, running -> cancel requested, as store_cancel */
    BULK_DELETE, /* pending or terminal -> gone with its key and history; running skipped */
};

/* Which jobs a bulk action takes. Pointers borrowed for the call. */
struct bulk_req {
    enum bulk_action action;
    struct job_filter f; /* status .. key; f.limit and f.before_id are ignored */
    const int64_t *ids;  /* n_ids ids, or NULL = any id */
    size_t n_ids;
};

/* What a bulk action did so far; store_bulk_batch adds to it. */
struct bulk_counts {
    int64_t matched;   /* jobs the filter selected */
    int64_t changed;   /* of those, jobs that took the transition */
    int64_t cancelled; /* of the changed, jobs that became cancelled (for metrics) */
};

/* The most jobs one store_bulk_batch touches: one transaction's worth. */
#define STORE_BULK_BATCH 1000

/*
 * A worker's presence (GET /v1/workers). Strings borrowed on the way in
 * (store_worker_announce); heap-owned by the list on the way out.
 */
struct worker_info {
    char *id; /* the worker_id its claims carry */
    char *hostname;
    int64_t pid;
    char *version;
    char *queues; /* JSON array of names; "[]" = every queue */
    char *types;  /* JSON array of job types */
    int32_t concurrency;
    int64_t heartbeat_ms; /* its presence interval: gone after 3 missed */
    int64_t started_at_us;
    int64_t last_seen_at_us;
    bool draining;
    /* On the way in: announce only if absent. A worker the store knows keeps
     * its row (what it announced, its draining flag) and only has
     * last_seen_at refreshed: a claim's presence (docs/API.md, "A minimal
     * remote worker") never overwrites a worker's own announce. */
    bool keep_existing;
    bool gone;        /* not seen for WORKER_GONE_INTERVALS intervals (list only) */
    int64_t *running; /* ids of the jobs it holds, ascending (list only) */
    size_t n_running;
};

/* A list of workers; worker_list_fini frees it. */
struct worker_list {
    struct worker_info *v;
    size_t n, cap;
};

/* A worker not seen for this many presence intervals is "gone"... */
#define WORKER_GONE_INTERVALS 3
/* ...and listed for this long after, then forgotten. */
#define WORKER_GONE_KEEP_US (3600LL * 1000000)

/*
 * Queue limits (docs/API.md, "PUT /v1/queues/{name}"), kept in the queue's
 * row and honoured where jobs are claimed (qlimits.h): at most max_running
 * jobs of the queue running at once, and at most rate_limit claims in every
 * window of rate_per_ms aligned to multiples of it since the Unix epoch. A
 * change: each set_* flag says whether its limit changes; a value 0 removes
 * it.
 */
/* Their bounds: QUEUE_LIMIT_MAX, QUEUE_RATE_PER_{MIN,MAX}_MS (core/job.h). */
struct queue_limits_change {
    bool set_max_running;
    int32_t max_running; /* 0 = no limit */
    bool set_rate;
    int32_t rate_limit; /* 0 = no limit (rate_per_ms ignored) */
    int64_t rate_per_ms;
    /* The same per group of the queue (docs/API.md, docs/MODEL.md, Groups). */
    bool set_group_max_running;
    int32_t group_max_running;
    bool set_group_rate;
    int32_t group_rate_limit;
    int64_t group_rate_per_ms;
};
/* A (queue, type) pair with pending jobs; a list of them (queue_types_fini). */
struct queue_type {
    char *queue;
    char *type;
};
struct queue_type_list {
    struct queue_type *v;
    size_t n, cap;
};
/* The most pairs store_pending_queue_types returns: a bound on its cost. */
#define STORE_PENDING_PAIRS_MAX 1000
struct stats_point;
struct stats_queue;
struct queue_group;
struct queue_group_count;

/* The operator vtable (implementations only; callers use store_*()). */
/* A running attempt and the SHA-256 (hex) of the lease token it was given. */
struct lease_token_ref {
    int64_t id;
    int32_t attempt;
    char hash[65];
};
/* Which report store_lease_replayed asks about. */
enum lease_report { LEASE_REPORT_COMPLETE, LEASE_REPORT_FAIL };

struct store_operator_ops {
    /* The job's attempts, oldest first; JOBD_E_NOTFOUND for no such job. */
    int (*attempts)(struct store *st, int64_t id, struct attempt_list *out, struct jobd_error *err);
    /* One batch of store_bulk_batch (n in 1..STORE_BULK_BATCH, validated). */
    int (*bulk_batch)(struct store *st, const struct bulk_req *r, int n, int64_t *cursor,
                      struct bulk_counts *c, struct jobd_error *err);
    int (*worker_announce)(struct store *st, const struct worker_info *w, int64_t max_workers,
                           struct jobd_error *err);
    int (*worker_seen)(struct store *st, const char *id, bool draining, struct jobd_error *err);
    int (*worker_withdraw)(struct store *st, const char *id, struct jobd_error *err);
    int (*worker_list)(struct store *st, const struct name_page *pg, struct worker_list *out,
                       struct jobd_error *err);
    int (*prune_status)(struct store *st, bool succeeded, int64_t cutoff_us, int limit,
                        int *deleted, struct jobd_error *err);
    /* NULL where store_queue_stats is always exact (SQLite's counts kept by triggers) */
    int (*counts_refresh)(struct store *st, int64_t max_age_ms, bool *recounted,
                          struct jobd_error *err);
    int (*queue_limits)(struct store *st, const char *queue, const struct queue_limits_change *c,
                        struct jobd_error *err);
    /* NULL in a backend whose completions move the row at once (nothing to archive) */
    int (*archive)(struct store *st, int64_t finished_before_us, int limit, int *moved,
                   struct jobd_error *err);
    /* NULL where the store needs no vacuum of its own (SQLite reuses freed pages) */
    int (*vacuum_hot)(struct store *st, struct jobd_error *err);
    /* NULL where nothing counts the rows that left the hot table (SQLite) */
    int (*hot_churn)(struct store *st, int64_t *rows, struct jobd_error *err);
    /* NULL where finished jobs are not partitioned by day (SQLite) */
    int (*archive_days)(struct store *st, int64_t now_us, int days_ahead, int *made,
                        struct jobd_error *err);
    int (*pending_queue_types)(struct store *st, struct queue_type_list *out,
                               struct jobd_error *err);
    /* lease tokens (lease.c): validated arguments */
    int (*lease_set)(struct store *st, const struct lease_token_ref *v, size_t n,
                     struct jobd_error *err);
    int (*lease_check)(struct store *st, int64_t id, int32_t attempt, const char *hash,
                       char **queue, struct jobd_error *err);
    int (*lease_replayed)(struct store *st, int64_t id, int32_t attempt, enum lease_report kind,
                          const char *hash, char **queue, struct jobd_error *err);
    /* statistics (store/stats.h, stats_int.h) */
    int (*stats_series)(struct store *st, int64_t from_s, int64_t step_s, size_t n,
                        const char *queue, struct stats_point *points, struct jobd_error *err);
    int (*stats_throughput)(struct store *st, int64_t from_s, struct stats_queue **out, size_t *n,
                            struct jobd_error *err);
    int (*stats_prune)(struct store *st, int64_t before_s, int *deleted, struct jobd_error *err);
    /* expired unique windows (store_keys_expire) */
    int (*keys_expire)(struct store *st, int limit, int *deleted, struct jobd_error *err);
    /* groups (store/groups.h): validated arguments */
    int (*queue_groups)(struct store *st, const char *queue, int limit, struct queue_group **out,
                        size_t *n, struct jobd_error *err);
    int (*queue_group_counts)(struct store *st, struct queue_group_count **out, size_t *n,
                              struct jobd_error *err);
};

/* "running", "succeeded", ...; "?" for a value out of range. */
const char *attempt_outcome_name(enum attempt_outcome o);
/* Parses an outcome name; JOBD_E_INVALID for an unknown one. */
int attempt_outcome_parse(const char *name, enum attempt_outcome *out);
/* Appends a zeroed attempt and returns it, or NULL when memory ran out. */
struct job_attempt *attempt_list_push(struct attempt_list *l);
/* Frees every attempt's strings and the array; leaves l zeroed. NULL-safe. */
void attempt_list_fini(struct attempt_list *l);

/*
 * Every attempt of job id that started, oldest first (also those a reaper
 * or a cancel ended). JOBD_E_NOTFOUND if the job does not exist (also when
 * it was pruned: its history goes with it). *out must be zeroed; on success
 * the caller owns its contents (attempt_list_fini), on error it is empty.
 */
JOBD_MUST_USE int store_job_attempts(struct store *st, int64_t id, struct attempt_list *out,
                                     struct jobd_error *err);

/*
 * One batch of a bulk action, in one transaction: takes the newest n (at
 * most STORE_BULK_BATCH) jobs that match r with id < *cursor (0 = from the
 * newest), applies r->action to each whose status allows it (the same guard
 * as the single-job operation, checked in the statement that changes it),
 * and adds to *c. *cursor becomes the smallest id matched, or 0 when fewer
 * than n matched (nothing is left). Holding the store for one batch only,
 * a caller loops to act on more jobs without stalling claims.
 */
JOBD_MUST_USE int store_bulk_batch(struct store *st, const struct bulk_req *r, int n,
                                   int64_t *cursor, struct bulk_counts *c, struct jobd_error *err);
/*
 * Deletes job id with its idempotency key and attempt history, if it is
 * waiting, pending or terminal. JOBD_E_STATE if it is running (cancel it
 * first), or with err->field "depends_on" if a waiting job depends on it
 * (docs/API.md, DELETE /v1/jobs/{id}); JOBD_E_NOTFOUND if there is no such job.
 */
JOBD_MUST_USE int store_delete(struct store *st, int64_t id, struct jobd_error *err);

/*
 * Whether store_queue_stats answers from a cache that store_counts_refresh
 * must keep fresh (PostgreSQL: a count kept exact on every write would add
 * a write to each claim and completion). False where counts are exact.
 */
bool store_counts_cached(const struct store *st);
/*
 * Recounts the cache of queue counts if it is older than max_age_ms (0:
 * now), unless another process is recounting at this moment; *recounted
 * says whether this call did. Its cost grows with the jobs stored, so it is
 * for a background thread (src/api/countsd.c), never a request. JOBD_OK
 * doing nothing where store_counts_cached is false.
 */
JOBD_MUST_USE int store_counts_refresh(struct store *st, int64_t max_age_ms, bool *recounted,
                                       struct jobd_error *err);

/*
 * Retention of the keys of unique windows (docs/MODEL.md, Debounce and
 * unique windows): deletes up to limit keys whose window ended (store
 * clock), each in one statement that skips a key an enqueue holds at that
 * moment (that enqueue takes the key over). Keys of debounces, and of
 * windows still open, go only with their jobs (retention, deletes).
 * *deleted = how many.
 */
JOBD_MUST_USE int store_keys_expire(struct store *st, int limit, int *deleted,
                                    struct jobd_error *err);

/*
 * Retention per outcome: deletes up to limit jobs finished before the cutoff
 * that succeeded (succeeded = true) or ended dead or cancelled (false), with
 * their keys and attempt history. *deleted = how many.
 */
JOBD_MUST_USE int store_prune_status(struct store *st, bool succeeded, int64_t finished_before_us,
                                     int limit, int *deleted, struct jobd_error *err);
/*
 * The archive pass: moves up to limit jobs that succeeded before the cutoff
 * out of the hot table (on PostgreSQL a completion leaves its row there, so
 * that it writes no more than one UPDATE). Nothing a caller can read changes:
 * the job reads, counts and prunes the same wherever it is. *moved = how
 * many; 0 on a backend that moves rows when they finish.
 */
JOBD_MUST_USE int store_archive(struct store *st, int64_t finished_before_us, int limit, int *moved,
                                struct jobd_error *err);
/*
 * How many rows left the hot table so far (PostgreSQL: jobd.jobs' deleted
 * tuples in pg_stat_user_tables: completions, failures, releases, reaps,
 * cancels move the row out): a cumulative counter, which may restart at 0
 * (statistics reset); the scheduling plane vacuums after enough of them,
 * as it did after the archive pass's rows. *rows = -1 where no store
 * counts them.
 */
JOBD_MUST_USE int store_hot_churn(struct store *st, int64_t *rows, struct jobd_error *err);
/*
 * Makes the finished-jobs archive's partitions of the UTC days of now ..
 * now + days_ahead that have none, moving the rows the default partition
 * holds of such a day into it (PostgreSQL, docs/DESIGN.md, Table layout,
 * round three). *made = how many days were made; 0 on a store without
 * such partitions.
 */
JOBD_MUST_USE int store_archive_days(struct store *st, int64_t now_us, int days_ahead, int *made,
                                     struct jobd_error *err);
/*
 * Vacuums the hot table now (PostgreSQL: VACUUM (SKIP_LOCKED) jobd.jobs;
 * skipped at once while another vacuum holds it). For the scheduling plane,
 * under churn: every job leaves a dozen index entries and three row versions
 * in jobd.jobs, and autovacuum visits a table at most once per
 * autovacuum_naptime (a minute by default) with its cost delay, so between
 * two visits the claim indexes fill with entries of rows long gone that
 * every claim walks past, and the indexes grow with every slower visit.
 * *vacuumed = true if a vacuum ran (or was skipped by SKIP_LOCKED); false on
 * a store that needs none. Must not be called inside a transaction.
 */
JOBD_MUST_USE int store_vacuum_hot(struct store *st, bool *vacuumed, struct jobd_error *err);

/*
 * Changes queue's limits as c says (validated here: JOBD_E_INVALID naming
 * "name", "max_running", "rate.limit" or "rate.per"); the queue need not
 * have jobs, and is listed by store_queue_stats from then on. Jobs already
 * running stay; claims on every connection honour the new limits at once
 * (a claim that has not yet seen a queue become limited leaves its jobs
 * alone, and learns of it within QLIMITS_REFRESH_MS: qlimits.h).
 */
JOBD_MUST_USE int store_queue_limits(struct store *st, const char *queue,
                                     const struct queue_limits_change *c, struct jobd_error *err);

/*
 * The distinct (queue, type) pairs of pending jobs, by queue then type, at
 * most STORE_PENDING_PAIRS_MAX. Costs one index seek per pair, whatever
 * the backlog (a skip scan over an index on (queue, type)). *out zeroed;
 * the caller owns it after (queue_types_fini).
 */
JOBD_MUST_USE int store_pending_queue_types(struct store *st, struct queue_type_list *out,
                                            struct jobd_error *err);
/*
 * Lease tokens of claims over HTTP (docs/API.md, Remote workers): the API
 * gives each job it hands out a random token and keeps only its hash.
 * store_lease_set records v[0..n) on the running attempts they name
 * (attempts no longer running are skipped; a later claim on the store
 * itself clears the hash). store_lease_check answers JOBD_OK and the job's
 * queue in *queue (malloc'd, the caller's) when attempt is the job's
 * current one and hash is its token's, else JOBD_E_STALE. Attempts never
 * repeat, so a report fenced by that attempt afterwards can only change the
 * attempt the token belongs to. JOBD_E_INVALID on a store without tokens.
 */
JOBD_MUST_USE int store_lease_set(struct store *st, const struct lease_token_ref *v, size_t n,
                                  struct jobd_error *err);
JOBD_MUST_USE int store_lease_check(struct store *st, int64_t id, int32_t attempt, const char *hash,
                                    char **queue, struct jobd_error *err);
/*
 * Whether a report of attempt of job id, carrying the token whose hash is
 * hash, repeats the report that already ended that attempt (docs/API.md,
 * "Repeated reports"): a completion of an attempt that succeeded, or a
 * failure of one that ended failed, dead or cancelled (its history row,
 * store/operator.h). Such a report is answered as it was the first time
 * and changes nothing. The hash is kept with the finished attempt (its
 * history row, or the succeeded job row), so the answer holds after the
 * job moved on (claimed again, retried). JOBD_OK and the job's queue in
 * *queue (malloc'd, the caller's) when it does, else JOBD_E_STALE.
 */
JOBD_MUST_USE int store_lease_replayed(struct store *st, int64_t id, int32_t attempt,
                                       enum lease_report kind, const char *hash, char **queue,
                                       struct jobd_error *err);

/* Appends a copy of (queue, type); false on out-of-memory. */
bool queue_types_push(struct queue_type_list *l, const char *queue, const char *type);
/* Frees the list's strings and array; leaves it zeroed. NULL-safe. */
void queue_types_fini(struct queue_type_list *l);

/* ---- workers ---- */

/*
 * Records worker w as present and active (created or replaced: started_at
 * and last_seen_at = now), and forgets workers gone for over an hour.
 * w->running is ignored.
 */
JOBD_MUST_USE int store_worker_announce(struct store *st, const struct worker_info *w,
                                        struct jobd_error *err);
/*
 * store_worker_announce with a bound on the rows kept (max_workers > 0; 0 =
 * none). A worker the store does not know yet first makes room by forgetting
 * the gone workers seen longest ago; if max_workers workers are still kept
 * (all of them live), it is refused: JOBD_E_CONFLICT with field
 * "max_workers". Announcing a known id again is always allowed. One
 * transaction, serialized with other capped announces.
 */
JOBD_MUST_USE int store_worker_announce_capped(struct store *st, const struct worker_info *w,
                                               int64_t max_workers, struct jobd_error *err);
/*
 * Refreshes worker id's last_seen_at (and its draining flag).
 * JOBD_E_NOTFOUND if the store does not know it (forgotten or never
 * announced): announce it again.
 */
JOBD_MUST_USE int store_worker_seen(struct store *st, const char *id, bool draining,
                                    struct jobd_error *err);
/* Forgets worker id (it stopped). No such worker is not an error. */
JOBD_MUST_USE int store_worker_withdraw(struct store *st, const char *id, struct jobd_error *err);
/*
 * Every worker seen within the last hour past "gone", by id, each with the
 * ids of the running jobs it holds. *out zeroed; the caller owns it after
 * (worker_list_fini).
 */
JOBD_MUST_USE int store_worker_list(struct store *st, struct worker_list *out,
                                    struct jobd_error *err);
/* One page of store_worker_list, by id (bytewise); pg->payload is ignored. */
JOBD_MUST_USE int store_worker_page(struct store *st, const struct name_page *pg,
                                    struct worker_list *out, struct jobd_error *err);
/* Frees the list's strings and arrays; leaves it zeroed. NULL-safe. */
void worker_list_fini(struct worker_list *l);
/* Appends a zeroed entry; NULL on out-of-memory. */
struct worker_info *worker_list_push(struct worker_list *l);
/* Appends job id to w->running; false on out-of-memory. */
bool worker_info_add_running(struct worker_info *w, int64_t id);

#endif
