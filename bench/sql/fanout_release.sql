-- bench/sql/fanout_release.sql — what the release of a root's 10,000 waiting
-- children costs on PostgreSQL, beside the ways of releasing them that
-- issue 29 considered (docs/BENCHMARKS.md, "Fan-out at 10,000: what bounds
-- the ratio"). Every variant runs in a transaction that is rolled back, so
-- they can be repeated and interleaved on the same rows.
--
-- DESTRUCTIVE: it empties jobd's job tables. Run it on a throwaway database
-- that `jobd migrate` (or any jobd process) has given the schema:
--
--     psql "$URL" -X -f bench/sql/fanout_release.sql
--
-- Each statement's time is printed by \timing; the labels say what runs.
-- Variants:
--   complete   the root's completion as jobd runs it: the statement trigger
--              ends its 10,000 edges and jobd.deps_release moves the
--              children from jobs_waiting into jobs (schema 30)
--   edges      the edges' end alone
--   move       the move alone (the same statement as deps_release's)
--   enqueue    10,000 plain jobs inserted into jobs: what independent jobs
--              pay before a benchmark's clock starts
--   in place   the children kept in jobs with status 'waiting' (the check
--              constraint dropped inside the transaction) and released by
--              one UPDATE to pending
--   payload    one column in no index written on each of the 10,000 rows:
--              the cheapest write a release could make per child
\set ON_ERROR_STOP on
\pset footer off
TRUNCATE jobd.jobs, jobd.jobs_done, jobd.jobs_waiting, jobd.job_deps, jobd.events;
INSERT INTO jobd.jobs (id, type, status, attempt, started_at, worker_id, lease_expires_at,
                       has_children)
VALUES (1, 'noop', 'running', 1, now(), 'w', now() + interval '1 hour', true);
INSERT INTO jobd.jobs_waiting (id, type, status)
SELECT g, 'noop', 'waiting' FROM generate_series(2, 10001) g;
INSERT INTO jobd.job_deps (parent, child) SELECT 1, g FROM generate_series(2, 10001) g;
VACUUM ANALYZE jobd.jobs;
VACUUM ANALYZE jobd.jobs_waiting;
VACUUM ANALYZE jobd.job_deps;
\timing on
\echo complete
BEGIN;
UPDATE jobd.jobs SET status = 'succeeded', finished_at = now(), lease_expires_at = NULL
 WHERE id = 1;
ROLLBACK;
\echo edges
BEGIN;
UPDATE jobd.job_deps SET ended_status = 'succeeded' WHERE parent = 1;
ROLLBACK;
\echo move
BEGIN;
SELECT set_config('jobd.releasing', 'on', true) \g /dev/null
WITH w AS (DELETE FROM jobd.jobs_waiting WHERE id BETWEEN 2 AND 10001 RETURNING *)
INSERT INTO jobd.jobs (id, type, status, run_at, has_children)
SELECT id, type, 'pending', run_at, has_children FROM w;
ROLLBACK;
\echo enqueue
BEGIN;
INSERT INTO jobd.jobs (id, type, status) SELECT g + 20000, 'noop', 'pending'
  FROM generate_series(2, 10001) g;
ROLLBACK;
\timing off
BEGIN;
ALTER TABLE jobd.jobs DROP CONSTRAINT jobs_hot_status;
INSERT INTO jobd.jobs (id, type, status) SELECT g + 40000, 'noop', 'waiting'
  FROM generate_series(2, 10001) g;
ANALYZE jobd.jobs;
\timing on
\echo in place
SAVEPOINT s;
UPDATE jobd.jobs SET status = 'pending' WHERE id BETWEEN 40002 AND 50001;
ROLLBACK TO SAVEPOINT s;
\echo payload
UPDATE jobd.jobs SET payload = '{"a":1}' WHERE id BETWEEN 40002 AND 50001;
ROLLBACK;
