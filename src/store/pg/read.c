/*
 * pg/read.c — reads and claims on PostgreSQL: get, list, claim and
 * next_run_at (the claim-side questions a worker asks).
 *
 * A claim is one UPDATE over a MATERIALIZED, FOR UPDATE SKIP LOCKED
 * selection, so claimers never wait for each other and never share a job.
 * Split from pg/open.c by concern; the conventions are in pg/internal.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/operator_int.h"
#include "store/pg/internal.h"

/* ---- reads ---- */

PG_STMT(st_get, "SELECT " PG_JOB_COLS("") " FROM jobd.all_jobs WHERE id = $1::bigint");

/* ---- claims ---- */

/*
 * $1 worker, $2 limit, $3 lease_ms, $4 types (NULL = any), $5 now, [$6 queues].
 * Without types (libjobd's jobd_claim; workers always name theirs): one
 * ordered walk of jobs_claim_queue per queue (LATERAL), merged and cut to
 * the limit; the queues are $6, or without it those with pending jobs,
 * found by a skip scan of the same index (one probe per queue), so no
 * index over every pending job in claim order is needed (migration 16).
 * The returned rows are in no particular order: the caller sorts them.
 * `due` is MATERIALIZED so the locking LIMIT runs once (see st_reap), and
 * the rows are then found by primary key (= ANY(ARRAY(...))): joining the
 * CTE instead lets a generic plan guess 10% of the table and hash-join a
 * sequential scan of jobs.
 */
/* clang-format off */
#define CLAIM_UPDATE                                                                    \
    "UPDATE jobd.jobs j SET status = 'running', attempt = j.attempt + 1,"               \
    "       worker_id = $1::text, lease_expires_at = " PG_NOW("$5") " + " PG_MS("$3") "," \
    "       started_at = " PG_NOW("$5") " "                                             \
    "WHERE j.id = ANY(ARRAY(SELECT id FROM due)) "
#define CLAIM_SET PG_CLAIM_EVENTS(CLAIM_UPDATE, PG_JOB_COLS("j."))

/* clang-format off */
#define CLAIM_DUE_QUEUES(from)                                                          \
     "due AS MATERIALIZED ("                                                            \
     "  SELECT c.id FROM " from                                                         \
     "  CROSS JOIN LATERAL ("                                                           \
     "    SELECT id, priority, run_at FROM jobd.jobs"                                   \
     "     WHERE queue = qn.name AND status = 'pending' AND run_at <= " PG_NOW("$5")    \
     "       AND ($4::text[] IS NULL OR type = ANY($4::text[]))"                        \
     "     ORDER BY priority DESC, run_at, id LIMIT $2::int FOR UPDATE SKIP LOCKED) c"  \
     "  WHERE NOT EXISTS (SELECT 1 FROM jobd.queues p WHERE p.name = qn.name"           \
     "                    AND (" QLIMITS_HELD_PG "))"                                   \
     "  ORDER BY c.priority DESC, c.run_at, c.id LIMIT $2::int) "
/* The queues of pending jobs, one probe of jobs_claim_queue each (a NULL ends it). */
#define PENDING_QUEUES                                                                  \
     "WITH RECURSIVE qs AS ("                                                           \
     "  (SELECT queue AS name FROM jobd.jobs WHERE status = 'pending'"                  \
     "    ORDER BY queue LIMIT 1)"                                                      \
     "  UNION ALL"                                                                      \
     "  SELECT (SELECT queue FROM jobd.jobs WHERE status = 'pending' AND queue > qs.name" \
     "           ORDER BY queue LIMIT 1) FROM qs WHERE qs.name IS NOT NULL), "

PG_STMT(st_claim_any,
     PENDING_QUEUES
     CLAIM_DUE_QUEUES("(SELECT name FROM qs WHERE name IS NOT NULL) qn")
     CLAIM_SET);

PG_STMT(st_claim_queues,
     "WITH " CLAIM_DUE_QUEUES("(SELECT DISTINCT unnest($6::text[]) AS name) qn")
     CLAIM_SET);
/* clang-format on */

/*
 * With types (a worker always names them): one ordered walk of
 * jobs_claim_type per type (LATERAL), merged and cut to the limit, so a
 * type with no jobs costs one index probe whatever the backlog. $6 queues
 * (NULL = any) only filters. "status NOT IN ('running', 'succeeded')"
 * (= pending in jobs) is the predicate of the per-type indexes only
 * (migration 8), which leave finished rows out; the planner cannot walk
 * an index without the type (jobs_claim_queue) hoping to meet the type
 * soon, which for a type with no pending jobs would read every pending job.
 */
/* clang-format off */
#define CLAIM_DUE_TYPES                                                                 \
     "WITH due AS MATERIALIZED ("                                                       \
     "  SELECT c.id FROM (SELECT DISTINCT unnest($4::text[]) AS name) tn"               \
     "  CROSS JOIN LATERAL ("                                                           \
     "    SELECT id, priority, run_at FROM jobd.jobs"                                   \
     "     WHERE type = tn.name AND status NOT IN ('running', 'succeeded')"             \
     "       AND run_at <= " PG_NOW("$5")                                               \
     "       AND ($6::text[] IS NULL OR queue = ANY($6::text[]))"                       \
     "       AND queue NOT IN (SELECT name FROM jobd.queues WHERE " QLIMITS_HELD_PG ")" \
     "     ORDER BY priority DESC, run_at, id LIMIT $2::int FOR UPDATE SKIP LOCKED) c"  \
     "  ORDER BY c.priority DESC, c.run_at, c.id LIMIT $2::int) "
PG_STMT(st_claim_types, CLAIM_DUE_TYPES CLAIM_SET);
/* The same for a worker loop (claim_req.run_only): only what a run needs. */
PG_STMT(st_claim_types_run, CLAIM_DUE_TYPES PG_CLAIM_EVENTS(CLAIM_UPDATE, PG_RUN_COLS("j.")));
/* clang-format on */

/* $1 types, $2 queues (NULL = any): the soonest run_at, one jobs_next_type probe a type. */
/* clang-format off */
PG_STMT(st_next_run_at_types,
     "SELECT " PG_TS_US("min(x.run_at)") " FROM (SELECT DISTINCT unnest($1::text[]) AS name) tn"
     " CROSS JOIN LATERAL ("
     "  SELECT run_at FROM jobd.jobs WHERE type = tn.name"
     "     AND status NOT IN ('running', 'succeeded')"
     "     AND ($2::text[] IS NULL OR queue = ANY($2::text[]))"
     "     AND queue NOT IN (SELECT name FROM jobd.queues WHERE paused)"
     "   ORDER BY run_at LIMIT 1) x");
/* clang-format on */

/*
 * $1 types (always NULL here), $2 queues (NULL = any): st_next_run_at_types
 * over every type with pending jobs, found by a skip scan of jobs_next_type
 * (one probe per type; jobd_worker and the long poll always name types).
 */
/* clang-format off */
PG_STMT(st_next_run_at,
     "WITH RECURSIVE ts AS ("
     "  (SELECT type AS name FROM jobd.jobs WHERE status NOT IN ('running', 'succeeded')"
     "    ORDER BY type LIMIT 1)"
     "  UNION ALL"
     "  SELECT (SELECT type FROM jobd.jobs"
     "           WHERE status NOT IN ('running', 'succeeded') AND type > ts.name"
     "           ORDER BY type LIMIT 1) FROM ts WHERE ts.name IS NOT NULL) "
     "SELECT " PG_TS_US("min(x.run_at)") " FROM ts CROSS JOIN LATERAL ("
     "  SELECT run_at FROM jobd.jobs WHERE type = ts.name"
     "     AND status NOT IN ('running', 'succeeded')"
     "     AND ($2::text[] IS NULL OR queue = ANY($2::text[]))"
     "     AND queue NOT IN (SELECT name FROM jobd.queues WHERE paused)"
     "   ORDER BY run_at LIMIT 1) x WHERE $1::text[] IS NULL");
/* clang-format on */
/* ---- reads ---- */

int
pg_op_get(struct store *st, int64_t id, struct job *out, struct jobd_error *err)
{
    char b[24];
    const char *vals[1] = {pg_i64(b, id)};
    PGresult *r = NULL;
    int rc = pg_exec(pg_of(st), &st_get, 1, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    if (PQntuples(r) == 0)
        rc = jobd_error_set(err, JOBD_E_NOTFOUND, "id", "no job with id %lld", (long long)id);
    else
        rc = pg_row_to_job(r, 0, 0, out);
    PQclear(r);
    return rc;
}

/* ---- claims ---- */

/* A text[] literal of n names, or NULL (= any) when names is NULL or n is 0. */
int
pg_names_array(struct pg_array *a, const char *const *names, size_t n, const char **out)
{
    *out = NULL;
    pg_array_begin(a);
    if (names == NULL || n == 0)
        return JOBD_OK;
    for (size_t i = 0; i < n; i++)
        pg_array_add_str(a, names[i]);
    *out = pg_array_end(a);
    return *out ? JOBD_OK : JOBD_E_NOMEM;
}

/*
 * store_offload: a worker loop's connection, which claims many times a
 * second. A claim must walk jobs_claim_type in claim order and stop at its
 * limit. Before the table's first ANALYZE (a new install, a burst of
 * enqueues before autovacuum's first pass) the planner knows nothing of
 * `type` and `run_at` and, by its default selectivities, expects a few
 * rows: a bitmap scan of every due job of the type plus a sort then looks
 * cheaper, and the generic plan the prepared claim keeps reads every
 * pending job at each claim (20,000 pending, claims of 250: 13 ms instead
 * of 3, docs/BENCHMARKS.md). With bitmap scans off the ordered walk is
 * the plan with or without statistics; the connection's other statements
 * (heartbeats, reports, presence) find their rows by primary key either
 * way. A session setting: not behind a transaction pooler, where it would
 * land on whichever server connection and stay there for other clients.
 */
void
pg_op_offload(struct store *st)
{
    struct store_pg *s = pg_of(st);
    s->walk_claims = !s->pooled;
}

int
pg_op_claim(struct store *st, const struct claim_req *req, struct job_list *out,
            struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    /* Set on each new session (forget_session clears walk_set), before the
     * claim is prepared: a cached plan keeps the settings it was made with. */
    if (s->walk_claims && !s->walk_set) {
        int src = pg_exec_simple(s, "SET enable_bitmapscan = off", err);
        if (src != JOBD_OK)
            return src;
        s->walk_set = true;
    }
    char b[2][24], nowb[24];
    struct pg_array ta, qa;
    const char *types = NULL, *queues = NULL;
    int rc = pg_names_array(&ta, req->types, req->n_types, &types);
    if (rc == JOBD_OK)
        rc = pg_names_array(&qa, req->queues, req->n_queues, &queues);
    else
        pg_array_begin(&qa);
    if (rc != JOBD_OK) {
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        goto out;
    }
    /* Limited queues first: they take at most what their limits allow, and
     * the ordinary statement below, which skips them, fills the rest. */
    size_t first = out->n;
    int left = req->limit;
    if ((rc = pg_qlimits_claim(s, req, types, out, &left, err)) != JOBD_OK || left == 0)
        goto sort;
    const char *vals[6] = {
        req->worker_id, pg_i64(b[0], left),    pg_i64(b[1], req->lease_ms),
        types,          pg_now_param(s, nowb), queues,
    };
    PGresult *r = NULL;
    bool run_only = types != NULL && req->run_only;
    if (run_only)
        rc = pg_exec(s, &st_claim_types_run, 6, vals, &r, err);
    else if (types != NULL)
        rc = pg_exec(s, &st_claim_types, 6, vals, &r, err);
    else if (queues != NULL)
        rc = pg_exec(s, &st_claim_queues, 6, vals, &r, err);
    else
        rc = pg_exec(s, &st_claim_any, 5, vals, &r, err);
    if (rc == JOBD_OK)
        rc = run_only ? pg_append_runs(r, out, err) : pg_append_rows(r, out, err);
    PQclear(r);
    if (rc == JOBD_OK && out->n == first && qlimits_cache_recheck(&s->qlim)) {
        /* Nothing: a queue may have become grouped since the list was read. */
        qlimits_cache_invalidate(&s->qlim);
        rc = pg_qlimits_claim(s, req, types, out, &left, err);
    }
sort:
    /* What the limited path got is committed: hand it out, not back to the
     * reaper (which would spend an attempt); the error comes back next time. */
    if (rc != JOBD_OK && out->n > first)
        rc = JOBD_OK;
    if (out->n > first + 1)
        qsort(out->v + first, out->n - first, sizeof *out->v, job_claim_order_cmp);
out:
    pg_array_fini(&ta);
    pg_array_fini(&qa);
    return rc;
}

/* ---- wake-ups ---- */

int
pg_op_next_run_at(struct store *st, const struct claim_req *req, int64_t *run_at_us,
                  struct jobd_error *err)
{
    struct pg_array ta, qa;
    const char *vals[2] = {NULL, NULL};
    int rc = pg_names_array(&ta, req->types, req->n_types, &vals[0]);
    if (rc == JOBD_OK)
        rc = pg_names_array(&qa, req->queues, req->n_queues, &vals[1]);
    else
        pg_array_begin(&qa);
    PGresult *r = NULL;
    if (rc != JOBD_OK)
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    else
        rc = pg_exec(pg_of(st), vals[0] != NULL ? &st_next_run_at_types : &st_next_run_at, 2, vals,
                     &r, err);
    if (rc == JOBD_OK)
        *run_at_us = pg_get_i64(r, 0, 0);
    PQclear(r);
    pg_array_fini(&ta);
    pg_array_fini(&qa);
    return rc;
}
