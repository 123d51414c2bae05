/*
 * sqlite/workers.c — worker presence (store/operator.h) on SQLite. Times are
 * the store's clock (one machine: one clock).
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/operator_int.h"
#include "store/sqlite/internal.h"

/* One statement that writes, in its own transaction; returns changes() or < 0. */
static int
write_one(struct sqlite_store *s, sqlite3_stmt *stmt, const char *what, struct jobd_error *err)
{
    int rc = sq_step_done(s, stmt, what, err);
    return rc != JOBD_OK ? rc : sqlite3_changes(s->db);
}

/*
 * Inside the open transaction, for a capped announce: an id the store does
 * not know makes room by forgetting the gone workers seen longest ago, then
 * is refused while max rows are still kept (store_worker_announce_capped).
 */
static int
make_room(struct sqlite_store *s, const char *id, int64_t now, int64_t max, struct jobd_error *err)
{
    static const char count[] = "SELECT count(*), coalesce(max(id = ?1), 0) FROM workers";
    static const char evict[] =
        "DELETE FROM workers WHERE id IN (SELECT id FROM workers"
        "  WHERE last_seen_at < ?1 - 3 * heartbeat_ms * 1000 ORDER BY last_seen_at LIMIT ?2)";
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, count, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    for (int round = 0; round < 2; round++) {
        sq_bind_text(stmt, 1, id);
        if ((rc = sq_step_row(s, stmt, "count workers", err)) < 0)
            return rc;
        int64_t n = sqlite3_column_int64(stmt, 0);
        bool known = sqlite3_column_int(stmt, 1) != 0;
        sq_reset(stmt);
        if (known || n < max)
            return JOBD_OK;
        if (round == 1)
            break;
        sqlite3_stmt *del;
        if ((rc = sq_prepare(s, evict, &del, err)) != JOBD_OK)
            return rc;
        sqlite3_bind_int64(del, 1, now);
        sqlite3_bind_int64(del, 2, n - max + 1);
        if ((rc = sq_step_done(s, del, "forget gone workers", err)) != JOBD_OK)
            return rc;
    }
    return jobd_error_set(err, JOBD_E_CONFLICT, "max_workers",
                          "this server keeps at most %lld live workers (--max-workers)",
                          (long long)max);
}

int
sq_op_worker_announce(struct store *st, const struct worker_info *w, int64_t max_workers,
                      struct jobd_error *err)
{
    static const char forget[] =
        "DELETE FROM workers WHERE id <> ?1 AND last_seen_at < ?2 - 3 * heartbeat_ms * 1000"
        " - 3600000000";
    static const char upsert[] =
        "INSERT OR REPLACE INTO workers (id, hostname, pid, version, queues, types,"
        "  concurrency, heartbeat_ms, started_at, last_seen_at, draining)"
        " VALUES (?1, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?2, ?2, 0)";
    static const char touch[] =
        "INSERT INTO workers (id, hostname, pid, version, queues, types,"
        "  concurrency, heartbeat_ms, started_at, last_seen_at, draining)"
        " VALUES (?1, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?2, ?2, 0)"
        " ON CONFLICT (id) DO UPDATE SET last_seen_at = excluded.last_seen_at";
    struct sqlite_store *s = sq_of(st);
    int64_t now = sq_now(s);
    int rc = sq_begin(s, err);
    sqlite3_stmt *stmt;
    if (rc == JOBD_OK && (rc = sq_prepare(s, forget, &stmt, err)) == JOBD_OK) {
        sq_bind_text(stmt, 1, w->id);
        sqlite3_bind_int64(stmt, 2, now);
        rc = sq_step_done(s, stmt, "forget old workers", err);
    }
    if (rc == JOBD_OK && max_workers > 0)
        rc = make_room(s, w->id, now, max_workers, err);
    if (rc == JOBD_OK &&
        (rc = sq_prepare(s, w->keep_existing ? touch : upsert, &stmt, err)) == JOBD_OK) {
        sq_bind_text(stmt, 1, w->id);
        sqlite3_bind_int64(stmt, 2, now);
        sq_bind_text(stmt, 3, w->hostname ? w->hostname : "");
        sqlite3_bind_int64(stmt, 4, w->pid);
        sq_bind_text(stmt, 5, w->version ? w->version : "");
        sq_bind_text(stmt, 6, w->queues ? w->queues : "[]");
        sq_bind_text(stmt, 7, w->types ? w->types : "[]");
        sqlite3_bind_int(stmt, 8, w->concurrency);
        sqlite3_bind_int64(stmt, 9, w->heartbeat_ms);
        rc = sq_step_done(s, stmt, "announce worker", err);
    }
    if (rc == JOBD_OK)
        return sq_commit(s, err);
    sq_rollback(s);
    return rc;
}

int
sq_op_worker_seen(struct store *st, const char *id, bool draining, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, "UPDATE workers SET last_seen_at = ?2, draining = ?3 WHERE id = ?1",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, id);
    sqlite3_bind_int64(stmt, 2, sq_now(s));
    sqlite3_bind_int(stmt, 3, draining);
    rc = write_one(s, stmt, "refresh worker", err);
    if (rc == 0)
        return jobd_error_set(err, JOBD_E_NOTFOUND, "id", "no worker '%s'", id);
    return rc < 0 ? rc : JOBD_OK;
}

int
sq_op_worker_withdraw(struct store *st, const char *id, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, "DELETE FROM workers WHERE id = ?1", &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, id);
    rc = write_one(s, stmt, "withdraw worker", err);
    return rc < 0 ? rc : JOBD_OK;
}

/* Reads one row of the list statement into w; false on out-of-memory. */
static bool
read_worker(sqlite3_stmt *stmt, struct worker_info *w)
{
    int oom = 0;
    w->id = sq_col_strdup(stmt, 0, &oom);
    w->hostname = sq_col_strdup(stmt, 1, &oom);
    w->pid = sqlite3_column_int64(stmt, 2);
    w->version = sq_col_strdup(stmt, 3, &oom);
    w->queues = sq_col_strdup(stmt, 4, &oom);
    w->types = sq_col_strdup(stmt, 5, &oom);
    w->concurrency = sqlite3_column_int(stmt, 6);
    w->heartbeat_ms = sqlite3_column_int64(stmt, 7);
    w->started_at_us = sqlite3_column_int64(stmt, 8);
    w->last_seen_at_us = sqlite3_column_int64(stmt, 9);
    w->draining = sqlite3_column_int(stmt, 10) != 0;
    w->gone = sqlite3_column_int(stmt, 11) != 0;
    return !oom;
}

int
sq_op_worker_list(struct store *st, const struct name_page *pg, struct worker_list *out,
                  struct jobd_error *err)
{
    /* One statement: the workers, each followed by the jobs it runs (a NULL job
     * id for none), so the list and the running ids are one snapshot. */
    static const char sql[] =
        "SELECT w.id, w.hostname, w.pid, w.version, w.queues, w.types, w.concurrency,"
        "  w.heartbeat_ms, w.started_at, w.last_seen_at, w.draining,"
        "  w.last_seen_at < ?1 - 3 * w.heartbeat_ms * 1000, j.id"
        " FROM (SELECT * FROM workers"
        "   WHERE last_seen_at >= ?1 - 3 * heartbeat_ms * 1000 - 3600000000"
        "   AND (?2 IS NULL OR id > ?2) ORDER BY id LIMIT ?3) w"
        " LEFT JOIN jobs j ON j.worker_id = w.id AND j.status = 'running'"
        " ORDER BY w.id, j.id";
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, sq_now(s));
    sq_bind_text(stmt, 2, pg->after);
    sqlite3_bind_int(stmt, 3, pg->limit > 0 ? pg->limit : -1);
    bool ok = true;
    while (ok && (rc = sq_step_row(s, stmt, "list workers", err)) == 1) {
        const char *id = (const char *)sqlite3_column_text(stmt, 0);
        struct worker_info *w = out->n ? &out->v[out->n - 1] : NULL;
        if (w == NULL || strcmp(w->id, id) != 0)
            ok = (w = worker_list_push(out)) != NULL && read_worker(stmt, w);
        if (ok && sqlite3_column_type(stmt, 12) != SQLITE_NULL)
            ok = worker_info_add_running(w, sqlite3_column_int64(stmt, 12));
    }
    sq_reset(stmt);
    if (!ok)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory listing workers");
    return rc < 0 ? rc : JOBD_OK;
}
