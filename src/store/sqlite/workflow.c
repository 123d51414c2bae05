/*
 * sqlite/workflow.c — workflows on SQLite (store/workflow.h; schema
 * migration 19): a submit is one BEGIN IMMEDIATE transaction that writes
 * the workflow, then each step's job in the plan's order through the
 * enqueue of sqlite/enqueue.c (so its parents take the dependency path of
 * sqlite/deps.c), and its row in workflow_steps. All or nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/sqlite/internal.h"
#include "store/workflow.h"

static char *
col_dup(sqlite3_stmt *stmt, int i)
{
    const char *t = (const char *)sqlite3_column_text(stmt, i);
    return strdup(t ? t : "");
}

/*
 * The workflow of spec's idempotency key, if any, inside the open
 * transaction: 0 none (or one with no step left, deleted), 1 found (*id,
 * job_ids by the steps' places), or an error (JOBD_E_CONFLICT for another
 * name).
 */
static int
replay(struct sqlite_store *s, const struct workflow_spec *spec, int64_t *id, int64_t *job_ids,
       struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, "SELECT id, name FROM workflows WHERE idempotency_key = ?1", &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, spec->idempotency_key);
    if ((rc = sq_step_row(s, stmt, "look up workflow key", err)) <= 0)
        return rc;
    int64_t w = sqlite3_column_int64(stmt, 0);
    bool same = strcmp((const char *)sqlite3_column_text(stmt, 1), spec->name) == 0;
    sq_reset(stmt);
    if (!same)
        return jobd_error_set(err, JOBD_E_CONFLICT, "idempotency_key",
                              "idempotency key '%s' was already used by workflow %lld of another "
                              "name",
                              spec->idempotency_key, (long long)w);
    rc = sq_prepare(s, "SELECT ord, ref, job_id FROM workflow_steps WHERE workflow = ?1", &stmt,
                    err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, w);
    size_t found = 0;
    while ((rc = sq_step_row(s, stmt, "read workflow steps", err)) == 1) {
        int64_t ord = sqlite3_column_int64(stmt, 0);
        const char *ref = (const char *)sqlite3_column_text(stmt, 1);
        found++;
        if (ord >= 0 && (size_t)ord < spec->n && strcmp(spec->steps[ord].ref, ref) == 0)
            job_ids[ord] = sqlite3_column_int64(stmt, 2);
    }
    if (rc < 0)
        return rc;
    if (found == 0) {
        /* Retention took every step: the workflow is gone, its key free again. */
        if ((rc = sq_prepare(s, "DELETE FROM workflows WHERE id = ?1", &stmt, err)) != JOBD_OK)
            return rc;
        sqlite3_bind_int64(stmt, 1, w);
        return sq_step_done(s, stmt, "free workflow key", err);
    }
    *id = w;
    return 1;
}

/* Writes the workflow and its steps inside the open transaction. */
static int
submit_in_tx(struct sqlite_store *s, const struct workflow_spec *spec,
             const struct workflow_plan *plan, int64_t *id, int64_t *job_ids,
             struct jobd_error *err)
{
    int64_t now = sq_now(s);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(
        s, "INSERT INTO workflows (name, idempotency_key, created_at) VALUES (?1, ?2, ?3)", &stmt,
        err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, spec->name);
    sq_bind_text(stmt, 2, spec->idempotency_key);
    sqlite3_bind_int64(stmt, 3, now);
    if ((rc = sq_step_done(s, stmt, "insert workflow", err)) != JOBD_OK)
        return rc;
    *id = sqlite3_last_insert_rowid(s->db);
    int64_t *parents = malloc(WORKFLOW_DEPS_MAX * sizeof *parents);
    if (parents == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (size_t k = 0; k < spec->n && rc == JOBD_OK; k++) {
        size_t i = plan->order[k];
        struct job_spec js = spec->steps[i].job;
        size_t np = 0;
        for (size_t x = plan->off[i]; x < plan->off[i + 1]; x++)
            parents[np++] = job_ids[plan->idx[x]];
        js.depends_on = parents;
        js.n_depends_on = np;
        char prefix[40];
        snprintf(prefix, sizeof prefix, "steps[%zu].", i);
        rc = sq_enqueue_one(s, &js, now, prefix, NULL, NULL, &job_ids[i], err);
        if (rc != JOBD_OK)
            break;
        rc = sq_prepare(s,
                        "INSERT INTO workflow_steps (job_id, workflow, ref, ord) "
                        "VALUES (?1, ?2, ?3, ?4)",
                        &stmt, err);
        if (rc != JOBD_OK)
            break;
        sqlite3_bind_int64(stmt, 1, job_ids[i]);
        sqlite3_bind_int64(stmt, 2, *id);
        sq_bind_text(stmt, 3, spec->steps[i].ref);
        sqlite3_bind_int64(stmt, 4, (int64_t)i);
        rc = sq_step_done(s, stmt, "insert workflow step", err);
    }
    free(parents);
    return rc;
}

int
sq_op_workflow_submit(struct store *st, const struct workflow_spec *spec,
                      const struct workflow_plan *plan, int64_t *id, int64_t *job_ids,
                      bool *replayed, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    if (spec->idempotency_key != NULL) {
        rc = replay(s, spec, id, job_ids, err);
        if (rc == 1) {
            *replayed = true;
            sq_rollback(s);
            return JOBD_OK;
        }
    }
    if (rc == JOBD_OK)
        rc = submit_in_tx(s, spec, plan, id, job_ids, err);
    if (rc == JOBD_OK)
        rc = sq_commit(s, err);
    else
        sq_rollback(s);
    if (rc != JOBD_OK) {
        *id = 0;
        for (size_t i = 0; i < spec->n; i++)
            job_ids[i] = 0;
    }
    return rc;
}

#define STEP_COLS(t)                                                                               \
    "SELECT s.ord, s.ref, s.job_id, j.type, j.status, j.finished_at FROM workflow_steps s"         \
    " JOIN " t " j ON j.id = s.job_id WHERE s.workflow = ?1"

/* The steps of workflow w into out (ordered by their place in the request). */
static int
read_steps(struct sqlite_store *s, int64_t w, struct workflow *out, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        STEP_COLS("jobs") " UNION ALL " STEP_COLS(
                            "jobs_done") " UNION ALL " STEP_COLS("jobs_waiting") " ORDER BY 1",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, w);
    size_t cap = 0;
    while ((rc = sq_step_row(s, stmt, "read workflow steps", err)) == 1) {
        if (out->n_steps == cap) {
            cap = cap ? cap * 2 : 16;
            struct workflow_step *v = realloc(out->steps, cap * sizeof *v);
            if (v == NULL) {
                sq_reset(stmt);
                return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
            }
            out->steps = v;
        }
        struct workflow_step *st = &out->steps[out->n_steps++];
        memset(st, 0, sizeof *st);
        st->ref = col_dup(stmt, 1);
        st->job_id = sqlite3_column_int64(stmt, 2);
        st->type = col_dup(stmt, 3);
        enum job_status js = JOB_PENDING;
        (void)job_status_parse((const char *)sqlite3_column_text(stmt, 4), &js);
        st->status = (int)js;
        st->finished_at_us = sqlite3_column_int64(stmt, 5);
        if (st->ref == NULL || st->type == NULL) {
            sq_reset(stmt);
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        }
    }
    if (rc < 0)
        return rc;
    rc = sq_prepare(s,
                    "SELECT d.child, d.parent FROM workflow_steps s JOIN job_deps d"
                    " ON d.child = s.job_id WHERE s.workflow = ?1 ORDER BY d.child, d.parent",
                    &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, w);
    while ((rc = sq_step_row(s, stmt, "read workflow steps", err)) == 1)
        if (store_workflow_add_parent(out, sqlite3_column_int64(stmt, 0),
                                      sqlite3_column_int64(stmt, 1)) != JOBD_OK) {
            sq_reset(stmt);
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        }
    return rc < 0 ? rc : JOBD_OK;
}

int
sq_op_workflow_get(struct store *st, int64_t id, struct workflow *out, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    /* The edges are written with the steps and never change after. */
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, "SELECT name, created_at FROM workflows WHERE id = ?1", &stmt, err);
    if (rc == JOBD_OK) {
        sqlite3_bind_int64(stmt, 1, id);
        rc = sq_step_row(s, stmt, "read workflow", err);
        if (rc == 0)
            rc = jobd_error_set(err, JOBD_E_NOTFOUND, "id", "no workflow with id %lld",
                                (long long)id);
        else if (rc == 1) {
            out->id = id;
            out->name = col_dup(stmt, 0);
            out->created_at_us = sqlite3_column_int64(stmt, 1);
            sq_reset(stmt);
            rc = out->name == NULL ? jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory")
                                   : read_steps(s, id, out, err);
        }
    }
    return rc;
}

int
sq_op_workflow_ids(struct store *st, const char *name, int64_t before_id, int limit, int64_t *ids,
                   size_t *n, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    *n = 0;
    int rc = sq_prepare(s,
                        "SELECT id FROM workflows WHERE (?1 IS NULL OR name = ?1)"
                        " AND (?2 = 0 OR id < ?2) ORDER BY id DESC LIMIT ?3",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, name);
    sqlite3_bind_int64(stmt, 2, before_id);
    sqlite3_bind_int(stmt, 3, limit);
    while ((rc = sq_step_row(s, stmt, "list workflows", err)) == 1)
        if (*n < (size_t)limit)
            ids[(*n)++] = sqlite3_column_int64(stmt, 0);
    return rc < 0 ? rc : JOBD_OK;
}
