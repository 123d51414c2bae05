/*
 * pg/schema_enqueue_keys.c — schema version 32 of pg/schema.c: jobd.enqueue
 * takes a debounce and a unique window (docs/MODEL.md, Inside your own
 * transaction; Debounce and unique windows), so an application's
 * transaction can enqueue with them as POST /v1/jobs can. Like every
 * migration step, never edited once released; a change is a new step.
 *
 * Version 31's function is dropped, not overloaded (see version 27); the
 * four arguments come last, so every earlier call means what it did. They
 * are debounce_key and debounce_for, unique_key and unique_for: the API's
 * {"key", "for"} (for is a keyword of SQL), with `for` an interval.
 *
 * The decision is the server's (pg/enqkeys.c), statement for statement, in
 * the caller's transaction: the key's row in jobd.enqueue_keys (version 28)
 * is inserted or, when it exists, locked by INSERT ... ON CONFLICT DO
 * UPDATE, so every enqueue of one key waits for the one before it to commit
 * and then, each later statement reading a fresh snapshot (READ COMMITTED),
 * sees what it did. Holding the row, a debounce replaces its pending job in
 * place (payload, priority, run_at = now() + for) and returns its id, a
 * unique key inside its window returns its job's id, whatever the job's
 * status; otherwise a new job is made (a debounced one due at now() + for)
 * and the row pointed at it, a unique window opened from now(). now() is
 * the transaction's time, as for the job's created_at.
 */
#include "store/pg/internal.h"
#include "store/pg/schema_enqueue.h"

/* clang-format off */
/* A window's key, as an idempotency key, and its for: both or neither. */
#define WINDOW_CHECK(w) \
    "    IF enqueue." w "_key IS NOT NULL AND (enqueue." w "_key = ''\n" \
    "            OR octet_length(enqueue." w "_key) > " SQL_NUM(JOB_KEY_MAX) "\n" \
    "            OR enqueue." w "_key ~ '[\\x01-\\x1f\\x7f]'\n" \
    "            OR enqueue." w "_key ~ '^ | $') THEN\n" \
    "        RAISE EXCEPTION 'jobd.enqueue: " w "_key must be 1 to " SQL_NUM(JOB_KEY_MAX) " bytes without '\n" \
    "            'control characters or leading or trailing blanks, got %',\n" \
    "            quote_literal(enqueue." w "_key)\n" \
    "            USING ERRCODE = 'invalid_parameter_value';\n" \
    "    END IF;\n" \
    "    IF (enqueue." w "_key IS NULL) <> (enqueue." w "_for IS NULL) THEN\n" \
    "        RAISE EXCEPTION 'jobd.enqueue: " w "_key and " w "_for go together: give both or neither'\n" \
    "            USING ERRCODE = 'invalid_parameter_value';\n" \
    "    END IF;\n" \
    "    IF enqueue." w "_for IS NOT NULL THEN\n" \
    "        v_for := extract(epoch FROM enqueue." w "_for) * interval '1 second';\n" \
    "        IF v_for < interval '1 millisecond' OR v_for > interval '366 days' THEN\n" \
    "            RAISE EXCEPTION 'jobd.enqueue: " w "_for must be from 1ms to 366 days, got %',\n" \
    "                enqueue." w "_for USING ERRCODE = 'invalid_parameter_value';\n" \
    "        END IF;\n" \
    "    END IF;\n"
_Static_assert(JOB_WINDOW_MAX_MS == 366LL * 86400 * 1000, "jobd.enqueue says 366 days");

const char pg_step_enqueue_keys[] =
    "DROP FUNCTION jobd.enqueue(text, jsonb, text, timestamptz, int, int, text, text, bigint[], text, text);\n"
    "CREATE FUNCTION jobd.enqueue(type text, payload jsonb DEFAULT '{}',\n"
    "        queue text DEFAULT 'default', run_at timestamptz DEFAULT now(),\n"
    "        priority int DEFAULT 0, max_attempts int DEFAULT 25,\n"
    "        idempotency_key text DEFAULT NULL, traceparent text DEFAULT NULL,\n"
    "        depends_on bigint[] DEFAULT NULL, on_parent_failure text DEFAULT 'cancel',\n"
    "        \"group\" text DEFAULT NULL,\n"
    "        debounce_key text DEFAULT NULL, debounce_for interval DEFAULT NULL,\n"
    "        unique_key text DEFAULT NULL, unique_for interval DEFAULT NULL)\n"
    "    RETURNS bigint LANGUAGE plpgsql AS $$\n"
    "#variable_conflict use_column\n"
    "DECLARE\n"
    "    v_id bigint;\n"
    "    v_old record;\n"
    "    v_missing bigint;\n"
    "    v_noted int;\n"
    "    v_payload jsonb := COALESCE(enqueue.payload, '{}'::jsonb);\n"
    "    v_run_at timestamptz := COALESCE(enqueue.run_at, now());\n"
    "    v_for interval;\n"
    "    v_kind text; -- 'debounce', 'unique', or NULL without a window\n"
    "    v_kqueue text;\n"
    "    v_ktype text;\n"
    "    v_key text;\n"
    "    v_holder bigint;\n"
    "    v_expired boolean;\n"
    "BEGIN\n" ENQUEUE_CHECKS
    ENQUEUE_KEY_CHECK ENQUEUE_TRACE_CHECK
    ENQUEUE_DEPS_CHECK
    "    IF enqueue.\"group\" IS NOT NULL\n"
    "            AND enqueue.\"group\" !~ '^[A-Za-z0-9._:-]{1," SQL_NUM(JOB_GROUP_MAX) "}$' THEN\n"
    "        RAISE EXCEPTION 'jobd.enqueue: group must match [A-Za-z0-9._:-]{1," SQL_NUM(JOB_GROUP_MAX) "}, got %',\n"
    "            quote_literal(enqueue.\"group\") USING ERRCODE = 'invalid_parameter_value';\n"
    "    END IF;\n"
    WINDOW_CHECK("unique")
    WINDOW_CHECK("debounce")
    "    IF enqueue.debounce_key IS NOT NULL AND enqueue.unique_key IS NOT NULL THEN\n"
    "        RAISE EXCEPTION 'jobd.enqueue: unique_key cannot be combined with debounce_key: give one of them'\n"
    "            USING ERRCODE = 'invalid_parameter_value';\n"
    "    END IF;\n"
    "    IF enqueue.debounce_key IS NOT NULL AND v_run_at <> now() THEN\n"
    "        RAISE EXCEPTION 'jobd.enqueue: debounce_key sets run_at itself (now() + debounce_for): '\n"
    "            'give no run_at with it' USING ERRCODE = 'invalid_parameter_value';\n"
    "    END IF;\n"
    "    IF enqueue.debounce_key IS NOT NULL AND cardinality(enqueue.depends_on) > 0 THEN\n"
    "        RAISE EXCEPTION 'jobd.enqueue: debounce_key cannot be combined with depends_on: '\n"
    "            'a waiting job is never replaced' USING ERRCODE = 'invalid_parameter_value';\n"
    "    END IF;\n"
    "    IF enqueue.idempotency_key IS NOT NULL\n"
    "            AND (enqueue.debounce_key IS NOT NULL OR enqueue.unique_key IS NOT NULL) THEN\n"
    "        RAISE EXCEPTION 'jobd.enqueue: % cannot be combined with idempotency_key: give one of them',\n"
    "            CASE WHEN enqueue.debounce_key IS NOT NULL THEN 'debounce_key' ELSE 'unique_key' END\n"
    "            USING ERRCODE = 'invalid_parameter_value';\n"
    "    END IF;\n"
    "    IF enqueue.debounce_key IS NOT NULL THEN\n"
    "        v_kind := 'debounce';\n"
    "        v_kqueue := enqueue.queue;\n"
    "        v_ktype := enqueue.type;\n"
    "        v_key := enqueue.debounce_key;\n"
    "        v_run_at := now() + v_for;\n"
    "    ELSIF enqueue.unique_key IS NOT NULL THEN\n"
    "        v_kind := 'unique';\n"
    "        v_kqueue := '';\n"
    "        v_ktype := '';\n"
    "        v_key := enqueue.unique_key;\n"
    "    END IF;\n"
    "    IF v_kind IS NOT NULL THEN\n"
    "        -- the key's row, inserted (job 0) or locked until this transaction ends\n"
    "        INSERT INTO jobd.enqueue_keys AS k (kind, queue, type, key, job_id)\n"
    "            VALUES (v_kind, v_kqueue, v_ktype, v_key, 0)\n"
    "            ON CONFLICT ON CONSTRAINT enqueue_keys_pkey DO UPDATE SET job_id = k.job_id\n"
    "            RETURNING k.job_id, COALESCE(k.until <= now(), false) INTO v_holder, v_expired;\n"
    "        IF v_holder <> 0 AND v_kind = 'debounce' THEN\n"
    "            UPDATE jobd.jobs SET payload = v_payload::json, priority = enqueue.priority,\n"
    "                   run_at = v_run_at\n"
    "             WHERE id = v_holder AND status = 'pending';\n"
    "            IF FOUND THEN\n"
    "                PERFORM pg_notify('jobd_jobs', enqueue.queue);\n"
    "                RETURN v_holder;\n"
    "            END IF; -- claimed, ended or deleted: a new job\n"
    "        ELSIF v_holder <> 0 AND NOT v_expired THEN\n"
    "            PERFORM 1 FROM jobd.all_jobs a WHERE a.id = v_holder;\n"
    "            IF FOUND THEN\n"
    "                RETURN v_holder;\n"
    "            END IF; -- deleted: the key is free again\n"
    "        END IF;\n"
    "    END IF;\n"
    ENQUEUE_KEY_LOOP
    "        INSERT INTO jobd.jobs (id, queue, type, payload, status, priority, run_at,\n"
    "                               max_attempts, idempotency_key, created_at, traceparent, grp)\n"
    "        VALUES (v_id, enqueue.queue, enqueue.type, v_payload::json, 'pending',\n"
    "                enqueue.priority, v_run_at, enqueue.max_attempts,\n"
    "                enqueue.idempotency_key, now(), enqueue.traceparent, enqueue.\"group\");\n"
    "        WITH ins AS (SELECT enqueue.queue AS queue, enqueue.\"group\" AS grp)"
    PG_GROUPS_NOTED("ins") "SELECT 1 INTO v_noted;\n"
    ENQUEUE_DEPS_ATTACH
    "        IF v_kind IS NOT NULL THEN\n"
    "            UPDATE jobd.enqueue_keys SET job_id = v_id,\n"
    "                   until = CASE WHEN v_kind = 'unique' THEN now() + v_for END\n"
    "             WHERE kind = v_kind AND queue = v_kqueue AND type = v_ktype AND key = v_key;\n"
    "        END IF;\n"
    "        RETURN v_id;\n"
    "    END LOOP;\n"
    "END $$;\n";
/* clang-format on */
