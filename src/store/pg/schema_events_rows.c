/*
 * pg/schema_events_rows.c — schema version 36 of pg/schema.c: the event log
 * of GET /v1/events (versions 23, 25 and 34) writes a statement's claims,
 * and its successes, as one row per queue and type holding every job, not
 * one row per job (docs/DESIGN.md, Events). Long enough to live apart, as
 * pg_step_events does. Like every migration step, never edited once
 * released; a change is a new step.
 */
#include "store/pg/internal.h"

/*
 * Version 36. While a stream listens, each job a claim or a completion moved
 * cost a row of jobd.events: a nextval, a heap tuple and a primary-key entry
 * (about a fifth of the work of the batch itself). A change to running or
 * succeeded (only claims and completions make those, in batches) now goes
 * into one row per queue, type, from and to of the statement, with the
 * jobs and their attempts in two arrays in the same order (job and attempt
 * 0); every other change stays one row per job, as the previous-event
 * lookups (events_prev, which never holds running or succeeded) need.
 *
 * The jobs of a row share id / 128 (so at most 128 of them): a row of 1,024
 * took 12 kB, which PostgreSQL compressed into the TOAST table, and that
 * cost more than the rows it saved; grouping by id also spares the sort
 * that numbering the jobs would take, and each branch filters the
 * transition table before its join instead of materializing the join once
 * (a CTE). The two arrays take the rows in the same order, whatever it is.
 * Measured (valgrind, a single-user backend, 4 x 1,000 jobs claimed then
 * succeeded in two statements): 101,000 instructions a job for the two
 * statements without the log; the log added 48,000 with a row a job,
 * 29,500 with one CTE and rows of 128 numbered by a window, 21,000 so.
 *
 * A row holds the events id - n + 1 .. id, n its number of jobs (1 when
 * jobs is NULL): the sequence now steps by 1024 and a row holds at most
 * 1024 jobs, so every id below a row's id - n + 1 was handed out before it
 * and every later one is above its id. So an event's number E stays
 * increasing and exact for Last-Event-ID, the highest id is the head's last
 * event as before, and the rule that ids up to a head are final once its
 * xmax is passed holds for every event of the rows (pg/events.c). Ids given
 * before this version keep their meaning: their rows are one event each. A
 * sequence never used would first give 1 (a row of n jobs: events from
 * 2 - n): it is set to 0, so that the first id is 1024.
 */
const char pg_step_events_rows[] =
    "ALTER SEQUENCE jobd.event_id_seq INCREMENT BY 1024 MINVALUE 0;\n"
    "SELECT setval('jobd.event_id_seq', CASE WHEN is_called THEN last_value ELSE 0 END)\n"
    "  FROM jobd.event_id_seq;\n"
    "ALTER TABLE jobd.events ADD COLUMN jobs bigint[], ADD COLUMN attempts int[];\n"
    "CREATE OR REPLACE FUNCTION jobd.events_updated() RETURNS trigger LANGUAGE plpgsql AS $$\n"
    "BEGIN\n"
    "    IF jobd.events_on() THEN\n"
    "        INSERT INTO jobd.events (id, job, queue, type, from_st, to_st, attempt, jobs,\n"
    "                                 attempts)\n"
    "        SELECT nextval('jobd.event_id_seq'), 0, n.queue, n.type, o.status, n.status, 0,\n"
    "               array_agg(n.id), array_agg(n.attempt)\n"
    "          FROM new_rows n JOIN old_rows o ON o.id = n.id\n"
    "         WHERE n.status IN ('running', 'succeeded') AND n.status <> o.status\n"
    "         GROUP BY n.queue, n.type, o.status, n.status, n.id / 128\n"
    "        UNION ALL\n"
    "        SELECT nextval('jobd.event_id_seq'), n.id, n.queue, n.type, o.status, n.status,\n"
    "               n.attempt, NULL, NULL\n"
    "          FROM new_rows n JOIN old_rows o ON o.id = n.id\n"
    "         WHERE n.status NOT IN ('running', 'succeeded') AND n.status <> o.status;\n"
    "    END IF;\n"
    "    RETURN NULL;\n"
    "END $$;\n";
