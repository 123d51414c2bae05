/*
 * sqlite/enqueue.c — enqueue and enqueue_batch on SQLite.
 *
 * One BEGIN IMMEDIATE transaction per call; a batch is all or nothing.
 * Each job goes through sq_enqueue_item (sqlite/enqkeys.c: a debounce or a
 * unique window first), which inserts it with sq_enqueue_one
 * (sqlite/enqueue_one.c). Conventions in sqlite/internal.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/sqlite/internal.h"

int
sq_op_enqueue(struct store *st, const struct job_spec *spec, struct job *out, bool *replayed,
              struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = sq_enqueue_item(s, spec, sq_now(s), NULL, out, replayed, err);
    if (rc != JOBD_OK) {
        sq_rollback(s);
        return rc;
    }
    rc = sq_commit(s, err);
    if (rc != JOBD_OK)
        job_fini(out);
    return rc;
}

int
sq_op_enqueue_batch(struct store *st, const struct job_spec *specs, size_t n, struct job *out,
                    bool *replayed, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t now = sq_now(s);
    size_t i;
    for (i = 0; i < n; i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "jobs[%zu].", i);
        rc = sq_enqueue_item(s, &specs[i], now, prefix, out ? &out[i] : NULL,
                             replayed ? &replayed[i] : NULL, err);
        if (rc != JOBD_OK)
            break;
    }
    if (rc == JOBD_OK)
        rc = sq_commit(s, err);
    else
        sq_rollback(s);
    if (rc != JOBD_OK) {
        /* Nothing was written: hand back nothing either. */
        for (size_t k = 0; out != NULL && k < n; k++)
            job_fini(&out[k]);
        for (size_t k = 0; replayed != NULL && k < n; k++)
            replayed[k] = false;
    }
    return rc;
}
