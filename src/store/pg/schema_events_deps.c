/*
 * pg/schema_events_deps.c — schema version 25 of pg/schema.c: the event
 * log of GET /v1/events (version 23) told about jobs_waiting (version 24),
 * so the events say `waiting` (docs/API.md, GET /v1/events; docs/DESIGN.md,
 * Events). Long enough to live apart, as pg_step_events does. Like every
 * migration step, never edited once released; a change is a new step.
 */
#include "store/pg/internal.h"

/*
 * Version 25. A child is enqueued into jobs (recorded created `pending`)
 * and moved into jobs_waiting by jobd.deps_attach in the same transaction;
 * a manual retry of its parent moves it back from jobs_done (cancelled for
 * that parent) into jobs_waiting. jobs_waiting_events, a statement trigger
 * like version 23's, records both: a row with an edge marked cause (set
 * until jobd.deps_parent_reopened's last statement) is a reopen, recorded
 * `cancelled` → `waiting`; any other row is an enqueue, whose creation
 * event (written a statement ago in this transaction, not yet visible to
 * any reader) is rewritten to say `waiting`, or written if recording began
 * in between. A release into jobs then finds `waiting` as its previous
 * event (jobd.event_prev, version 23). A waiting job's end is a move into
 * jobs_done cancelled without a cancel request, by the user or for its
 * parent: "from" is its previous event, or without one in the log (it
 * predates recording) `waiting` if it has an open edge or the edge it was
 * cancelled for, else `pending`. As in version 23, each trigger does
 * nothing more than one probe of jobd.event_log while nobody listens.
 */
const char pg_step_events_deps[] =
    "CREATE FUNCTION jobd.events_waiting() RETURNS trigger LANGUAGE plpgsql AS $$\n"
    "BEGIN\n"
    "    IF jobd.events_on() THEN\n"
    "        WITH r AS (\n"
    "            SELECT n.id, n.queue, n.type, n.attempt,\n"
    "                   EXISTS (SELECT 1 FROM jobd.job_deps d WHERE d.child = n.id AND d.cause)\n"
    "                       AS reopened\n"
    "              FROM new_rows n),\n"
    "        u AS (\n"
    "            UPDATE jobd.events e SET to_st = 'waiting' FROM r\n"
    "             WHERE NOT r.reopened AND e.job = r.id AND e.from_st IS NULL\n"
    "               AND e.to_st = 'pending' AND e.id >= (SELECT since_id FROM jobd.event_log)\n"
    "            RETURNING e.job)\n"
    "        INSERT INTO jobd.events (id, job, queue, type, from_st, to_st, attempt)\n"
    "        SELECT nextval('jobd.event_id_seq'), r.id, r.queue, r.type,\n"
    "               CASE WHEN r.reopened THEN 'cancelled' END, 'waiting', r.attempt\n"
    "          FROM r WHERE r.id NOT IN (SELECT job FROM u);\n"
    "    END IF;\n"
    "    RETURN NULL;\n"
    "END $$;\n"
    "CREATE TRIGGER jobs_waiting_events AFTER INSERT ON jobd.jobs_waiting\n"
    "    REFERENCING NEW TABLE AS new_rows\n"
    "    FOR EACH STATEMENT EXECUTE FUNCTION jobd.events_waiting();\n"
    "CREATE OR REPLACE FUNCTION jobd.events_ended() RETURNS trigger LANGUAGE plpgsql AS $$\n"
    "BEGIN\n"
    "    IF jobd.events_on() THEN\n"
    "        INSERT INTO jobd.events (id, job, queue, type, from_st, to_st, attempt)\n"
    "        SELECT nextval('jobd.event_id_seq'), n.id, n.queue, n.type,\n"
    "               CASE WHEN n.status = 'cancelled' AND NOT n.cancel_requested\n"
    "                    THEN COALESCE(jobd.event_prev(n.id),\n"
    "                                  CASE WHEN EXISTS (SELECT 1 FROM jobd.job_deps d\n"
    "                                                     WHERE d.child = n.id\n"
    "                                                       AND (d.ended_status IS NULL\n"
    "                                                            OR d.cause))\n"
    "                                       THEN 'waiting' ELSE 'pending' END)\n"
    "                    ELSE 'running' END,\n"
    "               n.status, n.attempt\n"
    "          FROM new_rows n WHERE n.status <> 'succeeded';\n"
    "    END IF;\n"
    "    RETURN NULL;\n"
    "END $$;\n";
