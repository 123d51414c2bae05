/*
 * pg/schema_archive_days.c — schema version 39 of pg/schema.c:
 * jobd.archive_days (version 38) made safe beside writers of the default
 * partition. In a file of its own, as every PostgreSQL step since version
 * 23. Like every migration step, never edited once released; a change is a
 * new step.
 *
 * Version 38 read the default partition's rows of a day into an array, then
 * deleted them, then inserted the array into the day's new leaves. A row
 * that another transaction moved out of the default partition between that
 * read and the delete (a manual retry or a workflow retry taking a dead job
 * back into jobd.jobs, a delete) was deleted by the other transaction, not
 * by this one, yet inserted again from the array: the job then lived twice,
 * pending in jobs and dead in jobs_done (seen as a workflow counting five
 * steps of four). Now the function first takes the partitioned table
 * jobd.jobs_done in ACCESS EXCLUSIVE mode, which CREATE TABLE ... PARTITION
 * OF needs anyway (taking it first means no lock upgrade, so no deadlock
 * with a writer), and moves exactly the rows its own DELETE ... RETURNING
 * removed. The lock is taken only on the day a partition is made (once a
 * day, a day ahead), for the few rows that landed in the default partition.
 */
#include "store/pg/internal.h"

/* clang-format off */
const char pg_step_archive_days[] =
    "CREATE OR REPLACE FUNCTION jobd.archive_days(at timestamptz, ahead int) RETURNS int\n"
    "    LANGUAGE plpgsql AS $$\n"
    "DECLARE\n"
    "    t0 timestamptz := (SELECT c.t0 FROM jobd.archive_cut c);\n"
    "    d date;\n"
    "    lo timestamptz;\n"
    "    hi timestamptz;\n"
    "    leaf text;\n"
    "    st text;\n"
    "    moved jobd.jobs_done_default[];\n"
    "    made int := 0;\n"
    "BEGIN\n"
    "    FOR i IN 0..ahead LOOP\n"
    "        d := (at AT TIME ZONE 'UTC')::date + i;\n"
    "        leaf := 'jobs_done_' || to_char(d, 'YYYYMMDD');\n"
    "        lo := greatest(d::timestamp AT TIME ZONE 'UTC', t0);\n"
    "        hi := (d + 1)::timestamp AT TIME ZONE 'UTC';\n"
    "        CONTINUE WHEN hi <= t0 OR to_regclass('jobd.' || leaf) IS NOT NULL;\n"
    "        LOCK TABLE jobd.jobs_done IN ACCESS EXCLUSIVE MODE;\n"
    "        CONTINUE WHEN to_regclass('jobd.' || leaf) IS NOT NULL;\n"
    "        WITH x AS (DELETE FROM jobd.jobs_done_default r\n"
    "                    WHERE r.finished_at >= lo AND r.finished_at < hi RETURNING r)\n"
    "        SELECT array_agg(x.r) INTO moved FROM x;\n"
    "        EXECUTE format('CREATE TABLE jobd.%I PARTITION OF jobd.jobs_done '\n"
    "                       'FOR VALUES FROM (%L) TO (%L) PARTITION BY LIST (status)',\n"
    "                       leaf, lo, hi);\n"
    "        FOREACH st IN ARRAY ARRAY['succeeded', 'dead', 'cancelled'] LOOP\n"
    "            EXECUTE format('CREATE TABLE jobd.%I PARTITION OF jobd.%I FOR VALUES IN (%L)',\n"
    "                           leaf || '_' || left(st, 1), leaf, st);\n"
    "            EXECUTE format('CREATE INDEX ON jobd.%I (id)', leaf || '_' || left(st, 1));\n"
    "        END LOOP;\n"
    "        IF moved IS NOT NULL THEN\n"
    "            PERFORM set_config('jobd.moving', 'on', true);\n"
    "            INSERT INTO jobd.jobs_done SELECT * FROM unnest(moved);\n"
    "            PERFORM set_config('jobd.moving', 'off', true);\n"
    "        END IF;\n"
    "        made := made + 1;\n"
    "    END LOOP;\n"
    "    RETURN made;\n"
    "END $$;\n";
/* clang-format on */
