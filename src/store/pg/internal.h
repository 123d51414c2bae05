/*
 * pg/internal.h — internals of the PostgreSQL backend, shared by the files
 * that add operations on the same connection: pg/open.c (open, migrate,
 * wait, the vtable), pg/enqueue.c, pg/read.c (get, list,
 * claim), pg/report.c (heartbeat, complete, fail, reap),
 * pg/admin.c (cancel, retry, queues, prune), pg/sched.c for
 * schedules, pg/schema.c for the migrations.
 *
 * Statements are static `struct pg_stmt` objects, prepared lazily once per
 * connection (and again after a reconnect). Times cross the wire as bigint
 * microseconds since the epoch, converted in SQL (PG_TS_US / PG_US_TS), so
 * no text parsing of times happens in C. "now" is one parameter per
 * statement: NULL means the server's now(), else the store's clock.
 *
 * Adding operations (pg/sched.c): define static `struct pg_stmt`s whose
 * names are unique on the connection (jobs use "st_", use e.g. "sched_"),
 * run them with pg_exec, decode jobs with pg_row_to_job, and hook the
 * functions into pg_ops in pg/open.c. A schema change is a new step
 * appended to pg_migrations (pg/schema.c).
 */
#ifndef JOBD_STORE_PG_INT_H
#define JOBD_STORE_PG_INT_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/qlimits.h"
#include "store/store.h"

/* One SQL statement, prepared under name on first use. Both strings static. */
struct pg_stmt {
    const char *name;
    const char *sql;
};
/* Defines a statement named after its variable. */
#define PG_STMT(n, s) static const struct pg_stmt n = {#n, s}

#define PG_MAX_PREPARED 96
/*
 * Jobs in one array INSERT. The API and libjobd stop at JOB_BATCH_MAX; this
 * backstop is for in-process callers (the group committer joins many
 * requests): 100,000 rows of arrays stay far below PostgreSQL's 1 GB limit
 * on one parameter and commit in about a second.
 */
#define PG_BATCH_MAX 100000
/*
 * How often a statement that lost a race is tried again before the caller
 * hears "try again". An enqueue whose idempotency key's holder was pruned
 * between two statements can lose at most once more in practice (3); an
 * operator's cancel/retry races the job's own transitions, each a
 * millisecond step, so 5 covers a job that is claimed and finished at once.
 */
#define PG_ENQUEUE_RACE_TRIES 3

/*
 * The groups of the rows just inserted (CTE ins), noted for the fair claim
 * (docs/DESIGN.md, Groups): their queue is marked grouped (the ordinary
 * claim then leaves it to pg/groups.c) and each (queue, group) has a row
 * in job_groups; the jobs without a group are the group '' of a queue that
 * is grouped (the row is added when the queue is marked, and with each of
 * its ungrouped enqueues). The queues row is only written when it is not
 * marked yet, so enqueues of a grouped queue do not queue up behind each
 * other on it. An ungrouped enqueue into an ungrouped queue costs a probe
 * of queues by name.
 */
#define PG_GROUPS_NOTED(ins)                                                                       \
    ", gn AS (SELECT DISTINCT queue, grp FROM " ins " WHERE grp IS NOT NULL),"                     \
    " g0 AS (SELECT DISTINCT i.queue FROM " ins " i WHERE i.grp IS NULL"                           \
    "        AND EXISTS (SELECT 1 FROM jobd.queues q WHERE q.name = i.queue AND q.grouped)),"      \
    " gqi AS (INSERT INTO jobd.queues (name, grouped) SELECT DISTINCT queue, true FROM gn"         \
    "         ON CONFLICT (name) DO NOTHING RETURNING name),"                                      \
    " gqu AS (UPDATE jobd.queues SET grouped = true"                                               \
    "         WHERE name IN (SELECT queue FROM gn) AND NOT grouped RETURNING name),"               \
    " ggi AS (INSERT INTO jobd.job_groups (queue, grp)"                                            \
    "         SELECT queue, grp FROM gn UNION SELECT queue, '' FROM g0"                            \
    "         UNION SELECT name, '' FROM gqi UNION SELECT name, '' FROM gqu"                       \
    "         ON CONFLICT (queue, grp) DO NOTHING) "
#define PG_ACTION_RACE_TRIES 5

/*
 * The transaction pg_tx_begin opened (pg/tx.c). PG_TX_DEFERRED: begun
 * but nothing sent yet: BEGIN and txid_current() go out in one pipeline
 * with the first statement, so they cost no round trip of their own.
 * PG_TX_OPEN: BEGIN was sent; tx_xid is known once that statement answered.
 */
enum pg_tx_state { PG_TX_NONE, PG_TX_DEFERRED, PG_TX_OPEN };

struct store_pg {
    struct store base;
    PGconn *conn;
    const struct pg_stmt *prepared[PG_MAX_PREPARED]; /* prepared on this connection */
    size_t n_prepared;
    bool listening;            /* LISTEN jobd_jobs, jobd_cancel issued on this connection */
    bool listening_ends;       /* LISTEN jobd_done issued on this connection (pg/ends.c) */
    bool pooled;               /* URL said pooler=transaction: no named statements, no LISTEN */
    bool walk_claims;          /* store_offload: claims must walk the claim index (pg_op_offload) */
    bool walk_set;             /* this session has the setting walk_claims asks for */
    struct qlimits_cache qlim; /* the limited queues (qlimits.h) */
    int64_t groups_forgot_us;  /* monotonic: the last pg_groups_forget of claim_grouped */
    enum pg_tx_state tx;
    int64_t tx_xid; /* txid_current() of the open transaction; 0 until known */
    int tx_pid;     /* the backend that runs it (PQbackendPID) */
};

/* One migration step; pg_migrations lists them in version order. */
struct pg_migration {
    int version;
    const char *name;
    const char *sql; /* one or more statements, run in the migration transaction */
};
extern const struct pg_migration pg_migrations[];
extern const size_t pg_migrations_count;

/* ---- SQL fragments ---- */

/* bigint microseconds <-> timestamptz, exact (no float rounding). */
#define PG_US_TS(p) "(timestamptz 'epoch' + (" p ")::bigint * interval '1 microsecond')"
#define PG_TS_US(x) "(extract(epoch from " x ") * 1000000)::bigint"
/* "now" from parameter p: the store's clock, or the server's now() when NULL. */
#define PG_NOW(p) "COALESCE(" PG_US_TS(p) ", now())"
/* A duration in milliseconds from parameter p, as an interval. */
#define PG_MS(p) "((" p ")::bigint * interval '1 millisecond')"

/*
 * The columns of a job in the order pg_row_to_job decodes them, from the
 * table or CTE whose columns are prefixed with a (e.g. "j." or "").
 */
/* clang-format off */
#define PG_JOB_COLS(a)                                                                  \
    a "id, " a "queue, " a "type, " a "payload::text AS payload, " a "status, "         \
    a "priority, " PG_TS_US(a "run_at") " AS run_at_us, " a "attempt, "                 \
    a "max_attempts, " a "idempotency_key, " a "schedule, "                             \
    PG_TS_US(a "scheduled_for") " AS scheduled_for_us, " a "worker_id, "                \
    PG_TS_US(a "lease_expires_at") " AS lease_expires_at_us, " a "timeout_ms, "         \
    a "cancel_requested, " a "last_error, " a "result::text AS result, "                \
    PG_TS_US(a "created_at") " AS created_at_us, "                                      \
    PG_TS_US(a "started_at") " AS started_at_us, "                                      \
    PG_TS_US(a "finished_at") " AS finished_at_us, " a "attempt_floor, " a "traceparent, "  \
    a "grp"
/* clang-format on */
#define PG_JOB_NCOLS 24

/* clang-format off */
/*
 * What a run needs (claim_req.run_only), in the order pg_row_to_run
 * decodes it: 14 columns where PG_JOB_COLS has 24, three timestamps
 * converted to microseconds where it has six (each through numeric), and
 * none of the columns a claimed row has no use for in a worker (status,
 * worker_id, lease_expires_at, last_error, result, created_at, ...).
 */
#define PG_RUN_COLS(a)                                                                  \
    a "id, " a "queue, " a "type, " a "payload::text AS payload, " a "priority, "       \
    PG_TS_US(a "run_at") " AS run_at_us, " a "attempt, " a "attempt_floor, "            \
    a "idempotency_key, " PG_TS_US(a "scheduled_for") " AS scheduled_for_us, "         \
    a "timeout_ms, " PG_TS_US(a "started_at") " AS started_at_us, " a "traceparent, "     \
    a "grp"
/* clang-format on */
#define PG_RUN_NCOLS 14

/* The columns of a row moved to jobs_done from CTE d, with status/result/error given. */
#define PG_DONE_SELECT(status, result, error, now)                                                 \
    "SELECT d.id, d.queue, d.type, d.payload, " status ", d.priority, d.run_at,"                   \
    "       d.attempt, d.attempt_floor, d.max_attempts, d.idempotency_key, d.schedule,"            \
    "       d.scheduled_for, d.worker_id, NULL, d.timeout_ms, d.cancel_requested, " error          \
    ", " result ", d.created_at, d.started_at, " now ", d.traceparent, d.has_children, d.grp "

/* Every stored column of jobd.jobs / jobd.jobs_done, in table order. */
#define PG_JOB_TABLE_COLS                                                                          \
    "id, queue, type, payload, status, priority, run_at, attempt, attempt_floor, "                 \
    "max_attempts, idempotency_key, schedule, scheduled_for, worker_id, "                          \
    "lease_expires_at, timeout_ms, cancel_requested, last_error, result, created_at, "             \
    "started_at, finished_at, traceparent, has_children, grp"

/* ---- helpers ---- */

static inline struct store_pg *
pg_of(struct store *st)
{
    return (struct store_pg *)st;
}

/*
 * Runs stmt with n text parameters (values[i] NULL = SQL NULL), preparing it
 * first if this connection has not. Reconnects first (PQreset) if the
 * connection is down. On success *out is a result the caller PQclear()s
 * (tuples or command OK). Errors: JOBD_E_UNAVAILABLE when the server cannot
 * be reached, JOBD_E_CONFLICT for a unique violation, JOBD_E_STORE with the
 * server's message otherwise; *out is NULL then.
 */
int pg_exec(struct store_pg *s, const struct pg_stmt *stmt, int n, const char *const *values,
            PGresult **out, struct jobd_error *err);
/*
 * pg_exec for a statement whose best plan depends on its parameters' values:
 * never prepared, planned with the values at each call (a generic plan
 * guesses every value common, and for a rare one may walk a whole table).
 */
int pg_exec_replan(struct store_pg *s, const struct pg_stmt *stmt, int n, const char *const *values,
                   PGresult **out, struct jobd_error *err);
/*
 * Connects to url (a libpq URI), adding what it does not set of
 * connect_timeout, tcp_user_timeout and keepalives (pg/conn.c:
 * conn_defaults), so a silent peer ends a call in seconds. jobd's own
 * query parameter pooler=transaction (the URL names a PgBouncer in
 * transaction pooling mode) is taken out before libpq sees the URL and
 * sets *pooled: then every statement goes unnamed (PQexecParams) and the
 * store never LISTENs, since no session outlives a transaction there.
 * JOBD_E_INVALID for a malformed URL, JOBD_E_UNAVAILABLE when the server
 * does not answer (the message names host and port, never the password).
 * On success *out is owned by the caller (PQfinish).
 */
int pg_connect(const char *url, PGconn **out, bool *pooled, struct jobd_error *err);
/* Runs parameterless SQL text (SET, LISTEN ...; a write transaction uses pg_tx_*). Same errors. */
int pg_exec_simple(struct store_pg *s, const char *sql, struct jobd_error *err);
/* Makes sure the connection is up (PQreset if not). JOBD_E_UNAVAILABLE. */
int pg_ensure_conn(struct store_pg *s, struct jobd_error *err);
/* Reconnects (PQreset) whatever the connection's state. JOBD_E_UNAVAILABLE. */
int pg_reconnect(struct store_pg *s, struct jobd_error *err);
/*
 * Sets err from a failed result r (NULL: libpq's own message) and PQclear()s
 * it: JOBD_E_UNAVAILABLE for a lost connection or a server going down,
 * JOBD_E_CONFLICT for a unique violation, JOBD_E_STORE otherwise.
 */
int pg_result_error(struct store_pg *s, PGresult *r, const char *what, struct jobd_error *err);

/*
 * Transactions whose outcome the caller always learns (pg/tx.c).
 * pg_tx_begin sends nothing: the next pg_exec (or pg_exec_simple) sends
 * BEGIN and takes the transaction id in the same round trip. Inside, a
 * statement never reconnects. pg_tx_commit: JOBD_OK when it committed;
 * the server's refusal (not committed) as pg_exec's errors; and when the
 * connection broke after COMMIT was sent, it reconnects and asks
 * PostgreSQL (txid_status) how it ended: committed -> JOBD_OK, aborted ->
 * JOBD_E_UNAVAILABLE (nothing was written), and JOBD_E_COMMIT_UNKNOWN if
 * that cannot be learned within PG_OUTCOME_WAIT_MS. pg_tx_rollback ends
 * the transaction without a result (any state; a no-op without one).
 * pg_tx_begin is JOBD_E_INTERNAL inside a transaction.
 */
#define PG_OUTCOME_WAIT_MS 10000
int pg_tx_begin(struct store_pg *s, struct jobd_error *err);
int pg_tx_commit(struct store_pg *s, struct jobd_error *err);
void pg_tx_rollback(struct store_pg *s);
/* pg_tx_commit when rc is JOBD_OK, else pg_tx_rollback; returns the outcome. */
int pg_tx_end(struct store_pg *s, int rc, struct jobd_error *err);

/* Decodes PG_JOB_COLS starting at column col0 of row into out (zeroed). JOBD_E_NOMEM. */
int pg_row_to_job(const PGresult *r, int row, int col0, struct job *out);

/* Formats v into buf (>= 24 bytes) and returns buf. */
const char *pg_i64(char *buf, int64_t v);
/* The "now" parameter: NULL (server time) or the store clock's value in buf. */
const char *pg_now_param(const struct store_pg *s, char *buf);
/* A bigint cell; SQL NULL reads as 0. */
int64_t pg_get_i64(const PGresult *r, int row, int col);
/* A text cell as a malloc'd string, or NULL for SQL NULL. *oom set on failure. */
char *pg_get_str(const PGresult *r, int row, int col, bool *oom);

/*
 * A growable PostgreSQL array literal ("{...}") for array parameters, so a
 * whole batch travels as one parameter per column. Elements are quoted and
 * escaped; NULL elements are SQL NULLs.
 */
struct pg_array {
    char *p;
    size_t n, cap;
    bool oom;
};
void pg_array_begin(struct pg_array *a);
void pg_array_add_str(struct pg_array *a, const char *s);
void pg_array_add_i64(struct pg_array *a, int64_t v, bool is_null);
/* Closes the literal; returns it (owned by a, free with pg_array_fini) or NULL on OOM. */
const char *pg_array_end(struct pg_array *a);
void pg_array_fini(struct pg_array *a);

/* Appends the rows of r (PG_RUN_COLS, a claim for a run: claim_req.run_only) to out. JOBD_E_NOMEM. */
int pg_append_runs(const PGresult *r, struct job_list *out, struct jobd_error *err);
/* Appends the rows of r (PG_JOB_COLS) to out. JOBD_E_NOMEM. */
int pg_append_rows(const PGresult *r, struct job_list *out, struct jobd_error *err);
/*
 * A text[] literal of n names in *out, or NULL (= any) when names is NULL or
 * n is 0. a is begun here and always needs pg_array_fini. JOBD_E_NOMEM.
 */
int pg_names_array(struct pg_array *a, const char *const *names, size_t n, const char **out);
/*
 * The limited path of a claim (pg/qlimits.c): claims from the limited
 * queues req covers, within their limits, lowering *left by what it got,
 * and sets *req->held_until_us. types is req's text[] literal or NULL.
 */
int pg_qlimits_claim(struct store_pg *s, const struct claim_req *req, const char *types,
                     struct job_list *out, int *left, struct jobd_error *err);
/*
 * The fair claim of grouped queue q (pg/groups.c): up to n due jobs (req's
 * types, types its text[] literal or NULL) onto out, within lim's group
 * limits (NULL = none; with limits the caller holds q's row), at now (the
 * statement's now parameter: pg_now_param's text or the instant read after
 * the lock); window_us starts lim's group_rate window. cursor (a
 * qlimits_cursor, JOB_GROUP_MAX + 1 bytes) is where the connection's round
 * robin stands: the claim starts after it and moves it on.
 */
int pg_groups_claim(struct store_pg *s, const char *q, const struct claim_req *req,
                    const char *types, int n, const char *now, const struct qlimits_row *lim,
                    int64_t window_us, char *cursor, struct job_list *out, struct jobd_error *err);
/*
 * The claim of grouped queue q while it has a single group (pg/groups.c):
 * its plain claim order, as the fair claim would take them, at a plain
 * claim's cost. Same arguments as pg_groups_claim.
 */
int pg_groups_claim_one(struct store_pg *s, const char *q, const struct claim_req *req,
                        const char *types, int n, const char *now, struct job_list *out,
                        struct jobd_error *err);
/*
 * Forgets q's groups that have no pending job and no running rate window
 * (rate_per_ms: the queue's group_rate, 0 = none), and unmarks q when none
 * of its jobs has a group (pg/groups.c).
 */
int pg_groups_forget(struct store_pg *s, const char *q, int64_t rate_per_ms, const char *now,
                     struct jobd_error *err);
/* Fills the limits of the limited queues among v[0..n) (queue stats). */
int pg_qlimits_fill(struct store_pg *s, struct queue_stat *v, size_t n, struct jobd_error *err);

/* The job and queue operations of the vtable (store_pg_*.c); see store.h. */
int pg_op_enqueue(struct store *st, const struct job_spec *spec, struct job *out, bool *replayed,
                  struct jobd_error *err);
int pg_op_enqueue_batch(struct store *st, const struct job_spec *specs, size_t n, struct job *out,
                        bool *replayed, struct jobd_error *err);
int pg_op_get(struct store *st, int64_t id, struct job *out, struct jobd_error *err);
/*
 * The end of a completion statement whose updated rows are the CTE from:
 * one NOTIFY jobd_done when it completed any and a server listens for
 * ends (pg/ends.c). A one-time filter over a scalar subquery, so it runs
 * once per statement.
 */
#define PG_ENDED_WAKE(from)                                                                        \
    " WHERE (SELECT count(*) FROM (SELECT pg_notify('jobd_done', '')"                              \
    " WHERE EXISTS (SELECT 1 FROM " from ") AND EXISTS (SELECT 1 FROM jobd.result_listeners))"     \
    " ended) >= 0"
/*
 * A data-modifying CTE "ev" recording the event rows of a claim's or a
 * completion's rows (the CTE from: id, attempt, queue, type), all of them
 * moved from st_from to st_to: one row per queue, type and id / 128, with
 * the jobs and their attempts in two arrays, as jobd.events_updated wrote
 * them (schema version 36) before version 38 dropped its trigger (so the
 * hot path keeps no transition table). One probe of jobd.event_log while
 * nobody listens (a one-time filter).
 */
#define PG_EVENTS_BATCH(from, st_from, st_to)                                                      \
    " ev AS (INSERT INTO jobd.events (id, job, queue, type, from_st, to_st, attempt, jobs,"        \
    "                                 attempts)"                                                   \
    " SELECT nextval('jobd.event_id_seq'), 0, e.queue, e.type, '" st_from "', '" st_to "', 0,"     \
    "        array_agg(e.id), array_agg(e.attempt) FROM " from " e WHERE jobd.events_on()"         \
    " GROUP BY e.queue, e.type, e.id / 128)"
/*
 * A claim's UPDATE (update, "... WHERE ... ", after "WITH due AS (...) ")
 * returning cols (id, queue, type and attempt among them) as the CTE c, its
 * events (PG_EVENTS_BATCH), and c's rows as the answer.
 */
#define PG_CLAIM_EVENTS(update, cols)                                                              \
    ", c AS (" update "RETURNING " cols                                                            \
    ")," PG_EVENTS_BATCH("c", "pending", "running") " SELECT * FROM c"
/*
 * After PG_ENDED_WAKE: makes the completion's CTE dep (its dependants'
 * release) run, as a one-time filter; a SELECT CTE runs only when read.
 */
#define PG_DEPS_RAN " AND (SELECT count(*) FROM dep) >= 0"
/* pg/cancels.c: store_cancels_requested */
int pg_op_cancels_requested(struct store *st, const int64_t *ids, size_t n, bool *requested,
                            struct jobd_error *err);
/* pg/ends.c: store_job_states, store_wait_ends */
int pg_op_job_states(struct store *st, const int64_t *ids, size_t n, int *status,
                     struct jobd_error *err);
int pg_op_wait_ends(struct store *st, int timeout_ms, struct jobd_error *err);
/* Before a connection that listens for ends closes: it listens no more. */
void pg_ends_forget(struct store_pg *s);
/* store_search (pg/search.c); f->search already folded by store_search. */
int pg_op_search(struct store *st, const struct job_filter *f, struct job_list *out,
                 int64_t *next_cursor, bool *partial, struct jobd_error *err);
int pg_op_list(struct store *st, const struct job_filter *f, struct job_list *out,
               int64_t *next_cursor, struct jobd_error *err);
int pg_op_claim(struct store *st, const struct claim_req *req, struct job_list *out,
                struct jobd_error *err);
void pg_op_offload(struct store *st);
int pg_op_next_run_at(struct store *st, const struct claim_req *req, int64_t *run_at_us,
                      struct jobd_error *err);
/* pg/progress.c (store/progress.h) */
struct progress_report;
int pg_op_progress(struct store *st, int64_t id, int32_t attempt, const struct progress_report *p,
                   int64_t lease_ms, int64_t *lease_expires_at_us, bool *cancel_requested,
                   struct jobd_error *err);
int pg_op_progress_attach(struct store *st, struct job *v, size_t n, struct jobd_error *err);
/*
 * Enqueues one spec on the current transaction, if any (pg/enqueue.c);
 * field names the key in errors ("jobs[3].idempotency_key"). On a replay
 * *out is the existing job; *id_out (may be NULL) the job's id.
 */
int pg_enqueue_one(struct store_pg *s, const struct job_spec *sp, const char *field,
                   struct job *out, bool *replayed, int64_t *id_out, struct jobd_error *err);
/*
 * Enqueues one spec as pg_enqueue_one, or, with a debounce or a unique
 * window, as pg_enqueue_window (pg/enqkeys.c): the key's row is taken
 * first, and a debounced replacement or a job inside its window is
 * answered with *replayed true. prefix ("jobs[3].", may be NULL) names the
 * item in errors. On the current transaction; the caller opens one.
 */
int pg_enqueue_item(struct store_pg *s, const struct job_spec *sp, const char *prefix,
                    struct job *out, bool *replayed, struct jobd_error *err);
int pg_enqueue_window(struct store_pg *s, const struct job_spec *sp, const char *prefix,
                      struct job *out, bool *replayed, struct jobd_error *err);
/*
 * Takes the keys of a batch's debounce and unique items (two or more) in
 * one order, kind, queue, type, key bytewise, before its items are
 * enqueued in batch order: two batches with keys A and B cannot each hold
 * one and wait for the other. On the current transaction.
 */
int pg_lock_batch_keys(struct store_pg *s, const struct job_spec *specs, size_t n,
                       struct jobd_error *err);
/* Deletes up to limit expired unique windows (store_keys_expire). */
int pg_op_keys_expire(struct store *st, int limit, int *deleted, struct jobd_error *err);
/* Workflows (store/workflow.h; pg/workflow.c, schema version 25). */
struct workflow;
struct workflow_spec;
struct workflow_plan;
int pg_op_workflow_submit(struct store *st, const struct workflow_spec *spec,
                          const struct workflow_plan *plan, int64_t *id, int64_t *job_ids,
                          bool *replayed, struct jobd_error *err);
int pg_op_workflow_get(struct store *st, int64_t id, struct workflow *out, struct jobd_error *err);
int pg_op_workflow_ids(struct store *st, const char *name, int64_t before_id, int limit,
                       int64_t *ids, size_t *n, struct jobd_error *err);
int pg_op_deps_attach(struct store *st, struct job *v, size_t n, struct jobd_error *err);
/*
 * Steps of a workflow written set-wise (pg/workflow_write.c): rows in the
 * order their ids ascend (parents first), then pg_wf_rows_write inside the
 * open transaction. pg_wf_row: a step's job (waits: into jobs_waiting, the
 * caller knowing a parent has not ended), its ref and place; pg_wf_edge:
 * an edge, ended (NULL: open) as the parent's end if it has one.
 * pg_wf_alloc_ids: n new job ids, ascending.
 */
#define PG_WF_ARRAYS 17
struct pg_wf_rows {
    struct pg_array a[PG_WF_ARRAYS];
    size_t n;
};
void pg_wf_rows_begin(struct pg_wf_rows *w);
void pg_wf_rows_fini(struct pg_wf_rows *w);
void pg_wf_row(struct pg_wf_rows *w, const struct job_spec *sp, int64_t id, const char *ref,
               int64_t ord, bool waits, bool has_children);
void pg_wf_edge(struct pg_wf_rows *w, int64_t parent, int64_t child, bool run, const char *ended);
int pg_wf_rows_write(struct store_pg *s, int64_t wf, struct pg_wf_rows *w, struct jobd_error *err);
int pg_wf_alloc_ids(struct store_pg *s, size_t n, int64_t *ids, struct jobd_error *err);
/* pg/workflow_ops.c (store/workflow.h) */
struct workflow_add;
struct workflow_change;
int pg_op_workflow_add(struct store *st, int64_t id, const struct workflow_add *add,
                       int64_t *job_ids, struct jobd_error *err);
int pg_op_workflow_cancel(struct store *st, int64_t id, struct workflow_change *c,
                          struct jobd_error *err);
int pg_op_workflow_retry(struct store *st, int64_t id, const int64_t *ids, size_t n,
                         struct workflow_change *c, struct jobd_error *err);
int pg_op_workflow_delete(struct store *st, int64_t id, struct jobd_error *err);
int pg_op_parents_attach(struct store *st, struct job *v, size_t n, struct jobd_error *err);
/* Schema version 23, events (pg/schema_events.c). */
extern const char pg_step_events[];
/* Schema version 24, dependencies (pg/schema_deps.c). */
extern const char pg_step_deps[];
/* Schema version 25, events of waiting jobs (pg/schema_events_deps.c). */
extern const char pg_step_events_deps[];
/* Schema version 26, workflows (pg/schema_workflows.c). */
extern const char pg_step_workflows[];
extern const char pg_step_enqueue_deps[];
/* Schema version 31, jobd.enqueue takes "group" (pg/schema_enqueue_group.c). */
extern const char pg_step_enqueue_group[];
/* Schema version 32, jobd.enqueue takes debounce and unique windows
 * (pg/schema_enqueue_keys.c). */
extern const char pg_step_enqueue_keys[];
/* Schema version 28, debounce and unique keys (pg/schema_enqkeys.c). */
extern const char pg_step_enqkeys[];
/* Schema version 29, groups (pg/schema_groups.c). */
extern const char pg_step_groups[];
/* Schema version 30, dependencies released set-wise (pg/schema_deps_fast.c). */
extern const char pg_step_deps_fast[];
/* Schema version 35, a batch's parents attached set-wise (pg/schema_deps_batch.c). */
extern const char pg_step_deps_batch[];
/* Schema version 34, the event log with one index fewer (pg/schema_events_cheap.c). */
extern const char pg_step_events_cheap[];
/* Schema version 36, a statement's claims and successes in one event row
 * (pg/schema_events_rows.c). */
extern const char pg_step_events_rows[];
/* Schema version 37, the listing index by group over pending rows only
 * (pg/schema_groups_cheap.c). */
extern const char pg_step_groups_cheap[];
/* Schema version 38, the table layout move_slim: completions move the row
 * into jobs_done, partitioned by day and status (pg/schema_layout.c). */
extern const char pg_step_layout[];
/* Schema version 39, jobd.archive_days safe beside writers of the default
 * partition (pg/schema_archive_days.c). */
extern const char pg_step_archive_days[];
/* Schema version 40, autovacuum of jobd.jobs without its cost delay
 * (pg/schema_vacuum_hot.c). */
extern const char pg_step_vacuum_hot[];
/* Schema version 41, no truncation of jobd.jobs by a vacuum
 * (pg/schema_vacuum_truncate.c). */
extern const char pg_step_vacuum_truncate[];
/* Schema version 42, autovacuum of jobd.jobs as a fallback only
 * (pg/schema_autovacuum_fallback.c). */
extern const char pg_step_autovacuum_fallback[];
/* pg/attemptlog.c (store/attemptlog.h) */
struct attempt_log;
int pg_op_attempt_logs_put(struct store *st, const struct attempt_log *v, size_t n, int *outcome,
                           struct jobd_error *err);
int pg_op_attempt_log_get(struct store *st, int64_t id, int32_t attempt, char **text,
                          struct jobd_error *err);
struct attempt_log_size;
int pg_op_attempt_log_sizes(struct store *st, int64_t id, struct attempt_log_size **out, size_t *n,
                            struct jobd_error *err);
/* store/events.h (pg/events.c) */
int pg_op_events_listen(struct store *st, struct events_head *head, struct jobd_error *err);
int pg_op_events_head(struct store *st, struct events_head *head, struct jobd_error *err);
int pg_op_events_read(struct store *st, int64_t after, int64_t upto, int limit,
                      struct store_event **out, size_t *n, struct jobd_error *err);
int pg_op_events_resumable(struct store *st, int64_t after, bool *ok, struct jobd_error *err);
int pg_op_heartbeat(struct store *st, int64_t id, int32_t attempt, int64_t lease_ms,
                    int64_t *lease_expires_at_us, bool *cancel_requested, struct jobd_error *err);
int pg_op_complete(struct store *st, int64_t id, int32_t attempt, const char *result,
                   struct job *out, struct jobd_error *err);
int pg_op_complete_batch(struct store *st, const struct completion *c, size_t n, int *outcome,
                         struct jobd_error *err);
int pg_op_fail(struct store *st, int64_t id, int32_t attempt, const char *error, bool retryable,
               int64_t retry_delay_ms, const struct backoff_policy *bp, struct job *out,
               struct jobd_error *err);
int pg_op_fail_batch(struct store *st, const struct fail_report *f, size_t n, int *outcome,
                     enum job_status *status, struct jobd_error *err);
int pg_op_reap(struct store *st, int limit, const struct backoff_policy *bp, struct reaped_job *out,
               size_t cap, int *reaped, struct jobd_error *err);
int pg_op_release(struct store *st, int64_t id, int32_t attempt, struct jobd_error *err);
int pg_op_cancel(struct store *st, int64_t id, struct job *out, struct jobd_error *err);
int pg_op_retry(struct store *st, int64_t id, struct job *out, struct jobd_error *err);
int pg_op_queue_pause(struct store *st, const char *queue, bool paused, struct jobd_error *err);
int pg_op_queue_stats(struct store *st, struct queue_stat **out, size_t *n, struct jobd_error *err);
/* Heap blocks of jobs_done a queue-counts refresh reads per statement (pg/counts.c): 32 MB. */
#define PG_COUNTS_CHUNK_BLOCKS 4096
int pg_op_prune(struct store *st, int64_t finished_before_us, int limit, int *deleted,
                struct jobd_error *err);

/* The schedule operations of the vtable (pg/sched.c); see store.h. */
int pg_op_schedule_put(struct store *st, const struct schedule_spec *spec, bool replace,
                       int64_t max_schedules, struct schedule *out, bool *created,
                       struct jobd_error *err);
int pg_op_schedule_get(struct store *st, const char *name, struct schedule *out,
                       struct jobd_error *err);
int pg_op_schedule_list(struct store *st, const struct name_page *pg, struct schedule_list *out,
                        struct jobd_error *err);
int pg_op_schedule_delete(struct store *st, const char *name, struct jobd_error *err);
int pg_op_schedule_pause(struct store *st, const char *name, bool paused, struct schedule *out,
                         struct jobd_error *err);
int pg_op_schedule_trigger(struct store *st, const char *name, struct job *out,
                           struct jobd_error *err);
int pg_op_schedule_materialize(struct store *st, int limit, int64_t grace_us, int *made,
                               int64_t *soonest_us, struct jobd_error *err);
/* store_now and store_clock_went_back (pg/clockjump.c). */
int pg_op_now(struct store *st, int64_t *now_us, struct jobd_error *err);
int pg_op_clock_went_back(struct store *st, int64_t back_us, int *jobs, int *schedules,
                          struct jobd_error *err);

/*
 * The listing statement of GET /v1/jobs for f with a page of `limit` rows
 * (pg/list.c): q->sql is malloc'd (the caller frees it), q->vals[0..q->n) its
 * parameters, pointing into f and q->buf. f->status must be valid. JOBD_OK or
 * JOBD_E_NOMEM. Exposed for the test of its query plans (test_list_plans).
 */
struct pg_list_query {
    char *sql;
    size_t len, cap;
    int branches;
    int n;
    const char *vals[12]; /* the filters' 9, now (due), and 2 for a search (pg/search.c) */
    char buf[5][24];
};
struct job_filter;
/* now: pg_now_param's text (NULL = the server's now()), used by f->due only. */
int pg_list_sql(const struct job_filter *f, int limit, const char *now, struct pg_list_query *q);

#endif
