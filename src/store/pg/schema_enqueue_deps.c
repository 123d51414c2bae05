/*
 * pg/schema_enqueue_deps.c — schema version 27 of pg/schema.c: jobd.enqueue
 * takes depends_on and on_parent_failure (docs/MODEL.md, Inside your own
 * transaction; Dependencies), so an application's transaction can enqueue a
 * job that waits for others, as POST /v1/jobs can. Like every migration
 * step, never edited once released; a change is a new step.
 *
 * Version 22's function is dropped, not overloaded (with defaults on both, a
 * call of fewer arguments would match two functions); the new arguments come
 * last, so every earlier call, positional or named, means what it did. The
 * parents are attached by jobd.deps_attach (version 24), the path the
 * server's own enqueue takes, in the same transaction: the job is inserted
 * pending and moved to jobs_waiting, or settled at once when its parents are
 * already terminal. A replay of an idempotency key returns the holder
 * before any of that, as the server's enqueue does.
 */
#include "store/pg/internal.h"
#include "store/pg/schema_enqueue.h"

/* clang-format off */
const char pg_step_enqueue_deps[] =
    "DROP FUNCTION jobd.enqueue(text, jsonb, text, timestamptz, int, int, text, text);\n"
    "CREATE FUNCTION jobd.enqueue(type text, payload jsonb DEFAULT '{}',\n"
    "        queue text DEFAULT 'default', run_at timestamptz DEFAULT now(),\n"
    "        priority int DEFAULT 0, max_attempts int DEFAULT 25,\n"
    "        idempotency_key text DEFAULT NULL, traceparent text DEFAULT NULL,\n"
    "        depends_on bigint[] DEFAULT NULL, on_parent_failure text DEFAULT 'cancel')\n"
    "    RETURNS bigint LANGUAGE plpgsql AS $$\n"
    "#variable_conflict use_column\n"
    "DECLARE\n"
    "    v_id bigint;\n"
    "    v_old record;\n"
    "    v_missing bigint;\n"
    "    v_payload jsonb := COALESCE(enqueue.payload, '{}'::jsonb);\n"
    "BEGIN\n" ENQUEUE_CHECKS
    ENQUEUE_KEY_CHECK ENQUEUE_TRACE_CHECK
    ENQUEUE_DEPS_CHECK
    ENQUEUE_KEY_LOOP
    "        INSERT INTO jobd.jobs (id, queue, type, payload, status, priority, run_at,\n"
    "                               max_attempts, idempotency_key, created_at, traceparent)\n"
    "        VALUES (v_id, enqueue.queue, enqueue.type, v_payload::json, 'pending',\n"
    "                enqueue.priority,\n"
    "                COALESCE(enqueue.run_at, now()), enqueue.max_attempts,\n"
    "                enqueue.idempotency_key, now(), enqueue.traceparent);\n"
    ENQUEUE_DEPS_ATTACH
    "        RETURN v_id;\n"
    "    END LOOP;\n"
    "END $$;\n";
/* clang-format on */
