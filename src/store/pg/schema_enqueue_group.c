/*
 * pg/schema_enqueue_group.c — schema version 31 of pg/schema.c: jobd.enqueue
 * takes "group" (docs/MODEL.md, Inside your own transaction; Groups), so a
 * job enqueued in an application's transaction joins its tenant's group as
 * one enqueued over HTTP does. Like every migration step, never edited once
 * released; a change is a new step.
 *
 * Version 27's function is dropped, not overloaded (see there); "group"
 * comes last, so every earlier call means what it did. The job's group is
 * noted for the fair claim with the statement the server's enqueue uses
 * (PG_GROUPS_NOTED, pg/internal.h): the queue is marked grouped and the
 * (queue, group) pair has its row in job_groups.
 */
#include "store/pg/internal.h"
#include "store/pg/schema_enqueue.h"

/* clang-format off */
const char pg_step_enqueue_group[] =
    "DROP FUNCTION jobd.enqueue(text, jsonb, text, timestamptz, int, int, text, text, bigint[], text);\n"
    "CREATE FUNCTION jobd.enqueue(type text, payload jsonb DEFAULT '{}',\n"
    "        queue text DEFAULT 'default', run_at timestamptz DEFAULT now(),\n"
    "        priority int DEFAULT 0, max_attempts int DEFAULT 25,\n"
    "        idempotency_key text DEFAULT NULL, traceparent text DEFAULT NULL,\n"
    "        depends_on bigint[] DEFAULT NULL, on_parent_failure text DEFAULT 'cancel',\n"
    "        \"group\" text DEFAULT NULL)\n"
    "    RETURNS bigint LANGUAGE plpgsql AS $$\n"
    "#variable_conflict use_column\n"
    "DECLARE\n"
    "    v_id bigint;\n"
    "    v_old record;\n"
    "    v_missing bigint;\n"
    "    v_noted int;\n"
    "    v_payload jsonb := COALESCE(enqueue.payload, '{}'::jsonb);\n"
    "BEGIN\n" ENQUEUE_CHECKS
    ENQUEUE_KEY_CHECK ENQUEUE_TRACE_CHECK
    ENQUEUE_DEPS_CHECK
    "    IF enqueue.\"group\" IS NOT NULL\n"
    "            AND enqueue.\"group\" !~ '^[A-Za-z0-9._:-]{1," SQL_NUM(JOB_GROUP_MAX) "}$' THEN\n"
    "        RAISE EXCEPTION 'jobd.enqueue: group must match [A-Za-z0-9._:-]{1," SQL_NUM(JOB_GROUP_MAX) "}, got %',\n"
    "            quote_literal(enqueue.\"group\") USING ERRCODE = 'invalid_parameter_value';\n"
    "    END IF;\n"
    ENQUEUE_KEY_LOOP
    "        INSERT INTO jobd.jobs (id, queue, type, payload, status, priority, run_at,\n"
    "                               max_attempts, idempotency_key, created_at, traceparent, grp)\n"
    "        VALUES (v_id, enqueue.queue, enqueue.type, v_payload::json, 'pending',\n"
    "                enqueue.priority,\n"
    "                COALESCE(enqueue.run_at, now()), enqueue.max_attempts,\n"
    "                enqueue.idempotency_key, now(), enqueue.traceparent, enqueue.\"group\");\n"
    "        WITH ins AS (SELECT enqueue.queue AS queue, enqueue.\"group\" AS grp)"
    PG_GROUPS_NOTED("ins") "SELECT 1 INTO v_noted;\n"
    ENQUEUE_DEPS_ATTACH
    "        RETURN v_id;\n"
    "    END LOOP;\n"
    "END $$;\n";
/* clang-format on */
