/*
 * pg/workflow_write.c — steps of a workflow written set-wise on PostgreSQL
 * (pg/workflow.c's submit, pg/workflow_ops.c's added steps): their ids
 * allocated in one statement, then every step's job, edge and row of
 * workflow_steps in one INSERT over arrays (docs/BENCHMARKS.md, "Workflow
 * submit"), where the enqueue of each step through jobd.deps_attach costs
 * some three round trips a step.
 */
#include <stdlib.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/pg/internal.h"
#include "store/stats_int.h"

/*
 * $1 workflow, $2 now, $3 ids, $4..$12 the jobs' columns, $13 ords (the
 * places in the workflow), $14 waits, $15..$18 the edges (parent, child,
 * the child's on_parent_failure is run, the parent's end if it has ended).
 * A step that waits is written straight into jobs_waiting, its open edges
 * with it, which is where jobd.deps_attach (schema version 24) would have
 * left it; the caller knows that it waits (a parent of it has not ended)
 * and holds the locks that keep it so. has_children is set by a second
 * statement (st_wf_mark_parents): rows inserted with it run the row
 * triggers of a parent coming back (jobd.deps_parent_reopened), a PL/pgSQL
 * call per parent that has nothing to reopen here and cost half the insert.
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
     " e AS (INSERT INTO jobd.job_deps (parent, child, run_on_failure, ended_status)"
     "       SELECT * FROM unnest($15::bigint[], $16::bigint[], $17::boolean[], $18::text[])),"
     " s AS (INSERT INTO jobd.workflow_steps (job_id, workflow, ref, ord)"
     "       SELECT id, $1::bigint, ref, ord FROM t),"
     PG_STATS_ENQUEUED(PG_NOW("$2"), "(SELECT queue FROM j UNION ALL SELECT queue FROM w) q")
     " SELECT count(*) FROM t");
/* clang-format on */

/* $1 the steps with children: marked once their rows are in. */
PG_STMT(st_wf_mark_parents,
        "WITH a AS (UPDATE jobd.jobs SET has_children = true WHERE id = ANY($1::bigint[]))"
        " UPDATE jobd.jobs_waiting SET has_children = true WHERE id = ANY($1::bigint[])");

PG_STMT(st_wf_ids_next, "SELECT nextval('jobd.job_id_seq') FROM generate_series(1, $1::int)");

void
pg_wf_rows_begin(struct pg_wf_rows *w)
{
    for (int k = 0; k < PG_WF_ARRAYS; k++)
        pg_array_begin(&w->a[k]);
    w->n = 0;
}

void
pg_wf_rows_fini(struct pg_wf_rows *w)
{
    for (int k = 0; k < PG_WF_ARRAYS; k++)
        pg_array_fini(&w->a[k]);
}

void
pg_wf_row(struct pg_wf_rows *w, const struct job_spec *sp, int64_t id, const char *ref, int64_t ord,
          bool waits, bool has_children)
{
    struct job_spec d = job_spec_with_defaults(sp);
    struct pg_array *a = w->a;
    pg_array_add_i64(&a[0], id, false);
    pg_array_add_str(&a[1], sp->type);
    pg_array_add_str(&a[2], d.payload);
    pg_array_add_str(&a[3], d.queue);
    pg_array_add_i64(&a[4], sp->priority, false);
    pg_array_add_i64(&a[5], sp->run_at_us, sp->run_at_us <= 0);
    pg_array_add_i64(&a[6], d.max_attempts, false);
    pg_array_add_i64(&a[7], sp->timeout_ms, sp->timeout_ms <= 0);
    pg_array_add_str(&a[8], sp->traceparent);
    pg_array_add_str(&a[9], ref);
    pg_array_add_i64(&a[10], ord, false);
    pg_array_add_str(&a[11], waits ? "t" : "f");
    if (has_children)
        pg_array_add_i64(&a[16], id, false);
    w->n++;
}

void
pg_wf_edge(struct pg_wf_rows *w, int64_t parent, int64_t child, bool run, const char *ended)
{
    pg_array_add_i64(&w->a[12], parent, false);
    pg_array_add_i64(&w->a[13], child, false);
    pg_array_add_str(&w->a[14], run ? "t" : "f");
    pg_array_add_str(&w->a[15], ended);
}

int
pg_wf_rows_write(struct store_pg *s, int64_t wf, struct pg_wf_rows *w, struct jobd_error *err)
{
    const char *vals[2 + PG_WF_ARRAYS];
    char wb[24], nowb[24];
    vals[0] = pg_i64(wb, wf);
    vals[1] = pg_now_param(s, nowb);
    for (int k = 0; k < PG_WF_ARRAYS; k++)
        if ((vals[2 + k] = pg_array_end(&w->a[k])) == NULL)
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_wf_steps_many, 1 + PG_WF_ARRAYS, vals, &r, err);
    if (rc == JOBD_OK && pg_get_i64(r, 0, 0) != (int64_t)w->n)
        rc = jobd_error_set(err, JOBD_E_INTERNAL, "steps", "wrote %s of %zu steps",
                            PQgetvalue(r, 0, 0), w->n);
    PQclear(r);
    r = NULL;
    if (rc == JOBD_OK) {
        const char *pv[1] = {vals[2 + 16]};
        rc = pg_exec(s, &st_wf_mark_parents, 1, pv, &r, err);
        PQclear(r);
    }
    return rc;
}

static int
cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int
pg_wf_alloc_ids(struct store_pg *s, size_t n, int64_t *ids, struct jobd_error *err)
{
    char nb[24];
    const char *nv[1] = {pg_i64(nb, (int64_t)n)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_wf_ids_next, 1, nv, &r, err);
    if (rc == JOBD_OK && (size_t)PQntuples(r) != n)
        rc = jobd_error_set(err, JOBD_E_INTERNAL, "steps", "could not allocate job ids");
    for (size_t k = 0; rc == JOBD_OK && k < n; k++)
        ids[k] = pg_get_i64(r, (int)k, 0);
    PQclear(r);
    if (rc == JOBD_OK)
        qsort(ids, n, sizeof *ids, cmp_i64);
    return rc;
}
