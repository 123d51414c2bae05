/*
 * pg/schema_deps.c — schema version 24 of pg/schema.c, dependencies
 * (docs/MODEL.md, Dependencies): long enough to live apart, as
 * pg_step_stats does. Like every migration step, never edited once
 * released; a change is a new step.
 */
#include "store/pg/internal.h"

/*
 * Version 24: dependencies (docs/MODEL.md, Dependencies; pg/deps.c).
 * A waiting job lives in jobs_waiting (the columns of jobs), so it is in
 * none of the claim indexes and costs claims nothing. job_deps holds one
 * edge per parent and child: ended_status is the parent's terminal status
 * once it ended (NULL while it has not), cause marks the parent a child was
 * cancelled for, run_on_failure the child's on_parent_failure. The jobs a
 * child waits for are its edges with ended_status NULL (job_deps_open).
 *
 * has_children is set on a parent when a child is enqueued, and is carried
 * with the row between the tables; the row triggers below run only for
 * rows that have it, so a job with no children pays one boolean test at
 * its end. A parent's end releases its children in the same statement
 * (the triggers run inside it): jobs_deps_succeeded on a completion (an
 * UPDATE of jobs in place), jobs_done_deps on every other end (a move into
 * jobs_done: a failure, the reaper, a cancel, a release, the cascade of a
 * child cancelled for its parent). A job back from jobs_done (a manual
 * retry) opens its ended edges again, and the children cancelled for it
 * wait again (jobs_deps_reopened, jobs_waiting_reopened).
 *
 * Concurrency: a child is settled under its row lock (FOR UPDATE in
 * jobd.deps_settle) and each statement of the function takes a fresh
 * snapshot after it, so of two parents ending at once the second to get
 * the lock sees the first's edge ended: the child is released once.
 */
#define PG_DEP_COLS                                                                                \
    "id, queue, type, payload, status, priority, run_at, attempt, attempt_floor, max_attempts, "   \
    "idempotency_key, schedule, scheduled_for, worker_id, lease_expires_at, timeout_ms, "          \
    "cancel_requested, last_error, result, created_at, started_at, finished_at, "                  \
    "lease_token_hash, traceparent, has_children"
#define PG_DEP_SELECT(status, run_at, error, finished)                                             \
    "w.id, w.queue, w.type, w.payload, " status ", w.priority, " run_at ", w.attempt, "            \
    "w.attempt_floor, w.max_attempts, w.idempotency_key, w.schedule, w.scheduled_for, "            \
    "w.worker_id, NULL, w.timeout_ms, false, " error                                               \
    ", w.result, w.created_at, w.started_at, " finished                                            \
    ", w.lease_token_hash, w.traceparent, w.has_children"
const char pg_step_deps[] =
    "ALTER TABLE jobd.jobs ADD COLUMN has_children boolean NOT NULL DEFAULT false;\n"
    "ALTER TABLE jobd.jobs_done ADD COLUMN has_children boolean NOT NULL DEFAULT false;\n"
    "CREATE TABLE jobd.jobs_waiting (LIKE jobd.jobs INCLUDING DEFAULTS, PRIMARY KEY (id));\n"
    "CREATE INDEX jobs_waiting_queue_id ON jobd.jobs_waiting (queue, id);\n"
    "CREATE OR REPLACE VIEW jobd.all_jobs AS\n"
    "    SELECT * FROM jobd.jobs UNION ALL SELECT * FROM jobd.jobs_done\n"
    "    UNION ALL SELECT * FROM jobd.jobs_waiting;\n"
    "CREATE TABLE jobd.job_deps (\n"
    "    parent         bigint NOT NULL,\n"
    "    child          bigint NOT NULL,\n"
    "    ended_status   text,\n"
    "    cause          boolean NOT NULL DEFAULT false,\n"
    "    run_on_failure boolean NOT NULL DEFAULT false,\n"
    "    PRIMARY KEY (parent, child)\n"
    ");\n"
    "CREATE INDEX job_deps_child ON jobd.job_deps (child, parent);\n"
    "CREATE INDEX job_deps_open ON jobd.job_deps (child) WHERE ended_status IS NULL;\n"
    /* Settles child c if it waits and every parent ended: pending (due at
     * max(run_at, at)) or, for a parent that did not succeed, by its
     * on_parent_failure. Returns its status after. */
    "CREATE FUNCTION jobd.deps_settle(c bigint, at timestamptz) RETURNS text\n"
    "    LANGUAGE plpgsql AS $$\n"
    "DECLARE\n"
    "    bad record;\n"
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
    "        WITH w AS (DELETE FROM jobd.jobs_waiting WHERE id = c RETURNING *)\n"
    "        INSERT INTO jobd.jobs (" PG_DEP_COLS ")\n"
    "        SELECT " PG_DEP_SELECT(
        "'pending'", "greatest(w.run_at, at)", "w.last_error",
        "NULL") " FROM w;\n"
                "        RETURN 'pending';\n"
                "    END IF;\n"
                "    UPDATE jobd.job_deps SET cause = true WHERE parent = bad.parent AND child = "
                "c;\n"
                "    WITH w AS (DELETE FROM jobd.jobs_waiting WHERE id = c RETURNING *)\n"
                "    INSERT INTO jobd.jobs_done (" PG_DEP_COLS ")\n"
                "    SELECT " PG_DEP_SELECT(
                    "'cancelled'", "w.run_at",
                    "format('parent job %s is %s', bad.parent, bad.ended_status)",
                    "at") " FROM w;\n"
                          "    RETURN 'cancelled';\n"
                          "END $$;\n"
                          /* A parent ended: its open edges end, and each child settles (in id
     * order, so two such transactions lock children in one order). */
                          "CREATE FUNCTION jobd.deps_parent_ended() RETURNS trigger LANGUAGE "
                          "plpgsql AS $$\n"
                          "DECLARE\n"
                          "    c bigint;\n"
                          "BEGIN\n"
                          "    FOR c IN WITH u AS (UPDATE jobd.job_deps SET ended_status = "
                          "NEW.status\n"
                          "                         WHERE parent = NEW.id AND ended_status IS NULL "
                          "RETURNING child)\n"
                          "             SELECT child FROM u ORDER BY child LOOP\n"
                          "        PERFORM jobd.deps_settle(c, COALESCE(NEW.finished_at, now()));\n"
                          "    END LOOP;\n"
                          "    RETURN NULL;\n"
                          "END $$;\n"
                          /* A parent is live again (a manual retry): its ended edges open, and the
     * children cancelled for it wait again (which cascades to theirs). */
                          "CREATE FUNCTION jobd.deps_parent_reopened() RETURNS trigger LANGUAGE "
                          "plpgsql AS $$\n"
                          "DECLARE\n"
                          "    c bigint;\n"
                          "BEGIN\n"
                          "    FOR c IN SELECT child FROM jobd.job_deps WHERE parent = NEW.id AND "
                          "cause\n"
                          "             ORDER BY child LOOP\n"
                          "        WITH w AS (DELETE FROM jobd.jobs_done WHERE id = c AND status = "
                          "'cancelled'\n"
                          "                   RETURNING *)\n"
                          "        INSERT INTO jobd.jobs_waiting (" PG_DEP_COLS ")\n"
                          "        SELECT " PG_DEP_SELECT(
                              "'waiting'", "w.run_at", "w.last_error",
                              "NULL") " FROM w;\n"
                                      "    END LOOP;\n"
                                      "    UPDATE jobd.job_deps SET ended_status = NULL, cause = "
                                      "false\n"
                                      "     WHERE parent = NEW.id AND ended_status IS NOT NULL;\n"
                                      "    RETURN NULL;\n"
                                      "END $$;\n"
                                      /* The enqueue of child c (just inserted into jobs, pending) with its
     * parents: each parent is locked and marked (has_children), whichever
     * table holds it (a row that moved between two of these statements is
     * looked for again), its edge written, and c then waits or settles at
     * once. Returns 0, or the first parent id that names no job. */
                                      "CREATE FUNCTION jobd.deps_attach(c bigint, parents "
                                      "bigint[], run boolean, at timestamptz)\n"
                                      "    RETURNS bigint LANGUAGE plpgsql AS $$\n"
                                      "DECLARE\n"
                                      "    p bigint;\n"
                                      "    st text;\n"
                                      "BEGIN\n"
                                      "    FOR p IN SELECT DISTINCT x FROM unnest(parents) x ORDER "
                                      "BY x LOOP\n"
                                      "        st := NULL;\n"
                                      "        FOR tries IN 1..3 LOOP\n"
                                      "            UPDATE jobd.jobs SET has_children = true WHERE "
                                      "id = p RETURNING status INTO st;\n"
                                      "            EXIT WHEN FOUND;\n"
                                      "            UPDATE jobd.jobs_done SET has_children = true "
                                      "WHERE id = p\n"
                                      "                RETURNING status INTO st;\n"
                                      "            EXIT WHEN FOUND;\n"
                                      "            UPDATE jobd.jobs_waiting SET has_children = "
                                      "true WHERE id = p\n"
                                      "                RETURNING status INTO st;\n"
                                      "            EXIT WHEN FOUND;\n"
                                      "        END LOOP;\n"
                                      "        IF st IS NULL THEN\n"
                                      "            RETURN p;\n"
                                      "        END IF;\n"
                                      "        INSERT INTO jobd.job_deps (parent, child, "
                                      "ended_status, run_on_failure)\n"
                                      "        VALUES (p, c, CASE WHEN st IN ('succeeded', 'dead', "
                                      "'cancelled') THEN st END, run);\n"
                                      "    END LOOP;\n"
                                      "    WITH w AS (DELETE FROM jobd.jobs WHERE id = c RETURNING "
                                      "*)\n"
                                      "    INSERT INTO jobd.jobs_waiting (" PG_DEP_COLS ")\n"
                                      "    SELECT " PG_DEP_SELECT(
                                          "'waiting'", "w.run_at", "w.last_error",
                                          "NULL") " FROM w;\n"
                                                  "    PERFORM jobd.deps_settle(c, at);\n"
                                                  "    RETURN 0;\n"
                                                  "END $$;\n"
                                                  "CREATE TRIGGER jobs_deps_succeeded AFTER UPDATE "
                                                  "OF status ON jobd.jobs\n"
                                                  "    FOR EACH ROW WHEN (NEW.has_children AND "
                                                  "NEW.status = 'succeeded'\n"
                                                  "                       AND OLD.status <> "
                                                  "'succeeded')\n"
                                                  "    EXECUTE FUNCTION jobd.deps_parent_ended();\n"
                                                  "CREATE TRIGGER jobs_done_deps AFTER INSERT ON "
                                                  "jobd.jobs_done\n"
                                                  "    FOR EACH ROW WHEN (NEW.has_children AND "
                                                  "NEW.status <> 'succeeded')\n"
                                                  "    EXECUTE FUNCTION jobd.deps_parent_ended();\n"
                                                  "CREATE TRIGGER jobs_deps_reopened AFTER INSERT "
                                                  "ON jobd.jobs\n"
                                                  "    FOR EACH ROW WHEN (NEW.has_children)\n"
                                                  "    EXECUTE FUNCTION "
                                                  "jobd.deps_parent_reopened();\n"
                                                  "CREATE TRIGGER jobs_waiting_reopened AFTER "
                                                  "INSERT ON jobd.jobs_waiting\n"
                                                  "    FOR EACH ROW WHEN (NEW.has_children)\n"
                                                  "    EXECUTE FUNCTION "
                                                  "jobd.deps_parent_reopened();\n";
