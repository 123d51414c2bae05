-- Prototype of the migration from today's schema (version 31) to the "move_slim" layout
-- (docs/DESIGN.md, Table layout, round three), run by `bench/sql/layout.py --migrate N`
-- on a store of N jobs, in ONE transaction as `jobd migrate` runs its steps. No finished
-- row is rewritten: today's jobs_done becomes the archive's first partition (ATTACH, after
-- one validating scan), only the succeeded rows the archive pass had not moved yet are
-- moved (INSERT ... SELECT, routed into that partition), and the partitions ahead are
-- empty tables. The per-job work is the validating scan and the move of jobs' succeeded
-- rows; everything else is catalog work.
BEGIN;
SET LOCAL lock_timeout = '10s';
LOCK TABLE jobd.jobs, jobd.jobs_done IN ACCESS EXCLUSIVE MODE;
-- 1. The cut-over: every finished row so far is before it (finished_at is the store's
--    clock, which a test may have moved ahead of the server's).
CREATE TEMP TABLE cut ON COMMIT DROP AS
    SELECT greatest(now(), (SELECT max(finished_at) FROM jobd.jobs_done),
                    (SELECT max(finished_at) FROM jobd.jobs WHERE status = 'succeeded'))
           + interval '1 microsecond' AS t0;
-- 2. The archive: by day of finished_at, each day by status (retention per outcome drops a
--    (day, status) leaf), with move_slim's indexes (archive_slim.sql): jobs_done's but the
--    primary key, jobs_done_finished and jobs_done_status_id, which today's jobs_done keeps
--    as its own as a partition; a leaf gets its (id) index when it is made (a unique index
--    on the parent would need finished_at), and its status is implied.
CREATE TABLE jobd.jobs_arch (LIKE jobd.jobs_done INCLUDING DEFAULTS)
    PARTITION BY RANGE (finished_at);
CREATE INDEX jobs_arch_queue_status_id ON jobd.jobs_arch (queue, status, id);
CREATE INDEX jobs_arch_type_id ON jobd.jobs_arch (type, id);
CREATE INDEX jobs_arch_schedule_id ON jobd.jobs_arch (schedule, id) WHERE schedule IS NOT NULL;
-- 3. today's jobs_done becomes the partition [MINVALUE, t0): the CHECK is validated by one
--    scan, and ATTACH then skips its own; its indexes are taken over where they match.
UPDATE jobd.jobs_done SET finished_at = created_at WHERE finished_at IS NULL;
DO $$
DECLARE t0 timestamptz := (SELECT t0 FROM cut);
        d date;
        leaf text;
        st text;
BEGIN
    EXECUTE format('ALTER TABLE jobd.jobs_done ADD CONSTRAINT jobs_done_before '
                   'CHECK (finished_at IS NOT NULL AND finished_at < %L)', t0);
    EXECUTE format('ALTER TABLE jobd.jobs_arch ATTACH PARTITION jobd.jobs_done '
                   'FOR VALUES FROM (MINVALUE) TO (%L)', t0);
    -- the rest of t0's day, then 7 days ahead (the plane keeps a week made)
    d := (t0 AT TIME ZONE 'UTC')::date;
    FOR i IN 0..7 LOOP
        leaf := 'jobs_arch_' || to_char(d + i, 'YYYYMMDD');
        EXECUTE format('CREATE TABLE jobd.%I PARTITION OF jobd.jobs_arch FOR VALUES FROM (%L) TO (%L) '
                       'PARTITION BY LIST (status)', leaf,
                       CASE WHEN i = 0 THEN t0 ELSE ((d + i)::timestamp AT TIME ZONE 'UTC') END,
                       ((d + i + 1)::timestamp AT TIME ZONE 'UTC'));
        FOREACH st IN ARRAY ARRAY['succeeded', 'dead', 'cancelled'] LOOP
            EXECUTE format('CREATE TABLE jobd.%I PARTITION OF jobd.%I FOR VALUES IN (%L)',
                           leaf || '_' || left(st, 1), leaf, st);
            EXECUTE format('CREATE INDEX ON jobd.%I (id)', leaf || '_' || left(st, 1));
        END LOOP;
    END LOOP;
END $$;
-- 4. the succeeded rows still in jobs move (routed into the partition of their day).
WITH d AS (DELETE FROM jobd.jobs WHERE status = 'succeeded' RETURNING *)
INSERT INTO jobd.jobs_arch (id, queue, type, payload, status, priority, run_at, attempt,
        attempt_floor, max_attempts, idempotency_key, schedule, scheduled_for, worker_id,
        lease_expires_at, timeout_ms, cancel_requested, last_error, result, created_at,
        started_at, finished_at, traceparent, has_children, grp, lease_token_hash)
SELECT id, queue, type, payload, status, priority, run_at, attempt, attempt_floor,
       max_attempts, idempotency_key, schedule, scheduled_for, worker_id, lease_expires_at,
       timeout_ms, cancel_requested, last_error, result, created_at, started_at, finished_at,
       traceparent, has_children, grp, lease_token_hash FROM d;
-- 5. jobs now holds pending and running rows only: no succeeded index, the claim's and the
--    completion's transition-table triggers go (their statements record events and release
--    dependants in CTEs: move_nt.sql); the archive's statement triggers serve the rarer
--    ends (failures, cancels, the reaper) until those statements do the same.
DROP INDEX jobd.jobs_succeeded;
ALTER TABLE jobd.jobs DROP CONSTRAINT jobs_hot_status;
ALTER TABLE jobd.jobs ADD CONSTRAINT jobs_hot_status CHECK (status IN ('pending', 'running')) NOT VALID;
DROP TRIGGER jobs_deps_succeeded ON jobd.jobs;
DROP TRIGGER jobs_events_updated ON jobd.jobs;
DROP TRIGGER jobs_done_notify ON jobd.jobs_done;
DROP TRIGGER jobs_done_events ON jobd.jobs_done;
DROP TRIGGER jobs_done_deps ON jobd.jobs_done;
CREATE TRIGGER jobs_arch_notify AFTER INSERT ON jobd.jobs_arch
    REFERENCING NEW TABLE AS ended FOR EACH STATEMENT EXECUTE FUNCTION jobd.notify_done();
CREATE TRIGGER jobs_arch_events AFTER INSERT ON jobd.jobs_arch
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION jobd.events_ended();
CREATE TRIGGER jobs_arch_deps AFTER INSERT ON jobd.jobs_arch
    FOR EACH ROW WHEN (NEW.has_children AND NEW.status <> 'succeeded')
    EXECUTE FUNCTION jobd.deps_parent_ended();
-- 6. every reader's view.
CREATE OR REPLACE VIEW jobd.all_jobs AS
    SELECT * FROM jobd.jobs UNION ALL SELECT * FROM jobd.jobs_arch
    UNION ALL SELECT * FROM jobd.jobs_waiting;
COMMIT;
