/*
 * pg/groups.c — the fair claim of a grouped queue on PostgreSQL
 * (docs/DESIGN.md, Groups; docs/MODEL.md, Groups), and the reads of its
 * groups (GET /v1/queues/{name}/groups, the jobd_queue_groups metric).
 *
 * One statement claims: it takes the queue's least recently served groups
 * from job_groups (at most `limit` of them, in turn order), the head of
 * each (from the queue's first jobs in plain order when there, else one
 * probe of jobs_group_claim a group), and the queue's first jobs
 * in plain claim order (so a higher priority, or a group job_groups does
 * not know, is never passed over, and one group alone still fills the
 * claim); of these, the k-th job of every group comes before the
 * (k+1)-th of any group at equal priority, and among equals the group
 * served longest ago first. Every group it looked at gets a new turn, also
 * one with nothing due (or held back by a group limit), so such groups do
 * not keep the front of the line from the others. Its cost grows with the claim's limit, not with the
 * number of groups or jobs. With group limits (queues.group_max_running,
 * group_rate_*) the caller holds the queue's row (pg/qlimits.c), so the
 * running counts and window counts read here cannot change under it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/pg/internal.h"

/* The claim's "now" ($5, the limited path's instant) and its types filter. */
#define GR_NOW PG_NOW("$5")
#define GR_TYPES "($4::text[] IS NULL OR type = ANY($4::text[]))"
/* A paused queue gives nothing (the limited path checked its row already). */
#define GR_LIVE "NOT EXISTS (SELECT 1 FROM jobd.queues p WHERE p.name = $6::text AND p.paused)"
#define GR_DUE "status = 'pending' AND run_at <= " GR_NOW " AND " GR_TYPES " AND " GR_LIVE
/* How many groups one claim may look at: a few times its limit, so that
 * groups another claimer just emptied do not end its round early. */
#define GR_WINDOW "(4 * $2::int)"

/*
 * $1 worker, $2 limit, $3 lease_ms, $4 types (NULL = any), $5 now, $6 queue,
 * $7 group_max_running (NULL = none), $8 group rate limit (NULL = none),
 * $9 the rate window's start (microseconds), $10 the cursor: the last group
 * this connection looked at. Returns the claimed jobs (cols: PG_JOB_COLS,
 * or PG_RUN_COLS for a worker loop), each with the next cursor after them.
 *
 * g: the next 4 * $2 groups after the cursor in name order, wrapping
 * around. w: when g holds $2 groups or more (one job a group), the queue's
 * first $2 jobs in plain claim order, locked; wg: the groups of g among
 * them, whose heads those are (a group's first job in plain order is its
 * head). h: the heads of g's other groups in order, ceil($2 / |g|) jobs a
 * group (one walk of jobs_group_claim each, so one group alone fills the
 * claim), until with wg's $2 are found: groups with nothing due cost one
 * probe each, and the cursor moves to the last group of h or wg. In a
 * round robin's steady state the plain order's first jobs are the heads of
 * the groups served longest ago, the next ones after the cursor, so w
 * spares most probes (docs/DESIGN.md, Groups). t: what h and w left of the
 * limit, from the queue's plain claim order (jobs_claim_queue). tp: the queue's
 * first job if its priority is above every head's (a priority index range
 * that is empty when all priorities are equal). Then the rn-th job of
 * every group before the (rn+1)-th of any at equal priority, the groups in
 * cursor order, within the group limits. Only a group rate writes to
 * job_groups (its window counts); the cursor lives in the connection.
 */
/* clang-format off */
#define GR_CLAIM(cols)                                                                             \
    "WITH g AS MATERIALIZED ("                                                                     \
    "  SELECT grp, row_number() OVER (ORDER BY ord, grp) AS pos FROM ("                            \
    "   (SELECT grp, 0 AS ord FROM jobd.job_groups WHERE queue = $6::text AND grp > $10::text"         \
    "      AND " GR_LIVE     \
    "     ORDER BY grp LIMIT " GR_WINDOW ")"                                                       \
    "   UNION ALL"                                                                                 \
    "   (SELECT grp, 1 AS ord FROM jobd.job_groups WHERE queue = $6::text AND grp <= $10::text"        \
    "      AND " GR_LIVE    \
    "     ORDER BY grp LIMIT " GR_WINDOW ")) x ORDER BY ord, grp LIMIT " GR_WINDOW "),"            \
    " w AS MATERIALIZED ("                                                                         \
    "  SELECT id, COALESCE(grp, '') AS grp, priority, run_at FROM jobd.jobs"                       \
    "   WHERE queue = $6::text AND " GR_DUE                                                        \
    "   ORDER BY priority DESC, run_at, id"                                                        \
    "   LIMIT CASE WHEN (SELECT count(*) FROM g) >= $2::int THEN $2::int ELSE 0 END"               \
    "   FOR UPDATE SKIP LOCKED),"                                                                  \
    " wg AS MATERIALIZED (SELECT DISTINCT g.grp, g.pos FROM w JOIN g ON g.grp = w.grp),"           \
    " h AS MATERIALIZED ("                                                                         \
    "  SELECT c.id, g.grp, c.priority, c.run_at, g.pos"                                            \
    "   FROM (SELECT * FROM g WHERE grp NOT IN (SELECT grp FROM wg) ORDER BY pos) g"               \
    "   CROSS JOIN LATERAL ("                                                                      \
    "    SELECT id, priority, run_at FROM jobd.jobs"                                               \
    "     WHERE queue = $6::text AND COALESCE(grp, '') = g.grp"                                    \
    "       AND status NOT IN ('running', 'succeeded') AND run_at <= " GR_NOW " AND " GR_TYPES     \
    "     ORDER BY priority DESC, run_at, id"                                                      \
    "     LIMIT ceil($2::numeric / GREATEST((SELECT count(*) FROM g), 1))::int"                    \
    "     FOR UPDATE SKIP LOCKED) c"                                                               \
    "   LIMIT GREATEST($2::int - (SELECT count(*) FROM wg)::int, 0)),"                             \
" t AS MATERIALIZED ("                                                                             \
    "  SELECT id, COALESCE(grp, '') AS grp, priority, run_at FROM jobd.jobs"                       \
    "   WHERE queue = $6::text AND " GR_DUE " AND id <> ALL(ARRAY(SELECT id FROM h))"              \
    "     AND id <> ALL(ARRAY(SELECT id FROM w))"                                                  \
    "   ORDER BY priority DESC, run_at, id"                                                        \
    "   LIMIT GREATEST($2::int - (SELECT count(*) FROM h)::int - (SELECT count(*) FROM w)::int, 0)" \
    "   FOR UPDATE SKIP LOCKED),"                                                                  \
    " tp AS MATERIALIZED ("                                                                        \
    "  SELECT id, COALESCE(grp, '') AS grp, priority, run_at FROM jobd.jobs"                       \
    "   WHERE queue = $6::text AND " GR_DUE " AND id <> ALL(ARRAY(SELECT id FROM h))"              \
    "     AND priority > (SELECT COALESCE(min(priority), -2147483648) FROM h)"                     \
    "   ORDER BY priority DESC, run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED),"                       \
    " cand AS (SELECT id, grp, priority, run_at FROM h UNION SELECT * FROM w UNION SELECT * FROM t"   \
    "   UNION SELECT * FROM tp),"                                                                  \
    " run AS (SELECT COALESCE(grp, '') AS grp, count(*) AS n FROM jobd.jobs"                       \
    "   WHERE $7::int IS NOT NULL AND lease_expires_at IS NOT NULL"                                \
    "     AND queue = $6::text AND status = 'running' GROUP BY 1),"                                \
    " xr AS (SELECT grp, rate_window_us, rate_count FROM jobd.job_groups"                          \
    "   WHERE $8::int IS NOT NULL AND queue = $6::text AND grp IN (SELECT grp FROM cand)),"       \
    " z AS (SELECT c.*, COALESCE(g.pos, $2::int * 4 + 1) AS turn,"                                 \
    "    row_number() OVER (PARTITION BY c.grp ORDER BY c.priority DESC, c.run_at, c.id) AS rn,"   \
    "    LEAST(CASE WHEN $7::int IS NULL THEN $2::int ELSE $7::int - COALESCE(r.n, 0)::int END,"   \
    "          CASE WHEN $8::int IS NULL THEN $2::int"                                             \
    "               WHEN x.rate_window_us >= $9::bigint THEN $8::int - x.rate_count"               \
    "               ELSE $8::int END) AS allow"                                                    \
    "   FROM cand c LEFT JOIN g ON g.grp = c.grp LEFT JOIN run r ON r.grp = c.grp"             \
    "   LEFT JOIN xr x ON x.grp = c.grp),"                                                         \
    " due AS MATERIALIZED (SELECT id, grp FROM z WHERE rn <= allow"                                    \
    "   ORDER BY priority DESC, rn, turn, run_at, id LIMIT $2::int),"                              \
    " got AS (SELECT grp, count(*) AS n FROM due GROUP BY grp),"                                   \
    " su AS (UPDATE jobd.job_groups x SET rate_window_us = GREATEST(x.rate_window_us, $9::bigint)," \
    "    rate_count = CASE WHEN x.rate_window_us >= $9::bigint THEN x.rate_count ELSE 0 END + d.n" \
    "   FROM got d WHERE $8::int IS NOT NULL AND x.queue = $6::text AND x.grp = d.grp),"           \
    " si AS (INSERT INTO jobd.job_groups (queue, grp, rate_window_us, rate_count)"                 \
    "   SELECT $6::text, d.grp, CASE WHEN $8::int IS NULL THEN 0 ELSE $9::bigint END,"             \
    "          CASE WHEN $8::int IS NULL THEN 0 ELSE d.n END"                                      \
    "     FROM got d WHERE d.grp NOT IN (SELECT grp FROM g)"                                       \
    "   ON CONFLICT (queue, grp) DO NOTHING)"                                                      \
    PG_CLAIM_EVENTS(                                                                               \
        "UPDATE jobd.jobs j SET status = 'running', attempt = j.attempt + 1,"                      \
        "       worker_id = $1::text, lease_expires_at = " GR_NOW " + " PG_MS("$3") ","            \
        "       started_at = " GR_NOW " WHERE j.id = ANY(ARRAY(SELECT id FROM due)) ",             \
        cols ", (SELECT grp FROM g WHERE pos = COALESCE((SELECT max(pos) FROM"                     \
        "   (SELECT pos FROM h UNION ALL SELECT pos FROM wg) x), (SELECT max(pos) FROM g)))"       \
        " AS grp_turn")
PG_STMT(st_gr_claim, GR_CLAIM(PG_JOB_COLS("j.")));
/* The same for a worker loop (claim_req.run_only): only what a run needs. */
PG_STMT(st_gr_claim_run, GR_CLAIM(PG_RUN_COLS("j.")));
/* clang-format on */

/*
 * A queue with one group: $1 worker, $2 limit, $3 lease_ms, $4 types, $5
 * now, $6 queue; one ordered walk of jobs_claim_queue, as a limited
 * queue's claim (pg/qlimits.c), paused queues left out.
 */
/* clang-format off */
#define GR_CLAIM_ONE(cols)                                                                         \
    "WITH due AS MATERIALIZED ("                                                                   \
    "  SELECT id FROM jobd.jobs WHERE queue = $6::text AND " GR_DUE                                \
    "   ORDER BY priority DESC, run_at, id LIMIT $2::int FOR UPDATE SKIP LOCKED)"                  \
    PG_CLAIM_EVENTS(                                                                               \
        "UPDATE jobd.jobs j SET status = 'running', attempt = j.attempt + 1,"                      \
        "       worker_id = $1::text, lease_expires_at = " GR_NOW " + " PG_MS("$3") ","            \
        "       started_at = " GR_NOW " WHERE j.id = ANY(ARRAY(SELECT id FROM due)) ",             \
        cols)
PG_STMT(st_gr_one, GR_CLAIM_ONE(PG_JOB_COLS("j.")));
PG_STMT(st_gr_one_run, GR_CLAIM_ONE(PG_RUN_COLS("j.")));
/* clang-format on */

int
pg_groups_claim_one(struct store_pg *s, const char *q, const struct claim_req *req,
                    const char *types, int n, const char *now, struct job_list *out,
                    struct jobd_error *err)
{
    char b[2][24];
    const char *vals[6] = {
        req->worker_id, pg_i64(b[0], n), pg_i64(b[1], req->lease_ms), types, now, q};
    PGresult *r = NULL;
    bool run = req->run_only;
    int rc = pg_exec(s, run ? &st_gr_one_run : &st_gr_one, 6, vals, &r, err);
    if (rc == JOBD_OK)
        rc = run ? pg_append_runs(r, out, err) : pg_append_rows(r, out, err);
    PQclear(r);
    return rc;
}

/*
 * $1 queue, $2 group_rate per (ms; NULL = none), $3 now: forgets the
 * queue's groups with no pending job whose rate window (if any) is over, and
 * unmarks the queue when no job of it has a group any more. A group whose
 * row goes while one of its jobs is being enqueued or retried is still
 * claimed (by the plain-order half of the claim, which puts its row back);
 * a queue unmarked so is claimed by the ordinary statement until its next
 * grouped enqueue marks it again: neither loses a job.
 */
/* clang-format off */
PG_STMT(st_gr_forget,
    "WITH del AS (DELETE FROM jobd.job_groups x WHERE x.queue = $1::text"
    "    AND x.rate_window_us + COALESCE($2::bigint, 0) * 1000 <= " PG_TS_US(PG_NOW("$3"))
    "    AND NOT EXISTS (SELECT 1 FROM jobd.jobs j WHERE j.queue = $1::text"
    "                      AND COALESCE(j.grp, '') = x.grp"
    "                      AND j.status NOT IN ('running', 'succeeded')) RETURNING 1) "
    "UPDATE jobd.queues SET grouped = false WHERE name = $1::text AND grouped"
    "   AND NOT EXISTS (SELECT 1 FROM jobd.jobs j WHERE j.queue = $1::text"
    "                     AND COALESCE(j.grp, '') > ''"
    "                     AND j.status NOT IN ('running', 'succeeded'))"
    "   AND (SELECT count(*) FROM del) >= 0");
/* clang-format on */

int
pg_groups_claim(struct store_pg *s, const char *q, const struct claim_req *req, const char *types,
                int n, const char *now, const struct qlimits_row *lim, int64_t window_us,
                char *cursor, struct job_list *out, struct jobd_error *err)
{
    char b[5][24];
    bool limited = lim != NULL && (lim->group_max_running > 0 || lim->group_rate_limit > 0);
    const char *vals[10] = {
        req->worker_id,
        pg_i64(b[0], n),
        pg_i64(b[1], req->lease_ms),
        types,
        now,
        q,
        limited && lim->group_max_running > 0 ? pg_i64(b[2], lim->group_max_running) : NULL,
        limited && lim->group_rate_limit > 0 ? pg_i64(b[3], lim->group_rate_limit) : NULL,
        pg_i64(b[4], window_us),
        cursor,
    };
    PGresult *r = NULL;
    bool run = req->run_only;
    int rc = pg_exec(s, run ? &st_gr_claim_run : &st_gr_claim, 10, vals, &r, err);
    if (rc == JOBD_OK)
        rc = run ? pg_append_runs(r, out, err) : pg_append_rows(r, out, err);
    int col = run ? PG_RUN_NCOLS : PG_JOB_NCOLS;
    if (rc == JOBD_OK && PQntuples(r) > 0 && !PQgetisnull(r, 0, col))
        snprintf(cursor, JOB_GROUP_MAX + 1, "%s", PQgetvalue(r, 0, col));
    PQclear(r);
    return rc;
}

int
pg_groups_forget(struct store_pg *s, const char *q, int64_t rate_per_ms, const char *now,
                 struct jobd_error *err)
{
    char b[24];
    const char *vals[3] = {q, rate_per_ms > 0 ? pg_i64(b, rate_per_ms) : NULL, now};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_gr_forget, 3, vals, &r, err);
    PQclear(r);
    return rc;
}
