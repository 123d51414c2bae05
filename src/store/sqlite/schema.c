/*
 * sqlite/schema.c — the SQLite schema as ordered migration steps, the
 * migration itself (store_migrate) and its read-only status (jobd migrate
 * --status). Kept apart from sqlite/open.c as pg/schema.c is from
 * pg/open.c: the steps are long and only ever appended to.
 */
#include <stdbool.h>
#include <stdio.h>

#include "core/err.h"
#include "store/sqlite/internal.h"
#include "util/clock.h"

/*
 * The schema, as ordered steps. A step runs once, inside the BEGIN IMMEDIATE
 * transaction of store_migrate, and records its version in
 * schema_migrations. To change the schema, APPEND a step with the next
 * version; never edit a released one.
 */
struct sq_migration {
    int version;
    const char *sql;
};

/* The triggers that keep job_counts exact for table t (migration 5). */
#define SQ_COUNT_TRIGGERS(t)                                                                       \
    "CREATE TRIGGER " t "_count_ins AFTER INSERT ON " t " BEGIN"                                   \
    "  INSERT INTO job_counts VALUES (new.queue, new.status, 1)"                                   \
    "    ON CONFLICT (queue, status) DO UPDATE SET n = n + 1;"                                     \
    "END;"                                                                                         \
    "CREATE TRIGGER " t "_count_del AFTER DELETE ON " t " BEGIN"                                   \
    "  UPDATE job_counts SET n = n - 1 WHERE queue = old.queue AND status = old.status;"           \
    "END;"                                                                                         \
    "CREATE TRIGGER " t "_count_upd AFTER UPDATE OF queue, status ON " t                           \
    "  WHEN old.queue IS NOT new.queue OR old.status IS NOT new.status BEGIN"                      \
    "  UPDATE job_counts SET n = n - 1 WHERE queue = old.queue AND status = old.status;"           \
    "  INSERT INTO job_counts VALUES (new.queue, new.status, 1)"                                   \
    "    ON CONFLICT (queue, status) DO UPDATE SET n = n + 1;"                                     \
    "END;"

/* The event log's triggers (migration 16): the real clock in microseconds
 * (SQ_EV_NOW, sqlite/internal.h), whether a stream had a client within the
 * hour, a job's previous event. */
#define SQ_EVENTS_ON "(SELECT listened_at FROM event_log) > " SQ_EV_NOW " - 3600000000"
#define SQ_EV_PREV                                                                                 \
    "(SELECT e.to_st FROM events e WHERE e.job = NEW.id"                                           \
    " AND e.id >= (SELECT since_id FROM event_log) ORDER BY e.id DESC LIMIT 1)"
/* Migration 25's SQ_EVENTS_ON for a change to st, which a batch that set
 * event_log.told writes itself: one read of event_log a row, as before, and
 * no clock read while told. */
#define SQ_EVENTS_UNTOLD(st)                                                                       \
    "(SELECT CASE WHEN told AND NEW.status = '" st "' THEN 0"                                      \
    " ELSE listened_at > " SQ_EV_NOW " - 3600000000 END FROM event_log)"
/* Migration 24's: the same over events_prev, the partial index of the events a
 * lookup can need (a job's last event is never running or succeeded when it
 * is asked for: docs/DESIGN.md, Events). */
#define SQ_EV_PREV24                                                                               \
    "(SELECT e.to_st FROM events e WHERE e.job = NEW.id"                                           \
    " AND e.to_st NOT IN ('running', 'succeeded')"                                                 \
    " AND e.id >= (SELECT since_id FROM event_log) ORDER BY e.id DESC LIMIT 1)"

/* Migration 24's event of a row into jobs_done (also migration 25's). */
#define SQ_EV_DONE24                                                                               \
    "  INSERT INTO events (job, queue, type, from_st, to_st, attempt, at)"                         \
    "  VALUES (NEW.id, NEW.queue, NEW.type,"                                                       \
    "          CASE WHEN NEW.status <> 'cancelled' THEN 'running'"                                 \
    "               WHEN EXISTS (SELECT 1 FROM jobs_waiting w WHERE w.id = NEW.id) THEN 'waiting'" \
    "               WHEN NEW.cancel_requested = 0 THEN 'pending'"                                  \
    "               ELSE 'running' END,"                                                           \
    "          NEW.status, NEW.attempt, " SQ_EV_NOW ");"

/* clang-format off */
static const struct sq_migration sq_migrations[] = {
    {1,
     /* The hot set: pending and running jobs only. AUTOINCREMENT keeps the
      * highest id ever handed out in sqlite_sequence, so ids are never
      * reused even after a job moved to jobs_done or was pruned. */
     "CREATE TABLE jobs ("
     "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
     "  queue TEXT NOT NULL,"
     "  type TEXT NOT NULL,"
     "  payload TEXT NOT NULL,"
     "  status TEXT NOT NULL CHECK (status IN ('pending', 'running')),"
     "  priority INTEGER NOT NULL,"
     "  run_at INTEGER NOT NULL,"
     "  attempt INTEGER NOT NULL DEFAULT 0,"
     "  max_attempts INTEGER NOT NULL,"
     "  idempotency_key TEXT,"
     "  schedule TEXT,"
     "  scheduled_for INTEGER,"
     "  worker_id TEXT,"
     "  lease_expires_at INTEGER,"
     "  timeout_ms INTEGER,"
     "  cancel_requested INTEGER NOT NULL DEFAULT 0,"
     "  last_error TEXT,"
     "  result TEXT,"
     "  created_at INTEGER NOT NULL,"
     "  started_at INTEGER,"
     "  finished_at INTEGER,"
     "  attempt_floor INTEGER NOT NULL DEFAULT 0"
     ");"
     /* Claims within given queues walk this in claim order... */
     "CREATE INDEX jobs_claim_queue ON jobs (queue, priority DESC, run_at, id)"
     "  WHERE status = 'pending';"
     /* ...and claims over every queue walk this one, stopping at LIMIT. */
     "CREATE INDEX jobs_claim_any ON jobs (priority DESC, run_at, id)"
     "  WHERE status = 'pending';"
     "CREATE INDEX jobs_lease ON jobs (lease_expires_at) WHERE status = 'running';"
     /* Terminal jobs (succeeded, dead, cancelled); ids come from jobs. */
     "CREATE TABLE jobs_done ("
     "  id INTEGER PRIMARY KEY,"
     "  queue TEXT NOT NULL,"
     "  type TEXT NOT NULL,"
     "  payload TEXT NOT NULL,"
     "  status TEXT NOT NULL CHECK (status IN ('succeeded', 'dead', 'cancelled')),"
     "  priority INTEGER NOT NULL,"
     "  run_at INTEGER NOT NULL,"
     "  attempt INTEGER NOT NULL,"
     "  max_attempts INTEGER NOT NULL,"
     "  idempotency_key TEXT,"
     "  schedule TEXT,"
     "  scheduled_for INTEGER,"
     "  worker_id TEXT,"
     "  lease_expires_at INTEGER,"
     "  timeout_ms INTEGER,"
     "  cancel_requested INTEGER NOT NULL DEFAULT 0,"
     "  last_error TEXT,"
     "  result TEXT,"
     "  created_at INTEGER NOT NULL,"
     "  started_at INTEGER,"
     "  finished_at INTEGER NOT NULL,"
     "  attempt_floor INTEGER NOT NULL DEFAULT 0"
     ");"
     "CREATE INDEX jobs_done_finished ON jobs_done (finished_at);"
     "CREATE INDEX jobs_done_queue_status ON jobs_done (queue, status);"
     /* Idempotency keys, unique across both tables and kept after a job ends. */
     "CREATE TABLE job_keys ("
     "  idempotency_key TEXT PRIMARY KEY,"
     "  job_id INTEGER NOT NULL"
     ") WITHOUT ROWID;"
     "CREATE TABLE queues ("
     "  name TEXT PRIMARY KEY,"
     "  paused INTEGER NOT NULL DEFAULT 0"
     ") WITHOUT ROWID;"},
    {2,
     /* Schedules (sqlite/sched.c). next_run_at is the first firing not yet
      * materialized; the materializer finds due ones through schedules_due.
      * A firing becomes at most one job: jobs_schedule_firing. */
     "CREATE TABLE schedules ("
     "  name TEXT PRIMARY KEY,"
     "  cron TEXT NOT NULL,"
     "  timezone TEXT NOT NULL,"
     "  type TEXT NOT NULL,"
     "  payload TEXT NOT NULL,"
     "  queue TEXT NOT NULL,"
     "  priority INTEGER NOT NULL,"
     "  max_attempts INTEGER NOT NULL,"
     "  catchup TEXT NOT NULL CHECK (catchup IN ('once', 'all', 'skip')),"
     "  paused INTEGER NOT NULL DEFAULT 0,"
     "  next_run_at INTEGER NOT NULL,"
     "  last_fired_at INTEGER,"
     "  created_at INTEGER NOT NULL"
     ") WITHOUT ROWID;"
     "CREATE INDEX schedules_due ON schedules (next_run_at) WHERE paused = 0;"
     "CREATE UNIQUE INDEX jobs_schedule_firing ON jobs (schedule, scheduled_for)"
     "  WHERE schedule IS NOT NULL;"},
    {3,
     /* An idle worker asks for the soonest pending run_at to set its timer
      * (sq_op_next_run_at); without this it scanned every pending job. */
     "CREATE INDEX jobs_next_run ON jobs (run_at) WHERE status = 'pending';"},
    {4,
     /* Attempt history (store/operator.h): a row only for an attempt that ended
      * other than in success; the current attempt is the job row. */
     "CREATE TABLE job_attempts ("
     "  job_id INTEGER NOT NULL,"
     "  attempt INTEGER NOT NULL,"
     "  worker_id TEXT,"
     "  started_at INTEGER,"
     "  finished_at INTEGER NOT NULL,"
     "  outcome TEXT NOT NULL CHECK (outcome IN ('failed', 'dead', 'reaped', 'cancelled',"
     "                                           'released')),"
     "  error TEXT,"
     "  PRIMARY KEY (job_id, attempt)"
     ") WITHOUT ROWID;"},
    {5,
     /* Work that must not grow with the backlog (docs/DESIGN.md "Cost per
      * request"). Claims, due checks and timers of workers that name their
      * types walk one type at a time; listings filtered by type or status
      * walk (filter, id); a queue's oldest pending job is one seek. The
      * non-partial (type, id) is never touched by a claim's UPDATE (SQLite
      * skips indexes whose columns do not change). */
     "CREATE INDEX jobs_claim_type ON jobs (type, priority DESC, run_at, id)"
     "  WHERE status = 'pending';"
     "CREATE INDEX jobs_next_type ON jobs (type, run_at) WHERE status = 'pending';"
     "CREATE INDEX jobs_next_queue ON jobs (queue, run_at) WHERE status = 'pending';"
     "CREATE INDEX jobs_type_id ON jobs (type, id);"
     "CREATE INDEX jobs_done_type_id ON jobs_done (type, id);"
     "CREATE INDEX jobs_done_status_id ON jobs_done (status, id);"
     /* Per-(queue, status) counts, kept exact by triggers in the writing
      * transaction itself: GET /v1/queues and /metrics read these rows
      * instead of counting the tables. SQLite has one writer at a time, so
      * the counter rows are never contended. */
     "CREATE TABLE job_counts ("
     "  queue TEXT NOT NULL,"
     "  status TEXT NOT NULL,"
     "  n INTEGER NOT NULL,"
     "  PRIMARY KEY (queue, status)"
     ") WITHOUT ROWID;"
     "INSERT INTO job_counts SELECT queue, status, count(*) FROM jobs GROUP BY queue, status;"
     "INSERT INTO job_counts SELECT queue, status, count(*) FROM jobs_done"
     "  GROUP BY queue, status;" SQ_COUNT_TRIGGERS("jobs") SQ_COUNT_TRIGGERS("jobs_done")},
    {6,
     /* Worker presence (store/operator.h): one row per live worker. */
     "CREATE TABLE workers ("
     "  id TEXT PRIMARY KEY,"
     "  hostname TEXT NOT NULL,"
     "  pid INTEGER NOT NULL,"
     "  version TEXT NOT NULL,"
     "  queues TEXT NOT NULL,"
     "  types TEXT NOT NULL,"
     "  concurrency INTEGER NOT NULL,"
     "  heartbeat_ms INTEGER NOT NULL,"
     "  started_at INTEGER NOT NULL,"
     "  last_seen_at INTEGER NOT NULL,"
     "  draining INTEGER NOT NULL DEFAULT 0"
     ") WITHOUT ROWID;"},
    {7,
     /* Queue limits (qlimits.h); rate_window_us / rate_count count the
      * claims of the current rate window, written only by a limited claim. */
     "ALTER TABLE queues ADD COLUMN max_running INTEGER CHECK (max_running >= 1);"
     "ALTER TABLE queues ADD COLUMN rate_limit INTEGER CHECK (rate_limit >= 1);"
     "ALTER TABLE queues ADD COLUMN rate_per_ms INTEGER CHECK (rate_per_ms >= 1);"
     "ALTER TABLE queues ADD COLUMN rate_window_us INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE queues ADD COLUMN rate_count INTEGER NOT NULL DEFAULT 0;"},
    {8,
     /* The distinct (queue, type) pairs of pending jobs, one seek each
      * (sqlite/pending.c). Not partial, so a claim's UPDATE skips it. */
     "CREATE INDEX jobs_queue_type ON jobs (queue, type);"},
    {9, sq_step_stats}, /* statistics (sqlite/stats.c) */
    {10,
     /* The dashboard's listings at any size (sq_list_sql): a queue's jobs
      * newest first, and a schedule's finished ones. Not partial, so a
      * claim's UPDATE (which changes neither queue nor id) skips jobs_queue_id;
      * jobs_done_schedule_id holds only the jobs schedules made. */
     "CREATE INDEX jobs_queue_id ON jobs (queue, id);"
     "CREATE INDEX jobs_done_schedule_id ON jobs_done (schedule, id)"
     "  WHERE schedule IS NOT NULL;"},
    {11,
     /* The SHA-256 (hex) of the lease token a claim over HTTP gave the
      * running attempt (sqlite/lease.c; docs/API.md, Remote workers); NULL
      * for a claim on the store itself. Rows move to jobs_done by named
      * columns, and a finished attempt needs no token: jobs only. */
     "ALTER TABLE jobs ADD COLUMN lease_token_hash TEXT;"},
    {12,
     /* A finished attempt keeps its lease token's hash, so a report that
      * repeats the one that ended it is known as such (sq_op_lease_replayed;
      * docs/API.md, Repeated reports): the history row of an attempt that
      * ended other than in success, the jobs_done row of a succeeded one. */
     "ALTER TABLE jobs_done ADD COLUMN lease_token_hash TEXT;"
     "ALTER TABLE job_attempts ADD COLUMN lease_token_hash TEXT;"
     /* The running jobs with a cancel requested, a handful at most: a
      * worker's WAL watch reads them after each commit it sees, to hear of
      * a cancel at once (sq_cancel_sig; docs/WORKER.md, Cancellation). */
     "CREATE INDEX jobs_cancel_requested ON jobs (id, attempt) WHERE cancel_requested = 1;"},
    {13,
     /* A running attempt's progress (sqlite/progress.c; docs/API.md,
      * The job object): a table of its own, so a job moving between jobs and
      * jobs_done leaves it be; the row says which attempt wrote it. */
     "CREATE TABLE job_progress ("
     "  job_id INTEGER PRIMARY KEY,"
     "  attempt INTEGER NOT NULL,"
     "  percent REAL,"
     "  message TEXT,"
     "  data TEXT,"
     "  at INTEGER NOT NULL);"},
    {14,
     /* The kept tail of each exec attempt's stderr (sqlite/attemptlog.c;
      * docs/API.md, GET /v1/jobs/{id}/attempts/{attempt}/log): a table of
      * its own, one row per attempt, deleted with the job. */
     "CREATE TABLE job_attempt_logs ("
     "  job_id INTEGER NOT NULL,"
     "  attempt INTEGER NOT NULL,"
     "  text TEXT NOT NULL,"
     "  at INTEGER NOT NULL,"
     "  PRIMARY KEY (job_id, attempt));"},
    {15,
     /* The W3C traceparent a job was enqueued with (docs/API.md, Trace
      * context), handed to its handlers and named in log lines about it.
      * Rows move between jobs and jobs_done by SQ_JOB_COLS: both. */
     "ALTER TABLE jobs ADD COLUMN traceparent TEXT;"
     "ALTER TABLE jobs_done ADD COLUMN traceparent TEXT;"},
    {16,
     /* The event log of GET /v1/events (sqlite/events.c; docs/API.md,
      * GET /v1/events; docs/DESIGN.md, Events): row triggers write a job's status
      * changes into events, only while a server has had a client of the
      * stream within the last hour (event_log.listened_at); otherwise each
      * is one probe of a one-row table. A job moves between jobs and
      * jobs_done, so "from" comes from the row (docs/DESIGN.md, Events),
      * and for a row inserted into jobs (new, or a retry) from its previous
      * event. AUTOINCREMENT: ids never
      * reused after a prune.
      * Writers take turns, so ids are in commit order. */
     "CREATE TABLE events ("
     "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
     "  job INTEGER NOT NULL,"
     "  queue TEXT NOT NULL,"
     "  type TEXT NOT NULL,"
     "  from_st TEXT,"
     "  to_st TEXT NOT NULL,"
     "  attempt INTEGER NOT NULL,"
     "  at INTEGER NOT NULL);"
     "CREATE INDEX events_job ON events (job, id);"
     "CREATE INDEX events_at ON events (at);"
     "CREATE TABLE event_log ("
     "  one INTEGER PRIMARY KEY CHECK (one = 1),"
     "  since_id INTEGER NOT NULL DEFAULT 0,"
     "  listened_at INTEGER NOT NULL DEFAULT 0);"
     "INSERT INTO event_log (one) VALUES (1);"
     "CREATE TRIGGER jobs_events_updated AFTER UPDATE OF status ON jobs"
     "  WHEN OLD.status <> NEW.status AND " SQ_EVENTS_ON " BEGIN"
     "  INSERT INTO events (job, queue, type, from_st, to_st, attempt, at)"
     "  VALUES (NEW.id, NEW.queue, NEW.type, OLD.status, NEW.status, NEW.attempt, " SQ_EV_NOW ");"
     "END;"
     "CREATE TRIGGER jobs_events_inserted AFTER INSERT ON jobs WHEN " SQ_EVENTS_ON " BEGIN"
     "  INSERT INTO events (job, queue, type, from_st, to_st, attempt, at)"
     "  VALUES (NEW.id, NEW.queue, NEW.type,"
     "          CASE WHEN NEW.attempt > NEW.attempt_floor THEN 'running'"
     "               ELSE " SQ_EV_PREV " END, NEW.status, NEW.attempt, " SQ_EV_NOW ");"
     "END;"
     "CREATE TRIGGER jobs_done_events AFTER INSERT ON jobs_done WHEN " SQ_EVENTS_ON " BEGIN"
     "  INSERT INTO events (job, queue, type, from_st, to_st, attempt, at)"
     "  VALUES (NEW.id, NEW.queue, NEW.type,"
     "          CASE WHEN NEW.status = 'cancelled' AND NEW.cancel_requested = 0"
     "               THEN 'pending' ELSE 'running' END,"
     "          NEW.status, NEW.attempt, " SQ_EV_NOW ");"
     "END;"},
    {17,
     /* Dependencies (docs/MODEL.md, Dependencies; sqlite/deps.c). A waiting
      * job lives in jobs_waiting (the columns of jobs, traceparent of 15 too), so no claim index
      * holds it. job_deps: one edge per parent and child; ended_status is
      * the parent's terminal status once it ended (NULL while not), cause
      * marks the parent the child was cancelled for. A parent's end (its
      * move into jobs_done, whatever made it) ends its edges in the same
      * statement and queues the settling of its children in deps_todo, as
      * does a job that comes back from jobs_done (a retry); the writing
      * transaction settles them before COMMIT (sq_deps_flush). The WHEN
      * clauses probe job_deps by parent: a job that never had children pays
      * one index probe at its end. The triggers call no function of jobd's,
      * so any program may still write these tables. */
     "CREATE TABLE jobs_waiting ("
     "  id INTEGER PRIMARY KEY,"
     "  queue TEXT NOT NULL,"
     "  type TEXT NOT NULL,"
     "  payload TEXT NOT NULL,"
     "  status TEXT NOT NULL CHECK (status = 'waiting'),"
     "  priority INTEGER NOT NULL,"
     "  run_at INTEGER NOT NULL,"
     "  attempt INTEGER NOT NULL DEFAULT 0,"
     "  max_attempts INTEGER NOT NULL,"
     "  idempotency_key TEXT,"
     "  schedule TEXT,"
     "  scheduled_for INTEGER,"
     "  worker_id TEXT,"
     "  lease_expires_at INTEGER,"
     "  timeout_ms INTEGER,"
     "  cancel_requested INTEGER NOT NULL DEFAULT 0,"
     "  last_error TEXT,"
     "  result TEXT,"
     "  created_at INTEGER NOT NULL,"
     "  started_at INTEGER,"
     "  finished_at INTEGER,"
     "  attempt_floor INTEGER NOT NULL DEFAULT 0,"
     "  lease_token_hash TEXT,"
     "  traceparent TEXT);"
     "CREATE INDEX jobs_waiting_queue_id ON jobs_waiting (queue, id);"
     "CREATE INDEX jobs_waiting_type_id ON jobs_waiting (type, id);"
     SQ_COUNT_TRIGGERS("jobs_waiting")
     "CREATE TABLE job_deps ("
     "  parent INTEGER NOT NULL,"
     "  child INTEGER NOT NULL,"
     "  ended_status TEXT,"
     "  cause INTEGER NOT NULL DEFAULT 0,"
     "  run_on_failure INTEGER NOT NULL DEFAULT 0,"
     "  PRIMARY KEY (parent, child)) WITHOUT ROWID;"
     "CREATE INDEX job_deps_child ON job_deps (child, parent);"
     "CREATE TABLE deps_todo ("
     "  seq INTEGER PRIMARY KEY,"
     "  parent INTEGER NOT NULL,"
     "  reopen INTEGER NOT NULL,"
     "  at INTEGER);"
     "CREATE TRIGGER jobs_done_deps AFTER INSERT ON jobs_done"
     "  WHEN EXISTS (SELECT 1 FROM job_deps WHERE parent = new.id AND ended_status IS NULL) BEGIN"
     "  UPDATE job_deps SET ended_status = new.status"
     "    WHERE parent = new.id AND ended_status IS NULL;"
     "  INSERT INTO deps_todo (parent, reopen, at) VALUES (new.id, 0, new.finished_at);"
     "END;"
     "CREATE TRIGGER jobs_deps_reopened AFTER INSERT ON jobs"
     "  WHEN EXISTS (SELECT 1 FROM job_deps WHERE parent = new.id AND ended_status IS NOT NULL)"
     "  BEGIN"
     "  INSERT INTO deps_todo (parent, reopen, at) VALUES (new.id, 1, NULL);"
     "END;"
     "CREATE TRIGGER jobs_waiting_reopened AFTER INSERT ON jobs_waiting"
     "  WHEN EXISTS (SELECT 1 FROM job_deps WHERE parent = new.id AND ended_status IS NOT NULL)"
     "  BEGIN"
     "  INSERT INTO deps_todo (parent, reopen, at) VALUES (new.id, 1, NULL);"
     "END;"},
    {18,
     /* The event log (16) told about jobs_waiting (17), so events say
      * `waiting` (docs/API.md, GET /v1/events; docs/DESIGN.md, Events).
      * Every move between the tables inserts the row into its new table
      * before deleting it from the old one (sqlite/deps.c, sqlite/bulk.c),
      * so a trigger on the insert sees where the row came from: from
      * jobs_waiting into jobs (a release) or jobs_done (a cancel, by the
      * user or for a parent) is `waiting` → ...; into jobs_waiting from
      * jobs_done (a parent's retry) is `cancelled` → `waiting`, and from
      * jobs (an enqueue with parents, inserted pending a statement ago)
      * turns that creation event into one of a waiting job. */
     "DROP TRIGGER jobs_events_inserted;"
     "CREATE TRIGGER jobs_events_inserted AFTER INSERT ON jobs WHEN " SQ_EVENTS_ON " BEGIN"
     "  INSERT INTO events (job, queue, type, from_st, to_st, attempt, at)"
     "  VALUES (NEW.id, NEW.queue, NEW.type,"
     "          CASE WHEN EXISTS (SELECT 1 FROM jobs_waiting w WHERE w.id = NEW.id) THEN 'waiting'"
     "               WHEN NEW.attempt > NEW.attempt_floor THEN 'running'"
     "               ELSE " SQ_EV_PREV " END, NEW.status, NEW.attempt, " SQ_EV_NOW ");"
     "END;"
     "DROP TRIGGER jobs_done_events;"
     "CREATE TRIGGER jobs_done_events AFTER INSERT ON jobs_done WHEN " SQ_EVENTS_ON " BEGIN"
     "  INSERT INTO events (job, queue, type, from_st, to_st, attempt, at)"
     "  VALUES (NEW.id, NEW.queue, NEW.type,"
     "          CASE WHEN EXISTS (SELECT 1 FROM jobs_waiting w WHERE w.id = NEW.id) THEN 'waiting'"
     "               WHEN NEW.status = 'cancelled' AND NEW.cancel_requested = 0 THEN 'pending'"
     "               ELSE 'running' END,"
     "          NEW.status, NEW.attempt, " SQ_EV_NOW ");"
     "END;"
     "CREATE TRIGGER jobs_waiting_events AFTER INSERT ON jobs_waiting WHEN " SQ_EVENTS_ON " BEGIN"
     "  UPDATE events SET to_st = 'waiting'"
     "    WHERE job = NEW.id AND from_st IS NULL AND to_st = 'pending'"
     "      AND id >= (SELECT since_id FROM event_log)"
     "      AND EXISTS (SELECT 1 FROM jobs j WHERE j.id = NEW.id);"
     "  INSERT INTO events (job, queue, type, from_st, to_st, attempt, at)"
     "  SELECT NEW.id, NEW.queue, NEW.type,"
     "         (SELECT d.status FROM jobs_done d WHERE d.id = NEW.id), 'waiting', NEW.attempt, "
     SQ_EV_NOW
     "   WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = NEW.id)"
     "      OR NOT EXISTS (SELECT 1 FROM events e WHERE e.job = NEW.id AND e.from_st IS NULL"
     "                     AND e.to_st = 'waiting' AND e.id >= (SELECT since_id FROM event_log));"
     "END;"},
    {19,
     /* Workflows (docs/MODEL.md, Workflows; sqlite/workflow.c): the
      * workflow and, apart from the job tables so that no row move carries
      * them, each step's job, ref and place in the request. */
     "CREATE TABLE workflows ("
     "  id INTEGER PRIMARY KEY AUTOINCREMENT," /* ids are never reused */
     "  name TEXT NOT NULL,"
     "  idempotency_key TEXT UNIQUE,"
     "  created_at INTEGER NOT NULL);"
     "CREATE TABLE workflow_steps ("
     "  job_id INTEGER PRIMARY KEY,"
     "  workflow INTEGER NOT NULL,"
     "  ref TEXT NOT NULL,"
     "  ord INTEGER NOT NULL,"
     "  UNIQUE (workflow, ref));"
     "CREATE INDEX workflow_steps_ord ON workflow_steps (workflow, ord);"},
    {20,
     /* Keys of debounced enqueues and unique windows (docs/MODEL.md,
      * Debounce and unique windows; sqlite/enqkeys.c), apart from the job
      * tables: one row per key (a debounce key per queue and type, a
      * unique key global: queue and type ''), the job it holds, and the
      * end of a unique window (NULL for a debounce). */
     "CREATE TABLE enqueue_keys ("
     "  kind TEXT NOT NULL CHECK (kind IN ('debounce', 'unique')),"
     "  queue TEXT NOT NULL,"
     "  type TEXT NOT NULL,"
     "  key TEXT NOT NULL,"
     "  job_id INTEGER NOT NULL,"
     "  until INTEGER,"
     "  PRIMARY KEY (kind, queue, type, key));"
     "CREATE INDEX enqueue_keys_job ON enqueue_keys (job_id);"
     "CREATE INDEX enqueue_keys_until ON enqueue_keys (until) WHERE until IS NOT NULL;"},
    {21,
     /* Groups (docs/MODEL.md, Groups; docs/DESIGN.md, Groups; sqlite/groups.c).
      * grp is a column of the three job tables (SQ_JOB_COLS), so that the
      * fair claim finds each group's head with one probe of
      * jobs_group_claim ("grp IS ?", NULL for the jobs without a group,
      * which job_groups names '', a name no group may have). job_groups: a row per (queue, group) with pending jobs, in
      * name order for the claim's round robin, with its count of starts in
      * the current group_rate window. queues.grouped hands the queue to the
      * fair claim. */
     "ALTER TABLE jobs ADD COLUMN grp TEXT;"
     "ALTER TABLE jobs_done ADD COLUMN grp TEXT;"
     "ALTER TABLE jobs_waiting ADD COLUMN grp TEXT;"
     "CREATE INDEX jobs_group_claim ON jobs (queue, grp, priority DESC, run_at, id)"
     "  WHERE status = 'pending';"
     "CREATE TABLE job_groups ("
     "  queue TEXT NOT NULL,"
     "  grp TEXT NOT NULL,"
     "  rate_window_us INTEGER NOT NULL DEFAULT 0,"
     "  rate_count INTEGER NOT NULL DEFAULT 0,"
     "  PRIMARY KEY (queue, grp)) WITHOUT ROWID;"
     "ALTER TABLE queues ADD COLUMN grouped INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE queues ADD COLUMN group_max_running INTEGER CHECK (group_max_running >= 1);"
     "ALTER TABLE queues ADD COLUMN group_rate_limit INTEGER CHECK (group_rate_limit >= 1);"
     "ALTER TABLE queues ADD COLUMN group_rate_per_ms INTEGER CHECK (group_rate_per_ms >= 1);"},
    {22,
     /* Dependencies released fast (docs/DESIGN.md, Dependencies): a
      * child's open edges found without reading its ended ones, so the
      * check "no parent left to end" costs one probe, not one step per
      * parent that already ended (a joiner of 1,000 parents: 1,000). */
     "CREATE INDEX job_deps_open ON job_deps (child) WHERE ended_status IS NULL;"},
    {23,
     /* Listings by group (GET /v1/jobs?group=G) walk (grp, id) in id
      * order in each table, as those by type walk (type, id). Partial:
      * jobs without a group cost nothing here. */
     "CREATE INDEX jobs_grp_id ON jobs (grp, id) WHERE grp IS NOT NULL;"
     "CREATE INDEX jobs_done_grp_id ON jobs_done (grp, id) WHERE grp IS NOT NULL;"
     "CREATE INDEX jobs_waiting_grp_id ON jobs_waiting (grp, id) WHERE grp IS NOT NULL;"},
    {24,
     /* The event log made cheap to write (docs/DESIGN.md, Events): what
      * a claim or a completion adds while a stream listens is one row
      * appended to events, nothing more. Each event also went into
      * events_job and events_at, and each statement that wrote one
      * updated the AUTOINCREMENT row of sqlite_sequence: three more
      * b-trees to seek into, and three more pages in the statement's
      * journal. Now ids are rowids (the prune keeps the newest row, so
      * the highest id never falls and is never given again; a
      * placeholder keeps it if the log is empty now), the prune and
      * Last-Event-ID's check go by id (at grows with id: sqlite/events.c),
      * and the one index left, events_prev, holds only the events a
      * lookup can need: a job's previous event is asked for when it comes
      * back into jobs (a retry: dead or cancelled; a release: waiting) or
      * to rewrite its creation (pending, from null), never after a claim
      * (running) or a success (succeeded). The triggers are those of 16
      * and 18 with that lookup, and a move into jobs_done looks into
      * jobs_waiting only for a cancel. */
     "DROP TRIGGER jobs_events_updated;"
     "DROP TRIGGER jobs_events_inserted;"
     "DROP TRIGGER jobs_done_events;"
     "DROP TRIGGER jobs_waiting_events;"
     "CREATE TABLE events_new ("
     "  id INTEGER PRIMARY KEY,"
     "  job INTEGER NOT NULL,"
     "  queue TEXT NOT NULL,"
     "  type TEXT NOT NULL,"
     "  from_st TEXT,"
     "  to_st TEXT NOT NULL,"
     "  attempt INTEGER NOT NULL,"
     "  at INTEGER NOT NULL);"
     "INSERT INTO events_new SELECT id, job, queue, type, from_st, to_st, attempt, at FROM events;"
     "INSERT INTO events_new (id, job, queue, type, from_st, to_st, attempt, at)"
     "  SELECT seq, 0, '', '', NULL, 'running', 0, 0 FROM sqlite_sequence"
     "  WHERE name = 'events' AND seq > 0 AND NOT EXISTS (SELECT 1 FROM events);"
     "DROP TABLE events;"
     "ALTER TABLE events_new RENAME TO events;"
     "CREATE INDEX events_prev ON events (job, id) WHERE to_st NOT IN ('running', 'succeeded');"
     "CREATE TRIGGER jobs_events_updated AFTER UPDATE OF status ON jobs"
     "  WHEN OLD.status <> NEW.status AND " SQ_EVENTS_ON " BEGIN"
     "  INSERT INTO events (job, queue, type, from_st, to_st, attempt, at)"
     "  VALUES (NEW.id, NEW.queue, NEW.type, OLD.status, NEW.status, NEW.attempt, " SQ_EV_NOW ");"
     "END;"
     "CREATE TRIGGER jobs_events_inserted AFTER INSERT ON jobs WHEN " SQ_EVENTS_ON " BEGIN"
     "  INSERT INTO events (job, queue, type, from_st, to_st, attempt, at)"
     "  VALUES (NEW.id, NEW.queue, NEW.type,"
     "          CASE WHEN EXISTS (SELECT 1 FROM jobs_waiting w WHERE w.id = NEW.id) THEN 'waiting'"
     "               WHEN NEW.attempt > NEW.attempt_floor THEN 'running'"
     "               ELSE " SQ_EV_PREV24 " END, NEW.status, NEW.attempt, " SQ_EV_NOW ");"
     "END;"
     "CREATE TRIGGER jobs_done_events AFTER INSERT ON jobs_done WHEN " SQ_EVENTS_ON " BEGIN"
     SQ_EV_DONE24
     "END;"
     "CREATE TRIGGER jobs_waiting_events AFTER INSERT ON jobs_waiting WHEN " SQ_EVENTS_ON " BEGIN"
     "  UPDATE events SET to_st = 'waiting'"
     "    WHERE job = NEW.id AND from_st IS NULL AND to_st = 'pending'"
     "      AND to_st NOT IN ('running', 'succeeded')"
     "      AND id >= (SELECT since_id FROM event_log)"
     "      AND EXISTS (SELECT 1 FROM jobs j WHERE j.id = NEW.id);"
     "  INSERT INTO events (job, queue, type, from_st, to_st, attempt, at)"
     "  SELECT NEW.id, NEW.queue, NEW.type,"
     "         (SELECT d.status FROM jobs_done d WHERE d.id = NEW.id), 'waiting', NEW.attempt, "
     SQ_EV_NOW
     "   WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = NEW.id)"
     "      OR NOT EXISTS (SELECT 1 FROM events e WHERE e.job = NEW.id AND e.from_st IS NULL"
     "                     AND e.to_st = 'waiting' AND e.to_st NOT IN ('running', 'succeeded')"
     "                     AND e.id >= (SELECT since_id FROM event_log));"
     "END;"},
    {25,
     /* A batch of claims, or of successes, writes its events as one row
      * per queue and type (docs/DESIGN.md, Events): a row holds the events
      * id - n + 1 .. id, its jobs and their attempts in the JSON arrays
      * jobs and attempts (job and attempt 0; jobs NULL: one event, of
      * job, as before). The batch (sqlite/events_rows.c) sets
      * event_log.told inside its transaction, which it alone sees, writes
      * the rows itself and clears it before committing; meanwhile the
      * triggers leave to it the changes it tells (pending -> running in
      * jobs, succeeded into jobs_done) and record every other one. A
      * statement that does not set told, as before, is recorded by them.
      * Triggers of 24 with that condition. */
     "ALTER TABLE events ADD COLUMN jobs TEXT;"
     "ALTER TABLE events ADD COLUMN attempts TEXT;"
     "ALTER TABLE event_log ADD COLUMN told INTEGER NOT NULL DEFAULT 0;"
     "DROP TRIGGER jobs_events_updated;"
     "DROP TRIGGER jobs_done_events;"
     "CREATE TRIGGER jobs_events_updated AFTER UPDATE OF status ON jobs"
     "  WHEN OLD.status <> NEW.status AND " SQ_EVENTS_UNTOLD("running") " BEGIN"
     "  INSERT INTO events (job, queue, type, from_st, to_st, attempt, at)"
     "  VALUES (NEW.id, NEW.queue, NEW.type, OLD.status, NEW.status, NEW.attempt, " SQ_EV_NOW ");"
     "END;"
     "CREATE TRIGGER jobs_done_events AFTER INSERT ON jobs_done"
     "  WHEN " SQ_EVENTS_UNTOLD("succeeded") " BEGIN"
     SQ_EV_DONE24
     "END;"},
    {26,
     /* Fair claims by tag (docs/DESIGN.md, Groups, "Tags on SQLite";
      * sqlite/groups_tag.c). A grouped queue without group limits is
      * claimed by one walk of jobs_fair_claim in tag order; the claim
      * first tags the due jobs it finds untagged, set-wise: the k-th of a
      * group at a priority gets that (group, priority)'s next tag, at
      * least the band's head tag, so that the k-th job of every group
      * sits beside the k-th of the others. job_group_tags keeps each
      * (group, priority)'s last tag (its insert notes the group in
      * job_groups). jobs_group_claim keeps the untagged pending jobs only,
      * so a claim of tagged jobs changes no index in group order
      * (jobs_tagged_nogroup: whether the group '' has a tagged job). A
      * pending job whose place changes (a retry, a reaped lease, a
      * debounce moving run_at, a new priority) loses its tag (jobs_untag)
      * and is tagged again when due; a row moved into jobs comes untagged
      * (tag is in no column list that moves rows).
      * The listings by group walk (id / 1024, grp) in place of (grp, id)
      * on jobs and jobs_done (sqlite/read.c, group_branch): a completion
      * moves a job from one to the other, and in group order a batch of
      * jobs of many groups changed a leaf of each index per group; within
      * buckets of 1,024 ids it changes the few leaves of its bucket. A
      * listing by group probes the buckets newest first (the expression
      * must be read.c's SQ_GRP_BUCKET, for the planner to match it). */
     "ALTER TABLE jobs ADD COLUMN tag INTEGER;"
     "CREATE TABLE job_group_tags ("
     "  queue TEXT NOT NULL,"
     "  grp TEXT NOT NULL,"
     "  priority INTEGER NOT NULL,"
     "  last_tag INTEGER NOT NULL,"
     "  PRIMARY KEY (queue, grp, priority)) WITHOUT ROWID;"
     "CREATE TRIGGER job_group_tags_noted AFTER INSERT ON job_group_tags BEGIN"
     "  INSERT OR IGNORE INTO job_groups (queue, grp) VALUES (NEW.queue, NEW.grp);"
     "END;"
     "DROP INDEX jobs_group_claim;"
     "CREATE INDEX jobs_group_claim ON jobs (queue, grp, priority DESC, run_at, id)"
     "  WHERE status = 'pending' AND tag IS NULL;"
     "CREATE INDEX jobs_fair_claim ON jobs (queue, priority DESC, tag, id)"
     "  WHERE status = 'pending' AND tag IS NOT NULL;"
     "CREATE INDEX jobs_untagged ON jobs (queue, run_at)"
     "  WHERE status = 'pending' AND tag IS NULL AND grp IS NOT NULL;"
     "CREATE INDEX jobs_tagged_nogroup ON jobs (queue)"
     "  WHERE status = 'pending' AND tag IS NOT NULL AND grp IS NULL;"
     "CREATE TRIGGER jobs_untag AFTER UPDATE OF status, run_at, priority, queue, grp ON jobs"
     "  WHEN NEW.tag IS NOT NULL AND NEW.status = 'pending' AND (OLD.status <> 'pending'"
     "    OR OLD.run_at <> NEW.run_at OR OLD.priority <> NEW.priority"
     "    OR OLD.queue <> NEW.queue OR OLD.grp IS NOT NEW.grp) BEGIN"
     "  UPDATE jobs SET tag = NULL WHERE id = NEW.id;"
     "END;"
     "DROP INDEX jobs_grp_id;"
     "DROP INDEX jobs_done_grp_id;"
     "CREATE INDEX jobs_grp_bucket ON jobs (id / 1024, grp) WHERE grp IS NOT NULL;"
     "CREATE INDEX jobs_done_grp_bucket ON jobs_done (id / 1024, grp) WHERE grp IS NOT NULL;"},
};
/* clang-format on */

#define SQ_N_MIGRATIONS (sizeof sq_migrations / sizeof sq_migrations[0])

int
sq_migrate(struct store *st, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    /* Inside the write lock, so concurrent starters apply each step once. */
    char *msg = NULL;
    int src = sqlite3_exec(s->db,
                           "CREATE TABLE IF NOT EXISTS schema_migrations ("
                           "  version INTEGER PRIMARY KEY,"
                           "  applied_at INTEGER NOT NULL)",
                           NULL, NULL, &msg);
    sqlite3_free(msg);
    if (src != SQLITE_OK) {
        rc = sq_error(s, src, "create schema_migrations", err);
        goto fail;
    }
    sqlite3_stmt *stmt;
    if ((rc = sq_prepare(s, "SELECT coalesce(max(version), 0) FROM schema_migrations", &stmt,
                         err)) != JOBD_OK)
        goto fail;
    if ((rc = sq_step_row(s, stmt, "read schema version", err)) < 0)
        goto fail;
    int current = rc == 1 ? sqlite3_column_int(stmt, 0) : 0;
    sq_reset(stmt);
    int newest = sq_migrations[SQ_N_MIGRATIONS - 1].version;
    if (current > newest) {
        rc = jobd_error_set(err, JOBD_E_STORE, "db",
                            "the database schema is version %d, newer than this jobd knows "
                            "(%d): upgrade jobd",
                            current, newest);
        goto fail;
    }
    for (size_t i = 0; i < SQ_N_MIGRATIONS; i++) {
        if (sq_migrations[i].version <= current)
            continue;
        msg = NULL;
        src = sqlite3_exec(s->db, sq_migrations[i].sql, NULL, NULL, &msg);
        if (src != SQLITE_OK) {
            rc = jobd_error_set(err, src == SQLITE_NOMEM ? JOBD_E_NOMEM : JOBD_E_STORE, "db",
                                "sqlite: migration %d failed: %s", sq_migrations[i].version,
                                msg ? msg : sqlite3_errstr(src));
            sqlite3_free(msg);
            goto fail;
        }
        if ((rc = sq_prepare(s,
                             "INSERT INTO schema_migrations (version, applied_at) "
                             "VALUES (?1, ?2)",
                             &stmt, err)) != JOBD_OK)
            goto fail;
        sqlite3_bind_int(stmt, 1, sq_migrations[i].version);
        sqlite3_bind_int64(stmt, 2, clock_real_now_us());
        if ((rc = sq_step_done(s, stmt, "record migration", err)) != JOBD_OK)
            goto fail;
    }
    return sq_commit(s, err);
fail:
    sq_rollback(s);
    return rc;
}

/* `jobd migrate --status`: read-only, so no write lock and no CREATE. */
int
sq_schema_status(struct store *st, int *current, int *newest, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    *current = 0;
    *newest = sq_migrations[SQ_N_MIGRATIONS - 1].version;
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' "
                        "AND name = 'schema_migrations'",
                        &stmt, err);
    if (rc != JOBD_OK || (rc = sq_step_row(s, stmt, "look for schema_migrations", err)) < 0)
        return rc;
    bool exists = rc == 1 && sqlite3_column_int(stmt, 0) == 1;
    sq_reset(stmt);
    if (!exists)
        return JOBD_OK;
    rc = sq_prepare(s, "SELECT coalesce(max(version), 0) FROM schema_migrations", &stmt, err);
    if (rc != JOBD_OK || (rc = sq_step_row(s, stmt, "read schema version", err)) < 0)
        return rc;
    *current = rc == 1 ? sqlite3_column_int(stmt, 0) : 0;
    sq_reset(stmt);
    return JOBD_OK;
}
