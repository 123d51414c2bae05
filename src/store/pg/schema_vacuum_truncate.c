/*
 * pg/schema_vacuum_truncate.c — schema version 41 of pg/schema.c: a vacuum
 * of jobd.jobs never cuts the table's empty tail off. In a file of its own,
 * as every PostgreSQL step since version 23. Like every migration step,
 * never edited once released; a change is a new step.
 *
 * jobd.jobs is a queue: rows come in at one end and leave at the other
 * within seconds, and the scheduling plane vacuums it every few seconds
 * under churn (docs/OPERATIONS.md, section 4). Each vacuum that found the
 * last pages empty gave them back to the operating system, and the next
 * seconds of enqueues extended the file again: the heap swung between 21
 * and 77 MB in the soak of 2026-12-07 (docs/BENCHMARKS.md, Soak). Giving
 * the pages back takes an ACCESS EXCLUSIVE lock on the table, which every
 * claim, completion and enqueue then queues behind, however short; and
 * extending the file again costs each insert that needs a new page. The
 * table keeps its pages instead: its size is the most rows it held, and
 * the free space is reused from the free space map.
 */
#include "store/pg/internal.h"

const char pg_step_vacuum_truncate[] = "ALTER TABLE jobd.jobs SET (vacuum_truncate = false);\n";
