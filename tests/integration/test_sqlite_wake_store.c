/*
 * test_sqlite_wake_store.c — store_wait on SQLite (store/sqlite/wake.c) at
 * the store layer, on a real file with several connections: it sleeps
 * while nothing commits, wakes on another connection's commit, does not
 * wake on a claim that found nothing (so an idle worker cannot chase its
 * own queries), and keeps working after a TRUNCATE checkpoint empties the
 * WAL; and that another process's commits are all seen once visible (the
 * WAL is written before the commit is published in the wal-index), also
 * the second of two back-to-back commits whose frames were taken with the
 * first one's wake-up. The cross-process, real-binary version is
 * test_sqlite_wake.sh.
 */
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/job.h"
#include "store/sqlite/wake.h"
#include "store/store.h"
#include "test.h"
#include "util/clock.h"

static struct store *
open_db(const char *path)
{
    char url[1100];
    snprintf(url, sizeof url, "sqlite:%s", path);
    struct store *st = NULL;
    struct jobd_error e = {0};
    ASSERT_OK(store_open(url, &st, &e), &e);
    ASSERT_OK(store_migrate(st, &e), &e);
    return st;
}

/* store_wait(st, ms), checking it neither fails nor returns too late. */
static int
wait_for(struct store *st, int ms)
{
    struct jobd_error e = {0};
    int64_t t0 = clock_mono_now_us();
    int r = store_wait(st, ms, &e);
    if (r < 0)
        TEST_FAIL("store_wait: %s", e.msg);
    ASSERT(clock_mono_now_us() - t0 < (int64_t)(ms + 500) * 1000);
    return r;
}

static void
enqueue(struct store *st)
{
    struct jobd_error e = {0};
    struct job_spec spec = {.type = "work"};
    struct job j = {0};
    ASSERT_OK(store_enqueue(st, &spec, &j, NULL, &e), &e);
    job_fini(&j);
}

static size_t
claim(struct store *st)
{
    struct jobd_error e = {0};
    struct claim_req req = {.worker_id = "t", .limit = 10};
    struct job_list got = {0};
    ASSERT_OK(store_claim(st, &req, &got, &e), &e);
    size_t n = got.n;
    job_list_fini(&got);
    return n;
}

TEST(wait_wakes_on_commits_of_others_only)
{
    const char *path = test_path("wake.db");
    struct store *a = open_db(path); /* the listener */
    struct store *b = open_db(path); /* an enqueuer */
    struct store *c = open_db(path); /* the worker's own claims */
    ASSERT(store_wait_ready(a));
    wait_for(a, 0);                 /* whatever the migrations left queued */
    ASSERT_EQ(wait_for(a, 200), 0); /* nothing commits: it sleeps */

    enqueue(b);
    int64_t t0 = clock_mono_now_us();
    ASSERT_EQ(wait_for(a, 5000), 1);
    ASSERT(clock_mono_now_us() - t0 < 1000 * 1000);

    /* A claim that takes the job commits (a wake-up, once)... */
    ASSERT_EQ(claim(c), (size_t)1);
    ASSERT_EQ(wait_for(a, 1000), 1);
    /* ...one that finds nothing writes nothing: no wake-up to chase. */
    ASSERT_EQ(claim(c), (size_t)0);
    ASSERT_EQ(wait_for(a, 200), 0);

    /* A TRUNCATE checkpoint empties the WAL; the watch still sees commits. */
    sqlite3 *raw = NULL;
    ASSERT_EQ(sqlite3_open(path, &raw), SQLITE_OK);
    int logged = -1, done = -1;
    ASSERT_EQ(sqlite3_wal_checkpoint_v2(raw, NULL, SQLITE_CHECKPOINT_TRUNCATE, &logged, &done),
              SQLITE_OK);
    sqlite3_close(raw);
    wait_for(a, 0); /* the truncation itself may have woken it */
    ASSERT_EQ(wait_for(a, 200), 0);
    enqueue(b);
    ASSERT_EQ(wait_for(a, 5000), 1);

    store_close(c);
    store_close(b);
    store_close(a);
}

/*
 * Another process enqueues NJOBS jobs, 20 ms apart (synchronous=FULL, so
 * each commit fsyncs between writing its frames and publishing them). A
 * watcher that claims only when woken must get every one: a wake-up that
 * came before its commit was visible would leave the last job unclaimed
 * and the final wait would time out. (The window is the fsync: on a fast
 * disk or tmpfs this rarely hits; it did under a loaded `make test`.)
 */
TEST(every_commit_of_another_process_is_seen_once_visible)
{
    enum { NJOBS = 20 };
    const char *path = test_path("procs.db");
    struct store *a = open_db(path);
    struct store *c = open_db(path);
    ASSERT(store_wait_ready(a));
    fflush(NULL);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        char url[1100];
        snprintf(url, sizeof url, "sqlite:%s", path);
        struct store *b = NULL;
        struct jobd_error e = {0};
        if (store_open(url, &b, &e) != JOBD_OK)
            _exit(2);
        for (int i = 0; i < NJOBS; i++) {
            usleep(20000);
            struct job_spec spec = {.type = "work"};
            if (store_enqueue(b, &spec, NULL, NULL, &e) != JOBD_OK)
                _exit(3);
        }
        store_close(b);
        _exit(0);
    }
    size_t got = 0;
    while (got < NJOBS) {
        if (wait_for(a, 3000) != 1)
            TEST_FAIL("no wake-up for job %zu of %d (claimed %zu)", got + 1, NJOBS, got);
        got += claim(c);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_EQ(got, (size_t)NJOBS);
    store_close(c);
    store_close(a);
}

/* Rows in probe, read on raw (a read: it writes nothing to the WAL). */
static int
probe_rows(sqlite3 *raw)
{
    sqlite3_stmt *st = NULL;
    ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT count(*) FROM probe", -1, &st, NULL), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    int n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* The child of the test below: pairs of commits, each pair when told (a
 * byte on go), until go closes. */
static void
commit_pairs(const char *path, int go)
{
    sqlite3 *w = NULL;
    if (sqlite3_open(path, &w) != SQLITE_OK ||
        sqlite3_exec(w, "PRAGMA synchronous=FULL", NULL, NULL, NULL) != SQLITE_OK)
        _exit(2);
    char byte;
    while (read(go, &byte, 1) == 1)
        if (sqlite3_exec(w, "INSERT INTO probe VALUES (1)", NULL, NULL, NULL) != SQLITE_OK ||
            sqlite3_exec(w, "INSERT INTO probe VALUES (2)", NULL, NULL, NULL) != SQLITE_OK)
            _exit(3);
    sqlite3_close(w);
    _exit(0);
}

/*
 * Another process commits two transactions back to back (each fsyncs
 * between writing its frames and publishing them); then nobody writes until
 * the watcher has seen both. The trap: one drain takes the second commit's
 * frames while the version read after it sees only the first. The wake-up
 * for that move must not use up the second commit, whose publication then
 * moves the version with no event left to report it: the watcher used to
 * sleep until the next commit by anyone (in a worker: a job due now one
 * enqueue interval late), here until the end of its wait, whose last
 * re-read of the version finds it.
 */
TEST(a_commit_published_after_its_event_was_drained_still_wakes)
{
    enum { PAIRS = 20, WAIT_MS = 1500 };
    const char *path = test_path("pairs.db");
    struct store *a = open_db(path);
    sqlite3 *raw = NULL;
    ASSERT_EQ(sqlite3_open(path, &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE probe (x)", NULL, NULL, NULL), SQLITE_OK);
    ASSERT(store_wait_ready(a));
    while (wait_for(a, 100) == 1) /* the set-up's own commits */
        ;
    int go[2];
    ASSERT_EQ(pipe(go), 0);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        close(go[1]);
        commit_pairs(path, go[0]);
    }
    close(go[0]);
    for (int pair = 0; pair < PAIRS; pair++) {
        ASSERT_EQ(write(go[1], "x", 1), 1);
        int seen = 0;
        while (seen < 2 * (pair + 1)) {
            int64_t t0 = clock_mono_now_us();
            int r = wait_for(a, WAIT_MS);
            int64_t took_ms = (clock_mono_now_us() - t0) / 1000;
            seen = probe_rows(raw);
            if (r == 0)
                TEST_FAIL("pair %d: no commit for %d ms (%d rows)", pair + 1, WAIT_MS, seen);
            if (took_ms >= WAIT_MS)
                TEST_FAIL("pair %d: row %d was visible, but only the re-read at the end of "
                          "a %d ms wait saw it: its publication woke nobody",
                          pair + 1, seen, WAIT_MS);
        }
    }
    close(go[1]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    sqlite3_close(raw);
    store_close(a);
}

/* Where there is nothing to watch, setting up fails cleanly (the worker
 * then keeps its short poll) instead of half-working. */
TEST(watch_setup_fails_cleanly_without_a_file_to_watch)
{
    struct sq_wake *w = (struct sq_wake *)1;
    ASSERT_EQ(sq_wake_open("relative.db", &w), -1); /* in-memory / temporary */
    ASSERT(w == NULL);
    ASSERT_EQ(sq_wake_open("", &w), -1);
    ASSERT_EQ(sq_wake_open("/nonexistent-jobd-dir/x.db", &w), -1); /* no directory */
    ASSERT(w == NULL);
    ASSERT_EQ(sq_wake_open(test_path("fine.db"), &w), 0); /* no file yet is fine */
    ASSERT_EQ(sq_wake_wait(w, 50), 0);
    sq_wake_close(w);
}
