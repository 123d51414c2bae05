/*
 * pg/schema.c — the PostgreSQL schema of jobd as ordered migration
 * steps (schema "jobd"). store_pg_migrate applies the steps newer than the
 * highest version in jobd.schema_migrations, all in one transaction under
 * pg_advisory_xact_lock, so any number of processes may start at once.
 *
 * To change the schema, APPEND a step with the next version number; never
 * edit a step that may have been applied somewhere. A step that adds a
 * column to jobd.jobs must add it to jobd.jobs_done too (terminal rows move
 * between the two with INSERT ... SELECT) and recreate the view all_jobs.
 * Since version 8 jobs holds pending, running and succeeded rows (succeeded
 * ones until the archive pass moves them); jobs_done the rest.
 */
#include "store/stats_int.h"
#include "store/pg/internal.h"
#include "store/pg/schema_enqueue.h"

/*
 * jobd.enqueue's argument checks, the limits of docs/MODEL.md, "Names and
 * limits", spelled from core/job.h's constants so SQL and C cannot drift.
 * A migration's text is fixed once it ran: a change of one of these
 * constants needs a new migration that replaces jobd.enqueue.
 */
_Static_assert(JOB_PAYLOAD_MAX == 256 * 1024, "jobd.enqueue says 256 KiB");


/*
 * Version 1: the job tables, idempotency keys, queues, the wake-up trigger
 * and jobd.enqueue for applications (docs/MODEL.md, "Inside your own
 * transaction (PostgreSQL)").
 *
 * payload and result are json, not jsonb: json keeps the exact text jobd
 * stores (canonical JSON, see core/json.h), so every backend hands back the
 * same bytes and no read pays for re-serialising; comparisons that need
 * JSON equality cast to jsonb (idempotent replays).
 *
 * jobs holds only pending and running rows so the claim index stays small
 * under churn; terminal rows live in jobs_done. Indexes on jobs:
 *   jobs_claim_queue  claims naming queues (one ordered scan per queue)
 *   jobs_claim_any    claims over every queue
 *   jobs_next_run     the soonest run_at for a worker's timer
 *   jobs_lease        the reaper's expired leases. Its predicate is deliberately
 *                     "lease_expires_at IS NOT NULL", not "status = 'running'":
 *                     with the latter, every report (WHERE id = $1 AND status =
 *                     'running') could be planned as a full scan of this index
 *                     whenever the statistics say few jobs run, instead of one
 *                     primary-key probe. Only running rows have a lease.
 */
static const char step1_jobs[] =
    "CREATE SEQUENCE jobd.job_id_seq;\n"
    "CREATE TABLE jobd.jobs (\n"
    "    id               bigint PRIMARY KEY DEFAULT nextval('jobd.job_id_seq'),\n"
    "    queue            text NOT NULL DEFAULT 'default',\n"
    "    type             text NOT NULL,\n"
    "    payload          json NOT NULL DEFAULT '{}',\n"
    "    status           text NOT NULL DEFAULT 'pending',\n"
    "    priority         int NOT NULL DEFAULT 0,\n"
    "    run_at           timestamptz NOT NULL DEFAULT now(),\n"
    "    attempt          int NOT NULL DEFAULT 0,\n"
    "    attempt_floor    int NOT NULL DEFAULT 0,\n"
    "    max_attempts     int NOT NULL DEFAULT 25,\n"
    "    idempotency_key  text,\n"
    "    schedule         text,\n"
    "    scheduled_for    timestamptz,\n"
    "    worker_id        text,\n"
    "    lease_expires_at timestamptz,\n"
    "    timeout_ms       bigint,\n"
    "    cancel_requested boolean NOT NULL DEFAULT false,\n"
    "    last_error       text,\n"
    "    result           json,\n"
    "    created_at       timestamptz NOT NULL DEFAULT now(),\n"
    "    started_at       timestamptz,\n"
    "    finished_at      timestamptz,\n"
    "    CONSTRAINT jobs_hot_status CHECK (status IN ('pending', 'running'))\n"
    ") WITH (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02,\n"
    "        autovacuum_analyze_scale_factor = 0.05);\n"
    "ALTER SEQUENCE jobd.job_id_seq OWNED BY jobd.jobs.id;\n"
    "CREATE INDEX jobs_claim_queue ON jobd.jobs (queue, priority DESC, run_at, id)\n"
    "    WHERE status = 'pending';\n"
    "CREATE INDEX jobs_claim_any ON jobd.jobs (priority DESC, run_at, id)\n"
    "    WHERE status = 'pending';\n"
    "CREATE INDEX jobs_next_run ON jobd.jobs (run_at) WHERE status = 'pending';\n"
    "CREATE INDEX jobs_lease ON jobd.jobs (lease_expires_at)\n"
    "    WHERE lease_expires_at IS NOT NULL;\n"
    "CREATE TABLE jobd.jobs_done (\n"
    "    LIKE jobd.jobs,\n"
    "    PRIMARY KEY (id),\n"
    "    CONSTRAINT jobs_done_status CHECK (status IN ('succeeded', 'dead', 'cancelled'))\n"
    ");\n"
    "CREATE INDEX jobs_done_finished ON jobd.jobs_done (finished_at);\n"
    "CREATE VIEW jobd.all_jobs AS\n"
    "    SELECT * FROM jobd.jobs UNION ALL SELECT * FROM jobd.jobs_done;\n"
    "CREATE TABLE jobd.job_keys (\n"
    "    idempotency_key text PRIMARY KEY,\n"
    "    job_id          bigint NOT NULL\n"
    ");\n"
    "CREATE TABLE jobd.queues (\n"
    "    name   text PRIMARY KEY,\n"
    "    paused boolean NOT NULL DEFAULT false\n"
    ");\n"
    /*
     * Wake-ups: one NOTIFY per statement and queue (NOTIFY folds duplicates
     * within a transaction), for every insert, also of future jobs: a worker
     * that wakes recomputes its timer from the soonest run_at, so a newly
     * enqueued earlier job is not left waiting for the slow poll.
     */
    "CREATE FUNCTION jobd.notify_jobs() RETURNS trigger LANGUAGE plpgsql AS $$\n"
    "BEGIN\n"
    "    PERFORM pg_notify('jobd_jobs', q.queue)\n"
    "       FROM (SELECT DISTINCT queue FROM new_jobs) q;\n"
    "    RETURN NULL;\n"
    "END $$;\n"
    "CREATE TRIGGER jobs_notify AFTER INSERT ON jobd.jobs\n"
    "    REFERENCING NEW TABLE AS new_jobs\n"
    "    FOR EACH STATEMENT EXECUTE FUNCTION jobd.notify_jobs();\n"
    /*
     * jobd.enqueue: the same rules as the API (names, limits, idempotency),
     * inside the caller's transaction. A replay (same key, type, queue and
     * payload) returns the existing id; another request with a used key
     * raises unique_violation.
     */
    "CREATE FUNCTION jobd.enqueue(type text, payload jsonb DEFAULT '{}',\n"
    "        queue text DEFAULT 'default', run_at timestamptz DEFAULT now(),\n"
    "        priority int DEFAULT 0, max_attempts int DEFAULT 25,\n"
    "        idempotency_key text DEFAULT NULL)\n"
    "    RETURNS bigint LANGUAGE plpgsql AS $$\n"
    "#variable_conflict use_column\n"
    "DECLARE\n"
    "    v_id bigint;\n"
    "    v_old record;\n"
    "    v_payload jsonb := COALESCE(enqueue.payload, '{}'::jsonb);\n"
    "BEGIN\n" ENQUEUE_CHECKS
    "    IF enqueue.idempotency_key IS NOT NULL AND (enqueue.idempotency_key = ''\n"
    "            OR octet_length(enqueue.idempotency_key) > " SQL_NUM(
        JOB_KEY_MAX) "\n"
                     "            OR enqueue.idempotency_key ~ '[\\x01-\\x1f\\x7f]') THEN\n"
                     "        RAISE EXCEPTION 'jobd.enqueue: idempotency_key must be 1 to " SQL_NUM(
                         JOB_KEY_MAX) " bytes without '\n"
                                      "            'control characters' USING ERRCODE = "
                                      "'invalid_parameter_value';\n"
                                      "    END IF;\n"
                                      "    LOOP\n"
                                      "        v_id := nextval('jobd.job_id_seq');\n"
                                      "        IF enqueue.idempotency_key IS NOT NULL THEN\n"
                                      "            INSERT INTO jobd.job_keys (idempotency_key, "
                                      "job_id)\n"
                                      "                VALUES (enqueue.idempotency_key, v_id) ON "
                                      "CONFLICT DO NOTHING;\n"
                                      "            IF NOT FOUND THEN\n"
                                      "                SELECT a.id, a.type, a.queue, a.payload "
                                      "INTO v_old FROM jobd.all_jobs a\n"
                                      "                 WHERE a.id = (SELECT k.job_id FROM "
                                      "jobd.job_keys k\n"
                                      "                                WHERE k.idempotency_key = "
                                      "enqueue.idempotency_key);\n"
                                      "                IF NOT FOUND THEN\n"
                                      "                    CONTINUE; -- pruned meanwhile: the key "
                                      "is free again\n"
                                      "                END IF;\n"
                                      "                IF v_old.type = enqueue.type AND "
                                      "v_old.queue = enqueue.queue\n"
                                      "                        AND v_old.payload::jsonb = "
                                      "v_payload THEN\n"
                                      "                    RETURN v_old.id;\n"
                                      "                END IF;\n"
                                      "                RAISE EXCEPTION 'jobd.enqueue: idempotency "
                                      "key % was already used for '\n"
                                      "                    'job % with a different type, queue or "
                                      "payload',\n"
                                      "                    quote_literal(enqueue.idempotency_key), "
                                      "v_old.id\n"
                                      "                    USING ERRCODE = 'unique_violation';\n"
                                      "            END IF;\n"
                                      "        END IF;\n"
                                      "        INSERT INTO jobd.jobs (id, queue, type, payload, "
                                      "status, priority, run_at,\n"
                                      "                               max_attempts, "
                                      "idempotency_key, created_at)\n"
                                      "        VALUES (v_id, enqueue.queue, enqueue.type, "
                                      "v_payload::json, 'pending',\n"
                                      "                enqueue.priority,\n"
                                      "                COALESCE(enqueue.run_at, now()), "
                                      "enqueue.max_attempts,\n"
                                      "                enqueue.idempotency_key, now());\n"
                                      "        RETURN v_id;\n"
                                      "    END LOOP;\n"
                                      "END $$;\n";

/*
 * Version 2: schedules (pg/sched.c). next_run_at is the first firing not yet
 * materialized; the materializer claims due rows through schedules_due with
 * FOR UPDATE SKIP LOCKED. jobs_schedule_firing makes a firing at most one
 * hot job, whatever the number of schedulers.
 */
static const char step2_schedules[] =
    "CREATE TABLE jobd.schedules (\n"
    "    name          text PRIMARY KEY,\n"
    "    cron          text NOT NULL,\n"
    "    timezone      text NOT NULL DEFAULT 'UTC',\n"
    "    type          text NOT NULL,\n"
    "    payload       json NOT NULL DEFAULT '{}',\n"
    "    queue         text NOT NULL DEFAULT 'default',\n"
    "    priority      int NOT NULL DEFAULT 0,\n"
    "    max_attempts  int NOT NULL DEFAULT 25,\n"
    "    catchup       text NOT NULL DEFAULT 'once'\n"
    "                  CHECK (catchup IN ('once', 'all', 'skip')),\n"
    "    paused        boolean NOT NULL DEFAULT false,\n"
    "    next_run_at   timestamptz NOT NULL,\n"
    "    last_fired_at timestamptz,\n"
    "    created_at    timestamptz NOT NULL DEFAULT now()\n"
    ");\n"
    "CREATE INDEX schedules_due ON jobd.schedules (next_run_at) WHERE NOT paused;\n"
    "CREATE UNIQUE INDEX jobs_schedule_firing ON jobd.jobs (schedule, scheduled_for)\n"
    "    WHERE schedule IS NOT NULL;\n";

/*
 * Version 3: attempt history (store/operator.h). Only attempts that ended
 * other than in success have a row; the current attempt of a job is its
 * job row. Rows go with their job (prune, delete), so no foreign key: a job
 * moves between jobs and jobs_done.
 */
static const char step3_attempts[] =
    "CREATE TABLE jobd.job_attempts (\n"
    "    job_id      bigint NOT NULL,\n"
    "    attempt     int NOT NULL,\n"
    "    worker_id   text,\n"
    "    started_at  timestamptz,\n"
    "    finished_at timestamptz NOT NULL,\n"
    "    outcome     text NOT NULL CHECK (outcome IN ('failed', 'dead', 'reaped',\n"
    "                                                 'cancelled', 'released')),\n"
    "    error       text,\n"
    "    PRIMARY KEY (job_id, attempt)\n"
    ");\n";

/*
 * Version 4: work that must not grow with the backlog (docs/DESIGN.md "Cost
 * per request"). Workers always name their types, so claims, due checks and
 * timers walk one type at a time: jobs_claim_type in claim order,
 * jobs_next_type by run_at. Both are partial on pending, so a claim's
 * UPDATE adds no entry to them. Their predicate says "status <> 'running'"
 * (the same rows: jobs holds only pending and running) so that the queries
 * written with it can use only these: with "status = 'pending'" the
 * planner may walk jobs_next_run or jobs_claim_any instead, betting on
 * meeting the (unknown at plan time) type soon, and for a type with no
 * pending jobs that reads every pending job. Queue counts (GET /v1/queues, /metrics) are
 * a cache shared by every server: recounted at most once a second by
 * whichever server is asked first (an advisory lock keeps it to one), read
 * by everyone else, so maintaining counts never adds a write to a claim or
 * a completion.
 */
static const char step4_backlog[] =
    "CREATE INDEX jobs_claim_type ON jobd.jobs (type, priority DESC, run_at, id)\n"
    "    WHERE status <> 'running';\n"
    "CREATE INDEX jobs_next_type ON jobd.jobs (type, run_at) WHERE status <> 'running';\n"
    "CREATE TABLE jobd.queue_counts (\n"
    "    queue  text NOT NULL,\n"
    "    status text NOT NULL,\n"
    "    n      bigint NOT NULL,\n"
    "    oldest timestamptz,\n"
    "    PRIMARY KEY (queue, status)\n"
    ");\n"
    "CREATE TABLE jobd.queue_counts_meta (\n"
    "    one         boolean PRIMARY KEY DEFAULT true CHECK (one),\n"
    "    computed_at timestamptz NOT NULL DEFAULT '-infinity'\n"
    ");\n"
    "INSERT INTO jobd.queue_counts_meta DEFAULT VALUES;\n";

/*
 * Version 5: worker presence (store/operator.h). One row per live worker,
 * refreshed at its heartbeat interval; queues and types are JSON arrays.
 */
static const char step5_workers[] = "CREATE TABLE jobd.workers (\n"
                                    "    id           text PRIMARY KEY,\n"
                                    "    hostname     text NOT NULL,\n"
                                    "    pid          bigint NOT NULL,\n"
                                    "    version      text NOT NULL,\n"
                                    "    queues       text NOT NULL,\n"
                                    "    types        text NOT NULL,\n"
                                    "    concurrency  int NOT NULL,\n"
                                    "    heartbeat_ms bigint NOT NULL,\n"
                                    "    started_at   timestamptz NOT NULL,\n"
                                    "    last_seen_at timestamptz NOT NULL,\n"
                                    "    draining     boolean NOT NULL DEFAULT false\n"
                                    ");\n";

/*
 * Version 6: jobd.enqueue refuses idempotency keys with leading or trailing
 * blanks (and so all-blank ones), as the API does: HTTP trims header values,
 * so "order-1 " would reach an http handler as another job's "order-1".
 * The rest of the function is version 1's.
 */
static const char step6_enqueue_keys[] =
    "CREATE OR REPLACE FUNCTION jobd.enqueue(type text, payload jsonb DEFAULT '{}',\n"
    "        queue text DEFAULT 'default', run_at timestamptz DEFAULT now(),\n"
    "        priority int DEFAULT 0, max_attempts int DEFAULT 25,\n"
    "        idempotency_key text DEFAULT NULL)\n"
    "    RETURNS bigint LANGUAGE plpgsql AS $$\n"
    "#variable_conflict use_column\n"
    "DECLARE\n"
    "    v_id bigint;\n"
    "    v_old record;\n"
    "    v_payload jsonb := COALESCE(enqueue.payload, '{}'::jsonb);\n"
    "BEGIN\n" ENQUEUE_CHECKS
    "    IF enqueue.idempotency_key IS NOT NULL AND (enqueue.idempotency_key = ''\n"
    "            OR octet_length(enqueue.idempotency_key) > " SQL_NUM(
        JOB_KEY_MAX) "\n"
                     "            OR enqueue.idempotency_key ~ '[\\x01-\\x1f\\x7f]'\n"
                     "            OR enqueue.idempotency_key ~ '^ | $') THEN\n"
                     "        RAISE EXCEPTION 'jobd.enqueue: idempotency_key must be 1 to " SQL_NUM(
                         JOB_KEY_MAX) " bytes without '\n"
                                      "            'control characters or leading or trailing "
                                      "blanks, got %',\n"
                                      "            quote_literal(enqueue.idempotency_key)\n"
                                      "            USING ERRCODE = 'invalid_parameter_value';\n"
                                      "    END IF;\n"
                                      "    LOOP\n"
                                      "        v_id := nextval('jobd.job_id_seq');\n"
                                      "        IF enqueue.idempotency_key IS NOT NULL THEN\n"
                                      "            INSERT INTO jobd.job_keys (idempotency_key, "
                                      "job_id)\n"
                                      "                VALUES (enqueue.idempotency_key, v_id) ON "
                                      "CONFLICT DO NOTHING;\n"
                                      "            IF NOT FOUND THEN\n"
                                      "                SELECT a.id, a.type, a.queue, a.payload "
                                      "INTO v_old FROM jobd.all_jobs a\n"
                                      "                 WHERE a.id = (SELECT k.job_id FROM "
                                      "jobd.job_keys k\n"
                                      "                                WHERE k.idempotency_key = "
                                      "enqueue.idempotency_key);\n"
                                      "                IF NOT FOUND THEN\n"
                                      "                    CONTINUE; -- pruned meanwhile: the key "
                                      "is free again\n"
                                      "                END IF;\n"
                                      "                IF v_old.type = enqueue.type AND "
                                      "v_old.queue = enqueue.queue\n"
                                      "                        AND v_old.payload::jsonb = "
                                      "v_payload THEN\n"
                                      "                    RETURN v_old.id;\n"
                                      "                END IF;\n"
                                      "                RAISE EXCEPTION 'jobd.enqueue: idempotency "
                                      "key % was already used for '\n"
                                      "                    'job % with a different type, queue or "
                                      "payload',\n"
                                      "                    quote_literal(enqueue.idempotency_key), "
                                      "v_old.id\n"
                                      "                    USING ERRCODE = 'unique_violation';\n"
                                      "            END IF;\n"
                                      "        END IF;\n"
                                      "        INSERT INTO jobd.jobs (id, queue, type, payload, "
                                      "status, priority, run_at,\n"
                                      "                               max_attempts, "
                                      "idempotency_key, created_at)\n"
                                      "        VALUES (v_id, enqueue.queue, enqueue.type, "
                                      "v_payload::json, 'pending',\n"
                                      "                enqueue.priority,\n"
                                      "                COALESCE(enqueue.run_at, now()), "
                                      "enqueue.max_attempts,\n"
                                      "                enqueue.idempotency_key, now());\n"
                                      "        RETURN v_id;\n"
                                      "    END LOOP;\n"
                                      "END $$;\n";

/*
 * Version 7: wake-ups for jobs that become claimable without an insert. A
 * queue resumed, or a job put back to pending by an UPDATE (a failure with
 * retries left, a reaped lease, a release), NOTIFYs jobd_jobs like an
 * enqueue, so a waiting claim or worker in another process looks again at
 * once instead of at its slow safety poll. The WHEN clauses keep claims and
 * heartbeats (which never make a row pending) from calling the function.
 */
static const char step7_notify_updates[] =
    "CREATE FUNCTION jobd.notify_job_row() RETURNS trigger LANGUAGE plpgsql AS $$\n"
    "BEGIN\n"
    "    PERFORM pg_notify('jobd_jobs', NEW.queue);\n"
    "    RETURN NULL;\n"
    "END $$;\n"
    "CREATE TRIGGER jobs_notify_pending AFTER UPDATE OF status ON jobd.jobs\n"
    "    FOR EACH ROW WHEN (NEW.status = 'pending' AND OLD.status <> 'pending')\n"
    "    EXECUTE FUNCTION jobd.notify_job_row();\n"
    "CREATE FUNCTION jobd.notify_queue_row() RETURNS trigger LANGUAGE plpgsql AS $$\n"
    "BEGIN\n"
    "    PERFORM pg_notify('jobd_jobs', NEW.name);\n"
    "    RETURN NULL;\n"
    "END $$;\n"
    "CREATE TRIGGER queues_notify_resume AFTER UPDATE OF paused ON jobd.queues\n"
    "    FOR EACH ROW WHEN (OLD.paused AND NOT NEW.paused)\n"
    "    EXECUTE FUNCTION jobd.notify_queue_row();\n";

/*
 * Version 8: a completion is one UPDATE in place (pg/report.c), no
 * longer a move to jobs_done: succeeded rows stay in jobs until the
 * scheduling plane's archive pass moves them there in batches
 * (store_archive). So jobs may now hold succeeded rows too.
 *
 * The per-type indexes are rebuilt with a predicate that leaves finished
 * rows out: with "status <> 'running'" every completion would add an entry
 * to both and claims would walk past finished rows. The new predicate is
 * still not "status = 'pending'", for the reason given at version 4.
 * jobs_succeeded lets the archive pass and retention find finished rows
 * without a scan; it is the one index entry a completion writes besides
 * the primary key's (the row's lease entry goes: a finished row has no lease).
 */
static const char step8_complete_in_place[] =
    "ALTER TABLE jobd.jobs DROP CONSTRAINT jobs_hot_status;\n"
    "ALTER TABLE jobd.jobs ADD CONSTRAINT jobs_hot_status\n"
    "    CHECK (status IN ('pending', 'running', 'succeeded'));\n"
    "DROP INDEX jobd.jobs_claim_type;\n"
    "DROP INDEX jobd.jobs_next_type;\n"
    "CREATE INDEX jobs_claim_type ON jobd.jobs (type, priority DESC, run_at, id)\n"
    "    WHERE status NOT IN ('running', 'succeeded');\n"
    "CREATE INDEX jobs_next_type ON jobd.jobs (type, run_at)\n"
    "    WHERE status NOT IN ('running', 'succeeded');\n"
    "CREATE INDEX jobs_succeeded ON jobd.jobs (finished_at) WHERE status = 'succeeded';\n";

/*
 * Version 9: queue limits (qlimits.h). rate_window_us / rate_count count
 * the claims of the current rate window; they change only under the row's
 * lock, in a limited claim. A limit removed or changed NOTIFYs like a
 * resume, so waiting workers look again at once.
 */
static const char step9_queue_limits[] =
    "ALTER TABLE jobd.queues\n"
    "    ADD COLUMN max_running integer CHECK (max_running >= 1),\n"
    "    ADD COLUMN rate_limit integer CHECK (rate_limit >= 1),\n"
    "    ADD COLUMN rate_per_ms bigint CHECK (rate_per_ms >= 1),\n"
    "    ADD COLUMN rate_window_us bigint NOT NULL DEFAULT 0,\n"
    "    ADD COLUMN rate_count integer NOT NULL DEFAULT 0,\n"
    "    ADD CONSTRAINT queues_rate CHECK ((rate_limit IS NULL) = (rate_per_ms IS NULL));\n"
    "CREATE TRIGGER queues_notify_limits\n"
    "    AFTER UPDATE OF max_running, rate_limit, rate_per_ms ON jobd.queues\n"
    "    FOR EACH ROW WHEN (OLD.max_running IS DISTINCT FROM NEW.max_running\n"
    "                       OR OLD.rate_limit IS DISTINCT FROM NEW.rate_limit\n"
    "                       OR OLD.rate_per_ms IS DISTINCT FROM NEW.rate_per_ms)\n"
    "    EXECUTE FUNCTION jobd.notify_queue_row();\n";

/* Version 10: the distinct (queue, type) pairs of pending jobs, one seek
 * each (pg/pending.c): GET /v1/queues lists the types no live worker
 * handles. The predicate is that of the per-type indexes (version 8): a
 * claim's UPDATE and a completion add no entry. */
static const char step10_pending_pairs[] =
    "CREATE INDEX jobs_pending_queue_type ON jobd.jobs (queue, type)\n"
    "    WHERE status NOT IN ('running', 'succeeded');\n";

/*
 * Version 11: listings by type (GET /v1/jobs?type=T) walk (type, id) in id
 * order on both tables (st_list_type), so a rare or absent type costs an
 * index probe instead of a walk over every newer job; as SQLite's
 * jobs_type_id / jobs_done_type_id.
 */
static const char step11_list_type[] =
    "CREATE INDEX jobs_type_id ON jobd.jobs (type, id);\n"
    "CREATE INDEX jobs_done_type_id ON jobd.jobs_done (type, id);\n";

/*
 * Version 13: the dashboard's listings at any size (pg/list.c walks one
 * branch per status, each in id order). jobs_pending_queue_type gains id, so
 * a queue and a type are one ordered walk too (it still serves the skip scan
 * of version 10); jobs_queue_id serves a queue's pending jobs. Both have the
 * predicate of version 8, so a claim or a completion adds no entry to them.
 * jobs_done, written only when a job ends or is archived, gets (status, id),
 * (queue, status, id) and, for the jobs schedules made, (schedule, id).
 */
static const char step13_listings[] =
    "DROP INDEX jobd.jobs_pending_queue_type;\n"
    "CREATE INDEX jobs_pending_queue_type ON jobd.jobs (queue, type, id)\n"
    "    WHERE status NOT IN ('running', 'succeeded');\n"
    "CREATE INDEX jobs_queue_id ON jobd.jobs (queue, id)\n"
    "    WHERE status NOT IN ('running', 'succeeded');\n"
    "CREATE INDEX jobs_done_status_id ON jobd.jobs_done (status, id);\n"
    "CREATE INDEX jobs_done_queue_status_id ON jobd.jobs_done (queue, status, id);\n"
    "CREATE INDEX jobs_done_schedule_id ON jobd.jobs_done (schedule, id)\n"
    "    WHERE schedule IS NOT NULL;\n";

/*
 * Version 14: jobs_type_id holds pending rows only, with the predicate of
 * version 8. A claim's or a completion's UPDATE is never HOT (status is in
 * the partial indexes' predicates), so the new row version gets an entry in
 * every index whose predicate it meets: over every row, this index took one
 * from each claim and each completion besides their primary-key and
 * jobs_lease / jobs_succeeded entries, and was most of what kept jobd's
 * statements at two thirds of the seed design's ceiling B in pgbench
 * (docs/BENCHMARKS.md). Listings by type (pg/list.c) walk it only in their
 * pending branch; running and succeeded rows come from jobs_lease and
 * jobs_succeeded.
 */
/* clang-format off */
static const char step14_type_id_pending[] =
    "DROP INDEX jobd.jobs_type_id;\n"
    "CREATE INDEX jobs_type_id ON jobd.jobs (type, id)\n"
    "    WHERE status NOT IN ('running', 'succeeded');\n";
/* clang-format on */

/*
 * Version 15: the unkeyed batch insert of the group committer (POST
 * /v1/jobs) sends its own NOTIFY from the statement and sets
 * jobd.notified for its transaction; the statement trigger then does not
 * run for it (a PL/pgSQL call and a query over the transition table per
 * group commit). Every other insert, jobd.enqueue's too, still notifies
 * through the trigger, and so does the batch on a schema before 15.
 */
static const char step15_notify_inline[] =
    "DROP TRIGGER jobs_notify ON jobd.jobs;\n"
    "CREATE TRIGGER jobs_notify AFTER INSERT ON jobd.jobs\n"
    "    REFERENCING NEW TABLE AS new_jobs\n"
    "    FOR EACH STATEMENT\n"
    "    WHEN (current_setting('jobd.notified', true) IS DISTINCT FROM 'on')\n"
    "    EXECUTE FUNCTION jobd.notify_jobs();\n";

/*
 * Version 16: drop the indexes of version 1 that the per-type ones of
 * versions 4 and 8 took over: every pending row had an entry in each, so
 * each enqueue wrote nine index entries, and index inserts were a quarter
 * of PostgreSQL's time in an enqueue (docs/BENCHMARKS.md, "Pending-row
 * indexes"). Nothing walks jobs_next_run any more: next_run_at without
 * types (st_next_run_at) finds the types with a skip scan and probes
 * jobs_next_type for each, and a clock jump's re-dating of future jobs
 * (st_clock_jobs_due, rare) scans the table. jobs_claim_any served claims
 * naming neither types nor queues (jobd_claim in libjobd); those now find
 * the queues of pending jobs with a skip scan of jobs_claim_queue and walk
 * it per queue, as claims naming queues do. jobs_claim_queue stays: it
 * serves those claims and the limited queues' claims (pg/qlimits.c). A
 * pending row now has seven index entries: the primary key,
 * jobs_claim_queue, jobs_claim_type, jobs_next_type,
 * jobs_pending_queue_type, jobs_queue_id and jobs_type_id.
 */
static const char step16_drop_superseded[] = "DROP INDEX jobd.jobs_claim_any;\n"
                                             "DROP INDEX jobd.jobs_next_run;\n";

/*
 * Version 17: the SHA-256 (hex) of the lease token a claim over HTTP gave
 * the running attempt (pg/lease.c; docs/API.md, Remote workers); NULL for a
 * claim on the store itself. In jobs_done too and in all_jobs (appended),
 * as every column of jobs; a finished attempt's token is never asked for.
 */
static const char step17_lease_token[] =
    "ALTER TABLE jobd.jobs ADD COLUMN lease_token_hash text;\n"
    "ALTER TABLE jobd.jobs_done ADD COLUMN lease_token_hash text;\n"
    "CREATE OR REPLACE VIEW jobd.all_jobs AS\n"
    "    SELECT * FROM jobd.jobs UNION ALL SELECT * FROM jobd.jobs_done;\n";

/*
 * Version 18: NOTIFY jobd_done when jobs end, for requests waiting for a
 * result (pg/ends.c; docs/API.md, Waiting for a result), only while some
 * server listens for them (a row in jobd.result_listeners: a NOTIFY
 * serializes the commits of the transactions that send it, which cost
 * about 40 % of the SQL ceiling's completions at 8 clients; docs/API.md,
 * Waiting for a result). Every end but a
 * completion moves the row into jobs_done (a failure, the reaper, a
 * cancel, a dependency's cascade, a release of a cancelled job), so one
 * statement trigger there sends it, once per statement that moved rows
 * (and PostgreSQL folds the repeats of a transaction). A completion
 * updates jobs in place and notifies from its own statement
 * (PG_ENDED_WAKE): a row trigger there would run for every completed job.
 * The archive pass moves succeeded rows too and so wakes the listeners
 * once per batch, which then find nothing new: one cheap query.
 */
static const char step18_notify_done[] =
    "CREATE UNLOGGED TABLE jobd.result_listeners (\n"
    "    pid   int PRIMARY KEY,\n"
    "    since timestamptz NOT NULL DEFAULT now()\n"
    ");\n"
    "CREATE FUNCTION jobd.notify_done() RETURNS trigger LANGUAGE plpgsql AS $$\n"
    "BEGIN\n"
    "    IF EXISTS (SELECT 1 FROM ended) AND EXISTS (SELECT 1 FROM jobd.result_listeners) THEN\n"
    "        PERFORM pg_notify('jobd_done', '');\n"
    "    END IF;\n"
    "    RETURN NULL;\n"
    "END $$;\n"
    "CREATE TRIGGER jobs_done_notify AFTER INSERT ON jobd.jobs_done\n"
    "    REFERENCING NEW TABLE AS ended\n"
    "    FOR EACH STATEMENT EXECUTE FUNCTION jobd.notify_done();\n";

/*
 * Version 19: a finished attempt keeps its lease token's hash in its
 * history row, so a report that repeats the one that ended it is known as
 * such (pg/lease.c, pg_op_lease_replayed; docs/API.md, Repeated reports).
 * A succeeded attempt keeps it in its job row, which the archive pass now
 * carries into jobs_done with the rest. And NOTIFY jobd_cancel when a
 * running job's cancel is requested (one cancel or a bulk one, from any
 * server or client), so the worker holding it heartbeats at once and stops
 * it (docs/WORKER.md, Cancellation): a row trigger, but only on UPDATEs that
 * name cancel_requested, which no report or claim does; the empty payload
 * folds a bulk cancel's notifications into one per transaction.
 */
static const char step19_replays[] =
    "ALTER TABLE jobd.job_attempts ADD COLUMN lease_token_hash text;\n"
    "CREATE FUNCTION jobd.notify_cancel() RETURNS trigger LANGUAGE plpgsql AS $$\n"
    "BEGIN\n"
    "    PERFORM pg_notify('jobd_cancel', '');\n"
    "    RETURN NULL;\n"
    "END $$;\n"
    "CREATE TRIGGER jobs_cancel_notify AFTER UPDATE OF cancel_requested ON jobd.jobs\n"
    "    FOR EACH ROW WHEN (NEW.cancel_requested AND NOT OLD.cancel_requested)\n"
    "    EXECUTE FUNCTION jobd.notify_cancel();\n";

/*
 * Version 20: a running attempt's progress (pg/progress.c; docs/API.md,
 * The job object), one row per job in a table of its own: a job moves between
 * jobs and jobs_done, and the hot statements (claims, reports) need not
 * know of it. The row keeps the attempt that wrote it; readers show it only
 * while that attempt is the job's, so the next claim needs no write.
 */
static const char step20_progress[] = "CREATE TABLE jobd.job_progress (\n"
                                      "    job_id bigint PRIMARY KEY,\n"
                                      "    attempt int NOT NULL,\n"
                                      "    percent double precision,\n"
                                      "    message text,\n"
                                      "    data text,\n"
                                      "    at timestamptz NOT NULL\n"
                                      ");\n";

/*
 * Version 21: the kept tail of each exec attempt's stderr (pg/attemptlog.c;
 * docs/API.md, GET /v1/jobs/{id}/attempts/{attempt}/log), one row per
 * attempt in a table of its own: a job moves between jobs and jobs_done,
 * and the hot statements need not know of it. Deleted with the job.
 */
static const char step21_attempt_logs[] = "CREATE TABLE jobd.job_attempt_logs (\n"
                                          "    job_id bigint NOT NULL,\n"
                                          "    attempt int NOT NULL,\n"
                                          "    text text NOT NULL,\n"
                                          "    at timestamptz NOT NULL,\n"
                                          "    PRIMARY KEY (job_id, attempt)\n"
                                          ");\n";

/*
 * Version 22: the W3C traceparent a job was enqueued with (docs/API.md,
 * Trace context), handed to its handlers and named in log lines about it.
 * On jobs and jobs_done alike (rows move between them by named columns,
 * PG_JOB_TABLE_COLS), and appended to all_jobs. jobd.enqueue takes it as
 * a last, optional argument (docs/MODEL.md, Inside your own transaction),
 * checked as core/traceparent.c does: version 6's function is dropped, not
 * overloaded (with defaults on both, a call of fewer arguments would match
 * two functions), so every earlier call, positional or named, still means
 * the same. The rest of the function is version 6's.
 */
/* clang-format off */
static const char step22_traceparent[] =
    "ALTER TABLE jobd.jobs ADD COLUMN traceparent text;\n"
    "ALTER TABLE jobd.jobs_done ADD COLUMN traceparent text;\n"
    "CREATE OR REPLACE VIEW jobd.all_jobs AS\n"
    "    SELECT * FROM jobd.jobs UNION ALL SELECT * FROM jobd.jobs_done;\n"
    "DROP FUNCTION jobd.enqueue(text, jsonb, text, timestamptz, int, int, text);\n"
    "CREATE FUNCTION jobd.enqueue(type text, payload jsonb DEFAULT '{}',\n"
    "        queue text DEFAULT 'default', run_at timestamptz DEFAULT now(),\n"
    "        priority int DEFAULT 0, max_attempts int DEFAULT 25,\n"
    "        idempotency_key text DEFAULT NULL, traceparent text DEFAULT NULL)\n"
    "    RETURNS bigint LANGUAGE plpgsql AS $$\n"
    "#variable_conflict use_column\n"
    "DECLARE\n"
    "    v_id bigint;\n"
    "    v_old record;\n"
    "    v_payload jsonb := COALESCE(enqueue.payload, '{}'::jsonb);\n"
    "BEGIN\n" ENQUEUE_CHECKS
    ENQUEUE_KEY_CHECK ENQUEUE_TRACE_CHECK ENQUEUE_KEY_LOOP
    "        INSERT INTO jobd.jobs (id, queue, type, payload, status, priority, run_at,\n"
    "                               max_attempts, idempotency_key, created_at, traceparent)\n"
    "        VALUES (v_id, enqueue.queue, enqueue.type, v_payload::json, 'pending',\n"
    "                enqueue.priority,\n"
    "                COALESCE(enqueue.run_at, now()), enqueue.max_attempts,\n"
    "                enqueue.idempotency_key, now(), enqueue.traceparent);\n"
    "        RETURN v_id;\n"
    "    END LOOP;\n"
    "END $$;\n";
/* clang-format on */

/*
 * Version 33: listings by group (GET /v1/jobs?group=G) walk (grp, id) in id
 * order in each table, as those by type walk (type, id) (version 11). Partial:
 * jobs without a group cost nothing here; each row version of a grouped job
 * writes one entry more (claims and completions are not HOT updates:
 * docs/DESIGN.md, Groups).
 */
static const char step33_list_group[] =
    "CREATE INDEX jobs_grp_id ON jobd.jobs (grp, id) WHERE grp IS NOT NULL;\n"
    "CREATE INDEX jobs_done_grp_id ON jobd.jobs_done (grp, id) WHERE grp IS NOT NULL;\n"
    "CREATE INDEX jobs_waiting_grp_id ON jobd.jobs_waiting (grp, id) WHERE grp IS NOT NULL;\n";

const struct pg_migration pg_migrations[] = {
    {1, "jobs, jobs_done, job_keys, queues, jobd.enqueue", step1_jobs},
    {2, "schedules", step2_schedules},
    {3, "job_attempts", step3_attempts},
    {4, "per-type claim indexes, queue count cache", step4_backlog},
    {5, "workers", step5_workers},
    {6, "jobd.enqueue refuses keys with leading or trailing blanks", step6_enqueue_keys},
    {7, "notify when a queue is resumed or a job is pending again", step7_notify_updates},
    {8, "completions update jobs in place; succeeded rows archived later", step8_complete_in_place},
    {9, "queue limits", step9_queue_limits},
    {10, "index of the pending jobs' queues and types", step10_pending_pairs},
    {11, "indexes on (type, id) for listings by type", step11_list_type},
    {12, "stats_buckets (GET /v1/stats)", pg_step_stats},
    {13, "indexes for the dashboard's job listings", step13_listings},
    {14, "jobs_type_id holds pending rows only", step14_type_id_pending},
    {15, "the group committer's batch notifies without the trigger", step15_notify_inline},
    {16, "drop jobs_claim_any and jobs_next_run", step16_drop_superseded},
    {17, "lease tokens of claims over HTTP, kept hashed", step17_lease_token},
    {18, "notify jobd_done when jobs end", step18_notify_done},
    {19, "finished attempts keep their lease token hash; notify jobd_cancel", step19_replays},
    {20, "job_progress", step20_progress},
    {21, "job_attempt_logs", step21_attempt_logs},
    {22, "jobs and jobs_done keep a traceparent", step22_traceparent},
    {23, "events (GET /v1/events)", pg_step_events},
    {24, "dependencies: jobs_waiting, job_deps", pg_step_deps},
    {25, "events say waiting", pg_step_events_deps},
    {26, "workflows: workflows, workflow_steps", pg_step_workflows},
    {27, "jobd.enqueue takes depends_on and on_parent_failure", pg_step_enqueue_deps},
    {28, "debounce and unique keys: enqueue_keys", pg_step_enqkeys},
    {29, "groups: jobs.grp, job_groups, group limits", pg_step_groups},
    {30, "dependencies released set-wise", pg_step_deps_fast},
    {31, "jobd.enqueue takes \"group\"", pg_step_enqueue_group},
    {32, "jobd.enqueue takes debounce and unique windows", pg_step_enqueue_keys},
    {33, "indexes for listings by group", step33_list_group},
    {34, "events: no index entry for a claim or a success", pg_step_events_cheap},
    {35, "a batch's parents attached set-wise", pg_step_deps_batch},
    {36, "events: one row for a statement's claims or successes", pg_step_events_rows},
    {37, "jobs_grp_id holds pending rows only", pg_step_groups_cheap},
    {38, "completions move the row into jobs_done, partitioned by day and status", pg_step_layout},
    {39, "jobd.archive_days moves only the rows it deleted", pg_step_archive_days},
    {40, "autovacuum visits jobd.jobs without its cost delay", pg_step_vacuum_hot},
    {41, "a vacuum keeps jobd.jobs' empty pages", pg_step_vacuum_truncate},
    {42, "autovacuum vacuums jobd.jobs only where the plane did not", pg_step_autovacuum_fallback},
};
const size_t pg_migrations_count = sizeof pg_migrations / sizeof pg_migrations[0];
