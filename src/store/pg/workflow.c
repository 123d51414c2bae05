/*
 * pg/workflow.c — workflows on PostgreSQL (store/workflow.h; schema
 * version 26): a submit is one transaction (pg_tx_begin) of two
 * statements, the workflow's row, then every step's job, edges and row in
 * workflow_steps at once (st_wf_steps_many). All or nothing.
 *
 * Two submits of one idempotency key at once: the second's INSERT ... ON
 * CONFLICT DO NOTHING waits for the first to end, then finds its row and
 * answers it as a replay.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/pg/internal.h"
#include "store/stats_int.h"
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
 * Every step of a submit in one statement (docs/BENCHMARKS.md, "Workflow
 * submit"), its ids allocated before (st_wf_ids_next, in the plan's order:
 * parents first, so ids ascend along the edges). $1 workflow, $2 now,
 * $3 ids, $4..$12 the jobs' columns, $13 ords (the places in the request),
 * $14 waits (has parents), $15..$17 the edges (parent, child, the child's
 * on_parent_failure is run).
 *
 * Every parent is a step of this submit, so none has ended: a step with
 * parents is written straight into jobs_waiting, its edges open, which is
 * where jobd.deps_attach (schema version 24) would have left it after a
 * round trip per step. Nothing else can see the rows before COMMIT, so
 * nothing is locked beyond them. has_children is set by a second statement
 * (st_wf_mark_parents): rows inserted with it run the row triggers of a
 * parent coming back (jobd.deps_parent_reopened), a PL/pgSQL call per
 * parent that has nothing to reopen here and cost half the insert.
 */
/* clang-format off */
#define WF_JOB_INSERT(table, status)                                                      \
    "INSERT INTO jobd." table " (id, queue, type, payload, status, priority, run_at,"     \
    " attempt, attempt_floor, max_attempts, timeout_ms, created_at, traceparent,"        \
    " has_children) SELECT id, queue, type, payload, '" status "', priority,"             \
    " COALESCE(" PG_US_TS("run_at") ", " PG_NOW("$2") "), 0, 0, max_attempts,"           \
    " timeout_ms, " PG_NOW("$2") ", tp, false FROM t"
PG_STMT(st_wf_steps_many,
     "WITH t AS MATERIALIZED (SELECT * FROM unnest($3::bigint[], $4::text[], $5::json[],"
     "   $6::text[], $7::int[], $8::bigint[], $9::int[], $10::bigint[], $11::text[],"
     "   $12::text[], $13::int[], $14::boolean[])"
     "   AS u(id, type, payload, queue, priority, run_at, max_attempts, timeout_ms, tp, ref, ord,"
     "        waits)),"
     " j AS (" WF_JOB_INSERT("jobs", "pending") " WHERE NOT waits RETURNING queue),"
     " w AS (" WF_JOB_INSERT("jobs_waiting", "waiting") " WHERE waits RETURNING queue),"
     " e AS (INSERT INTO jobd.job_deps (parent, child, run_on_failure)"
     "       SELECT * FROM unnest($15::bigint[], $16::bigint[], $17::boolean[])),"
     " s AS (INSERT INTO jobd.workflow_steps (job_id, workflow, ref, ord)"
     "       SELECT id, $1::bigint, ref, ord FROM t),"
     PG_STATS_ENQUEUED(PG_NOW("$2"), "(SELECT queue FROM j UNION ALL SELECT queue FROM w) q")
     " SELECT count(*) FROM t");
/* clang-format on */

/* $1 the steps with children: marked once their rows are in (see add_steps). */
PG_STMT(st_wf_mark_parents,
        "WITH a AS (UPDATE jobd.jobs SET has_children = true WHERE id = ANY($1::bigint[]))"
        " UPDATE jobd.jobs_waiting SET has_children = true WHERE id = ANY($1::bigint[])");

PG_STMT(st_wf_ids_next, "SELECT nextval('jobd.job_id_seq') FROM generate_series(1, $1::int)");

#define WF_ARRAYS 16

/*
 * The arrays of st_wf_steps_many ($3..$17) for spec in plan's order, and
 * of st_wf_mark_parents (a[15]).
 */
static void
steps_arrays(const struct workflow_spec *spec, const struct workflow_plan *plan,
             const bool *has_children, const int64_t *job_ids, struct pg_array *a)
{
    for (size_t k = 0; k < spec->n; k++) {
        size_t i = plan->order[k];
        const struct job_spec *sp = &spec->steps[i].job;
        struct job_spec d = job_spec_with_defaults(sp);
        pg_array_add_i64(&a[0], job_ids[i], false);
        pg_array_add_str(&a[1], sp->type);
        pg_array_add_str(&a[2], d.payload);
        pg_array_add_str(&a[3], d.queue);
        pg_array_add_i64(&a[4], sp->priority, false);
        pg_array_add_i64(&a[5], sp->run_at_us, sp->run_at_us <= 0);
        pg_array_add_i64(&a[6], d.max_attempts, false);
        pg_array_add_i64(&a[7], sp->timeout_ms, sp->timeout_ms <= 0);
        pg_array_add_str(&a[8], sp->traceparent);
        pg_array_add_str(&a[9], spec->steps[i].ref);
        pg_array_add_i64(&a[10], (int64_t)i, false);
        pg_array_add_str(&a[11], plan->off[i + 1] > plan->off[i] ? "t" : "f");
        if (has_children[i])
            pg_array_add_i64(&a[15], job_ids[i], false);
        for (size_t x = plan->off[i]; x < plan->off[i + 1]; x++) {
            pg_array_add_i64(&a[12], job_ids[plan->idx[x]], false);
            pg_array_add_i64(&a[13], job_ids[i], false);
            pg_array_add_str(&a[14], sp->run_on_parent_failure ? "t" : "f");
        }
    }
}

static int
cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* n job ids from the sequence, ascending in the plan's order, into job_ids. */
static int
alloc_ids(struct store_pg *s, const struct workflow_spec *spec, const struct workflow_plan *plan,
          int64_t *job_ids, struct jobd_error *err)
{
    char nb[24];
    const char *nv[1] = {pg_i64(nb, (int64_t)spec->n)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_wf_ids_next, 1, nv, &r, err);
    if (rc == JOBD_OK && (size_t)PQntuples(r) != spec->n)
        rc = jobd_error_set(err, JOBD_E_INTERNAL, "steps", "could not allocate job ids");
    int64_t *v = rc == JOBD_OK ? malloc(spec->n * sizeof *v) : NULL;
    if (rc == JOBD_OK && v == NULL)
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (size_t k = 0; rc == JOBD_OK && k < spec->n; k++)
        v[k] = pg_get_i64(r, (int)k, 0);
    PQclear(r);
    if (rc == JOBD_OK) {
        qsort(v, spec->n, sizeof *v, cmp_i64);
        for (size_t k = 0; k < spec->n; k++)
            job_ids[plan->order[k]] = v[k];
    }
    free(v);
    return rc;
}

/* The steps, inside the open transaction, once the workflow's row is in. */
static int
add_steps(struct store_pg *s, const struct workflow_spec *spec, const struct workflow_plan *plan,
          int64_t id, int64_t *job_ids, struct jobd_error *err)
{
    bool *has_children = calloc(spec->n, sizeof *has_children);
    if (has_children == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    int rc = alloc_ids(s, spec, plan, job_ids, err);
    if (rc != JOBD_OK) {
        free(has_children);
        return rc;
    }
    for (size_t x = 0; x < plan->off[spec->n]; x++)
        has_children[plan->idx[x]] = true;
    struct pg_array a[WF_ARRAYS];
    for (int k = 0; k < WF_ARRAYS; k++)
        pg_array_begin(&a[k]);
    steps_arrays(spec, plan, has_children, job_ids, a);
    free(has_children);
    const char *vals[2 + WF_ARRAYS];
    char wb[24], nowb[24];
    vals[0] = pg_i64(wb, id);
    vals[1] = pg_now_param(s, nowb);
    for (int k = 0; rc == JOBD_OK && k < WF_ARRAYS; k++)
        if ((vals[2 + k] = pg_array_end(&a[k])) == NULL)
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    PGresult *r = NULL;
    if (rc == JOBD_OK)
        rc = pg_exec(s, &st_wf_steps_many, 1 + WF_ARRAYS, vals, &r, err);
    if (rc == JOBD_OK && pg_get_i64(r, 0, 0) != (int64_t)spec->n)
        rc = jobd_error_set(err, JOBD_E_INTERNAL, "steps", "the submit wrote %s of %zu steps",
                            PQgetvalue(r, 0, 0), spec->n);
    PQclear(r);
    r = NULL;
    if (rc == JOBD_OK) {
        const char *pv[1] = {vals[2 + 15]};
        rc = pg_exec(s, &st_wf_mark_parents, 1, pv, &r, err);
        PQclear(r);
    }
    for (int k = 0; k < WF_ARRAYS; k++)
        pg_array_fini(&a[k]);
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
