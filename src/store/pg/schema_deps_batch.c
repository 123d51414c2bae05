/*
 * pg/schema_deps_batch.c — schema version 35 of pg/schema.c: the parents of
 * a batch of jobs attached set-wise (docs/DESIGN.md, Dependencies; figures
 * in docs/BENCHMARKS.md, Dependencies). Like every migration step, never
 * edited once released; a change is a new step.
 *
 * A batch in which jobs have parents was one INSERT, one jobd.deps_attach
 * and one read per job, three round trips and ~0.5 ms of statements each
 * (10,000 children of one root: 9 to 15 s on the shared machine, against
 * 0.3 s for 10,000 jobs without parents). pg/enqueue.c now inserts such a
 * batch with the one-statement insert of plain batches and calls
 * jobd.deps_attach_set once for all of its edges: the same steps as
 * version 30's jobd.deps_attach, each over the whole set. (1) Every
 * distinct parent is locked, in id order, in whichever table holds it,
 * and marked has_children the first time (so a parent of 10,000 children
 * is locked and written once, not once per child); (2) the edges are
 * inserted in one statement, ended at once for a parent already ended;
 * (3) the children move into jobs_waiting in one statement; (4) they settle
 * through jobd.deps_release (version 30), which releases or cancels those
 * whose parents all ended, exactly as jobd.deps_settle did one by one.
 *
 * kids are the batch's jobs that have parents; the edges are (ec[i], ep[i])
 * with run_on_failure er[i]. Answers '{}', or {child, parent}: the first
 * child (lowest id, i.e. first in batch order) naming a job that does not
 * exist, and the lowest such parent of it, as jobd.deps_attach answered for
 * that child; the caller rolls back.
 */
#include "store/pg/internal.h"

/* The columns of jobd.jobs as version 29 moves rows (pg/schema_groups.c). */
#define DB_COLS                                                                                    \
    "id, queue, type, payload, status, priority, run_at, attempt, attempt_floor, max_attempts, "   \
    "idempotency_key, schedule, scheduled_for, worker_id, lease_expires_at, timeout_ms, "          \
    "cancel_requested, last_error, result, created_at, started_at, finished_at, "                  \
    "lease_token_hash, traceparent, has_children, grp"
#define DB_SELECT                                                                                  \
    "w.id, w.queue, w.type, w.payload, 'waiting', w.priority, w.run_at, w.attempt, "               \
    "w.attempt_floor, w.max_attempts, w.idempotency_key, w.schedule, w.scheduled_for, "            \
    "w.worker_id, NULL, w.timeout_ms, false, w.last_error, w.result, w.created_at, "               \
    "w.started_at, NULL, w.lease_token_hash, w.traceparent, w.has_children, w.grp"

/* clang-format off */
const char pg_step_deps_batch[] =
    "CREATE FUNCTION jobd.deps_attach_set(kids bigint[], ec bigint[], ep bigint[],\n"
    "        er boolean[], at timestamptz) RETURNS bigint[] LANGUAGE plpgsql\n"
    "        SET plan_cache_mode = force_custom_plan AS $$\n"
    "DECLARE\n"
    "    p bigint;\n"
    "    st text;\n"
    "    hc boolean;\n"
    "    ps bigint[] := '{}';\n"
    "    sts text[] := '{}';\n"
    "    miss bigint[] := '{}';\n"
    "    bad bigint[];\n"
    "BEGIN\n"
    "    FOR p IN SELECT DISTINCT x FROM unnest(ep) x ORDER BY x LOOP\n"
    "        st := NULL;\n"
    "        FOR tries IN 1..3 LOOP\n"
    "            SELECT status, has_children INTO st, hc FROM jobd.jobs WHERE id = p\n"
    "                FOR NO KEY UPDATE;\n"
    "            IF FOUND THEN\n"
    "                IF NOT hc THEN\n"
    "                    UPDATE jobd.jobs SET has_children = true WHERE id = p;\n"
    "                END IF;\n"
    "                EXIT;\n"
    "            END IF;\n"
    "            SELECT status, has_children INTO st, hc FROM jobd.jobs_done WHERE id = p\n"
    "                FOR NO KEY UPDATE;\n"
    "            IF FOUND THEN\n"
    "                IF NOT hc THEN\n"
    "                    UPDATE jobd.jobs_done SET has_children = true WHERE id = p;\n"
    "                END IF;\n"
    "                EXIT;\n"
    "            END IF;\n"
    "            SELECT status, has_children INTO st, hc FROM jobd.jobs_waiting WHERE id = p\n"
    "                FOR NO KEY UPDATE;\n"
    "            IF FOUND THEN\n"
    "                IF NOT hc THEN\n"
    "                    UPDATE jobd.jobs_waiting SET has_children = true WHERE id = p;\n"
    "                END IF;\n"
    "                EXIT;\n"
    "            END IF;\n"
    "        END LOOP;\n"
    "        IF st IS NULL THEN\n"
    "            miss := miss || p;\n"
    "        ELSE\n"
    "            ps := ps || p;\n"
    "            sts := sts || st;\n"
    "        END IF;\n"
    "    END LOOP;\n"
    "    IF cardinality(miss) > 0 THEN\n"
    "        SELECT ARRAY[e.c, min(e.p)] INTO bad FROM unnest(ec, ep) e(c, p)\n"
    "         WHERE e.p = ANY(miss) GROUP BY e.c ORDER BY e.c LIMIT 1;\n"
    "        RETURN bad;\n"
    "    END IF;\n"
    "    INSERT INTO jobd.job_deps (parent, child, ended_status, run_on_failure)\n"
    "    SELECT DISTINCT ON (e.c, e.p) e.p, e.c,\n"
    "           CASE WHEN s.st IN ('succeeded', 'dead', 'cancelled') THEN s.st END, e.r\n"
    "      FROM unnest(ec, ep, er) e(c, p, r) JOIN unnest(ps, sts) s(p, st) ON s.p = e.p\n"
    "     ORDER BY e.c, e.p;\n"
    "    WITH w AS (DELETE FROM jobd.jobs WHERE id = ANY(kids) RETURNING *)\n"
    "    INSERT INTO jobd.jobs_waiting (" DB_COLS ")\n"
    "    SELECT " DB_SELECT " FROM w ORDER BY w.id;\n"
    "    PERFORM jobd.deps_release(kids, at);\n"
    "    RETURN '{}';\n"
    "END $$;\n";
/* clang-format on */
