/*
 * pg/schema_deps_fast.c — schema version 30 of pg/schema.c: the release of
 * waiting children (version 24, pg/schema_deps.c) made set-wise and its
 * statements given plans that do not grow with the table (docs/DESIGN.md,
 * Dependencies; figures in docs/BENCHMARKS.md, Dependencies). Like every
 * migration step, never edited once released; a change is a new step.
 *
 * Version 24 settled a parent's children one call of jobd.deps_settle
 * each (a root with 10,000 children: 10,000 calls, ~2 s), found the
 * parent's open edges with a plan that read all of job_deps_open (a
 * BitmapAnd with the primary key: ~0.5 ms per end once 10,000 edges were
 * open), and marked a parent has_children once per child (10,000 children
 * enqueued in one transaction: 10,000 versions of the parent's row).
 *
 * jobd.deps_release(kids, at) settles a set of children with a fixed
 * number of statements, keeping version 24's discipline for a release
 * exactly once: (1) the children still waiting are locked, in id order, so
 * two transactions lock shared children in one order; (2) a later
 * statement, with a snapshot taken after those locks were granted, keeps
 * the locked children with no open edge left, and finds for each the first
 * parent that did not succeed; (3) those to cancel (the first such edge
 * does not say run) move to jobs_done, the edge marked cause, the rest to
 * jobs. Of two parents of one child ending at once, the second to lock the
 * child sees the first's edge ended (and releases it) or does not find it
 * waiting any more (the first released it): once, never twice, never left
 * waiting. A child moved to jobs_done here is an end too: the row trigger
 * jobs_done_deps releases its own children, as before.
 *
 * The parent's edges are found by the primary key alone: num_nulls() is
 * ended_status IS NULL written so the planner cannot match job_deps_open's
 * predicate, which on a fresh table (no statistics) it ANDs with the
 * primary key, reading the whole partial index.
 */
#include "store/pg/internal.h"

/* The columns of jobd.jobs as version 29 moves rows (pg/schema_groups.c). */
#define DF_COLS                                                                                    \
    "id, queue, type, payload, status, priority, run_at, attempt, attempt_floor, max_attempts, "   \
    "idempotency_key, schedule, scheduled_for, worker_id, lease_expires_at, timeout_ms, "          \
    "cancel_requested, last_error, result, created_at, started_at, finished_at, "                  \
    "lease_token_hash, traceparent, has_children, grp"
#define DF_SELECT(status, run_at, error, finished)                                                 \
    "w.id, w.queue, w.type, w.payload, " status ", w.priority, " run_at ", w.attempt, "            \
    "w.attempt_floor, w.max_attempts, w.idempotency_key, w.schedule, w.scheduled_for, "            \
    "w.worker_id, NULL, w.timeout_ms, false, " error                                               \
    ", w.result, w.created_at, w.started_at, " finished                                            \
    ", w.lease_token_hash, w.traceparent, w.has_children, w.grp"

/* clang-format off */
const char pg_step_deps_fast[] =
    /* Settles the children kids that wait and whose parents all ended. */
    "CREATE FUNCTION jobd.deps_release(kids bigint[], at timestamptz) RETURNS void\n"
    "    LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$\n"
    "DECLARE\n"
    "    locked bigint[];\n"
    "    pend bigint[];\n"
    "    bad_c bigint[];\n"
    "    bad_p bigint[];\n"
    "    bad_s text[];\n"
    "    prev text;\n"
    "BEGIN\n"
    "    SELECT array_agg(l.id) INTO locked FROM (SELECT w.id FROM jobd.jobs_waiting w\n"
    "         WHERE w.id = ANY(kids) ORDER BY w.id FOR UPDATE) l;\n"
    "    IF locked IS NULL THEN\n"
    "        RETURN;\n"
    "    END IF;\n"
    "    SELECT array_agg(r.c) FILTER (WHERE b.p IS NULL),\n"
    "           array_agg(r.c) FILTER (WHERE b.p IS NOT NULL),\n"
    "           array_agg(b.p) FILTER (WHERE b.p IS NOT NULL),\n"
    "           array_agg(b.s) FILTER (WHERE b.p IS NOT NULL)\n"
    "      INTO pend, bad_c, bad_p, bad_s\n"
    "      FROM (SELECT k.c FROM unnest(locked) k(c)\n"
    "             WHERE NOT EXISTS (SELECT 1 FROM jobd.job_deps o\n"
    "                                WHERE o.child = k.c AND o.ended_status IS NULL)\n"
    "            OFFSET 0) r\n"
    "      LEFT JOIN LATERAL (SELECT d.parent AS p, d.ended_status AS s, d.run_on_failure AS run\n"
    "                           FROM jobd.job_deps d\n"
    "                          WHERE d.child = r.c AND d.ended_status <> 'succeeded'\n"
    "                          ORDER BY d.parent LIMIT 1) b ON NOT b.run;\n"
    "    IF bad_c IS NOT NULL THEN\n"
    "        UPDATE jobd.job_deps d SET cause = true FROM unnest(bad_c, bad_p) b(c, p)\n"
    "         WHERE d.parent = b.p AND d.child = b.c;\n"
    "        WITH w AS (DELETE FROM jobd.jobs_waiting WHERE id = ANY(bad_c) RETURNING *)\n"
    "        INSERT INTO jobd.jobs_done (" DF_COLS ")\n"
    "        SELECT " DF_SELECT("'cancelled'", "w.run_at",
                                "format('parent job %s is %s', b.p, b.s)", "at") "\n"
    "          FROM w JOIN unnest(bad_c, bad_p, bad_s) b(c, p, s) ON b.c = w.id;\n"
    "    END IF;\n"
    "    IF pend IS NOT NULL THEN\n"
    "        prev := current_setting('jobd.releasing', true);\n"
    "        PERFORM set_config('jobd.releasing', 'on', true);\n"
    "        WITH w AS (DELETE FROM jobd.jobs_waiting WHERE id = ANY(pend) RETURNING *)\n"
    "        INSERT INTO jobd.jobs (" DF_COLS ")\n"
    "        SELECT " DF_SELECT("'pending'", "greatest(w.run_at, at)", "w.last_error",
                                "NULL") " FROM w;\n"
    "        PERFORM set_config('jobd.releasing', COALESCE(prev, ''), true);\n"
    "    END IF;\n"
    "END $$;\n"
    /* Version 24's jobd.deps_settle, one child by statements on its id, the
     * release marked as jobd.deps_release marks it. */
    "CREATE OR REPLACE FUNCTION jobd.deps_settle(c bigint, at timestamptz) RETURNS text\n"
    "    LANGUAGE plpgsql AS $$\n"
    "DECLARE\n"
    "    bad record;\n"
    "    prev text;\n"
    "BEGIN\n"
    "    PERFORM 1 FROM jobd.jobs_waiting WHERE id = c FOR UPDATE;\n"
    "    IF NOT FOUND THEN\n"
    "        RETURN NULL;\n"
    "    END IF;\n"
    "    IF EXISTS (SELECT 1 FROM jobd.job_deps WHERE child = c AND ended_status IS NULL) THEN\n"
    "        RETURN 'waiting';\n"
    "    END IF;\n"
    "    SELECT d.parent, d.ended_status, d.run_on_failure INTO bad FROM jobd.job_deps d\n"
    "     WHERE d.child = c AND d.ended_status <> 'succeeded' ORDER BY d.parent LIMIT 1;\n"
    "    IF NOT FOUND OR bad.run_on_failure THEN\n"
    "        prev := current_setting('jobd.releasing', true);\n"
    "        PERFORM set_config('jobd.releasing', 'on', true);\n"
    "        WITH w AS (DELETE FROM jobd.jobs_waiting WHERE id = c RETURNING *)\n"
    "        INSERT INTO jobd.jobs (" DF_COLS ")\n"
    "        SELECT " DF_SELECT("'pending'", "greatest(w.run_at, at)", "w.last_error",
                                "NULL") " FROM w;\n"
    "        PERFORM set_config('jobd.releasing', COALESCE(prev, ''), true);\n"
    "        RETURN 'pending';\n"
    "    END IF;\n"
    "    UPDATE jobd.job_deps SET cause = true WHERE parent = bad.parent AND child = c;\n"
    "    WITH w AS (DELETE FROM jobd.jobs_waiting WHERE id = c RETURNING *)\n"
    "    INSERT INTO jobd.jobs_done (" DF_COLS ")\n"
    "    SELECT " DF_SELECT("'cancelled'", "w.run_at",
                            "format('parent job %s is %s', bad.parent, bad.ended_status)",
                            "at") " FROM w;\n"
    "    RETURN 'cancelled';\n"
    "END $$;\n"
    /* A parent ended: its open edges end, and its children settle at once. */
    "CREATE OR REPLACE FUNCTION jobd.deps_parent_ended() RETURNS trigger\n"
    "    LANGUAGE plpgsql AS $$\n"
    "DECLARE\n"
    "    kids bigint[];\n"
    "BEGIN\n"
    "    WITH u AS (UPDATE jobd.job_deps SET ended_status = NEW.status\n"
    "                WHERE parent = NEW.id AND num_nulls(ended_status) = 1 RETURNING child)\n"
    "    SELECT array_agg(u.child) INTO kids FROM u;\n"
    "    IF cardinality(kids) = 1 THEN\n"
    "        PERFORM jobd.deps_settle(kids[1], COALESCE(NEW.finished_at, now()));\n"
    "    ELSIF kids IS NOT NULL THEN\n"
    "        PERFORM jobd.deps_release(kids, COALESCE(NEW.finished_at, now()));\n"
    "    END IF;\n"
    "    RETURN NULL;\n"
    "END $$;\n"
    /* Version 24's jobd.deps_attach, but a parent's row is written only the
     * first time it gets a child (locked, as the write locked it, either
     * way), and the child settles through jobd.deps_release. */
    "CREATE OR REPLACE FUNCTION jobd.deps_attach(c bigint, parents bigint[], run boolean,\n"
    "        at timestamptz) RETURNS bigint LANGUAGE plpgsql AS $$\n"
    "DECLARE\n"
    "    p bigint;\n"
    "    st text;\n"
    "    hc boolean;\n"
    "BEGIN\n"
    "    FOR p IN SELECT DISTINCT x FROM unnest(parents) x ORDER BY x LOOP\n"
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
    "            RETURN p;\n"
    "        END IF;\n"
    "        INSERT INTO jobd.job_deps (parent, child, ended_status, run_on_failure)\n"
    "        VALUES (p, c, CASE WHEN st IN ('succeeded', 'dead', 'cancelled') THEN st END, run);\n"
    "    END LOOP;\n"
    "    WITH w AS (DELETE FROM jobd.jobs WHERE id = c RETURNING *)\n"
    "    INSERT INTO jobd.jobs_waiting (" DF_COLS ")\n"
    "    SELECT " DF_SELECT("'waiting'", "w.run_at", "w.last_error", "NULL") " FROM w;\n"
    "    PERFORM jobd.deps_settle(c, at);\n"
    "    RETURN 0;\n"
    "END $$;\n"
    /* A release moves a job that never ended: its edges are open, nothing
     * to reopen (jobd.deps_release says so for the statement's rows). */
    /* Completions: once per statement, not per row. A batch of 100
     * children of one joiner ends 100 edges and settles the joiner with
     * one call, its children locked in id order as one set. */
    "CREATE FUNCTION jobd.deps_parents_succeeded() RETURNS trigger\n"
    "    LANGUAGE plpgsql AS $$\n"
    "DECLARE\n"
    "    ps bigint[];\n"
    "    kids bigint[];\n"
    "    at timestamptz;\n"
    "BEGIN\n"
    "    SELECT array_agg(n.id), max(n.finished_at) INTO ps, at FROM new_rows n\n"
    "     WHERE n.has_children AND n.status = 'succeeded';\n"
    "    IF ps IS NULL THEN\n"
    "        RETURN NULL;\n"
    "    END IF;\n"
    "    WITH u AS (UPDATE jobd.job_deps d SET ended_status = 'succeeded'\n"
    "                WHERE d.parent = ANY(ps) AND num_nulls(d.ended_status) = 1\n"
    "                RETURNING d.child)\n"
    "    SELECT array_agg(DISTINCT u.child) INTO kids FROM u;\n"
    "    IF cardinality(kids) = 1 THEN\n"
    "        PERFORM jobd.deps_settle(kids[1], COALESCE(at, now()));\n"
    "    ELSIF kids IS NOT NULL THEN\n"
    "        PERFORM jobd.deps_release(kids, COALESCE(at, now()));\n"
    "    END IF;\n"
    "    RETURN NULL;\n"
    "END $$;\n"
    "DROP TRIGGER jobs_deps_succeeded ON jobd.jobs;\n"
    "CREATE TRIGGER jobs_deps_succeeded AFTER UPDATE ON jobd.jobs\n"
    "    REFERENCING NEW TABLE AS new_rows\n"
    "    FOR EACH STATEMENT EXECUTE FUNCTION jobd.deps_parents_succeeded();\n"
    "DROP TRIGGER jobs_deps_reopened ON jobd.jobs;\n"
    "CREATE TRIGGER jobs_deps_reopened AFTER INSERT ON jobd.jobs\n"
    "    FOR EACH ROW WHEN (NEW.has_children\n"
    "                       AND current_setting('jobd.releasing', true) IS DISTINCT FROM 'on')\n"
    "    EXECUTE FUNCTION jobd.deps_parent_reopened();\n";
/* clang-format on */
