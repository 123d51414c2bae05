/*
 * sqlite/ckpt.c — see sqlite/ckpt.h. One thread, one connection, one flag
 * under a mutex: requests never queue up, and the committing thread only
 * takes the mutex for a store and a signal. The connection is opened in the
 * thread, on first use (a worker that never fills 1000 frames never opens
 * it); a failure to open or to checkpoint is left to the next request, and
 * SQLite checkpoints anyway when the last connection closes.
 */
#include "store/sqlite/ckpt.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

struct sq_ckpt {
    char *path; /* owned */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool due;  /* under mu */
    bool quit; /* under mu */
};

static sqlite3 *
open_db(const char *path)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK ||
        /* Reads the schema, which opens the WAL and its index: a checkpoint
         * on a connection that never read anything may find no WAL. */
        sqlite3_exec(db, "SELECT count(*) FROM sqlite_schema", NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

static void *
ckpt_main(void *arg)
{
    struct sq_ckpt *c = arg;
    prctl(PR_SET_NAME, "jobd-ckpt"); /* findable in /proc (tests/integration/test_sqlite_ckpt.sh) */
    sqlite3 *db = NULL;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->due && !c->quit)
            pthread_cond_wait(&c->cv, &c->mu);
        if (c->quit)
            break;
        c->due = false;
        pthread_mutex_unlock(&c->mu);
        if (db == NULL)
            db = open_db(c->path);
        /* BUSY (another checkpointer) or an I/O error: the next request retries. */
        if (db != NULL)
            sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        pthread_mutex_lock(&c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    sqlite3_close(db);
    return NULL;
}

int
sq_ckpt_start(const char *path, struct sq_ckpt **out)
{
    *out = NULL;
    struct sq_ckpt *c = calloc(1, sizeof *c);
    if (c == NULL || (c->path = strdup(path)) == NULL) {
        free(c);
        return ENOMEM;
    }
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    /* The thread takes no signal: they belong to the worker's own threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&c->thread, NULL, ckpt_main, c);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_cond_destroy(&c->cv);
        pthread_mutex_destroy(&c->mu);
        free(c->path);
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void
sq_ckpt_request(struct sq_ckpt *c)
{
    pthread_mutex_lock(&c->mu);
    c->due = true;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

void
sq_ckpt_stop(struct sq_ckpt *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->mu);
    c->quit = true;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c->path);
    free(c);
}
