/*
 * pg/attempts.c — the attempt history of store/operator.h on PostgreSQL.
 *
 * The attempt history is read in one statement: the rows of
 * jobd.job_attempts (attempts that ended other than in success) and the
 * job's current attempt taken from its row while it runs or after it
 * succeeded, so the answer is one snapshot even while the job moves on.
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/operator.h"
#include "store/operator_int.h"
#include "store/pg/internal.h"

/* $1 id: (attempt, worker_id, started_us, finished_us, outcome, error), oldest first. */
static const struct pg_stmt adm_attempts = {
    "adm_attempts",
    "SELECT attempt, worker_id, started_us, finished_us, outcome, error FROM ("
    "  SELECT a.attempt, a.worker_id, " PG_TS_US(
        "a.started_at") " AS started_us,"
                        "         " PG_TS_US(
                            "a.finished_at") " AS finished_us, a.outcome, a.error"
                                             "    FROM jobd.job_attempts a WHERE a.job_id = "
                                             "$1::bigint"
                                             "  UNION ALL"
                                             "  SELECT j.attempt, j.worker_id, " PG_TS_US(
                                                 "j.started_at") ","
                                                                 "         " PG_TS_US(
                                                                     "j.finished_at") ","
                                                                                      "         "
                                                                                      "CASE WHEN "
                                                                                      "j.status = "
                                                                                      "'running' "
                                                                                      "THEN "
                                                                                      "'running' "
                                                                                      "ELSE "
                                                                                      "'succeeded' "
                                                                                      "END, NULL"
                                                                                      "    FROM "
                                                                                      "jobd.all_"
                                                                                      "jobs j "
                                                                                      "WHERE j.id "
                                                                                      "= "
                                                                                      "$1::bigint "
                                                                                      "AND "
                                                                                      "j.attempt > "
                                                                                      "0"
                                                                                      "     AND "
                                                                                      "j.status IN "
                                                                                      "('running', "
                                                                                      "'succeeded')"
                                                                                      "     AND "
                                                                                      "NOT EXISTS "
                                                                                      "(SELECT 1 "
                                                                                      "FROM "
                                                                                      "jobd.job_"
                                                                                      "attempts a"
                                                                                      "            "
                                                                                      "          "
                                                                                      "WHERE "
                                                                                      "a.job_id = "
                                                                                      "$1::bigint "
                                                                                      "AND "
                                                                                      "a.attempt = "
                                                                                      "j.attempt)) "
                                                                                      "h "
                                                                                      "ORDER BY "
                                                                                      "attempt"};

static const struct pg_stmt adm_exists = {"adm_exists",
                                          "SELECT 1 FROM jobd.all_jobs WHERE id = $1::bigint"};

/* JOBD_OK if job id exists, else JOBD_E_NOTFOUND (or the store's error). */
static int
job_exists(struct store_pg *s, const char *idv, int64_t id, struct jobd_error *err)
{
    PGresult *r = NULL;
    int rc = pg_exec(s, &adm_exists, 1, &idv, &r, err);
    if (rc == JOBD_OK && PQntuples(r) == 0)
        rc = jobd_error_set(err, JOBD_E_NOTFOUND, "id", "no job with id %lld", (long long)id);
    PQclear(r);
    return rc;
}

int
pg_op_attempts(struct store *st, int64_t id, struct attempt_list *out, struct jobd_error *err)
{
    struct store_pg *s = (struct store_pg *)st;
    char idb[24];
    const char *idv = pg_i64(idb, id);
    PGresult *r = NULL;
    int rc = pg_exec(s, &adm_attempts, 1, &idv, &r, err);
    if (rc != JOBD_OK)
        return rc;
    int n = PQntuples(r);
    bool oom = false;
    for (int i = 0; i < n && !oom; i++) {
        struct job_attempt *a = attempt_list_push(out);
        if (a == NULL) {
            oom = true;
            break;
        }
        a->attempt = (int32_t)pg_get_i64(r, i, 0);
        a->worker_id = pg_get_str(r, i, 1, &oom);
        a->started_at_us = pg_get_i64(r, i, 2);
        a->finished_at_us = pg_get_i64(r, i, 3);
        if (attempt_outcome_parse(PQgetvalue(r, i, 4), &a->outcome) != JOBD_OK)
            a->outcome = ATT_FAILED;
        a->error = pg_get_str(r, i, 5, &oom);
    }
    PQclear(r);
    if (oom)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    return n > 0 ? JOBD_OK : job_exists(s, idv, id, err);
}
