/*
 * sqlite/ckpt.h — WAL checkpoints of one SQLite database, run by a thread of
 * their own on a connection of their own.
 *
 * Every connection checkpoints from its WAL hook (sqlite/open.c), right
 * after a commit, on the committing thread. For a worker's loop that commit
 * is usually a claim: the job it just claimed would wait for the whole
 * checkpoint (copy the WAL's pages into the database, fsync the WAL and the
 * database) before its handler starts — a few milliseconds every ~1000
 * frames, which was the tail of the "job due now" lateness on SQLite. So the
 * connection a worker waits on (store_wait_ready) hands its checkpoints to
 * this thread instead; a PASSIVE checkpoint takes no lock a claim needs, so
 * the two run side by side.
 */
#ifndef JOBD_STORE_SQLITE_CKPT_H
#define JOBD_STORE_SQLITE_CKPT_H

struct sq_ckpt;

/* Starts the thread for the database file at path (copied; absolute, as
 * sqlite3_db_filename gives it). Its connection is opened at the first
 * checkpoint. 0, or an errno value (then the caller checkpoints inline). */
int sq_ckpt_start(const char *path, struct sq_ckpt **out);

/* Asks for a PASSIVE checkpoint soon; never blocks on one. Requests made
 * while one runs fold into one more. */
void sq_ckpt_request(struct sq_ckpt *c);

/* Stops the thread (after the checkpoint under way, if any), closes its
 * connection and frees c. NULL is a no-op. */
void sq_ckpt_stop(struct sq_ckpt *c);

#endif
