/*
 * sqlite/wake.c — cross-process wake-ups on SQLite (sqlite/wake.h): inotify
 * on the database's write-ahead log.
 *
 * SQLite has no LISTEN/NOTIFY, and a standalone worker shares nothing with
 * the process that enqueues but the database file. The store always runs in
 * WAL mode, where every commit, by any process, appends its pages to the
 * "-wal" file with write(2); inotify reports that as IN_MODIFY on the file.
 * So a worker watches the WAL and, on a change, makes one claim query —
 * once the commit is visible: the frames are written (the event) before
 * they are fsynced and published in the wal-index, so sqlite/open.c
 * (sq_wait) waits for PRAGMA data_version to move before it reports.
 *
 * Why this and not a notification channel (a directory of unix datagram
 * sockets next to the database, one per worker, where enqueuers send a
 * byte): inotify needs nothing from the writers, so every writer wakes us —
 * `jobd server`, libjobd clients, a retry, a schedule, the sqlite3 shell, an
 * older jobd — and there is no state on disk to go stale (sockets of
 * crashed workers, permissions of a shared directory) and no extra syscall
 * per socket on the enqueue path. The price is spurious wake-ups: any commit
 * (a heartbeat, a completion, our own claim) wakes the worker, which then
 * runs one claim query. That cannot feed on itself: a claim that finds
 * nothing due is a read (sqlite/read.c: any_due) and appends nothing
 * to the WAL, so an idle worker next to an idle database stays asleep. Busy
 * databases are coalesced: a wait drains every queued event at once and two
 * wake-ups are at least SQ_WAKE_GAP_MS apart, so a burst of commits costs
 * at most one claim per gap.
 *
 * What the watch must survive: a checkpoint restarts the WAL from its start
 * (still writes: IN_MODIFY), a TRUNCATE checkpoint or journal_size_limit
 * shrinks it (IN_MODIFY), and when the last connection closes SQLite
 * deletes it and the next one creates it anew — a new inode, which a watch
 * on the old file never sees. So the directory is watched for the WAL's
 * name being created (or renamed into place), and the file watch is moved
 * to the new inode; the creation itself counts as a wake-up. inotify does
 * not see writes made by other hosts on a network file system; SQLite's
 * locking does not work there either, and the worker's poll still runs.
 */
#include "store/sqlite/wake.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"

/* Minimum time between two wake-ups: bounds the claim queries a busy
 * database causes, far below the lateness a due-now job may have. */
#define SQ_WAKE_GAP_MS 2

struct sq_wake {
    int fd;               /* inotify instance, non-blocking */
    int dir_wd;           /* the database's directory: IN_CREATE, IN_MOVED_TO */
    int wal_wd;           /* the -wal file: IN_MODIFY; -1 while it does not exist */
    char *wal_path;       /* owned: "<db>-wal" */
    const char *wal_name; /* into wal_path: its last component */
    int64_t last_wake_us; /* monotonic time of the last wake-up returned */
};

static void
watch_wal(struct sq_wake *w)
{
    int wd = inotify_add_watch(w->fd, w->wal_path, IN_MODIFY);
    if (wd >= 0)
        w->wal_wd = wd;
    /* ENOENT: not created yet (or already gone again); the directory watch
     * tells us when it appears. */
}

int
sq_wake_open(const char *db_file, struct sq_wake **out)
{
    *out = NULL;
    if (db_file == NULL || db_file[0] != '/') {
        errno = EINVAL; /* in-memory or temporary database: no file to watch */
        return -1;
    }
    struct sq_wake *w = calloc(1, sizeof *w);
    size_t n = strlen(db_file);
    if (w == NULL || (w->wal_path = malloc(n + sizeof "-wal")) == NULL) {
        free(w);
        errno = ENOMEM;
        return -1;
    }
    memcpy(w->wal_path, db_file, n);
    memcpy(w->wal_path + n, "-wal", sizeof "-wal");
    char *slash = strrchr(w->wal_path, '/');
    w->wal_name = slash + 1;
    w->wal_wd = -1;
    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (w->fd < 0) {
        int e = errno;
        free(w->wal_path);
        free(w);
        errno = e;
        return -1;
    }
    /* The directory first, then the file: a WAL created in between is seen
     * by one or the other. */
    *slash = '\0';
    w->dir_wd = inotify_add_watch(w->fd, slash == w->wal_path ? "/" : w->wal_path,
                                  IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
    *slash = '/';
    if (w->dir_wd < 0) {
        int e = errno;
        sq_wake_close(w);
        errno = e;
        return -1;
    }
    watch_wal(w);
    *out = w;
    return 0;
}

/*
 * Reads every queued event. Returns 1 if one of them means "a commit may
 * have happened", 0 if none did (events for other files in the directory),
 * -1 on a read error.
 */
static int
drain(struct sq_wake *w)
{
    _Alignas(struct inotify_event) char buf[4096];
    int hit = 0;
    for (;;) {
        ssize_t len = read(w->fd, buf, sizeof buf);
        if (len < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN ? hit : -1;
        }
        for (char *p = buf; p < buf + len;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            p += sizeof *ev + ev->len;
            if (ev->mask & IN_Q_OVERFLOW) {
                hit = 1; /* events were lost: assume the worst */
            } else if (ev->wd == w->dir_wd) {
                if (ev->len > 0 && strcmp(ev->name, w->wal_name) == 0) {
                    watch_wal(w); /* a new WAL, a new inode */
                    hit = 1;
                }
            } else if (ev->mask & IN_MODIFY) {
                hit = 1; /* the WAL (possibly an old inode a writer still appends to) */
            }
            /* IN_IGNORED: an old WAL's watch went with its inode. */
        }
    }
}

int
sq_wake_wait(struct sq_wake *w, int timeout_ms)
{
    int64_t deadline = clock_mono_now_us() + (int64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000;
    for (;;) {
        int64_t left_us = deadline - clock_mono_now_us();
        struct pollfd pfd = {.fd = w->fd, .events = POLLIN};
        int pr = poll(&pfd, 1, left_us > 0 ? (int)((left_us + 999) / 1000) : 0);
        if (pr < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (pr == 0)
            return 0;
        int hit = drain(w);
        if (hit < 0)
            return -1;
        if (hit == 0)
            continue; /* only other files of the directory */
        int64_t since = clock_mono_now_us() - w->last_wake_us;
        if (since < SQ_WAKE_GAP_MS * 1000) {
            /* Right after the last one: let the burst settle, then take it all. */
            struct timespec ts = {.tv_sec = 0,
                                  .tv_nsec = (long)(SQ_WAKE_GAP_MS * 1000 - since) * 1000L};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
                ;
            if (drain(w) < 0)
                return -1;
        }
        w->last_wake_us = clock_mono_now_us();
        return 1;
    }
}

void
sq_wake_close(struct sq_wake *w)
{
    if (w == NULL)
        return;
    if (w->fd >= 0)
        close(w->fd);
    free(w->wal_path);
    free(w);
}
