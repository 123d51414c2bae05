/*
 * pg/enqueue_one.c — one job into PostgreSQL: the INSERT that claims its
 * idempotency key in the same statement, then its parents (docs/MODEL.md,
 * Dependencies). The primitive under pg/enqueue.c's routes and batches,
 * pg/enqkeys.c's debounce and unique windows and pg/workflow.c's steps, in
 * a file of its own so that those call down into it and never back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/stats_int.h"
#include "store/pg/internal.h"

/*
 * $1 type, $2 payload, $3 queue, $4 priority, $5 run_at_us, $6 max_attempts,
 * $7 key, $8 timeout_ms, $9 schedule, $10 scheduled_for_us, $11 now_us,
 * $12 traceparent, $13 group.
 * With a key, the key row is claimed first (ON CONFLICT DO NOTHING waits for
 * a concurrent inserter of the same key to finish); no row back means the key
 * was taken and the caller looks up the holder (st_key_holder).
 */
/* clang-format off */
PG_STMT(st_enqueue,
     "WITH k AS (INSERT INTO jobd.job_keys (idempotency_key, job_id)"
     "           SELECT $7::text, nextval('jobd.job_id_seq') WHERE $7::text IS NOT NULL"
     "           ON CONFLICT (idempotency_key) DO NOTHING RETURNING job_id), "
     "ins AS (INSERT INTO jobd.jobs (id, queue, type, payload, status, priority, run_at, attempt,"
     "                       attempt_floor, max_attempts, idempotency_key, schedule,"
     "                       scheduled_for, timeout_ms, created_at, traceparent, grp) "
     "SELECT COALESCE((SELECT job_id FROM k), nextval('jobd.job_id_seq')), $3::text, $1::text,"
     "       $2::json, 'pending', $4::int, COALESCE(" PG_US_TS("$5") ", " PG_NOW("$11") "),"
     "       0, 0, $6::int, $7::text, $9::text, " PG_US_TS("$10") ", $8::bigint, "
     PG_NOW("$11") ", $12::text, $13::text"
     " WHERE $7::text IS NULL OR EXISTS (SELECT 1 FROM k) RETURNING *), "
     PG_STATS_ENQUEUED(PG_NOW("$11"), "ins") PG_GROUPS_NOTED("ins")
     "SELECT " PG_JOB_COLS("") " FROM ins");
/* clang-format on */

/* $1 key, $2 type, $3 queue, $4 payload: the job holding a key, and whether it matches. */
PG_STMT(st_key_holder,
        "SELECT " PG_JOB_COLS(
            "a.") ", (a.type = $2::text AND a.queue = $3::text"
                  "        AND a.payload::jsonb = $4::jsonb) AS same "
                  "FROM jobd.all_jobs a WHERE a.id = (SELECT job_id FROM jobd.job_keys"
                  "                                   WHERE idempotency_key = $1::text)");

/*
 * $1 child, $2 parents, $3 run on failure, $4 now: the child, just
 * inserted, waits for its parents or settles at once (jobd.deps_attach,
 * schema version 24). Answers 0, or a parent id that names no job.
 */
PG_STMT(st_deps_attach, "SELECT jobd.deps_attach($1::bigint, $2::bigint[], $3::boolean, "
                        "COALESCE(" PG_US_TS("$4") ", now()))");

/*
 * Gives the job id just inserted the parents of sp (docs/MODEL.md,
 * Dependencies), inside the open transaction; *out, if not NULL, is read
 * again (it may be waiting, or cancelled for a parent already dead).
 */
static int
attach_parents(struct store_pg *s, const struct job_spec *sp, const char *field, int64_t id,
               struct job *out, struct jobd_error *err)
{
    struct pg_array a;
    pg_array_begin(&a);
    for (size_t i = 0; i < sp->n_depends_on; i++)
        pg_array_add_i64(&a, sp->depends_on[i], false);
    char ib[24], nowb[24];
    const char *vals[4] = {pg_i64(ib, id), pg_array_end(&a),
                           sp->run_on_parent_failure ? "true" : "false", pg_now_param(s, nowb)};
    if (vals[1] == NULL) {
        pg_array_fini(&a);
        return jobd_error_set(err, JOBD_E_NOMEM, field, "out of memory");
    }
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_deps_attach, 4, vals, &r, err);
    pg_array_fini(&a);
    if (rc != JOBD_OK)
        return rc;
    int64_t missing = pg_get_i64(r, 0, 0);
    PQclear(r);
    if (missing != 0) {
        /* field is "…idempotency_key": name the item's depends_on */
        char f[64];
        const char *dot = strrchr(field, '.');
        snprintf(f, sizeof f, "%.*sdepends_on", dot ? (int)(dot - field + 1) : 0, field);
        return jobd_error_set(err, JOBD_E_INVALID, f, "depends_on: no job with id %lld",
                              (long long)missing);
    }
    if (out == NULL)
        return JOBD_OK;
    job_fini(out);
    return pg_op_get(&s->base, id, out, err);
}

/* ---- enqueue ---- */

int
pg_enqueue_one(struct store_pg *s, const struct job_spec *sp, const char *field, struct job *out,
               bool *replayed, int64_t *id_out, struct jobd_error *err)
{
    struct job_spec d = job_spec_with_defaults(sp);
    char b[7][24], nowb[24];
    const char *now = pg_now_param(s, nowb);
    const char *vals[13] = {
        sp->type,
        d.payload,
        d.queue,
        pg_i64(b[0], sp->priority),
        sp->run_at_us > 0 ? pg_i64(b[1], sp->run_at_us) : NULL,
        pg_i64(b[2], d.max_attempts),
        sp->idempotency_key,
        sp->timeout_ms > 0 ? pg_i64(b[3], sp->timeout_ms) : NULL,
        sp->schedule,
        sp->scheduled_for_us > 0 ? pg_i64(b[4], sp->scheduled_for_us) : NULL,
        now,
        sp->traceparent,
        sp->group,
    };
    /* A key whose holder was pruned between our two statements is free again: retry. */
    for (int tries = 0; tries < PG_ENQUEUE_RACE_TRIES; tries++) {
        PGresult *r = NULL;
        int rc = pg_exec(s, &st_enqueue, 13, vals, &r, err);
        if (rc != JOBD_OK)
            return rc;
        if (PQntuples(r) == 1) {
            rc = out ? pg_row_to_job(r, 0, 0, out) : JOBD_OK;
            int64_t id = pg_get_i64(r, 0, 0);
            PQclear(r);
            if (id_out != NULL)
                *id_out = id;
            if (rc == JOBD_OK && sp->n_depends_on > 0)
                rc = attach_parents(s, sp, field, id, out, err);
            return rc;
        }
        PQclear(r);
        const char *kv[4] = {sp->idempotency_key, sp->type, d.queue, d.payload};
        rc = pg_exec(s, &st_key_holder, 4, kv, &r, err);
        if (rc != JOBD_OK)
            return rc;
        if (PQntuples(r) == 0) {
            PQclear(r);
            continue;
        }
        if (PQgetvalue(r, 0, PG_JOB_NCOLS)[0] != 't') {
            long long id = (long long)pg_get_i64(r, 0, 0);
            PQclear(r);
            return jobd_error_set(err, JOBD_E_CONFLICT, field,
                                  "idempotency key '%s' was already used for job %lld with a "
                                  "different type, queue or payload",
                                  sp->idempotency_key, id);
        }
        if (replayed != NULL)
            *replayed = true;
        rc = out ? pg_row_to_job(r, 0, 0, out) : JOBD_OK;
        PQclear(r);
        return rc;
    }
    return jobd_error_set(err, JOBD_E_STORE, field,
                          "idempotency key '%s' kept changing hands; try again",
                          sp->idempotency_key);
}
