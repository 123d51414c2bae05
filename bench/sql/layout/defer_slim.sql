-- Layout "defer_slim" (bench/sql/layout.py), after archive_slim.sql and move_nt.sql: the
-- other way to use the slim archive: completions stay in place (today's UPDATE, with the
-- events and dependants CTEs of move_nt instead of the transition-table triggers) and the
-- archive pass moves succeeded rows into jobs_arch later. Fewer writes on the hot path than
-- move_slim, more over a job's life. jobs_succeeded comes back for the pass.
CREATE INDEX jobs_succeeded ON jobd.jobs (finished_at) WHERE status = 'succeeded';
CREATE OR REPLACE PROCEDURE jobd.bench_archive_all() LANGUAGE plpgsql AS $$
DECLARE n int;
BEGIN
    LOOP
        WITH m AS MATERIALIZED (SELECT id FROM jobd.jobs WHERE status = 'succeeded'
               AND finished_at < now() ORDER BY finished_at LIMIT 2000 FOR UPDATE SKIP LOCKED),
             d AS (DELETE FROM jobd.jobs WHERE id = ANY(ARRAY(SELECT id FROM m))
                   AND status = 'succeeded' RETURNING *),
             ins AS (INSERT INTO jobd.jobs_arch (id, queue, type, payload, status, priority,
                        run_at, attempt, attempt_floor, max_attempts, idempotency_key, schedule,
                        scheduled_for, worker_id, lease_expires_at, timeout_ms, cancel_requested,
                        last_error, result, created_at, started_at, finished_at, traceparent,
                        has_children, grp, lease_token_hash)
                     SELECT id, queue, type, payload, status, priority, run_at, attempt,
                        attempt_floor, max_attempts, idempotency_key, schedule, scheduled_for,
                        worker_id, lease_expires_at, timeout_ms, cancel_requested, last_error,
                        result, created_at, started_at, finished_at, traceparent, has_children,
                        grp, lease_token_hash FROM d RETURNING 1)
        SELECT count(*) INTO n FROM ins;
        COMMIT;
        EXIT WHEN n = 0;
    END LOOP;
END $$;
