-- The SFQ claim ($1 worker, $2 limit, $3 lease_ms, $4 types, $5 now, $6 queue),
-- written as a PG_STMT would send it: one ordered walk of jobs_sfq_claim
-- (priority DESC, tag, id) beside one of jobs_claim_queue over the untagged
-- due jobs (retries, delayed jobs, ungrouped ones: an empty range when there
-- are none), untagged first at equal priority; then today's UPDATE and
-- RETURNING (PG_RUN_COLS), as st_gr_one_run. No per-group probe, no
-- job_groups read, no cursor.
WITH tg AS MATERIALIZED (
    SELECT id, priority, 0 AS src, tag AS k FROM jobd.jobs
      WHERE queue = $6::text AND status = 'pending' AND tag IS NOT NULL
        AND run_at <= COALESCE((timestamptz 'epoch' + ($5)::bigint * interval '1 microsecond'), now())
        AND ($4::text[] IS NULL OR type = ANY($4::text[]))
        AND NOT EXISTS (SELECT 1 FROM jobd.queues p WHERE p.name = $6::text AND p.paused)
      ORDER BY priority DESC, tag, id LIMIT $2::int FOR UPDATE SKIP LOCKED),
 tu AS MATERIALIZED (
    SELECT id, priority, -1 AS src, 0 AS k FROM jobd.jobs
      WHERE queue = $6::text AND status = 'pending' AND tag IS NULL
        AND run_at <= COALESCE((timestamptz 'epoch' + ($5)::bigint * interval '1 microsecond'), now())
        AND ($4::text[] IS NULL OR type = ANY($4::text[]))
        AND NOT EXISTS (SELECT 1 FROM jobd.queues p WHERE p.name = $6::text AND p.paused)
      ORDER BY priority DESC, run_at, id LIMIT $2::int FOR UPDATE SKIP LOCKED),
 due AS MATERIALIZED (
    SELECT id FROM (SELECT * FROM tg UNION ALL SELECT * FROM tu) c
     ORDER BY priority DESC, src, k, id LIMIT $2::int)
UPDATE jobd.jobs j SET status = 'running', attempt = j.attempt + 1, worker_id = $1::text,
       lease_expires_at = COALESCE((timestamptz 'epoch' + ($5)::bigint * interval '1 microsecond'), now()) + (($3)::bigint * interval '1 millisecond'),
       started_at = COALESCE((timestamptz 'epoch' + ($5)::bigint * interval '1 microsecond'), now())
 WHERE j.id = ANY(ARRAY(SELECT id FROM due))
RETURNING j.id, j.queue, j.type, j.payload::text AS payload, j.priority, (extract(epoch from j.run_at) * 1000000)::bigint AS run_at_us, j.attempt, j.attempt_floor, j.idempotency_key, (extract(epoch from j.scheduled_for) * 1000000)::bigint AS scheduled_for_us, j.timeout_ms, (extract(epoch from j.started_at) * 1000000)::bigint AS started_at_us, j.traceparent, j.grp
