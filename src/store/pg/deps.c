/*
 * pg/deps.c — the parents of jobs as the job object shows them
 * (store/deps.h), read from jobd.job_deps (schema version 24). Waiting
 * and releasing are the schema's: its triggers run inside the statements
 * that end a parent.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/deps.h"
#include "store/pg/internal.h"

/* $1 child ids: each child's parents in ascending order. */
PG_STMT(st_deps_read, "SELECT child, parent, run_on_failure FROM jobd.job_deps"
                      " WHERE child = ANY($1::bigint[]) ORDER BY child, parent");

/* $1 job ids: the workflow and step of each that is a step (store/workflow.h). */
PG_STMT(st_wf_attach, "SELECT job_id, workflow, ref FROM jobd.workflow_steps"
                      " WHERE job_id = ANY($1::bigint[])");

/* The workflow and step of v's jobs, ids the array of their ids. */
static int
workflow_attach(struct store_pg *s, struct job *v, size_t n, const char *ids,
                struct jobd_error *err)
{
    const char *vals[1] = {ids};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_wf_attach, 1, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    for (int row = 0; rc == JOBD_OK && row < PQntuples(r); row++) {
        int64_t job = pg_get_i64(r, row, 0);
        for (size_t i = 0; rc == JOBD_OK && i < n; i++) {
            if (v[i].id != job)
                continue;
            bool oom = false;
            v[i].workflow = pg_get_i64(r, row, 1);
            free(v[i].step);
            v[i].step = pg_get_str(r, row, 2, &oom);
            if (oom)
                rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        }
    }
    PQclear(r);
    return rc;
}

int
pg_op_deps_attach(struct store *st, struct job *v, size_t n, struct jobd_error *err)
{
    struct pg_array a;
    pg_array_begin(&a);
    for (size_t i = 0; i < n; i++)
        pg_array_add_i64(&a, v[i].id, false);
    const char *vals[1] = {pg_array_end(&a)};
    if (vals[0] == NULL) {
        pg_array_fini(&a);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    PGresult *r = NULL;
    int rc = pg_exec(pg_of(st), &st_deps_read, 1, vals, &r, err);
    if (rc != JOBD_OK) {
        pg_array_fini(&a);
        return rc;
    }
    for (int row = 0; rc == JOBD_OK && row < PQntuples(r); row++)
        if (store_deps_add(v, n, pg_get_i64(r, row, 0), pg_get_i64(r, row, 1),
                           PQgetvalue(r, row, 2)[0] == 't') != JOBD_OK)
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    PQclear(r);
    if (rc == JOBD_OK)
        rc = workflow_attach(pg_of(st), v, n, vals[0], err);
    pg_array_fini(&a);
    return rc;
}

/*
 * $1 child ids: each child's parents as its handler sees them, one JSON
 * array per child with parents (docs/WORKER.md, Parents); step is a
 * workflow step's ref (one probe of workflow_steps per parent). The edges
 * are read by a LATERAL subquery per child with OFFSET 0, so it stays a
 * probe by id whatever the statistics say: as a join, a generic plan read
 * all of job_deps against a claim of 1,000 ids (~100 ms) or merged it from
 * its first entry. The parents are then read once each, as one set
 * (id = ANY): a read by id probes every partition of the finished jobs
 * (docs/DESIGN.md, Table layout, round three), and a LATERAL probe per
 * edge re-ran that whole Append for each parent (160 ms for a child of
 * 1,000 parents with two days' partitions, at load 20); one index scan of
 * each partition with the array does it once.
 */
PG_STMT(st_parents_read,
        "WITH e AS MATERIALIZED (SELECT c.id AS child, d.parent FROM unnest($1::bigint[]) c(id)"
        " CROSS JOIN LATERAL (SELECT d.parent FROM jobd.job_deps d WHERE d.child = c.id"
        "   OFFSET 0) d),"
        " p AS MATERIALIZED (SELECT a.id, json_build_object('id', a.id, 'step', (SELECT ws.ref"
        "   FROM jobd.workflow_steps ws WHERE ws.job_id = a.id), 'type', a.type,"
        "   'status', a.status, 'result', a.result) AS o"
        "   FROM jobd.all_jobs a WHERE a.id = ANY(ARRAY(SELECT DISTINCT parent FROM e)))"
        " SELECT e.child, json_agg(p.o ORDER BY p.id)::text FROM e JOIN p ON p.id = e.parent"
        " GROUP BY e.child");

int
pg_op_parents_attach(struct store *st, struct job *v, size_t n, struct jobd_error *err)
{
    struct pg_array a;
    pg_array_begin(&a);
    for (size_t i = 0; i < n; i++)
        pg_array_add_i64(&a, v[i].id, false);
    const char *vals[1] = {pg_array_end(&a)};
    if (vals[0] == NULL) {
        pg_array_fini(&a);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    PGresult *r = NULL;
    int rc = pg_exec(pg_of(st), &st_parents_read, 1, vals, &r, err);
    pg_array_fini(&a);
    if (rc != JOBD_OK)
        return rc;
    for (int row = 0; rc == JOBD_OK && row < PQntuples(r); row++) {
        int64_t child = pg_get_i64(r, row, 0);
        for (size_t i = 0; rc == JOBD_OK && i < n; i++) {
            if (v[i].id != child)
                continue;
            free(v[i].parents);
            if ((v[i].parents = strdup(PQgetvalue(r, row, 1))) == NULL)
                rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        }
    }
    PQclear(r);
    return rc;
}
