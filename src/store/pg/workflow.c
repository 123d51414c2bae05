/*
 * pg/workflow.c — workflows on PostgreSQL (store/workflow.h; schema
 * version 26): a submit is one transaction (pg_tx_begin): the workflow's
 * row, then every step's job, edges and row in workflow_steps set-wise
 * (pg/workflow_write.c). All or nothing.
 *
 * Two submits of one idempotency key at once: the second's INSERT ... ON
 * CONFLICT DO NOTHING waits for the first to end, then finds its row and
 * answers it as a replay.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/pg/internal.h"
#include "store/workflow.h"

/* $1 name, $2 key, $3 now: the new workflow's id, or no row for a key taken. */
PG_STMT(st_wf_insert,
        "INSERT INTO jobd.workflows (name, idempotency_key, created_at)"
        " VALUES ($1, $2, " PG_NOW("$3") ")"
                                         " ON CONFLICT (idempotency_key) DO NOTHING RETURNING id");
PG_STMT(st_wf_by_key, "SELECT id, name FROM jobd.workflows WHERE idempotency_key = $1");
PG_STMT(st_wf_steps_ids, "SELECT ord, ref, job_id FROM jobd.workflow_steps WHERE workflow = $1");
PG_STMT(st_wf_delete, "DELETE FROM jobd.workflows WHERE id = $1");
PG_STMT(st_wf_read, "SELECT name, " PG_TS_US("created_at") " FROM jobd.workflows WHERE id = $1");
PG_STMT(st_wf_steps,
        "SELECT s.ref, s.job_id, a.type, a.status, " PG_TS_US(
            "a.finished_at") " FROM jobd.workflow_steps s JOIN jobd.all_jobs a ON a.id = s.job_id"
                             " WHERE s.workflow = $1 ORDER BY s.ord");
PG_STMT(st_wf_edges, "SELECT d.child, d.parent FROM jobd.workflow_steps s JOIN jobd.job_deps d"
                     " ON d.child = s.job_id WHERE s.workflow = $1 ORDER BY d.child, d.parent");

/*
 * The answer of a replay: workflow w's job ids by the steps' places; or 1
 * when w has no step left (then deleted: the key may be taken again).
 */
static int
replay(struct store_pg *s, const struct workflow_spec *spec, int64_t *id, int64_t *job_ids,
       struct jobd_error *err)
{
    PGresult *r = NULL;
    const char *kv[1] = {spec->idempotency_key};
    int rc = pg_exec(s, &st_wf_by_key, 1, kv, &r, err);
    if (rc != JOBD_OK)
        return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return jobd_error_set(err, JOBD_E_STORE, "idempotency_key",
                              "idempotency key '%s' kept changing hands; try again",
                              spec->idempotency_key);
    }
    int64_t w = pg_get_i64(r, 0, 0);
    bool same = strcmp(PQgetvalue(r, 0, 1), spec->name) == 0;
    PQclear(r);
    if (!same)
        return jobd_error_set(err, JOBD_E_CONFLICT, "idempotency_key",
                              "idempotency key '%s' was already used by workflow %lld of another "
                              "name",
                              spec->idempotency_key, (long long)w);
    char wb[24];
    const char *vals[1] = {pg_i64(wb, w)};
    if ((rc = pg_exec(s, &st_wf_steps_ids, 1, vals, &r, err)) != JOBD_OK)
        return rc;
    if (PQntuples(r) == 0) {
        /* Retention took every step: the workflow is gone, its key free again. */
        PQclear(r);
        if ((rc = pg_exec(s, &st_wf_delete, 1, vals, &r, err)) == JOBD_OK)
            PQclear(r);
        return rc == JOBD_OK ? 1 : rc;
    }
    for (int row = 0; row < PQntuples(r); row++) {
        int64_t ord = pg_get_i64(r, row, 0);
        if (ord >= 0 && (size_t)ord < spec->n &&
            strcmp(spec->steps[ord].ref, PQgetvalue(r, row, 1)) == 0)
            job_ids[ord] = pg_get_i64(r, row, 2);
    }
    PQclear(r);
    *id = w;
    return JOBD_OK;
}

/*
 * The steps, inside the open transaction, once the workflow's row is in:
 * set-wise (pg/workflow_write.c), every parent a step of this submit, so
 * none has ended and a step with parents waits.
 */
static int
add_steps(struct store_pg *s, const struct workflow_spec *spec, const struct workflow_plan *plan,
          int64_t id, int64_t *job_ids, struct jobd_error *err)
{
    bool *has_children = calloc(spec->n, sizeof *has_children);
    int64_t *v = malloc(spec->n * sizeof *v);
    int rc = has_children && v ? pg_wf_alloc_ids(s, spec->n, v, err)
                               : jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (size_t k = 0; rc == JOBD_OK && k < spec->n; k++)
        job_ids[plan->order[k]] = v[k];
    for (size_t x = 0; rc == JOBD_OK && x < plan->off[spec->n]; x++)
        has_children[plan->idx[x]] = true;
    struct pg_wf_rows w;
    pg_wf_rows_begin(&w);
    for (size_t k = 0; rc == JOBD_OK && k < spec->n; k++) {
        size_t i = plan->order[k];
        const struct job_spec *sp = &spec->steps[i].job;
        pg_wf_row(&w, sp, job_ids[i], spec->steps[i].ref, (int64_t)i,
                  plan->off[i + 1] > plan->off[i], has_children[i]);
        for (size_t x = plan->off[i]; x < plan->off[i + 1]; x++)
            pg_wf_edge(&w, job_ids[plan->idx[x]], job_ids[i], sp->run_on_parent_failure, NULL);
    }
    if (rc == JOBD_OK)
        rc = pg_wf_rows_write(s, id, &w, err);
    pg_wf_rows_fini(&w);
    free(has_children);
    free(v);
    return rc;
}

int
pg_op_workflow_submit(struct store *st, const struct workflow_spec *spec,
                      const struct workflow_plan *plan, int64_t *id, int64_t *job_ids,
                      bool *replayed, struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    int rc = pg_tx_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    char nowb[24];
    const char *vals[3] = {spec->name, spec->idempotency_key, pg_now_param(s, nowb)};
    PGresult *r = NULL;
    for (int tries = 0; tries < 2; tries++) {
        rc = pg_exec(s, &st_wf_insert, 3, vals, &r, err);
        if (rc == JOBD_OK && PQntuples(r) == 1) {
            *id = pg_get_i64(r, 0, 0);
            PQclear(r);
            rc = add_steps(s, spec, plan, *id, job_ids, err);
        } else if (rc == JOBD_OK) {
            PQclear(r);
            rc = replay(s, spec, id, job_ids, err);
            if (rc == 1 && tries == 0)
                continue; /* its workflow was gone: insert again */
            *replayed = rc == JOBD_OK;
        }
        break;
    }
    if (rc == 1)
        rc = jobd_error_set(err, JOBD_E_STORE, "idempotency_key",
                            "idempotency key '%s' kept changing hands; try again",
                            spec->idempotency_key);
    rc = pg_tx_end(s, rc, err);
    if (rc != JOBD_OK) {
        *id = 0;
        *replayed = false;
        for (size_t i = 0; i < spec->n; i++)
            job_ids[i] = 0;
    }
    return rc;
}

int
pg_op_workflow_get(struct store *st, int64_t id, struct workflow *out, struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    char ib[24];
    const char *vals[1] = {pg_i64(ib, id)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_wf_read, 1, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return jobd_error_set(err, JOBD_E_NOTFOUND, "id", "no workflow with id %lld",
                              (long long)id);
    }
    bool oom = false;
    out->id = id;
    out->name = pg_get_str(r, 0, 0, &oom);
    out->created_at_us = pg_get_i64(r, 0, 1);
    PQclear(r);
    if (oom)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    if ((rc = pg_exec(s, &st_wf_steps, 1, vals, &r, err)) != JOBD_OK)
        return rc;
    int n = PQntuples(r);
    out->steps = calloc(n > 0 ? (size_t)n : 1, sizeof *out->steps);
    if (out->steps == NULL) {
        PQclear(r);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    for (int row = 0; row < n; row++) {
        struct workflow_step *sp = &out->steps[out->n_steps++];
        sp->ref = pg_get_str(r, row, 0, &oom);
        sp->job_id = pg_get_i64(r, row, 1);
        sp->type = pg_get_str(r, row, 2, &oom);
        enum job_status js = JOB_PENDING;
        (void)job_status_parse(PQgetvalue(r, row, 3), &js);
        sp->status = (int)js;
        sp->finished_at_us = pg_get_i64(r, row, 4);
    }
    PQclear(r);
    if (oom)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    if ((rc = pg_exec(s, &st_wf_edges, 1, vals, &r, err)) != JOBD_OK)
        return rc;
    for (int row = 0; rc == JOBD_OK && row < PQntuples(r); row++)
        if (store_workflow_add_parent(out, pg_get_i64(r, row, 0), pg_get_i64(r, row, 1)) != JOBD_OK)
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    PQclear(r);
    return rc;
}

/* $1 name (NULL = any), $2 before id (0 = any), $3 limit. */
PG_STMT(st_wf_ids, "SELECT id FROM jobd.workflows WHERE ($1::text IS NULL OR name = $1)"
                   " AND ($2::bigint = 0 OR id < $2::bigint) ORDER BY id DESC LIMIT $3::int");

int
pg_op_workflow_ids(struct store *st, const char *name, int64_t before_id, int limit, int64_t *ids,
                   size_t *n, struct jobd_error *err)
{
    char bb[24], lb[24];
    const char *vals[3] = {name, pg_i64(bb, before_id), pg_i64(lb, limit)};
    PGresult *r = NULL;
    *n = 0;
    int rc = pg_exec(pg_of(st), &st_wf_ids, 3, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    for (int row = 0; row < PQntuples(r) && *n < (size_t)limit; row++)
        ids[(*n)++] = pg_get_i64(r, row, 0);
    PQclear(r);
    return JOBD_OK;
}
