/*
 * pg/schema_events.c — schema version 23 of pg/schema.c, the event log of
 * GET /v1/events (docs/API.md, GET /v1/events): long enough to live apart,
 * as pg_step_stats does. Like every migration step, never edited once
 * released; a change is a new step.
 */
#include "store/pg/internal.h"

/*
 * Version 23: the event log of GET /v1/events (pg/events.c; docs/API.md,
 * GET /v1/events; docs/DESIGN.md, Events). Statement triggers turn each statement's
 * status changes into rows of jobd.events, but only while some server has
 * had a client of the stream within the last hour (jobd.event_log.
 * listened_at, refreshed by that server): otherwise a trigger is one
 * indexed probe of a one-row table, and the hot statements (claims and
 * completions, batched) write nothing more. A completion updates jobs in
 * place; a failure, a reap, a cancel moves the row into jobs_done or back
 * into jobs, so "from" comes from the row (an attempt above its floor was
 * running; a cancel without a cancel request was of a pending job), and
 * for a row inserted into jobs (new, or a retry) from the job's previous
 * event. The archive pass's move of
 * succeeded rows is no change. UNLOGGED: the log is an hour of transient
 * rows, and their WAL cost the writers; after a crash it is empty, and a
 * Last-Event-ID must name an event still in it. since_id: every event
 * after it is in the log (raised when recording starts again and by the
 * hourly prune). BRIN on at: the prune's, nearly free to keep.
 */
const char pg_step_events[] =
    "CREATE SEQUENCE jobd.event_id_seq;\n"
    "CREATE UNLOGGED TABLE jobd.events (\n"
    "    id      bigint PRIMARY KEY,\n"
    "    job     bigint NOT NULL,\n"
    "    queue   text NOT NULL,\n"
    "    type    text NOT NULL,\n"
    "    from_st text,\n"
    "    to_st   text NOT NULL,\n"
    "    attempt int NOT NULL,\n"
    "    at      timestamptz NOT NULL DEFAULT now()\n"
    ");\n"
    "CREATE INDEX events_job ON jobd.events (job, id);\n"
    "CREATE INDEX events_at ON jobd.events USING brin (at);\n"
    "CREATE TABLE jobd.event_log (\n"
    "    one         boolean PRIMARY KEY DEFAULT true CHECK (one),\n"
    "    since_id    bigint NOT NULL DEFAULT 0,\n"
    "    listened_at timestamptz NOT NULL DEFAULT '-infinity'\n"
    ");\n"
    "INSERT INTO jobd.event_log DEFAULT VALUES;\n"
    "CREATE FUNCTION jobd.events_on() RETURNS boolean LANGUAGE sql STABLE AS $$\n"
    "    SELECT EXISTS (SELECT 1 FROM jobd.event_log\n"
    "                   WHERE listened_at > now() - interval '1 hour')\n"
    "$$;\n"
    "CREATE FUNCTION jobd.event_prev(job bigint) RETURNS text LANGUAGE sql STABLE AS $$\n"
    "    SELECT e.to_st FROM jobd.events e WHERE e.job = $1\n"
    "       AND e.id >= (SELECT since_id FROM jobd.event_log) ORDER BY e.id DESC LIMIT 1\n"
    "$$;\n"
    "CREATE FUNCTION jobd.events_updated() RETURNS trigger LANGUAGE plpgsql AS $$\n"
    "BEGIN\n"
    "    IF jobd.events_on() THEN\n"
    "        INSERT INTO jobd.events (id, job, queue, type, from_st, to_st, attempt)\n"
    "        SELECT nextval('jobd.event_id_seq'), n.id, n.queue, n.type, o.status, n.status,\n"
    "               n.attempt\n"
    "          FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n.status <> o.status;\n"
    "    END IF;\n"
    "    RETURN NULL;\n"
    "END $$;\n"
    "CREATE FUNCTION jobd.events_inserted() RETURNS trigger LANGUAGE plpgsql AS $$\n"
    "BEGIN\n"
    "    IF jobd.events_on() THEN\n"
    "        INSERT INTO jobd.events (id, job, queue, type, from_st, to_st, attempt)\n"
    "        SELECT nextval('jobd.event_id_seq'), n.id, n.queue, n.type,\n"
    "               CASE WHEN n.attempt > n.attempt_floor THEN 'running'\n"
    "                    ELSE jobd.event_prev(n.id) END, n.status, n.attempt\n"
    "          FROM new_rows n;\n"
    "    END IF;\n"
    "    RETURN NULL;\n"
    "END $$;\n"
    "CREATE FUNCTION jobd.events_ended() RETURNS trigger LANGUAGE plpgsql AS $$\n"
    "BEGIN\n"
    "    IF jobd.events_on() THEN\n"
    "        INSERT INTO jobd.events (id, job, queue, type, from_st, to_st, attempt)\n"
    "        SELECT nextval('jobd.event_id_seq'), n.id, n.queue, n.type,\n"
    "               CASE WHEN n.status = 'cancelled' AND NOT n.cancel_requested\n"
    "                    THEN 'pending' ELSE 'running' END,\n"
    "               n.status, n.attempt\n"
    "          FROM new_rows n WHERE n.status <> 'succeeded';\n"
    "    END IF;\n"
    "    RETURN NULL;\n"
    "END $$;\n"
    "CREATE TRIGGER jobs_events_updated AFTER UPDATE ON jobd.jobs\n"
    "    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows\n"
    "    FOR EACH STATEMENT EXECUTE FUNCTION jobd.events_updated();\n"
    "CREATE TRIGGER jobs_events_inserted AFTER INSERT ON jobd.jobs\n"
    "    REFERENCING NEW TABLE AS new_rows\n"
    "    FOR EACH STATEMENT EXECUTE FUNCTION jobd.events_inserted();\n"
    "CREATE TRIGGER jobs_done_events AFTER INSERT ON jobd.jobs_done\n"
    "    REFERENCING NEW TABLE AS new_rows\n"
    "    FOR EACH STATEMENT EXECUTE FUNCTION jobd.events_ended();\n";
