/*
 * pg/schema_autovacuum_fallback.c — schema version 42 of pg/schema.c:
 * autovacuum vacuums jobd.jobs only when the scheduling plane has not. In a
 * file of its own, as every PostgreSQL step since version 23. Like every
 * migration step, never edited once released; a change is a new step.
 *
 * The plane vacuums jobd.jobs every few seconds under churn
 * (docs/OPERATIONS.md, section 4). Autovacuum came on top of it once a
 * naptime: the table's inserts since the last vacuum (tens of thousands,
 * the plane's vacuum being seconds old) always passed its insert
 * threshold. While autovacuum held the table the plane's
 * VACUUM (SKIP_LOCKED) returned at once, and in the soak of 2026-12-08
 * 00:44 the dead row versions reached 120 k behind it, and the heap grew
 * by 40 % and its indexes by 20 %, for good (a vacuum keeps the table's
 * pages: version 41). So autovacuum no longer vacuums the table for its
 * inserts, and for its dead rows only past 200,000 of them (plus the 2 %
 * of version 1): more than the plane lets pile up at 8,700 jobs a second,
 * and what bounds the table when no plane runs (no `jobd server` up). Its
 * ANALYZE and its vacuums against wraparound are unchanged.
 */
#include "store/pg/internal.h"

const char pg_step_autovacuum_fallback[] =
    "ALTER TABLE jobd.jobs SET (autovacuum_vacuum_insert_threshold = -1,\n"
    "    autovacuum_vacuum_threshold = 200000);\n";
