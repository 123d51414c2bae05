/*
 * pg/schema_vacuum_hot.c — schema version 40 of pg/schema.c: autovacuum
 * visits jobd.jobs without its cost delay. In a file of its own, as every
 * PostgreSQL step since version 23. Like every migration step, never edited
 * once released; a change is a new step.
 *
 * Under churn the scheduling plane vacuums jobd.jobs itself every few
 * seconds (docs/OPERATIONS.md, section 4) with VACUUM (SKIP_LOCKED), which
 * returns at once while autovacuum holds the table. Autovacuum still comes
 * once a naptime (the table's 2 % scale factor is always reached), and
 * throttled by the default cost delay its pass over the table took 2–4.5 s
 * of wall time for 0.5 s of CPU (a 6-minute soak at 8,700 jobs/s,
 * log_autovacuum_min_duration = 0): the plane's vacuums were skipped for
 * that long, and the dead entries piled up past the plane's usual gap. The
 * table is small (pending and running rows only), so an unthrottled pass
 * is short, and it is what the plane's own vacuum does anyway.
 */
#include "store/pg/internal.h"

const char pg_step_vacuum_hot[] = "ALTER TABLE jobd.jobs SET (autovacuum_vacuum_cost_delay = 0);\n";
