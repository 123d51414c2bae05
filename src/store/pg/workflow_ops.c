/*
 * pg/workflow_ops.c — the operations on a workflow after its submit on
 * PostgreSQL (store/workflow.h): adding steps, cancel, retry and delete.
 * Each is one transaction (pg_tx_begin) that first locks the workflow's row
 * (FOR UPDATE), so two of them on one workflow run one after the other;
 * what a step's own transitions do at the same time (a worker's report, a
 * release) is ordered by row locks, as in jobd.deps_attach (schema version
 * 24): a row whose end would settle a waiting step is locked before the
 * edges that step waits for are read or written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/pg/internal.h"
#include "store/workflow.h"

PG_STMT(st_wfo_lock, "SELECT id FROM jobd.workflows WHERE id = $1::bigint FOR UPDATE");

/*
 * Locks workflow id inside the open transaction and reads it into *w
 * (steps, statuses, parents). JOBD_E_NOTFOUND also for a workflow whose
 * every step retention took.
 */
static int
lock_read(struct store_pg *s, int64_t id, struct workflow *w, struct jobd_error *err)
{
    char ib[24];
    const char *vals[1] = {pg_i64(ib, id)};
    PGresult *r = NULL;
    memset(w, 0, sizeof *w);
    int rc = pg_exec(s, &st_wfo_lock, 1, vals, &r, err);
    bool found = rc == JOBD_OK && PQntuples(r) == 1;
    PQclear(r);
    if (rc == JOBD_OK && !found)
        return jobd_error_set(err, JOBD_E_NOTFOUND, "id", "no workflow with id %lld",
                              (long long)id);
    if (rc == JOBD_OK)
        rc = pg_op_workflow_get(&s->base, id, w, err);
    if (rc == JOBD_OK && w->n_steps == 0)
        rc = jobd_error_set(err, JOBD_E_NOTFOUND, "id", "no workflow with id %lld", (long long)id);
    return rc;
}

/* ---- adding steps ---- */

/*
 * $1 workflow: one step that has not ended, locked FOR SHARE, so that it
 * cannot end before this transaction does (the workflow stays running).
 */
PG_STMT(st_wfo_live_jobs, "SELECT j.id FROM jobd.workflow_steps s JOIN jobd.jobs j"
                          " ON j.id = s.job_id WHERE s.workflow = $1::bigint"
                          " AND j.status <> 'succeeded' LIMIT 1 FOR SHARE OF j");
PG_STMT(st_wfo_live_waiting, "SELECT j.id FROM jobd.workflow_steps s JOIN jobd.jobs_waiting j"
                             " ON j.id = s.job_id WHERE s.workflow = $1::bigint"
                             " LIMIT 1 FOR SHARE OF j");

static int
lock_live_step(struct store_pg *s, int64_t id, struct jobd_error *err)
{
    char ib[24];
    const char *vals[1] = {pg_i64(ib, id)};
    const struct pg_stmt *q[2] = {&st_wfo_live_waiting, &st_wfo_live_jobs};
    for (int k = 0; k < 2; k++) {
        PGresult *r = NULL;
        int rc = pg_exec(s, q[k], 1, vals, &r, err);
        bool found = rc == JOBD_OK && PQntuples(r) == 1;
        PQclear(r);
        if (rc != JOBD_OK || found)
            return rc;
    }
    return jobd_error_set(err, JOBD_E_STATE, "status",
                          "workflow %lld has ended: every step is finished", (long long)id);
}

PG_STMT(st_wfo_next_ord, "SELECT COALESCE(max(ord), -1) + 1 FROM jobd.workflow_steps"
                         " WHERE workflow = $1::bigint");
PG_STMT(st_wfo_step_insert, "INSERT INTO jobd.workflow_steps (job_id, workflow, ref, ord)"
                            " VALUES ($1::bigint, $2::bigint, $3, $4::integer)");

static int
cmp_before(const void *a, const void *b)
{
    int64_t x = ((const int64_t *)a)[0], y = ((const int64_t *)b)[0];
    return (x > y) - (x < y);
}

/*
 * $1 an existing parent of new steps: marked (has_children) and locked,
 * whichever table holds it, as jobd.deps_attach does; its status. No row:
 * it moved between tables under the statement (asked again) or is gone.
 */
/* clang-format off */
PG_STMT(st_wfo_mark_parent,
     "WITH a AS (UPDATE jobd.jobs SET has_children = true WHERE id = $1::bigint RETURNING status),"
     " b AS (UPDATE jobd.jobs_done SET has_children = true WHERE id = $1::bigint RETURNING status),"
     " c AS (UPDATE jobd.jobs_waiting SET has_children = true WHERE id = $1::bigint"
     "       RETURNING status)"
     " SELECT status FROM a UNION ALL SELECT status FROM b UNION ALL SELECT status FROM c");
/* clang-format on */

/*
 * Locks the existing parents of the new steps in id order (the order
 * jobd.deps_attach locks in) and reads their statuses into st (by the
 * place of ext[x]); *fast false if one has ended other than succeeded or
 * is gone, so that a step would settle at once (the per-step path).
 */
static int
lock_ext(struct store_pg *s, const struct workflow_add_plan *ap, size_t n, enum job_status *st,
         bool *fast, struct jobd_error *err)
{
    size_t ne = ap->ext_off[n];
    int64_t *v = malloc((ne ? ne : 1) * sizeof *v);
    if (v == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    memcpy(v, ap->ext, ne * sizeof *v);
    qsort(v, ne, sizeof *v, cmp_before);
    int rc = JOBD_OK;
    *fast = true;
    for (size_t x = 0; rc == JOBD_OK && x < ne; x++) {
        if (x > 0 && v[x] == v[x - 1])
            continue;
        char pb[24];
        const char *vals[1] = {pg_i64(pb, v[x])};
        enum job_status js = JOB_DEAD;
        bool found = false;
        for (int tries = 0; rc == JOBD_OK && !found && tries < 3; tries++) {
            PGresult *r = NULL;
            rc = pg_exec(s, &st_wfo_mark_parent, 1, vals, &r, err);
            if (rc == JOBD_OK && PQntuples(r) > 0) {
                found = true;
                (void)job_status_parse(PQgetvalue(r, 0, 0), &js);
            }
            PQclear(r);
        }
        *fast = *fast && found && (js == JOB_SUCCEEDED || !job_status_terminal(js));
        for (size_t k = 0; k < ne; k++)
            if (ap->ext[k] == v[x])
                st[k] = js;
    }
    free(v);
    return rc;
}

/*
 * The new steps set-wise (pg/workflow_write.c) when none settles at once:
 * a step waits while a parent (new, or existing and live) has not ended,
 * and is due at once when its only parents are existing steps that
 * succeeded. Their existing parents are locked (lock_ext) until COMMIT, so
 * none ends between the look and the write.
 */
static int
insert_set_wise(struct store_pg *s, int64_t id, int64_t base, const struct workflow_add *add,
                const struct workflow_add_plan *ap, const enum job_status *st, int64_t *job_ids,
                struct jobd_error *err)
{
    const struct workflow_plan *plan = &ap->plan;
    bool *has_children = calloc(add->n, sizeof *has_children);
    int64_t *v = malloc(add->n * sizeof *v);
    int rc = has_children && v ? pg_wf_alloc_ids(s, add->n, v, err)
                               : jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (size_t k = 0; rc == JOBD_OK && k < add->n; k++)
        job_ids[plan->order[k]] = v[k];
    for (size_t x = 0; rc == JOBD_OK && x < plan->off[add->n]; x++)
        has_children[plan->idx[x]] = true;
    struct pg_wf_rows w;
    pg_wf_rows_begin(&w);
    for (size_t k = 0; rc == JOBD_OK && k < add->n; k++) {
        size_t i = plan->order[k];
        const struct job_spec *sp = &add->steps[i].job;
        bool waits = plan->off[i + 1] > plan->off[i];
        for (size_t x = ap->ext_off[i]; x < ap->ext_off[i + 1]; x++)
            waits = waits || st[x] != JOB_SUCCEEDED;
        pg_wf_row(&w, sp, job_ids[i], add->steps[i].ref, base + (int64_t)i, waits,
                  has_children[i] || add->n_before > 0);
        for (size_t x = ap->ext_off[i]; x < ap->ext_off[i + 1]; x++)
            pg_wf_edge(&w, ap->ext[x], job_ids[i], sp->run_on_parent_failure,
                       st[x] == JOB_SUCCEEDED ? "succeeded" : NULL);
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

/*
 * The new steps: set-wise when none settles at once (insert_set_wise),
 * else in the plan's order, each through the enqueue of pg/enqueue.c (its
 * existing parents take jobd.deps_attach: locked, and counted at once if
 * they ended), and its row in workflow_steps.
 */
static int
insert_steps(struct store_pg *s, int64_t id, const struct workflow_add *add,
             const struct workflow_add_plan *ap, int64_t *job_ids, struct jobd_error *err)
{
    char ib[24];
    const char *v1[1] = {pg_i64(ib, id)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_wfo_next_ord, 1, v1, &r, err);
    int64_t base = rc == JOBD_OK ? pg_get_i64(r, 0, 0) : 0;
    PQclear(r);
    r = NULL;
    size_t ne = ap->ext_off[add->n];
    enum job_status *st = rc == JOBD_OK ? calloc(ne ? ne : 1, sizeof *st) : NULL;
    bool fast = false;
    if (rc == JOBD_OK)
        rc = st ? lock_ext(s, ap, add->n, st, &fast, err)
                : jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    if (rc != JOBD_OK || fast) {
        if (rc == JOBD_OK)
            rc = insert_set_wise(s, id, base, add, ap, st, job_ids, err);
        free(st);
        return rc;
    }
    free(st);
    int64_t *parents = rc == JOBD_OK ? malloc(WORKFLOW_DEPS_MAX * sizeof *parents) : NULL;
    if (rc == JOBD_OK && parents == NULL)
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    const struct workflow_plan *plan = &ap->plan;
    for (size_t k = 0; rc == JOBD_OK && k < add->n; k++) {
        size_t i = plan->order[k], np = 0;
        struct job_spec js = add->steps[i].job;
        for (size_t x = ap->ext_off[i]; x < ap->ext_off[i + 1] && np < WORKFLOW_DEPS_MAX; x++)
            parents[np++] = ap->ext[x];
        for (size_t x = plan->off[i]; x < plan->off[i + 1] && np < WORKFLOW_DEPS_MAX; x++)
            parents[np++] = job_ids[plan->idx[x]];
        js.depends_on = parents;
        js.n_depends_on = np;
        char field[48];
        snprintf(field, sizeof field, "steps[%zu].idempotency_key", i);
        rc = pg_enqueue_one(s, &js, field, NULL, NULL, &job_ids[i], err);
        if (rc != JOBD_OK)
            break;
        char jb[24], ob[24];
        const char *vals[4] = {pg_i64(jb, job_ids[i]), v1[0], add->steps[i].ref,
                               pg_i64(ob, base + (int64_t)i)};
        rc = pg_exec(s, &st_wfo_step_insert, 4, vals, &r, err);
        PQclear(r);
        r = NULL;
    }
    free(parents);
    return rc;
}

/* $1 child: locks it if it is still waiting; its policy (on_parent_failure run). */
PG_STMT(st_wfo_lock_waiting, "SELECT id FROM jobd.jobs_waiting WHERE id = $1::bigint FOR UPDATE");
PG_STMT(st_wfo_policy, "SELECT bool_or(run_on_failure), (SELECT status FROM jobd.all_jobs"
                       " WHERE id = $1::bigint) FROM jobd.job_deps WHERE child = $1::bigint");
/*
 * $1 new parents, $2 child, $3 its policy, $4 now: the edges (ended at once
 * for a new step that already ended, cancelled for a parent of its own),
 * the parents marked, and the child settled (it stays waiting: an old
 * parent it was waiting for has not ended, under the lock it holds).
 */
/* clang-format off */
PG_STMT(st_wfo_before,
     "WITH e AS (INSERT INTO jobd.job_deps (parent, child, ended_status, run_on_failure)"
     "   SELECT a.id, $2::bigint, CASE WHEN a.status IN ('succeeded', 'dead', 'cancelled')"
     "          THEN a.status END, $3::boolean"
     "     FROM jobd.all_jobs a WHERE a.id = ANY($1::bigint[]) ON CONFLICT DO NOTHING),"
     " m1 AS (UPDATE jobd.jobs SET has_children = true WHERE id = ANY($1::bigint[])),"
     " m2 AS (UPDATE jobd.jobs_done SET has_children = true WHERE id = ANY($1::bigint[])),"
     " m3 AS (UPDATE jobd.jobs_waiting SET has_children = true WHERE id = ANY($1::bigint[]))"
     " SELECT 1");
/* clang-format on */
PG_STMT(st_wfo_settle, "SELECT jobd.deps_settle($1::bigint, COALESCE(" PG_US_TS("$2") ", now()))");

/* Locks before step (job c, ref) if waiting: JOBD_E_CONFLICT naming field otherwise. */
static int
lock_before(struct store_pg *s, int64_t c, const char *ref, const char *field, bool *run,
            struct jobd_error *err)
{
    char cb[24];
    const char *v[1] = {pg_i64(cb, c)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_wfo_lock_waiting, 1, v, &r, err);
    bool waiting = rc == JOBD_OK && PQntuples(r) == 1;
    PQclear(r);
    if (rc == JOBD_OK)
        rc = pg_exec(s, &st_wfo_policy, 1, v, &r, err);
    if (rc != JOBD_OK)
        return rc;
    *run = PQgetvalue(r, 0, 0)[0] == 't';
    if (!waiting)
        rc = jobd_error_set(err, JOBD_E_CONFLICT, field,
                            "%s: step '%s' (job %lld) is %s, no longer waiting", field, ref,
                            (long long)c, PQgetvalue(r, 0, 1));
    PQclear(r);
    return rc;
}

/*
 * Each before step gains the new steps as parents, in ascending id (the
 * order a parent's end locks its children in), under its row lock: a last
 * old parent ending at the same time either settled it before (it is not
 * waiting: 409) or settles it after this commits, and then sees the new
 * edges open.
 */
static int
attach_before(struct store_pg *s, const struct workflow_add *add,
              const struct workflow_add_plan *ap, const int64_t *job_ids, struct jobd_error *err)
{
    int64_t(*order)[2] = malloc((add->n_before ? add->n_before : 1) * sizeof *order);
    struct pg_array a;
    pg_array_begin(&a);
    for (size_t i = 0; i < add->n; i++)
        pg_array_add_i64(&a, job_ids[i], false);
    const char *parents = pg_array_end(&a);
    int rc = order && parents ? JOBD_OK : jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (size_t k = 0; rc == JOBD_OK && k < add->n_before; k++) {
        order[k][0] = ap->before_ids[k];
        order[k][1] = (int64_t)k;
    }
    if (rc == JOBD_OK)
        qsort(order, add->n_before, sizeof *order, cmp_before);
    for (size_t x = 0; rc == JOBD_OK && x < add->n_before; x++) {
        if (x > 0 && order[x][0] == order[x - 1][0])
            continue;
        size_t k = (size_t)order[x][1];
        char field[32], cb[24], nowb[24];
        snprintf(field, sizeof field, "before[%zu]", k);
        bool run = false;
        if ((rc = lock_before(s, order[x][0], add->before[k], field, &run, err)) != JOBD_OK)
            break;
        const char *vals[4] = {parents, pg_i64(cb, order[x][0]), run ? "true" : "false",
                               pg_now_param(s, nowb)};
        PGresult *r = NULL;
        rc = pg_exec(s, &st_wfo_before, 3, vals, &r, err);
        PQclear(r);
        r = NULL;
        const char *sv[2] = {vals[1], vals[3]};
        if (rc == JOBD_OK)
            rc = pg_exec(s, &st_wfo_settle, 2, sv, &r, err);
        PQclear(r);
    }
    pg_array_fini(&a);
    free(order);
    return rc;
}

int
pg_op_workflow_add(struct store *st, int64_t id, const struct workflow_add *add, int64_t *job_ids,
                   struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    int rc = pg_tx_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    struct workflow w;
    struct workflow_add_plan ap = {0};
    rc = lock_read(s, id, &w, err);
    if (rc == JOBD_OK)
        rc = workflow_add_resolve(&w, add, &ap, err);
    if (rc == JOBD_OK)
        rc = lock_live_step(s, id, err);
    if (rc == JOBD_OK)
        rc = insert_steps(s, id, add, &ap, job_ids, err);
    if (rc == JOBD_OK && add->n_before > 0)
        rc = attach_before(s, add, &ap, job_ids, err);
    workflow_add_plan_fini(&ap);
    workflow_fini(&w);
    return pg_tx_end(s, rc, err);
}

/* ---- cancel ---- */

/*
 * $1 workflow, $2 now. Running steps first: a cancel request, each locking
 * the row as a report would, so that a step ending now and the release of
 * its children take their locks in the order a report does (parent, then
 * child) and never deadlock with this cancel.
 */
PG_STMT(st_wfo_cancel_running,
        "WITH u AS (UPDATE jobd.jobs SET cancel_requested = true WHERE id = ANY(ARRAY("
        " SELECT job_id FROM jobd.workflow_steps WHERE workflow = $1::bigint))"
        " AND status = 'running' AND NOT cancel_requested RETURNING 1) SELECT count(*) FROM u");
/* Then waiting and pending steps: cancelled, as store_cancel cancels one (pg/admin.c). */
/* clang-format off */
PG_STMT(st_wfo_cancel_rest,
     "WITH s AS MATERIALIZED (SELECT job_id FROM jobd.workflow_steps WHERE workflow = $1::bigint),"
     " w AS (DELETE FROM jobd.jobs_waiting WHERE id = ANY(ARRAY(SELECT job_id FROM s))"
     "       RETURNING *),"
     " p AS (DELETE FROM jobd.jobs WHERE id = ANY(ARRAY(SELECT job_id FROM s))"
     "       AND status = 'pending' RETURNING *),"
     " gone AS (INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS ") "
     PG_DONE_SELECT("'cancelled'", "NULL", "d.last_error", PG_NOW("$2"))
     "          FROM (SELECT * FROM w UNION ALL SELECT * FROM p) d RETURNING 1) "
     "SELECT count(*) FROM gone");
/* clang-format on */

/* Rounds of the two statements: a round sees what ended or started since the last. */
#define WFO_CANCEL_ROUNDS 8

int
pg_op_workflow_cancel(struct store *st, int64_t id, struct workflow_change *c,
                      struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    int rc = pg_tx_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    struct workflow w;
    rc = lock_read(s, id, &w, err);
    workflow_fini(&w);
    char ib[24], nowb[24];
    const char *vals[2] = {pg_i64(ib, id), pg_now_param(s, nowb)};
    /*
     * A step released or claimed while a statement runs is not in its
     * snapshot: another round (a new snapshot) takes it, until a round
     * changes nothing.
     */
    for (int round = 0; rc == JOBD_OK && round < WFO_CANCEL_ROUNDS; round++) {
        PGresult *r = NULL;
        rc = pg_exec(s, &st_wfo_cancel_running, 1, vals, &r, err);
        int64_t req = rc == JOBD_OK ? pg_get_i64(r, 0, 0) : 0;
        PQclear(r);
        r = NULL;
        if (rc == JOBD_OK)
            rc = pg_exec(s, &st_wfo_cancel_rest, 2, vals, &r, err);
        int64_t gone = rc == JOBD_OK ? pg_get_i64(r, 0, 0) : 0;
        PQclear(r);
        c->requested += req;
        c->cancelled += gone;
        if (req + gone == 0)
            break;
    }
    rc = pg_tx_end(s, rc, err);
    if (rc != JOBD_OK)
        memset(c, 0, sizeof *c);
    return rc;
}

/* ---- retry ---- */

/*
 * $1 step: its parents that have not ended, locked FOR SHARE, so none ends
 * between the look at its edges and this commit (then its end, which
 * settles the step, comes after and sees it waiting).
 */
PG_STMT(st_wfo_lock_parents,
        "WITH a AS (SELECT j.id FROM jobd.jobs j WHERE j.id IN (SELECT parent FROM jobd.job_deps"
        "   WHERE child = $1::bigint) FOR SHARE)"
        " SELECT j.id FROM jobd.jobs_waiting j WHERE j.id IN (SELECT parent FROM jobd.job_deps"
        "   WHERE child = $1::bigint) AND (SELECT count(*) FROM a) >= 0 FOR SHARE");
/*
 * $1 step, $2 now: dead or cancelled -> pending with fresh attempts, as
 * store_retry (pg/admin.c), or waiting while a parent has not ended. A
 * parent retried before it in this transaction opened its edge again
 * (jobd.deps_parent_reopened), and a step cancelled for that parent is
 * waiting already (not in jobs_done: nothing to do).
 */
/* clang-format off */
#define WFO_RETRY_SELECT(status)                                                          \
    "SELECT d.id, d.queue, d.type, d.payload, '" status "', d.priority, " PG_NOW("$2") "," \
    "       d.attempt, d.attempt, d.max_attempts, d.idempotency_key, d.schedule,"        \
    "       d.scheduled_for, NULL, NULL, d.timeout_ms, false, d.last_error, NULL,"       \
    "       d.created_at, NULL, NULL, d.traceparent, d.has_children, d.grp FROM d"
PG_STMT(st_wfo_retry_one,
     "WITH d AS (DELETE FROM jobd.jobs_done WHERE id = $1::bigint"
     "           AND status IN ('dead', 'cancelled') RETURNING *),"
     " o AS (SELECT EXISTS (SELECT 1 FROM jobd.job_deps WHERE child = $1::bigint"
     "                      AND ended_status IS NULL) AS waits),"
     " p AS (INSERT INTO jobd.jobs (" PG_JOB_TABLE_COLS ") " WFO_RETRY_SELECT("pending")
     "       WHERE NOT (SELECT waits FROM o) RETURNING 1),"
     " w AS (INSERT INTO jobd.jobs_waiting (" PG_JOB_TABLE_COLS ") " WFO_RETRY_SELECT("waiting")
     "       WHERE (SELECT waits FROM o) RETURNING 1)"
     " SELECT (SELECT count(*) FROM p) + (SELECT count(*) FROM w)");
/* clang-format on */

int
pg_op_workflow_retry(struct store *st, int64_t id, const int64_t *ids, size_t n,
                     struct workflow_change *c, struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    int rc = pg_tx_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    struct workflow w;
    rc = lock_read(s, id, &w, err);
    workflow_fini(&w);
    for (size_t i = 0; rc == JOBD_OK && i < n; i++) {
        char jb[24], nowb[24];
        const char *vals[2] = {pg_i64(jb, ids[i]), pg_now_param(s, nowb)};
        PGresult *r = NULL;
        rc = pg_exec(s, &st_wfo_lock_parents, 1, vals, &r, err);
        PQclear(r);
        r = NULL;
        if (rc == JOBD_OK)
            rc = pg_exec(s, &st_wfo_retry_one, 2, vals, &r, err);
        if (rc == JOBD_OK)
            c->retried += pg_get_i64(r, 0, 0);
        PQclear(r);
    }
    rc = pg_tx_end(s, rc, err);
    if (rc != JOBD_OK)
        memset(c, 0, sizeof *c);
    return rc;
}

/* ---- delete ---- */

/* $1 workflow: a step that has not ended, and a waiting job outside it that depends on a step. */
PG_STMT(st_wfo_live_step,
        "SELECT s.ref, a.status FROM jobd.workflow_steps s JOIN jobd.all_jobs a ON a.id = s.job_id"
        " WHERE s.workflow = $1::bigint AND a.status NOT IN ('succeeded', 'dead', 'cancelled')"
        " LIMIT 1");
PG_STMT(st_wfo_outside_child,
        "SELECT s.ref, d.child FROM jobd.workflow_steps s JOIN jobd.job_deps d"
        " ON d.parent = s.job_id JOIN jobd.jobs_waiting w ON w.id = d.child"
        " WHERE s.workflow = $1::bigint LIMIT 1");
/*
 * $1 workflow: its steps' jobs (ended: in jobs_done, migration 38) with what
 * goes with a job (pg/bulk.c, bulk_delete), its
 * steps and its row. Answers (jobs deleted, steps).
 */
/* clang-format off */
PG_STMT(st_wfo_delete,
     "WITH s AS MATERIALIZED (SELECT job_id AS id FROM jobd.workflow_steps"
     "                        WHERE workflow = $1::bigint),"
     " d AS (DELETE FROM jobd.jobs_done WHERE id = ANY(ARRAY(SELECT id FROM s))"
     "        RETURNING id, idempotency_key),"
     " e1 AS (DELETE FROM jobd.job_deps e USING s WHERE e.child = s.id),"
     " e2 AS (DELETE FROM jobd.job_deps e USING s WHERE e.parent = s.id),"
     " k AS (DELETE FROM jobd.job_keys jk USING d"
     "       WHERE jk.idempotency_key = d.idempotency_key AND jk.job_id = d.id),"
     " gp AS (DELETE FROM jobd.job_progress p USING d WHERE p.job_id = d.id),"
     " gl AS (DELETE FROM jobd.job_attempt_logs l USING d WHERE l.job_id = d.id),"
     " h AS (DELETE FROM jobd.job_attempts a USING d WHERE a.job_id = d.id),"
     " ws AS (DELETE FROM jobd.workflow_steps WHERE workflow = $1::bigint),"
     " wf AS (DELETE FROM jobd.workflows WHERE id = $1::bigint)"
     " SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM s)");
/* clang-format on */

/* Why workflow id cannot be deleted (JOBD_E_STATE), or JOBD_OK. */
static int
delete_refused(struct store_pg *s, int64_t id, const char *const *vals, struct jobd_error *err)
{
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_wfo_live_step, 1, vals, &r, err);
    if (rc == JOBD_OK && PQntuples(r) > 0)
        rc = jobd_error_set(err, JOBD_E_STATE, "status",
                            "workflow %lld is running: step '%s' is %s (cancel it first)",
                            (long long)id, PQgetvalue(r, 0, 0), PQgetvalue(r, 0, 1));
    PQclear(r);
    r = NULL;
    if (rc == JOBD_OK)
        rc = pg_exec(s, &st_wfo_outside_child, 1, vals, &r, err);
    if (rc == JOBD_OK && PQntuples(r) > 0)
        rc = jobd_error_set(err, JOBD_E_STATE, "depends_on",
                            "job %s, waiting, depends on step '%s' of workflow %lld",
                            PQgetvalue(r, 0, 1), PQgetvalue(r, 0, 0), (long long)id);
    PQclear(r);
    return rc;
}

int
pg_op_workflow_delete(struct store *st, int64_t id, struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    int rc = pg_tx_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    struct workflow w;
    rc = lock_read(s, id, &w, err);
    workflow_fini(&w);
    char ib[24];
    const char *vals[1] = {pg_i64(ib, id)};
    if (rc == JOBD_OK)
        rc = delete_refused(s, id, vals, err);
    PGresult *r = NULL;
    if (rc == JOBD_OK)
        rc = pg_exec(s, &st_wfo_delete, 1, vals, &r, err);
    /* a step retried since the check is no longer in jobs_done: refuse, undo */
    if (rc == JOBD_OK && pg_get_i64(r, 0, 0) != pg_get_i64(r, 0, 1))
        rc = jobd_error_set(err, JOBD_E_STATE, "status",
                            "workflow %lld is running again: a step was retried", (long long)id);
    PQclear(r);
    return pg_tx_end(s, rc, err);
}
