/*
 * pg/schema_groups_cheap.c — schema version 37 of pg/schema.c: the listing
 * index by group (version 33) over pending rows only, so that a claim or a
 * completion of a grouped job writes no entry to it (docs/DESIGN.md,
 * Groups). In a file of its own, as every PostgreSQL step since version 23.
 * Like every migration step, never edited once released; a change is a new
 * step.
 *
 * A claim's or a completion's UPDATE is never HOT (status is in the partial
 * indexes' predicates), so each of a grouped job's row versions wrote an
 * entry of jobs_grp_id (grp, id). Those entries are the costly kind: the
 * key is unchanged, so a full leaf page is first cleaned by bottom-up
 * deletion, which visits the heap pages of the page's entries; a group's
 * ids are spread over the whole table when many groups take turns, so
 * that is a heap page an entry. With 1,000 groups index insertion was about
 * a third of the server's time in `make bench`'s features block (perf on
 * the worker's backends, 2026-12-07). As version 14 did for jobs_type_id:
 * listings by group (pg/list.c) walk it only in their pending branch;
 * running and succeeded rows come from jobs_lease and jobs_succeeded.
 */
#include "store/pg/internal.h"

/* clang-format off */
const char pg_step_groups_cheap[] =
    "DROP INDEX jobd.jobs_grp_id;\n"
    "CREATE INDEX jobs_grp_id ON jobd.jobs (grp, id)\n"
    "    WHERE grp IS NOT NULL AND status NOT IN ('running', 'succeeded');\n";
/* clang-format on */
