/*
 * sqlite/enqueue_one.c — one job into SQLite, inside the caller's
 * transaction: its idempotency key looked up and the row inserted under
 * the single writer lock, so two enqueues of one key cannot both insert;
 * then its parents (docs/MODEL.md, Dependencies). The primitive under
 * sqlite/enqueue.c, sqlite/enqkeys.c and sqlite/workflow.c, in a file of
 * its own so that they call down into it and never back.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/sqlite/internal.h"

/*
 * Looks up spec's idempotency key inside the open transaction. Returns 0 if
 * the key is free, 1 if it belongs to the same request (then *out, if not
 * NULL, is that job), or an error (JOBD_E_CONFLICT naming field).
 */
static int
lookup_key(struct sqlite_store *s, const struct job_spec *spec, const char *queue,
           const char *payload, const char *field, struct job *out, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, "SELECT job_id FROM job_keys WHERE idempotency_key = ?1", &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, spec->idempotency_key);
    if ((rc = sq_step_row(s, stmt, "look up idempotency key", err)) <= 0)
        return rc;
    int64_t existing = sqlite3_column_int64(stmt, 0);
    sq_reset(stmt);
    struct job j = {0};
    rc = sq_load_job(s, existing, &j, err);
    if (rc == JOBD_E_NOTFOUND) {
        /* Its job was deleted outside jobd: the key is free again. */
        rc = sq_prepare(s, "DELETE FROM job_keys WHERE idempotency_key = ?1", &stmt, err);
        if (rc != JOBD_OK)
            return rc;
        sq_bind_text(stmt, 1, spec->idempotency_key);
        return sq_step_done(s, stmt, "free idempotency key", err);
    }
    if (rc != JOBD_OK)
        return rc;
    bool same = strcmp(j.type, spec->type) == 0 && strcmp(j.queue, queue) == 0 &&
                strcmp(j.payload, payload) == 0;
    if (!same) {
        job_fini(&j);
        return jobd_error_set(err, JOBD_E_CONFLICT, field,
                              "idempotency key '%s' was already used by job %lld with a "
                              "different type, queue or payload",
                              spec->idempotency_key, (long long)existing);
    }
    if (out != NULL) {
        job_fini(out);
        job_move(out, &j);
    }
    job_fini(&j);
    return 1;
}

int
sq_enqueue_one(struct sqlite_store *s, const struct job_spec *given, int64_t now,
               const char *field_prefix, struct job *out, bool *replayed, int64_t *id_out,
               struct jobd_error *err)
{
    const struct job_spec d = job_spec_with_defaults(given), *spec = &d;
    sqlite3_stmt *stmt;
    int rc;
    if (spec->idempotency_key != NULL) {
        char field[96];
        snprintf(field, sizeof field, "%sidempotency_key", field_prefix ? field_prefix : "");
        rc = lookup_key(s, spec, spec->queue, spec->payload, field, out, err);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            if (replayed != NULL)
                *replayed = true;
            return JOBD_OK;
        }
    }

    /* No RETURNING: it buffers rows in an ephemeral table per execution. */
    static const char ins[] =
        "INSERT INTO jobs (queue, type, payload, status, priority, run_at, max_attempts, "
        "  idempotency_key, schedule, scheduled_for, timeout_ms, created_at, traceparent, grp) "
        "VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";
    if ((rc = sq_prepare(s, ins, &stmt, err)) != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, spec->queue);
    sq_bind_text(stmt, 2, spec->type);
    sq_bind_text(stmt, 3, spec->payload);
    sqlite3_bind_int(stmt, 4, spec->priority);
    sqlite3_bind_int64(stmt, 5, spec->run_at_us > 0 ? spec->run_at_us : now);
    sqlite3_bind_int(stmt, 6, spec->max_attempts);
    sq_bind_text(stmt, 7, spec->idempotency_key);
    sq_bind_text(stmt, 8, spec->schedule);
    sq_bind_opt(stmt, 9, spec->scheduled_for_us);
    sq_bind_opt(stmt, 10, spec->timeout_ms);
    sqlite3_bind_int64(stmt, 11, now);
    sq_bind_text(stmt, 12, spec->traceparent);
    sq_bind_text(stmt, 13, spec->group);
    if ((rc = sq_step_done(s, stmt, "insert job", err)) != JOBD_OK)
        return rc;
    if ((rc = sq_groups_noted(s, spec->queue, spec->group, err)) != JOBD_OK)
        return rc;
    sq_stats_count(s, spec->queue, STATS_ENQUEUED, now); /* store/stats.h */
    int64_t id = sqlite3_last_insert_rowid(s->db);
    if (id_out != NULL)
        *id_out = id;
    if (spec->n_depends_on > 0 &&
        (rc = sq_deps_enqueued(s, spec, field_prefix, id, now, err)) != JOBD_OK)
        return rc;
    if (out != NULL && (rc = sq_load_job(s, id, out, err)) != JOBD_OK)
        return rc;

    if (spec->idempotency_key != NULL) {
        rc = sq_prepare(s, "INSERT INTO job_keys (idempotency_key, job_id) VALUES (?1, ?2)", &stmt,
                        err);
        if (rc != JOBD_OK)
            return rc;
        sq_bind_text(stmt, 1, spec->idempotency_key);
        sqlite3_bind_int64(stmt, 2, id);
        if ((rc = sq_step_done(s, stmt, "insert idempotency key", err)) != JOBD_OK)
            return rc;
    }
    return JOBD_OK;
}
