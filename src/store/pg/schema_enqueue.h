/*
 * pg/schema_enqueue.h — pieces of jobd.enqueue's body (docs/MODEL.md,
 * Inside your own transaction) shared by the migration steps that replace
 * the function (pg/schema.c version 22, pg/schema_enqueue_deps.c,
 * pg/schema_enqueue_group.c): a step that adds an argument must repeat
 * the whole function, and these keep the repeated parts one text. A released step's text must not change: edit
 * a macro only by copying it into a new one for a new step.
 */
#ifndef JOBD_STORE_PG_SCHEMA_ENQUEUE_H
#define JOBD_STORE_PG_SCHEMA_ENQUEUE_H

#include "core/job.h"

#define SQL_NUM_(x) #x
#define SQL_NUM(x) SQL_NUM_(x)

/* clang-format off */
#define ENQUEUE_CHECKS \
    "    IF enqueue.type IS NULL OR enqueue.type !~ '^[A-Za-z0-9._:-]{1," SQL_NUM(JOB_NAME_MAX) "}$' THEN\n" \
    "        RAISE EXCEPTION 'jobd.enqueue: type must match [A-Za-z0-9._:-]{1," SQL_NUM(JOB_NAME_MAX) "}, got %',\n" \
    "            quote_nullable(enqueue.type) USING ERRCODE = 'invalid_parameter_value';\n" \
    "    END IF;\n" \
    "    IF enqueue.queue IS NULL OR enqueue.queue !~ '^[a-z0-9_-]{1," SQL_NUM(JOB_QUEUE_MAX) "}$' THEN\n" \
    "        RAISE EXCEPTION 'jobd.enqueue: queue must match [a-z0-9_-]{1," SQL_NUM(JOB_QUEUE_MAX) "}, got %',\n" \
    "            quote_nullable(enqueue.queue) USING ERRCODE = 'invalid_parameter_value';\n" \
    "    END IF;\n" \
    "    IF octet_length(v_payload::text) > " SQL_NUM(JOB_PAYLOAD_MAX) " THEN\n" \
    "        RAISE EXCEPTION 'jobd.enqueue: payload is over 256 KiB'\n" \
    "            USING ERRCODE = 'program_limit_exceeded';\n" \
    "    END IF;\n" \
    "    IF enqueue.priority IS NULL OR enqueue.priority NOT BETWEEN " SQL_NUM(JOB_PRIORITY_MIN) " AND " SQL_NUM(JOB_PRIORITY_MAX) " THEN\n" \
    "        RAISE EXCEPTION 'jobd.enqueue: priority must be between % and %', " SQL_NUM(JOB_PRIORITY_MIN) ", " SQL_NUM(JOB_PRIORITY_MAX) "\n" \
    "            USING ERRCODE = 'invalid_parameter_value';\n" \
    "    END IF;\n" \
    "    IF enqueue.max_attempts IS NULL OR enqueue.max_attempts NOT BETWEEN 1 AND " SQL_NUM(JOB_MAX_ATTEMPTS_MAX) " THEN\n" \
    "        RAISE EXCEPTION 'jobd.enqueue: max_attempts must be between 1 and %', " SQL_NUM(JOB_MAX_ATTEMPTS_MAX) "\n" \
    "            USING ERRCODE = 'invalid_parameter_value';\n" \
    "    END IF;\n"

/* The idempotency key's form (version 22 on). */
#define ENQUEUE_KEY_CHECK \
    "    IF enqueue.idempotency_key IS NOT NULL AND (enqueue.idempotency_key = ''\n" \
    "            OR octet_length(enqueue.idempotency_key) > " SQL_NUM(JOB_KEY_MAX) "\n" \
    "            OR enqueue.idempotency_key ~ '[\\x01-\\x1f\\x7f]'\n" \
    "            OR enqueue.idempotency_key ~ '^ | $') THEN\n" \
    "        RAISE EXCEPTION 'jobd.enqueue: idempotency_key must be 1 to " SQL_NUM(JOB_KEY_MAX) " bytes without '\n" \
    "            'control characters or leading or trailing blanks, got %',\n" \
    "            quote_literal(enqueue.idempotency_key)\n" \
    "            USING ERRCODE = 'invalid_parameter_value';\n" \
    "    END IF;\n"

/* The traceparent's form (version 22 on). */
#define ENQUEUE_TRACE_CHECK \
    "    IF enqueue.traceparent IS NOT NULL AND (\n" \
    "            enqueue.traceparent !~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'\n" \
    "            OR substr(enqueue.traceparent, 4, 32) = repeat('0', 32)\n" \
    "            OR substr(enqueue.traceparent, 37, 16) = repeat('0', 16)) THEN\n" \
    "        RAISE EXCEPTION 'jobd.enqueue: traceparent must be a W3C traceparent of version 00 '\n" \
    "            '(00-<32 hex>-<16 hex>-<2 hex>, lowercase, neither id all zeros), got %',\n" \
    "            quote_literal(enqueue.traceparent)\n" \
    "            USING ERRCODE = 'invalid_parameter_value';\n" \
    "    END IF;\n"

/* The loop that takes a new id and claims the idempotency key, up to the
 * INSERT into jobd.jobs; a replay RETURNs the holder's id (version 22 on). */
#define ENQUEUE_KEY_LOOP \
    "    LOOP\n" \
    "        v_id := nextval('jobd.job_id_seq');\n" \
    "        IF enqueue.idempotency_key IS NOT NULL THEN\n" \
    "            INSERT INTO jobd.job_keys (idempotency_key, job_id)\n" \
    "                VALUES (enqueue.idempotency_key, v_id) ON CONFLICT DO NOTHING;\n" \
    "            IF NOT FOUND THEN\n" \
    "                SELECT a.id, a.type, a.queue, a.payload INTO v_old FROM jobd.all_jobs a\n" \
    "                 WHERE a.id = (SELECT k.job_id FROM jobd.job_keys k\n" \
    "                                WHERE k.idempotency_key = enqueue.idempotency_key);\n" \
    "                IF NOT FOUND THEN\n" \
    "                    CONTINUE; -- pruned meanwhile: the key is free again\n" \
    "                END IF;\n" \
    "                IF v_old.type = enqueue.type AND v_old.queue = enqueue.queue\n" \
    "                        AND v_old.payload::jsonb = v_payload THEN\n" \
    "                    RETURN v_old.id;\n" \
    "                END IF;\n" \
    "                RAISE EXCEPTION 'jobd.enqueue: idempotency key % was already used for '\n" \
    "                    'job % with a different type, queue or payload',\n" \
    "                    quote_literal(enqueue.idempotency_key), v_old.id\n" \
    "                    USING ERRCODE = 'unique_violation';\n" \
    "            END IF;\n" \
    "        END IF;\n"

/* depends_on and on_parent_failure checked (version 27 on). */
#define ENQUEUE_DEPS_CHECK \
    "    IF enqueue.on_parent_failure IS NULL\n" \
    "            OR enqueue.on_parent_failure NOT IN ('cancel', 'run') THEN\n" \
    "        RAISE EXCEPTION 'jobd.enqueue: on_parent_failure must be ''cancel'' or ''run'', got %',\n" \
    "            quote_nullable(enqueue.on_parent_failure)\n" \
    "            USING ERRCODE = 'invalid_parameter_value';\n" \
    "    END IF;\n" \
    "    IF cardinality(enqueue.depends_on) > " SQL_NUM(JOB_DEPS_MAX) " THEN\n" \
    "        RAISE EXCEPTION 'jobd.enqueue: depends_on holds at most " SQL_NUM(JOB_DEPS_MAX) " job ids, got %',\n" \
    "            cardinality(enqueue.depends_on) USING ERRCODE = 'program_limit_exceeded';\n" \
    "    END IF;\n" \
    "    IF array_position(enqueue.depends_on, NULL) IS NOT NULL THEN\n" \
    "        RAISE EXCEPTION 'jobd.enqueue: depends_on must not hold NULL'\n" \
    "            USING ERRCODE = 'invalid_parameter_value';\n" \
    "    END IF;\n"

/* The new job v_id waits for its parents, or settles (version 27 on). */
#define ENQUEUE_DEPS_ATTACH \
    "        IF cardinality(enqueue.depends_on) > 0 THEN\n" \
    "            v_missing := jobd.deps_attach(v_id, enqueue.depends_on,\n" \
    "                                          enqueue.on_parent_failure = 'run', now());\n" \
    "            IF v_missing <> 0 THEN\n" \
    "                RAISE EXCEPTION 'jobd.enqueue: depends_on: no job with id %', v_missing\n" \
    "                    USING ERRCODE = 'foreign_key_violation';\n" \
    "            END IF;\n" \
    "        END IF;\n"
/* clang-format on */

#endif
