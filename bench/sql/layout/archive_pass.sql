-- Today's archive pass (src/store/pg/prune.c, archive_batch: batches of 2,000, each its
-- own transaction), as a procedure the driver CALLs after a drain, for the layouts that
-- leave succeeded rows in jobs (today, today_b, lease): the deferred half of their
-- completion, timed and its WAL counted apart.
CREATE PROCEDURE jobd.bench_archive_all() LANGUAGE plpgsql AS $$
DECLARE n int;
BEGIN
    LOOP
        WITH m AS MATERIALIZED (SELECT id FROM jobd.jobs WHERE status = 'succeeded'
               AND finished_at < now() ORDER BY finished_at LIMIT 2000 FOR UPDATE SKIP LOCKED),
             d AS (DELETE FROM jobd.jobs WHERE id = ANY(ARRAY(SELECT id FROM m))
                   AND status = 'succeeded' RETURNING *),
             ins AS (INSERT INTO jobd.jobs_done (id, queue, type, payload, status, priority,
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
