/*
 * sqlite/ends.c — store_job_states on SQLite (docs/API.md, Waiting for a
 * result): the status of every job a server's waiting requests wait for,
 * in one statement. The ids go in as one JSON array (json_each), so the
 * statement text and its cached plan are the same however many there are;
 * each id is a rowid lookup in jobs and in jobs_done. Wake-ups need nothing
 * here: any commit shows in the WAL (store_wait_ends is store_wait).
 */
#include <stdlib.h>

#include "core/err.h"
#include "store/sqlite/internal.h"

int
sq_op_job_states(struct store *st, const int64_t *ids, size_t n, int *status,
                 struct jobd_error *err)
{
    static const char sql[] =
        "SELECT id, status FROM jobs WHERE id IN (SELECT value FROM json_each(?1)) "
        "UNION ALL SELECT id, status FROM jobs_done WHERE id IN (SELECT value FROM json_each(?1)) "
        "UNION ALL SELECT id, status FROM jobs_waiting WHERE id IN (SELECT value FROM "
        "json_each(?1))";
    struct sqlite_store *s = sq_of(st);
    for (size_t i = 0; i < n; i++)
        status[i] = -1;
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
    while ((rc = sq_step_row(s, stmt, "read job states", err)) == 1) {
        /* ids are ascending and each once (store.h) */
        size_t i = store_ids_find(ids, n, sqlite3_column_int64(stmt, 0));
        const char *name = (const char *)sqlite3_column_text(stmt, 1);
        enum job_status js;
        if (i != SIZE_MAX && name != NULL && job_status_parse(name, &js) == JOBD_OK)
            status[i] = (int)js;
    }
    free(arr);
    return rc == 0 ? JOBD_OK : rc;
}
