/*
 * pg/schema_groups.c — schema version 29 of pg/schema.c, groups
 * (docs/MODEL.md, Groups; docs/DESIGN.md, Groups; pg/groups.c), in a file
 * of its own as pg/schema_deps.c is. Like every migration step, never
 * edited once released; a change is a new step.
 *
 * grp is a column of the three job tables (group is an SQL keyword): the
 * fair claim walks jobs_group_claim, one ordered probe per group, and a
 * column is what an index can hold. Every statement that moves a job
 * between the tables carries it (PG_JOB_TABLE_COLS); the three functions
 * of version 24 that move rows are replaced here by the same bodies with
 * grp in their column lists. NULL (no group) is indexed as '', a name no
 * group may have, so the jobs without a group are one group of their own.
 *
 * job_groups has a row per (queue, group) with pending jobs, in name order
 * (the primary key) for the claim's round robin; rate_window_us /
 * rate_count count its starts in the current window of the queue's
 * group_rate. queues.grouped tells the ordinary claim to leave the queue to
 * the grouped path (as it leaves limited queues to theirs).
 */
#include "store/pg/internal.h"

#define GRP_COLS                                                                                   \
    "id, queue, type, payload, status, priority, run_at, attempt, attempt_floor, max_attempts, "   \
    "idempotency_key, schedule, scheduled_for, worker_id, lease_expires_at, timeout_ms, "          \
    "cancel_requested, last_error, result, created_at, started_at, finished_at, "                  \
    "lease_token_hash, traceparent, has_children, grp"
#define GRP_SELECT(status, run_at, error, finished)                                                \
    "w.id, w.queue, w.type, w.payload, " status ", w.priority, " run_at ", w.attempt, "            \
    "w.attempt_floor, w.max_attempts, w.idempotency_key, w.schedule, w.scheduled_for, "            \
    "w.worker_id, NULL, w.timeout_ms, false, " error                                               \
    ", w.result, w.created_at, w.started_at, " finished                                            \
    ", w.lease_token_hash, w.traceparent, w.has_children, w.grp"

/* clang-format off */
const char pg_step_groups[] =
    "ALTER TABLE jobd.jobs ADD COLUMN grp text;\n"
    "ALTER TABLE jobd.jobs_done ADD COLUMN grp text;\n"
    "ALTER TABLE jobd.jobs_waiting ADD COLUMN grp text;\n"
    "CREATE OR REPLACE VIEW jobd.all_jobs AS\n"
    "    SELECT * FROM jobd.jobs UNION ALL SELECT * FROM jobd.jobs_done\n"
    "    UNION ALL SELECT * FROM jobd.jobs_waiting;\n"
    "CREATE INDEX jobs_group_claim ON jobd.jobs (queue, (COALESCE(grp, '')), priority DESC,\n"
    "    run_at, id) WHERE status NOT IN ('running', 'succeeded');\n"
    "CREATE TABLE jobd.job_groups (\n"
    "    queue          text NOT NULL,\n"
    "    grp            text NOT NULL,\n"
    "    rate_window_us bigint NOT NULL DEFAULT 0,\n"
    "    rate_count     integer NOT NULL DEFAULT 0,\n"
    "    PRIMARY KEY (queue, grp)\n"
    ");\n"
    "ALTER TABLE jobd.queues\n"
    "    ADD COLUMN grouped boolean NOT NULL DEFAULT false,\n"
    "    ADD COLUMN group_max_running integer CHECK (group_max_running >= 1),\n"
    "    ADD COLUMN group_rate_limit integer CHECK (group_rate_limit >= 1),\n"
    "    ADD COLUMN group_rate_per_ms bigint CHECK (group_rate_per_ms >= 1),\n"
    "    ADD CONSTRAINT queues_group_rate\n"
    "        CHECK ((group_rate_limit IS NULL) = (group_rate_per_ms IS NULL));\n"
    "CREATE TRIGGER queues_notify_group_limits\n"
    "    AFTER UPDATE OF group_max_running, group_rate_limit, group_rate_per_ms ON jobd.queues\n"
    "    FOR EACH ROW WHEN (OLD.group_max_running IS DISTINCT FROM NEW.group_max_running\n"
    "                       OR OLD.group_rate_limit IS DISTINCT FROM NEW.group_rate_limit\n"
    "                       OR OLD.group_rate_per_ms IS DISTINCT FROM NEW.group_rate_per_ms)\n"
    "    EXECUTE FUNCTION jobd.notify_queue_row();\n"
    /* Version 24's functions, with grp carried. */
    "CREATE OR REPLACE FUNCTION jobd.deps_settle(c bigint, at timestamptz) RETURNS text\n"
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
    "        INSERT INTO jobd.jobs (" GRP_COLS ")\n"
    "        SELECT " GRP_SELECT("'pending'", "greatest(w.run_at, at)", "w.last_error", "NULL")
    "        FROM w;\n"
    "        RETURN 'pending';\n"
    "    END IF;\n"
    "    UPDATE jobd.job_deps SET cause = true WHERE parent = bad.parent AND child = c;\n"
    "    WITH w AS (DELETE FROM jobd.jobs_waiting WHERE id = c RETURNING *)\n"
    "    INSERT INTO jobd.jobs_done (" GRP_COLS ")\n"
    "    SELECT " GRP_SELECT("'cancelled'", "w.run_at",
                             "format('parent job %s is %s', bad.parent, bad.ended_status)", "at")
    "    FROM w;\n"
    "    RETURN 'cancelled';\n"
    "END $$;\n"
    "CREATE OR REPLACE FUNCTION jobd.deps_parent_reopened() RETURNS trigger\n"
    "    LANGUAGE plpgsql AS $$\n"
    "DECLARE\n"
    "    c bigint;\n"
    "BEGIN\n"
    "    FOR c IN SELECT child FROM jobd.job_deps WHERE parent = NEW.id AND cause\n"
    "             ORDER BY child LOOP\n"
    "        WITH w AS (DELETE FROM jobd.jobs_done WHERE id = c AND status = 'cancelled'\n"
    "                   RETURNING *)\n"
    "        INSERT INTO jobd.jobs_waiting (" GRP_COLS ")\n"
    "        SELECT " GRP_SELECT("'waiting'", "w.run_at", "w.last_error", "NULL") " FROM w;\n"
    "    END LOOP;\n"
    "    UPDATE jobd.job_deps SET ended_status = NULL, cause = false\n"
    "     WHERE parent = NEW.id AND ended_status IS NOT NULL;\n"
    "    RETURN NULL;\n"
    "END $$;\n"
    "CREATE OR REPLACE FUNCTION jobd.deps_attach(c bigint, parents bigint[], run boolean,\n"
    "    at timestamptz) RETURNS bigint LANGUAGE plpgsql AS $$\n"
    "DECLARE\n"
    "    p bigint;\n"
    "    st text;\n"
    "BEGIN\n"
    "    FOR p IN SELECT DISTINCT x FROM unnest(parents) x ORDER BY x LOOP\n"
    "        st := NULL;\n"
    "        FOR tries IN 1..3 LOOP\n"
    "            UPDATE jobd.jobs SET has_children = true WHERE id = p RETURNING status INTO st;\n"
    "            EXIT WHEN FOUND;\n"
    "            UPDATE jobd.jobs_done SET has_children = true WHERE id = p\n"
    "                RETURNING status INTO st;\n"
    "            EXIT WHEN FOUND;\n"
    "            UPDATE jobd.jobs_waiting SET has_children = true WHERE id = p\n"
    "                RETURNING status INTO st;\n"
    "            EXIT WHEN FOUND;\n"
    "        END LOOP;\n"
    "        IF st IS NULL THEN\n"
    "            RETURN p;\n"
    "        END IF;\n"
    "        INSERT INTO jobd.job_deps (parent, child, ended_status, run_on_failure)\n"
    "        VALUES (p, c, CASE WHEN st IN ('succeeded', 'dead', 'cancelled') THEN st END, run);\n"
    "    END LOOP;\n"
    "    WITH w AS (DELETE FROM jobd.jobs WHERE id = c RETURNING *)\n"
    "    INSERT INTO jobd.jobs_waiting (" GRP_COLS ")\n"
    "    SELECT " GRP_SELECT("'waiting'", "w.run_at", "w.last_error", "NULL") " FROM w;\n"
    "    PERFORM jobd.deps_settle(c, at);\n"
    "    RETURN 0;\n"
    "END $$;\n";
/* clang-format on */
