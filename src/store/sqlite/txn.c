/*
 * sqlite/txn.c — SQLite write transactions (BEGIN IMMEDIATE, the
 * durability of each, the statistics counted in them flushed at commit),
 * and the probe that proves a failing file takes writes again
 * (sqlite/file.c keeps the file's health).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/err.h"
#include "store/sqlite/internal.h"
#include "util/errtext.h"
#include "util/log.h"

int
sq_file_probe(struct sqlite_store *s, struct jobd_error *err)
{
    int rc = sq_file_check(s, err);
    if (rc != JOBD_OK || !sq_file_failing(s))
        return rc;
    /* Rewriting the header's user_version commits one page: room and a working disk. */
    if ((rc = sq_begin(s, err)) != JOBD_OK)
        return rc;
    int src = sqlite3_exec(s->db, "PRAGMA user_version = 0", NULL, NULL, NULL);
    if (src != SQLITE_OK) {
        rc = sq_error(s, src, "probe a write", err);
        sq_rollback(s);
        return rc;
    }
    if ((rc = sq_commit(s, err)) != JOBD_OK)
        return rc;
    sq_file_writes_work(s);
    return JOBD_OK;
}

/*
 * Durability per transaction. FULL syncs the WAL at each commit: every
 * write we acknowledge (an enqueue answered 201, a completion, a failure,
 * a cancel, a retry, a reap) survives power loss. NORMAL skips that sync;
 * we use it only for claims and heartbeats. Losing those with the machine
 * is the same as never having made them: every claimer died with it too, so
 * the job is simply pending (or its lease shorter) after the restart and
 * is claimed again. The WAL is a log, so a later FULL commit makes every
 * earlier commit durable as well: what survives is always a prefix.
 */
int
sq_set_sync(struct sqlite_store *s, bool full, struct jobd_error *err)
{
    if (s->sync_full == full && s->sync_known)
        return JOBD_OK;
    /* Not through the statement cache: this pragma acts when it is prepared. */
    int rc = sqlite3_exec(s->db, full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
                          NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return sq_error(s, rc, "set synchronous", err);
    s->sync_full = full;
    s->sync_known = true;
    return JOBD_OK;
}

int
sq_begin(struct sqlite_store *s, struct jobd_error *err)
{
    int rc = sq_file_check(s, err);
    if (rc == JOBD_OK)
        rc = sq_set_sync(s, true, err);
    if (rc != JOBD_OK)
        return rc;
    return sq_exec(s, "BEGIN IMMEDIATE", err);
}

int
sq_begin_relaxed(struct sqlite_store *s, struct jobd_error *err)
{
    int rc = sq_file_check(s, err);
    if (rc == JOBD_OK)
        rc = sq_set_sync(s, false, err);
    if (rc != JOBD_OK)
        return rc;
    return sq_exec(s, "BEGIN IMMEDIATE", err);
}

int
sq_commit(struct sqlite_store *s, struct jobd_error *err)
{
    int rc = sq_deps_flush(s, err);
    if (rc == JOBD_OK)
        rc = sq_stats_flush(s, err);
    if (rc == JOBD_OK)
        rc = sq_exec(s, "COMMIT", err);
    if (rc != JOBD_OK)
        sq_rollback(s);
    return rc;
}

void
sq_rollback(struct sqlite_store *s)
{
    sq_stats_reset(s);
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}
