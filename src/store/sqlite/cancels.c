/*
 * sqlite/cancels.c — store_cancels_requested on SQLite: which of the jobs a
 * remote worker holds have a cancel requested (docs/WORKER.md,
 * Cancellation), in one statement; the ids go in as one JSON array
 * (json_each), as in sqlite/ends.c, so the cached plan is the same however
 * many there are.
 */
#include <stdlib.h>

#include "core/err.h"
#include "store/sqlite/internal.h"

int
sq_op_cancels_requested(struct store *st, const int64_t *ids, size_t n, bool *requested,
                        struct jobd_error *err)
{
    static const char sql[] = "SELECT id FROM jobs WHERE id IN (SELECT value FROM json_each(?1)) "
                              "AND cancel_requested = 1";
    struct sqlite_store *s = sq_of(st);
    char *arr = sq_ids_json(ids, n);
    if (arr == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, "db", "out of memory");
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK) {
        free(arr);
        return rc;
    }
    sq_bind_text(stmt, 1, arr);
    while ((rc = sq_step_row(s, stmt, "read requested cancels", err)) == 1) {
        int64_t id = sqlite3_column_int64(stmt, 0);
        for (size_t i = 0; i < n; i++) /* one id may be asked for twice */
            if (ids[i] == id)
                requested[i] = true;
    }
    free(arr);
    return rc == 0 ? JOBD_OK : rc;
}
