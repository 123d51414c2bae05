/*
 * pg/lease.c — the lease tokens of store/operator.h on PostgreSQL: the hash
 * in jobd.jobs.lease_token_hash (migration 17), kept by a finished attempt
 * (migration 19) in its succeeded job row or its history row. One
 * statement for a whole claim's tokens; a check is one primary-key probe.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/operator_int.h"
#include "store/pg/internal.h"

PG_STMT(st_lease_set, "UPDATE jobd.jobs j SET lease_token_hash = v.h"
                      "  FROM unnest($1::bigint[], $2::int[], $3::text[]) AS v(id, attempt, h)"
                      " WHERE j.id = v.id AND j.attempt = v.attempt AND j.status = 'running'");
PG_STMT(st_lease_check, "SELECT queue FROM jobd.jobs WHERE id = $1::bigint"
                        " AND attempt = $2::int AND lease_token_hash = $3::text");

/* A succeeded job is in jobs until archived, then in jobs_done (all_jobs). */
PG_STMT(st_replayed_complete, "SELECT queue FROM jobd.all_jobs WHERE id = $1::bigint"
                              " AND attempt = $2::int AND status = 'succeeded'"
                              " AND lease_token_hash = $3::text");
/* A failed attempt's history row stays while its job moves on. */
PG_STMT(st_replayed_fail, "SELECT j.queue FROM jobd.all_jobs j WHERE j.id = $1::bigint"
                          " AND EXISTS (SELECT 1 FROM jobd.job_attempts a"
                          "   WHERE a.job_id = $1::bigint AND a.attempt = $2::int"
                          "   AND a.outcome IN ('failed', 'dead', 'cancelled')"
                          "   AND a.lease_token_hash = $3::text)");

int
pg_op_lease_set(struct store *st, const struct lease_token_ref *v, size_t n, struct jobd_error *err)
{
    /* Array literals: numbers and hex need no quoting. */
    char *a[3];
    size_t cap[3] = {n * 21 + 3, n * 12 + 3, n * 66 + 3}, len[3] = {0, 0, 0};
    int rc = JOBD_OK;
    for (int k = 0; k < 3; k++)
        if ((a[k] = malloc(cap[k])) == NULL)
            rc = JOBD_E_NOMEM;
    for (int k = 0; rc == JOBD_OK && k < 3; k++) {
        a[k][len[k]++] = '{';
        for (size_t i = 0; i < n; i++) {
            int w = k == 0 ? snprintf(a[k] + len[k], cap[k] - len[k], "%s%" PRId64, i ? "," : "",
                                      v[i].id)
                    : k == 1
                        ? snprintf(a[k] + len[k], cap[k] - len[k], "%s%" PRId32, i ? "," : "",
                                   v[i].attempt)
                        : snprintf(a[k] + len[k], cap[k] - len[k], "%s%s", i ? "," : "", v[i].hash);
            len[k] += (size_t)w;
        }
        snprintf(a[k] + len[k], cap[k] - len[k], "}");
    }
    if (rc == JOBD_OK) {
        const char *vals[3] = {a[0], a[1], a[2]};
        PGresult *r = NULL;
        rc = pg_exec(pg_of(st), &st_lease_set, 3, vals, &r, err);
        PQclear(r);
    } else {
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    for (int k = 0; k < 3; k++)
        free(a[k]);
    return rc;
}

int
pg_op_lease_check(struct store *st, int64_t id, int32_t attempt, const char *hash, char **queue,
                  struct jobd_error *err)
{
    char b[2][24];
    const char *vals[3] = {pg_i64(b[0], id), pg_i64(b[1], attempt), hash};
    PGresult *r = NULL;
    int rc = pg_exec(pg_of(st), &st_lease_check, 3, vals, &r, err);
    if (rc == JOBD_OK && PQntuples(r) == 0) {
        rc = jobd_error_set(err, JOBD_E_STALE, "lease_token", "not this attempt's lease token");
    } else if (rc == JOBD_OK) {
        bool oom = false;
        *queue = pg_get_str(r, 0, 0, &oom);
        if (oom || *queue == NULL)
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    PQclear(r);
    return rc;
}

int
pg_op_lease_replayed(struct store *st, int64_t id, int32_t attempt, enum lease_report kind,
                     const char *hash, char **queue, struct jobd_error *err)
{
    char b[2][24];
    const char *vals[3] = {pg_i64(b[0], id), pg_i64(b[1], attempt), hash};
    PGresult *r = NULL;
    int rc = pg_exec(pg_of(st),
                     kind == LEASE_REPORT_COMPLETE ? &st_replayed_complete : &st_replayed_fail, 3,
                     vals, &r, err);
    if (rc == JOBD_OK && PQntuples(r) == 0) {
        rc = jobd_error_set(err, JOBD_E_STALE, "lease_token", "not a repeated report");
    } else if (rc == JOBD_OK) {
        bool oom = false;
        *queue = pg_get_str(r, 0, 0, &oom);
        if (oom || *queue == NULL)
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    PQclear(r);
    return rc;
}
