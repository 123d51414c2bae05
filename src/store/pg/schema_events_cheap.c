/*
 * pg/schema_events_cheap.c — schema version 34 of pg/schema.c: the event
 * log of GET /v1/events (versions 23 and 25) written with one index fewer,
 * so that a claim or a completion while a stream listens adds one heap row
 * and one entry of the primary key per job (docs/DESIGN.md, Events). Long
 * enough to live apart, as pg_step_events does. Like every migration step,
 * never edited once released; a change is a new step.
 */
#include "store/pg/internal.h"

/*
 * Version 34. events_job (job, id) held every event, though a job's previous
 * event is only ever asked for (jobd.event_prev, jobd.events_waiting) when
 * it comes back into jobs (a retry: its last event is dead or cancelled; a
 * release: waiting), when a waiting job is cancelled (waiting), or to rewrite
 * its creation event (pending, from null): never after a claim (running) or a
 * success (succeeded), the two changes of the hot path. events_prev is
 * events_job without those, and both functions name its predicate, so that
 * the planner takes it; their results are those of versions 23 and 25.
 */
const char pg_step_events_cheap[] =
    "CREATE INDEX events_prev ON jobd.events (job, id)\n"
    "    WHERE to_st NOT IN ('running', 'succeeded');\n"
    "DROP INDEX jobd.events_job;\n"
    "CREATE OR REPLACE FUNCTION jobd.event_prev(job bigint) RETURNS text LANGUAGE sql STABLE AS "
    "$$\n"
    "    SELECT e.to_st FROM jobd.events e WHERE e.job = $1\n"
    "       AND e.to_st NOT IN ('running', 'succeeded')\n"
    "       AND e.id >= (SELECT since_id FROM jobd.event_log) ORDER BY e.id DESC LIMIT 1\n"
    "$$;\n"
    "CREATE OR REPLACE FUNCTION jobd.events_waiting() RETURNS trigger LANGUAGE plpgsql AS $$\n"
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
    "               AND e.to_st = 'pending' AND e.to_st NOT IN ('running', 'succeeded')\n"
    "               AND e.id >= (SELECT since_id FROM jobd.event_log)\n"
    "            RETURNING e.job)\n"
    "        INSERT INTO jobd.events (id, job, queue, type, from_st, to_st, attempt)\n"
    "        SELECT nextval('jobd.event_id_seq'), r.id, r.queue, r.type,\n"
    "               CASE WHEN r.reopened THEN 'cancelled' END, 'waiting', r.attempt\n"
    "          FROM r WHERE r.id NOT IN (SELECT job FROM u);\n"
    "    END IF;\n"
    "    RETURN NULL;\n"
    "END $$;\n";
