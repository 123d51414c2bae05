-- bench/sql/fanout_release_sqlite.sql — bench/sql/fanout_release.sql for
-- SQLite: the release of a root's 10,000 waiting children beside the ways
-- of releasing them that issue 29 considered (docs/BENCHMARKS.md,
-- "Fan-out at 10,000: what bounds the ratio"), each in a transaction that
-- is rolled back.
--
-- DESTRUCTIVE: it empties jobd's job tables. Run it on a copy of a jobd
-- database file (any file a jobd process opened has the schema):
--
--     sqlite3 COPY.db < bench/sql/fanout_release_sqlite.sql
--
-- ".timer on" prints each statement's time after it; the labels say what
-- runs next. The release itself is C (parent_ended in sqlite/deps.c): its
-- statements are the edges' end, the INSERT ... SELECT into jobs and the
-- DELETE from jobs_waiting, written here over all 10,000 children.
DELETE FROM jobs; DELETE FROM jobs_done; DELETE FROM jobs_waiting; DELETE FROM job_deps;
DELETE FROM events; DELETE FROM deps_todo;
INSERT INTO jobs (id, queue, type, payload, status, priority, run_at, max_attempts, created_at,
                  attempt, started_at, worker_id, lease_expires_at)
VALUES (1, 'default', 'noop', '{}', 'running', 0, 0, 25, 0, 1, 0, 'w', 9000000000000000);
WITH RECURSIVE g(x) AS (SELECT 2 UNION ALL SELECT x + 1 FROM g WHERE x < 10001)
INSERT INTO jobs_waiting (id, queue, type, payload, status, priority, run_at, max_attempts,
                          created_at)
SELECT x, 'default', 'noop', '{}', 'waiting', 0, 0, 25, 0 FROM g;
WITH RECURSIVE g(x) AS (SELECT 2 UNION ALL SELECT x + 1 FROM g WHERE x < 10001)
INSERT INTO job_deps (parent, child) SELECT 1, x FROM g;
ANALYZE;
.timer on
.print edges
BEGIN;
UPDATE job_deps SET ended_status = 'succeeded' WHERE parent = 1;
ROLLBACK;
.print move (insert, then delete)
BEGIN;
INSERT INTO jobs (id, queue, type, payload, status, priority, run_at, max_attempts, created_at)
SELECT id, queue, type, payload, 'pending', priority, run_at, max_attempts, created_at
  FROM jobs_waiting;
DELETE FROM jobs_waiting;
ROLLBACK;
.print enqueue (10,000 plain jobs)
BEGIN;
INSERT INTO jobs (id, queue, type, payload, status, priority, run_at, max_attempts, created_at)
SELECT id + 20000, queue, type, payload, 'pending', priority, run_at, max_attempts, created_at
  FROM jobs_waiting;
ROLLBACK;
.print in place (the children in jobs as waiting, then one UPDATE)
BEGIN;
PRAGMA ignore_check_constraints = 1;
INSERT INTO jobs (id, queue, type, payload, status, priority, run_at, max_attempts, created_at)
SELECT id + 40000, queue, type, payload, 'waiting', priority, run_at, max_attempts, created_at
  FROM jobs_waiting;
UPDATE jobs SET status = 'pending' WHERE id > 40000;
ROLLBACK;
PRAGMA ignore_check_constraints = 0;
