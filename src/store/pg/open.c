/*
 * pg/open.c — the PostgreSQL backend of store.h (libpq): open, migrate,
 * ping, close, LISTEN-based wait, and the vtable that ties the operations
 * of the other store_pg_*.c files together.
 *
 * Every transition is ONE statement: data-modifying CTEs move a row between
 * jobd.jobs (pending/running, the hot set) and jobd.jobs_done (terminal) in
 * the same statement that decides its fate, except a completion, which
 * updates the row in place (the archive pass moves succeeded rows later,
 * pg/prune.c), and every report carries the
 * fence `status = 'running' AND attempt = $a`. Claims lock with FOR UPDATE
 * SKIP LOCKED, so claimers never wait for each other and never share a job.
 * Parameters are text; times are bigint microseconds (see pg/internal.h).
 * The operations live by concern in pg/enqueue.c, pg/read.c,
 * pg/report.c and pg/admin.c.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "store/backends.h"
#include "store/pg/internal.h"
#include "store/operator_int.h"
#include "store/stats_int.h"
#include "util/errtext.h"
#include "util/lazylib.h"

/* ---- migrate, ping, close ---- */

/* An arbitrary fixed key for pg_advisory_xact_lock: "jobd" + "mig". */
#define MIGRATE_LOCK_KEY "6a6f6264006d6967"

static int
pg_migrate(struct store *st, struct jobd_error *err)
{
    static const struct pg_stmt st_mig_version = {
        "st_mig_version", "SELECT COALESCE(max(version), 0) FROM jobd.schema_migrations"};
    static const struct pg_stmt st_mig_insert = {
        "st_mig_insert", "INSERT INTO jobd.schema_migrations (version, name) "
                         "VALUES ($1::int, $2::text)"};
    struct store_pg *s = pg_of(st);
    int rc = pg_exec_simple(s, "BEGIN", err);
    if (rc != JOBD_OK)
        return rc;
    rc = pg_exec_simple(s,
                        "SELECT pg_advisory_xact_lock(x'" MIGRATE_LOCK_KEY "'::bigint);"
                        "CREATE SCHEMA IF NOT EXISTS jobd;"
                        "CREATE TABLE IF NOT EXISTS jobd.schema_migrations ("
                        "  version int PRIMARY KEY, name text NOT NULL,"
                        "  applied_at timestamptz NOT NULL DEFAULT now())",
                        err);
    PGresult *r = NULL;
    if (rc == JOBD_OK)
        rc = pg_exec(s, &st_mig_version, 0, NULL, &r, err);
    int have = rc == JOBD_OK ? (int)pg_get_i64(r, 0, 0) : 0;
    PQclear(r);
    for (size_t i = 0; rc == JOBD_OK && i < pg_migrations_count; i++) {
        const struct pg_migration *m = &pg_migrations[i];
        if (m->version <= have)
            continue;
        rc = pg_exec_simple(s, m->sql, err);
        if (rc != JOBD_OK) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
            rc = jobd_error_set(err, rc, "db", "migration %d (%s) failed: %s", m->version, m->name,
                                msg);
            break;
        }
        char v[24];
        const char *vals[2] = {pg_i64(v, m->version), m->name};
        rc = pg_exec(s, &st_mig_insert, 2, vals, &r, err);
        PQclear(r);
    }
    if (rc == JOBD_OK)
        return pg_exec_simple(s, "COMMIT", err);
    (void)pg_exec_simple(s, "ROLLBACK", NULL);
    return rc;
}

static int
pg_ping(struct store *st, struct jobd_error *err)
{
    return pg_exec_simple(pg_of(st), "SELECT 1", err);
}

static void
pg_close(struct store *st)
{
    struct store_pg *s = pg_of(st);
    pg_ends_forget(s);
    PQfinish(s->conn);
    qlimits_cache_fini(&s->qlim);
    free(s);
}

/* Consumes queued notifications; returns their STORE_WAKE_* bits (0: none). */
static int
drain_notifies(PGconn *c)
{
    int bits = 0;
    PGnotify *nt;
    while ((nt = PQnotifies(c)) != NULL) {
        bits |= strcmp(nt->relname, "jobd_cancel") == 0 ? STORE_WAKE_CANCEL : STORE_WAKE_JOBS;
        PQfreemem(nt);
    }
    return bits;
}

static int
pg_wait(struct store *st, int timeout_ms, struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    if (s->pooled) {
        /* No session to LISTEN on (pg_wait_ready said so): nap, as store.h allows. */
        int ms = timeout_ms < 50 ? timeout_ms : 50;
        if (ms > 0)
            usleep((useconds_t)ms * 1000);
        return 1;
    }
    if (!s->listening) {
        int rc = pg_exec_simple(s, "LISTEN jobd_jobs; LISTEN jobd_cancel", err);
        if (rc != JOBD_OK)
            return rc;
        s->listening = true;
    }
    int64_t deadline = clock_mono_now_us() + (int64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000;
    for (;;) {
        if (PQconsumeInput(s->conn) == 0) {
            s->listening = false;
            return jobd_error_set(err, JOBD_E_UNAVAILABLE, "db", "PostgreSQL is unavailable: %s",
                                  PQerrorMessage(s->conn));
        }
        int bits = drain_notifies(s->conn);
        if (bits != 0)
            return bits;
        int64_t left_us = deadline - clock_mono_now_us();
        if (left_us <= 0)
            return 0;
        struct pollfd pfd = {.fd = PQsocket(s->conn), .events = POLLIN};
        int pr = poll(&pfd, 1, (int)((left_us + 999) / 1000));
        if (pr < 0 && errno != EINTR)
            return jobd_error_set(err, JOBD_E_IO, "db", "poll: %s", errno_text(errno));
    }
}

/* LISTEN works on every PostgreSQL connection but one through a transaction pooler. */
static bool
pg_wait_ready(struct store *st)
{
    return !pg_of(st)->pooled;
}

/* `jobd migrate --status`: read-only, so no lock and no CREATE. */
static int
pg_schema_status(struct store *st, int *current, int *newest, struct jobd_error *err)
{
    static const struct pg_stmt st_mig_exists = {
        "st_mig_exists", "SELECT (to_regclass('jobd.schema_migrations') IS NOT NULL)::int"};
    static const struct pg_stmt st_mig_current = {
        "st_mig_current", "SELECT COALESCE(max(version), 0) FROM jobd.schema_migrations"};
    struct store_pg *s = pg_of(st);
    PGresult *r = NULL;
    *current = 0;
    *newest = pg_migrations[pg_migrations_count - 1].version;
    int rc = pg_exec(s, &st_mig_exists, 0, NULL, &r, err);
    bool exists = rc == JOBD_OK && pg_get_i64(r, 0, 0) == 1;
    PQclear(r);
    if (rc != JOBD_OK || !exists)
        return rc;
    rc = pg_exec(s, &st_mig_current, 0, NULL, &r, err);
    if (rc == JOBD_OK)
        *current = (int)pg_get_i64(r, 0, 0);
    PQclear(r);
    return rc;
}

static const char *
pg_migration_name(int version)
{
    for (size_t i = 0; i < pg_migrations_count; i++)
        if (pg_migrations[i].version == version)
            return pg_migrations[i].name;
    return NULL;
}

/* The operator half of the vtable (store/operator.h). */
static const struct store_operator_ops pg_operator_ops = {
    .attempts = pg_op_attempts,
    .bulk_batch = pg_op_bulk_batch,
    .worker_announce = pg_op_worker_announce,
    .worker_seen = pg_op_worker_seen,
    .worker_withdraw = pg_op_worker_withdraw,
    .worker_list = pg_op_worker_list,
    .prune_status = pg_op_prune_status,
    .counts_refresh = pg_op_counts_refresh,
    .queue_limits = pg_op_queue_limits,
    .archive = NULL, /* completions move the row (migration 38) */
    .vacuum_hot = pg_op_vacuum_hot,
    .hot_churn = pg_op_hot_churn,
    .archive_days = pg_op_archive_days,
    .pending_queue_types = pg_op_pending_queue_types,
    .queue_groups = pg_op_queue_groups,
    .queue_group_counts = pg_op_queue_group_counts,
    .lease_set = pg_op_lease_set,
    .lease_check = pg_op_lease_check,
    .lease_replayed = pg_op_lease_replayed,
    .stats_series = pg_op_stats_series,
    .stats_throughput = pg_op_stats_throughput,
    .stats_prune = pg_op_stats_prune,
    .keys_expire = pg_op_keys_expire,
};

static const struct store_ops pg_ops = {
    .name = "pg",
    /* NOTIFY reaches every connection; writers run side by side (row locks). */
    .caps = {.push_wakeups = true,
             .parallel_writers = true,
             .watched_poll_ms = 5000,
             .blind_poll_ms = 1000, /* no LISTEN (a pooler, a budget): the poll is the signal */
             .label = "PostgreSQL"},
    .close = pg_close,
    .migrate = pg_migrate,
    .schema_status = pg_schema_status,
    .migration_name = pg_migration_name,
    .ping = pg_ping,
    .enqueue = pg_op_enqueue,
    .enqueue_batch = pg_op_enqueue_batch,
    .get = pg_op_get,
    .list = pg_op_list,
    .search = pg_op_search,
    .claim = pg_op_claim,
    .heartbeat = pg_op_heartbeat,
    .complete = pg_op_complete,
    .complete_batch = pg_op_complete_batch,
    .fail = pg_op_fail,
    .fail_batch = pg_op_fail_batch,
    .reap = pg_op_reap,
    .release = pg_op_release,
    .cancel = pg_op_cancel,
    .retry = pg_op_retry,
    .queue_pause = pg_op_queue_pause,
    .queue_stats = pg_op_queue_stats,
    .prune = pg_op_prune,
    .next_run_at = pg_op_next_run_at,
    .wait = pg_wait,
    .wait_ready = pg_wait_ready,
    .offload = pg_op_offload,
    .schedule_put = pg_op_schedule_put,
    .schedule_get = pg_op_schedule_get,
    .schedule_list = pg_op_schedule_list,
    .schedule_delete = pg_op_schedule_delete,
    .schedule_pause = pg_op_schedule_pause,
    .schedule_trigger = pg_op_schedule_trigger,
    .schedule_materialize = pg_op_schedule_materialize,
    .now = pg_op_now,
    .clock_went_back = pg_op_clock_went_back,
    .oper = &pg_operator_ops,
    .job_states = pg_op_job_states,
    .cancels_requested = pg_op_cancels_requested,
    .wait_ends = pg_op_wait_ends,
    .progress = pg_op_progress,
    .progress_attach = pg_op_progress_attach,
    .deps_attach = pg_op_deps_attach,
    .parents_attach = pg_op_parents_attach,
    .workflow_submit = pg_op_workflow_submit,
    .workflow_get = pg_op_workflow_get,
    .workflow_ids = pg_op_workflow_ids,
    .workflow_add = pg_op_workflow_add,
    .workflow_cancel = pg_op_workflow_cancel,
    .workflow_retry = pg_op_workflow_retry,
    .workflow_delete = pg_op_workflow_delete,
    .attempt_logs_put = pg_op_attempt_logs_put,
    .attempt_log_get = pg_op_attempt_log_get,
    .attempt_log_sizes = pg_op_attempt_log_sizes,
    .events_listen = pg_op_events_listen,
    .events_head = pg_op_events_head,
    .events_read = pg_op_events_read,
    .events_resumable = pg_op_events_resumable,
};

int
store_pg_open(const char *url, struct store **out, struct jobd_error *err)
{
    *out = NULL;
    const char *why;
    if (!lazylib_load(&lazylib_pq, &why))
        return jobd_error_set(err, JOBD_E_UNAVAILABLE, "db", "%s", why);
    struct store_pg *s = calloc(1, sizeof *s);
    if (s == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, "db", "out of memory");
    int rc = pg_connect(url, &s->conn, &s->pooled, err);
    if (rc != JOBD_OK) {
        free(s);
        return rc;
    }
    s->base.ops = &pg_ops;
    *out = &s->base;
    return JOBD_OK;
}
