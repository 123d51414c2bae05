/*
 * pg/cancels.c — store_cancels_requested on PostgreSQL: which of the jobs a
 * remote worker holds have a cancel requested (docs/WORKER.md,
 * Cancellation). One statement for all of them (the ids as one array), a
 * primary-key lookup each: the parked cancel request of a --server worker
 * asks it once when it arrives and once when it is woken.
 */
#include "core/err.h"
#include "store/pg/internal.h"

/* $1 ids: those running with a cancel requested (a cancel ends any other at once). */
PG_STMT(st_cancels, "SELECT id FROM jobd.jobs WHERE id = ANY($1::bigint[]) AND cancel_requested");

int
pg_op_cancels_requested(struct store *st, const int64_t *ids, size_t n, bool *requested,
                        struct jobd_error *err)
{
    struct pg_array a;
    pg_array_begin(&a);
    for (size_t i = 0; i < n; i++)
        pg_array_add_i64(&a, ids[i], false);
    const char *vals[1] = {pg_array_end(&a)};
    if (a.oom) {
        pg_array_fini(&a);
        return jobd_error_set(err, JOBD_E_NOMEM, "db", "out of memory");
    }
    PGresult *r = NULL;
    int rc = pg_exec(pg_of(st), &st_cancels, 1, vals, &r, err);
    pg_array_fini(&a);
    if (rc != JOBD_OK)
        return rc;
    for (int row = 0; row < PQntuples(r); row++) {
        int64_t id = pg_get_i64(r, row, 0);
        for (size_t i = 0; i < n; i++) /* one id may be asked for twice */
            if (ids[i] == id)
                requested[i] = true;
    }
    PQclear(r);
    return JOBD_OK;
}
