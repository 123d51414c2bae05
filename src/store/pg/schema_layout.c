/*
 * pg/schema_layout.c — schema version 38 of pg/schema.c: the table layout
 * "move_slim" (docs/DESIGN.md, Table layout, round three). jobd.jobs keeps
 * pending and running rows only; a completion moves its row into the
 * finished-jobs archive, jobd.jobs_done, now partitioned by UTC day of
 * finished_at and each day by status, in the statement that fences it.
 * In a file of its own, as every PostgreSQL step since version 23. Like
 * every migration step, never edited once released; a change is a new step.
 *
 * The partitioned parent keeps the name jobs_done (the old table is renamed
 * jobs_done_legacy and attached as the partition of every instant before
 * the cut-over), so every statement and function that writes, reads or
 * deletes finished rows by that name (failures, the reaper, cancels,
 * dependencies, workflows, deletes, retries) is unchanged; a leaf's status
 * is implied by its partition, so each leaf has an (id) index and the parent
 * the listing indexes: (queue, status, id), (type, id), (schedule, id),
 * (grp, id). No finished row is rewritten: the old table is validated by
 * one scan of a CHECK, which ATTACH then does not repeat; only the
 * succeeded rows the archive pass had not moved yet move.
 *
 * What fired by statement triggers with transition tables on the hot path
 * now happens in the statements (pg/report.c, pg/read.c): a claim's and a
 * completion's events, a completion's dependants. The other ends (failures,
 * the reaper, cancels, dependency cascades) insert into jobs_done as before
 * and get their events, wake-up and dependants from row triggers whose WHEN
 * is false for a success, so a completion fires none. jobd.moving = 'on'
 * marks a move of rows already ended (the default partition's rows into the
 * day made for them): no trigger fires for them.
 */
#include "store/pg/internal.h"

/* clang-format off */
const char pg_step_layout[] =
    "LOCK TABLE jobd.jobs, jobd.jobs_done IN ACCESS EXCLUSIVE MODE;\n"
    "ALTER TABLE jobd.jobs_done RENAME TO jobs_done_legacy;\n"
    "DROP TRIGGER jobs_done_notify ON jobd.jobs_done_legacy;\n"
    "DROP TRIGGER jobs_done_events ON jobd.jobs_done_legacy;\n"
    "DROP TRIGGER jobs_done_deps ON jobd.jobs_done_legacy;\n"
    "UPDATE jobd.jobs_done_legacy SET finished_at = created_at WHERE finished_at IS NULL;\n"
    "CREATE TABLE jobd.jobs_done (LIKE jobd.jobs_done_legacy INCLUDING DEFAULTS\n"
    "                             INCLUDING CONSTRAINTS) PARTITION BY RANGE (finished_at);\n"
    "CREATE INDEX jobs_arch_queue_status_id ON jobd.jobs_done (queue, status, id);\n"
    "CREATE INDEX jobs_arch_type_id ON jobd.jobs_done (type, id);\n"
    "CREATE INDEX jobs_arch_schedule_id ON jobd.jobs_done (schedule, id)\n"
    "    WHERE schedule IS NOT NULL;\n"
    "CREATE INDEX jobs_arch_grp_id ON jobd.jobs_done (grp, id) WHERE grp IS NOT NULL;\n"
    /* the cut-over: every finished row so far is before it (finished_at is
     * the store's clock, which may be ahead of the server's) */
    "CREATE TABLE jobd.archive_cut (one boolean PRIMARY KEY DEFAULT true CHECK (one),\n"
    "                               t0 timestamptz NOT NULL);\n"
    "INSERT INTO jobd.archive_cut (t0)\n"
    "SELECT greatest(now(), (SELECT max(finished_at) FROM jobd.jobs_done_legacy),\n"
    "                (SELECT max(finished_at) FROM jobd.jobs WHERE status = 'succeeded'))\n"
    "       + interval '1 microsecond';\n"
    "DO $$\n"
    "DECLARE t0 timestamptz := (SELECT t0 FROM jobd.archive_cut);\n"
    "BEGIN\n"
    "    EXECUTE format('ALTER TABLE jobd.jobs_done_legacy ADD CONSTRAINT jobs_done_before '\n"
    "                   'CHECK (finished_at IS NOT NULL AND finished_at < %L)', t0);\n"
    "    EXECUTE format('ALTER TABLE jobd.jobs_done ATTACH PARTITION jobd.jobs_done_legacy '\n"
    "                   'FOR VALUES FROM (MINVALUE) TO (%L)', t0);\n"
    "END $$;\n"
    /* an end never fails: a row whose day has no partition yet lands here */
    "CREATE TABLE jobd.jobs_done_default PARTITION OF jobd.jobs_done DEFAULT;\n"
    "CREATE INDEX ON jobd.jobs_done_default (id);\n"
    /* Makes the day partitions of the days of at .. at + ahead that have
     * none (each day's three leaves with their (id) index), moving the
     * default partition's rows of such a day into it, without triggers (they
     * ended already). The day of the cut-over starts at the cut-over. */
    "CREATE FUNCTION jobd.archive_days(at timestamptz, ahead int) RETURNS int\n"
    "    LANGUAGE plpgsql AS $$\n"
    "DECLARE\n"
    "    t0 timestamptz := (SELECT c.t0 FROM jobd.archive_cut c);\n"
    "    d date;\n"
    "    lo timestamptz;\n"
    "    hi timestamptz;\n"
    "    leaf text;\n"
    "    st text;\n"
    "    moved jobd.jobs_done_default[];\n"
    "    made int := 0;\n"
    "BEGIN\n"
    "    FOR i IN 0..ahead LOOP\n"
    "        d := (at AT TIME ZONE 'UTC')::date + i;\n"
    "        leaf := 'jobs_done_' || to_char(d, 'YYYYMMDD');\n"
    "        lo := greatest(d::timestamp AT TIME ZONE 'UTC', t0);\n"
    "        hi := (d + 1)::timestamp AT TIME ZONE 'UTC';\n"
    "        CONTINUE WHEN hi <= t0 OR to_regclass('jobd.' || leaf) IS NOT NULL;\n"
    "        SELECT array_agg(x) INTO moved FROM jobd.jobs_done_default x\n"
    "         WHERE x.finished_at >= lo AND x.finished_at < hi;\n"
    "        DELETE FROM jobd.jobs_done_default\n"
    "         WHERE finished_at >= lo AND finished_at < hi;\n"
    "        EXECUTE format('CREATE TABLE jobd.%I PARTITION OF jobd.jobs_done '\n"
    "                       'FOR VALUES FROM (%L) TO (%L) PARTITION BY LIST (status)',\n"
    "                       leaf, lo, hi);\n"
    "        FOREACH st IN ARRAY ARRAY['succeeded', 'dead', 'cancelled'] LOOP\n"
    "            EXECUTE format('CREATE TABLE jobd.%I PARTITION OF jobd.%I FOR VALUES IN (%L)',\n"
    "                           leaf || '_' || left(st, 1), leaf, st);\n"
    "            EXECUTE format('CREATE INDEX ON jobd.%I (id)', leaf || '_' || left(st, 1));\n"
    "        END LOOP;\n"
    "        IF moved IS NOT NULL THEN\n"
    "            PERFORM set_config('jobd.moving', 'on', true);\n"
    "            INSERT INTO jobd.jobs_done SELECT * FROM unnest(moved);\n"
    "            PERFORM set_config('jobd.moving', 'off', true);\n"
    "        END IF;\n"
    "        made := made + 1;\n"
    "    END LOOP;\n"
    "    RETURN made;\n"
    "END $$;\n"
    "SELECT jobd.archive_days(t0, 1) FROM jobd.archive_cut;\n"
    /* Retention of whole leaves: each leaf of the statuses sts of a day
     * that ended at or before cutoff goes by DROP TABLE, after its jobs'
     * rows in other tables (found from the leaf). A leaf holding a step of
     * a workflow is left to the batched delete (a step goes only with its
     * workflow). The leaf is locked against writes first (a manual retry or
     * delete of one of its jobs waits, then finds it gone). A day that lost
     * a leaf gets a DEFAULT leaf (_x), so that a late end of that day and
     * status still finds a partition; a day with no status leaf left and
     * nothing in _x goes, and such ends land in jobs_done_default. Answers
     * the jobs dropped. */
    "CREATE FUNCTION jobd.archive_drop(cutoff timestamptz, sts text[]) RETURNS bigint\n"
    "    LANGUAGE plpgsql AS $$\n"
    "DECLARE\n"
    "    r record;\n"
    "    st text;\n"
    "    leaf text;\n"
    "    k bigint;\n"
    "    n bigint := 0;\n"
    "    steps boolean;\n"
    "BEGIN\n"
    "    FOR r IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid\n"
    "              WHERE i.inhparent = 'jobd.jobs_done'::regclass\n"
    "                AND c.relname ~ '^jobs_done_[0-9]{8}$'\n"
    "                AND (to_date(right(c.relname, 8), 'YYYYMMDD') + 1)::timestamp\n"
    "                    AT TIME ZONE 'UTC' <= cutoff\n"
    "              ORDER BY c.relname LOOP\n"
    "        FOREACH st IN ARRAY sts LOOP\n"
    "            leaf := r.relname || '_' || left(st, 1);\n"
    "            CONTINUE WHEN to_regclass('jobd.' || leaf) IS NULL;\n"
    "            EXECUTE format('LOCK TABLE jobd.%I IN EXCLUSIVE MODE', leaf);\n"
    "            EXECUTE format('SELECT EXISTS (SELECT 1 FROM jobd.%I l JOIN jobd.workflow_steps w'\n"
    "                           ' ON w.job_id = l.id)', leaf) INTO steps;\n"
    "            CONTINUE WHEN steps;\n"
    "            EXECUTE format('WITH d AS MATERIALIZED (SELECT id, idempotency_key FROM jobd.%I),'\n"
    "                ' k AS (DELETE FROM jobd.job_keys jk USING d'\n"
    "                '       WHERE jk.idempotency_key = d.idempotency_key AND jk.job_id = d.id),'\n"
    "                ' gp AS (DELETE FROM jobd.job_progress p USING d WHERE p.job_id = d.id),'\n"
    "                ' gl AS (DELETE FROM jobd.job_attempt_logs l USING d WHERE l.job_id = d.id),'\n"
    "                ' ge AS (DELETE FROM jobd.job_deps e USING d WHERE e.child = d.id),'\n"
    "                ' gw AS (DELETE FROM jobd.workflow_steps w USING d WHERE w.job_id = d.id),'\n"
    "                ' ek AS (DELETE FROM jobd.enqueue_keys x USING d WHERE x.job_id = d.id),'\n"
    "                ' h AS (DELETE FROM jobd.job_attempts a USING d WHERE a.job_id = d.id)'\n"
    "                ' SELECT count(*) FROM d', leaf) INTO k;\n"
    "            EXECUTE format('DROP TABLE jobd.%I', leaf);\n"
    "            IF to_regclass('jobd.' || r.relname || '_x') IS NULL THEN\n"
    "                EXECUTE format('CREATE TABLE jobd.%I PARTITION OF jobd.%I DEFAULT',\n"
    "                               r.relname || '_x', r.relname);\n"
    "                EXECUTE format('CREATE INDEX ON jobd.%I (id)', r.relname || '_x');\n"
    "            END IF;\n"
    "            n := n + k;\n"
    "        END LOOP;\n"
    "        IF to_regclass('jobd.' || r.relname || '_s') IS NULL\n"
    "           AND to_regclass('jobd.' || r.relname || '_d') IS NULL\n"
    "           AND to_regclass('jobd.' || r.relname || '_c') IS NULL THEN\n"
    "            EXECUTE format('SELECT EXISTS (SELECT 1 FROM jobd.%I)', r.relname) INTO steps;\n"
    "            IF NOT steps THEN\n"
    "                EXECUTE format('DROP TABLE jobd.%I', r.relname);\n"
    "            END IF;\n"
    "        END IF;\n"
    "    END LOOP;\n"
    "    RETURN n;\n"
    "END $$;\n"
    /* the succeeded rows the archive pass had not moved (into the legacy
     * partition: they finished before the cut-over) */
    "WITH d AS (DELETE FROM jobd.jobs WHERE status = 'succeeded' RETURNING *)\n"
    "INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS ", lease_token_hash)\n"
    "SELECT " PG_JOB_TABLE_COLS ", lease_token_hash FROM d;\n"
    "DROP INDEX jobd.jobs_succeeded;\n"
    "ALTER TABLE jobd.jobs DROP CONSTRAINT jobs_hot_status;\n"
    "ALTER TABLE jobd.jobs ADD CONSTRAINT jobs_hot_status\n"
    "    CHECK (status IN ('pending', 'running'));\n"
    "DROP TRIGGER jobs_deps_succeeded ON jobd.jobs;\n"
    "DROP TRIGGER jobs_events_updated ON jobd.jobs;\n"
    /* jobd.deps_parents_succeeded's body (version 30) over the ids a
     * completion moved, called by the completion only when one has children */
    "CREATE FUNCTION jobd.deps_succeeded_ids(ps bigint[], at timestamptz) RETURNS int\n"
    "    LANGUAGE plpgsql AS $$\n"
    "DECLARE\n"
    "    kids bigint[];\n"
    "BEGIN\n"
    "    IF ps IS NULL THEN\n"
    "        RETURN 0;\n"
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
    "    RETURN cardinality(ps);\n"
    "END $$;\n"
    /* version 25's jobd.events_ended, one row at a time (the same rows) */
    "CREATE FUNCTION jobd.events_ended_row() RETURNS trigger LANGUAGE plpgsql AS $$\n"
    "BEGIN\n"
    "    IF jobd.events_on() THEN\n"
    "        INSERT INTO jobd.events (id, job, queue, type, from_st, to_st, attempt)\n"
    "        VALUES (nextval('jobd.event_id_seq'), NEW.id, NEW.queue, NEW.type,\n"
    "               CASE WHEN NEW.status = 'cancelled' AND NOT NEW.cancel_requested\n"
    "                    THEN COALESCE(jobd.event_prev(NEW.id),\n"
    "                                  CASE WHEN EXISTS (SELECT 1 FROM jobd.job_deps d\n"
    "                                                     WHERE d.child = NEW.id\n"
    "                                                       AND (d.ended_status IS NULL\n"
    "                                                            OR d.cause))\n"
    "                                       THEN 'waiting' ELSE 'pending' END)\n"
    "                    ELSE 'running' END,\n"
    "               NEW.status, NEW.attempt);\n"
    "    END IF;\n"
    "    RETURN NULL;\n"
    "END $$;\n"
    /* version 18's jobd.notify_done for one ended row */
    "CREATE FUNCTION jobd.notify_done_row() RETURNS trigger LANGUAGE plpgsql AS $$\n"
    "BEGIN\n"
    "    IF EXISTS (SELECT 1 FROM jobd.result_listeners) THEN\n"
    "        PERFORM pg_notify('jobd_done', '');\n"
    "    END IF;\n"
    "    RETURN NULL;\n"
    "END $$;\n"
    "CREATE TRIGGER jobs_done_events AFTER INSERT ON jobd.jobs_done FOR EACH ROW\n"
    "    WHEN (NEW.status <> 'succeeded'\n"
    "          AND current_setting('jobd.moving', true) IS DISTINCT FROM 'on')\n"
    "    EXECUTE FUNCTION jobd.events_ended_row();\n"
    "CREATE TRIGGER jobs_done_notify AFTER INSERT ON jobd.jobs_done FOR EACH ROW\n"
    "    WHEN (NEW.status <> 'succeeded'\n"
    "          AND current_setting('jobd.moving', true) IS DISTINCT FROM 'on')\n"
    "    EXECUTE FUNCTION jobd.notify_done_row();\n"
    "CREATE TRIGGER jobs_done_deps AFTER INSERT ON jobd.jobs_done FOR EACH ROW\n"
    "    WHEN (NEW.has_children AND NEW.status <> 'succeeded'\n"
    "          AND current_setting('jobd.moving', true) IS DISTINCT FROM 'on')\n"
    "    EXECUTE FUNCTION jobd.deps_parent_ended();\n"
    "CREATE OR REPLACE VIEW jobd.all_jobs AS\n"
    "    SELECT * FROM jobd.jobs UNION ALL SELECT * FROM jobd.jobs_done\n"
    "    UNION ALL SELECT * FROM jobd.jobs_waiting;\n";
/* clang-format on */
