/*
 * sqlite/wake.h — a cross-process "the database changed" signal for SQLite,
 * built on inotify watching the database's write-ahead log. Internal to
 * src/store (sqlite/open.c uses it for store_wait); see sqlite/wake.c for
 * why it is shaped so.
 */
#ifndef JOBD_STORE_SQLITE_WAKE_H
#define JOBD_STORE_SQLITE_WAKE_H

struct sq_wake;

/*
 * Starts watching the WAL of the database file db_file (an absolute path,
 * as sqlite3_db_filename gives it). Returns 0 and a caller-owned watcher in
 * *out (free with sq_wake_close), or -1 with errno set when inotify is not
 * available here (no kernel support, the per-user instance limit, an
 * in-memory database): the caller then falls back to polling.
 */
int sq_wake_open(const char *db_file, struct sq_wake **out);
/*
 * Waits up to timeout_ms for a commit by any process (an append to the
 * WAL, or the WAL being created again). Returns 1 if one happened, 0 on
 * timeout, -1 on an error (errno). Bursts coalesce: everything queued is
 * drained at once, and two wake-ups are at least SQ_WAKE_GAP_MS apart.
 */
int sq_wake_wait(struct sq_wake *w, int timeout_ms);
/* Stops watching and frees w (NULL is fine). */
void sq_wake_close(struct sq_wake *w);

#endif
