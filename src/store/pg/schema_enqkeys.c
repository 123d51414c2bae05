/*
 * pg/schema_enqkeys.c — schema version 28 of pg/schema.c, the keys of
 * debounced enqueues and unique windows (docs/MODEL.md, Debounce and unique
 * windows; pg/enqkeys.c), in a file of its own as pg/schema_deps.c is.
 * Like every migration step, never edited once released.
 *
 * A side table rather than job columns: no statement that moves a job
 * between its tables carries it, and a job without such a key costs
 * nothing. One row per key: a debounce key is scoped to its job's queue and
 * type, a unique key is global (queue and type ''). job_id is the job the
 * key holds (0 only inside the transaction that is making it); until, the
 * end of a unique window (NULL for a debounce). A row goes with its job
 * (retention, deletes); an expired window is deleted by the retention pass
 * (store_keys_expire) or taken over by the next enqueue of its key.
 */
#include "store/pg/internal.h"

const char pg_step_enqkeys[] =
    "CREATE TABLE jobd.enqueue_keys (\n"
    "    kind   text NOT NULL CHECK (kind IN ('debounce', 'unique')),\n"
    "    queue  text NOT NULL,\n"
    "    type   text NOT NULL,\n"
    "    key    text NOT NULL,\n"
    "    job_id bigint NOT NULL,\n"
    "    until  timestamptz,\n"
    "    PRIMARY KEY (kind, queue, type, key)\n"
    ");\n"
    "CREATE INDEX enqueue_keys_job ON jobd.enqueue_keys (job_id);\n"
    "CREATE INDEX enqueue_keys_until ON jobd.enqueue_keys (until) WHERE until IS NOT NULL;\n";
