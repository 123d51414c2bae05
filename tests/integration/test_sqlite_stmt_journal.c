/*
 * test_sqlite_stmt_journal.c — a group commit on SQLite writes no temporary
 * file. Every insert into jobs fires triggers, so SQLite journals each
 * statement of a transaction for a statement-level rollback; past its
 * in-memory limit (64 KiB by default, under one job's insert) that journal
 * went to a temporary file, created in every transaction and written a
 * page at a time (store/sqlite/open.c, SQ_STMT_JOURNAL_MEM). SQLite names
 * its temporary files in $SQLITE_TMPDIR, read when the library starts, so
 * this process points it at a directory of its own before the first open
 * and watches that directory with inotify while batches are written the
 * way the HTTP committer writes them (store_enqueue_batch).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/job.h"
#include "store/store.h"
#include "test.h"

#define BATCHES 5
#define PER_BATCH 10 /* about what 10 connections put in one group commit */
#define PREFILL 1000

/* n batches of `per` jobs through store_enqueue_batch, as the committer writes them. */
static void
enqueue_batches(struct store *st, int n, int per)
{
    struct jobd_error e = {0};
    struct job_spec *specs = calloc((size_t)per, sizeof *specs);
    struct job *out = calloc((size_t)per, sizeof *out);
    bool *replayed = calloc((size_t)per, sizeof *replayed);
    ASSERT(specs != NULL && out != NULL && replayed != NULL);
    for (int i = 0; i < per; i++)
        specs[i] = (struct job_spec){.type = "noop", .payload = "{\"n\":1}"};
    for (int b = 0; b < n; b++) {
        ASSERT_OK(store_enqueue_batch(st, specs, (size_t)per, out, replayed, &e), &e);
        for (int i = 0; i < per; i++)
            job_fini(&out[i]);
    }
    free(specs);
    free(out);
    free(replayed);
}

/* Files created in the watched directory since the last call (0 if none). */
static int
created(int fd)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    int n = 0;
    for (;;) {
        ssize_t len = read(fd, buf, sizeof buf);
        if (len < 0 && errno == EAGAIN)
            return n;
        ASSERT(len > 0);
        for (char *p = buf; p < buf + len;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            if (ev->mask & IN_CREATE) {
                fprintf(stderr, "created: %s\n", ev->len > 0 ? ev->name : "?");
                n++;
            }
            p += sizeof *ev + ev->len;
        }
    }
}

TEST(group_commit_writes_no_temporary_file)
{
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s", test_path("sqlite-tmp")); /* test_path's buffer is reused */
    ASSERT_EQ(mkdir(tmp, 0700), 0);
    ASSERT_EQ(setenv("SQLITE_TMPDIR", tmp, 1), 0); /* before SQLite starts */
    char url[1100];
    snprintf(url, sizeof url, "sqlite:%s", test_path("jobs.db"));
    struct store *st = NULL;
    struct jobd_error e = {0};
    ASSERT_OK(store_open(url, &st, &e), &e);
    ASSERT_OK(store_migrate(st, &e), &e);
    /* Some thousands of jobs first: on a table of a few pages one job's
     * insert changes fewer pages than on a table in use. */
    enqueue_batches(st, PREFILL / 500, 500);

    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    ASSERT(fd >= 0);
    ASSERT(inotify_add_watch(fd, tmp, IN_CREATE) >= 0);
    ASSERT_EQ(created(fd), 0);
    enqueue_batches(st, BATCHES, PER_BATCH);
    int n = created(fd);
    if (n != 0)
        TEST_FAIL("%d group commits of %d jobs created %d temporary files in SQLITE_TMPDIR "
                  "(a statement journal spilled to disk)",
                  BATCHES, PER_BATCH, n);
    close(fd);
    store_close(st);
}
