/*
 * sqlite/file.c — the health of the file SQLite writes to (sq_file_*,
 * sqlite/internal.h); the probe that proves a write works again is a
 * transaction, in sqlite/txn.c.
 *
 * SQLite writes through an open file descriptor, so a database file that
 * is deleted (or replaced by a restore) under a running jobd keeps taking
 * writes into an inode that no longer has a name: every job acknowledged
 * from then on is gone after a restart. So the process remembers which
 * file (device, inode) each path named when it first opened it, every
 * write transaction and every ping checks that the path still names it,
 * and a later open of that path never creates a fresh empty file in its
 * place. Any mismatch is JOBD_E_UNAVAILABLE (HTTP 503) with one error log
 * line, until jobd is restarted.
 *
 * A write that fails for lack of room or an I/O error (SQLITE_FULL,
 * SQLITE_IOERR, SQLITE_READONLY) marks the path as failing writes, for
 * every connection: store_ping then proves a write works (a one-page
 * commit) before it answers healthy again, so /healthz follows the disk
 * rather than the last read. Only that probe clears the mark: any other
 * commit may have written nothing (a reaper that found no expired lease).
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

/* One database path this process has opened; kept for the process's life. */
struct sq_file {
    char *path;
    dev_t dev;
    ino_t ino;
    atomic_bool lost_logged;
    atomic_bool write_failing;
    struct sq_file *next;
};

static pthread_mutex_t sq_files_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sq_file *sq_files;

static struct sq_file *
find_file(const char *path)
{
    for (struct sq_file *f = sq_files; f != NULL; f = f->next)
        if (strcmp(f->path, path) == 0)
            return f;
    return NULL;
}

/* JOBD_E_UNAVAILABLE for a path that no longer names f's file; logs it once. */
static int
file_lost(struct sq_file *f, struct jobd_error *err)
{
    if (!atomic_exchange(&f->lost_logged, true))
        log_write(LOGL_ERROR, "store",
                  "the SQLite database file was deleted or replaced while jobd had it open; "
                  "refusing every write until jobd is restarted with the file restored",
                  (struct log_field[]){LF_STR("path", f->path)}, 1);
    return jobd_error_set(err, JOBD_E_UNAVAILABLE, "db",
                          "the SQLite database file '%s' was deleted or replaced while jobd "
                          "had it open; restore it and restart jobd",
                          f->path);
}

/* Whether path still names f's file (a failed stat counts as no). */
static bool
still_named(const struct sq_file *f)
{
    struct stat st;
    return stat(f->path, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino;
}

int
sq_file_before_open(const char *path, struct jobd_error *err)
{
    pthread_mutex_lock(&sq_files_mu);
    struct sq_file *f = find_file(path);
    pthread_mutex_unlock(&sq_files_mu);
    return f == NULL || still_named(f) ? JOBD_OK : file_lost(f, err);
}

int
sq_file_opened(struct sqlite_store *s, struct jobd_error *err)
{
    struct stat st;
    if (stat(s->path, &st) != 0)
        return jobd_error_set(err, JOBD_E_UNAVAILABLE, "db", "cannot stat '%s': %s", s->path,
                              errno_text(errno));
    pthread_mutex_lock(&sq_files_mu);
    struct sq_file *f = find_file(s->path);
    if (f == NULL && (f = calloc(1, sizeof *f)) != NULL) {
        if ((f->path = strdup(s->path)) == NULL) {
            free(f);
            f = NULL;
        } else {
            f->dev = st.st_dev;
            f->ino = st.st_ino;
            f->next = sq_files;
            sq_files = f;
        }
    }
    pthread_mutex_unlock(&sq_files_mu);
    if (f == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    s->file = f;
    return f->dev == st.st_dev && f->ino == st.st_ino ? JOBD_OK : file_lost(f, err);
}

int
sq_file_check(struct sqlite_store *s, struct jobd_error *err)
{
    if (s->file == NULL || still_named(s->file))
        return JOBD_OK;
    return file_lost(s->file, err);
}

void
sq_file_write_failed(struct sqlite_store *s)
{
    if (s->file != NULL && !atomic_exchange(&s->file->write_failing, true))
        log_write(
            LOGL_ERROR, "store", "SQLite writes are failing (disk full or I/O error)",
            (struct log_field[]){LF_STR("path", s->path), LF_STR("error", sqlite3_errmsg(s->db))},
            2);
}

bool
sq_file_failing(const struct sqlite_store *s)
{
    return s->file != NULL && atomic_load(&s->file->write_failing);
}

void
sq_file_writes_work(struct sqlite_store *s)
{
    if (s->file != NULL && atomic_exchange(&s->file->write_failing, false))
        log_write(LOGL_INFO, "store", "SQLite writes work again",
                  (struct log_field[]){LF_STR("path", s->path)}, 1);
}
