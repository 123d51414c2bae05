/*
 * test_sqlite_group_claim_pages.c — on SQLite, draining a queue of 1,000
 * groups writes not far more pages to the WAL than draining plain jobs
 * (docs/DESIGN.md, Groups, "Tags on SQLite"), and each claim still takes
 * the k-th job of every group before the (k+1)-th of any. Every page a
 * transaction changes goes to the WAL whole, so pages are what a claim
 * costs there: when the claim took each group's head by a probe of an
 * index in group order (jobs_group_claim), each claim of 1,000 jobs in
 * 1,000 groups deleted an entry from nearly every leaf of that index
 * (2.3 times plain jobs' frames over the drain), where a walk in tag
 * order deletes neighbours (1.4 times, the tagging of every job counted
 * in). Counted with a WAL hook of the test's own (so the store's
 * checkpoints stop), not timed: the count does not depend on the machine.
 * Also: a job back to pending loses its tag and queues behind its group.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "core/err.h"
#include "store/store.h"
#include "store/sqlite/internal.h"
#include "test.h"

#define GROUPS 1000
#define PER_GROUP 20
#define CLAIM 1000
#define CLAIMS (GROUPS * PER_GROUP / CLAIM) /* the queue drained: tagging counts whole */

static int64_t g_frames, g_last;

/* frames: the WAL's size after a commit; it only grows, as nothing checkpoints. */
static int
count_frames(void *ctx, sqlite3 *db, const char *name, int frames)
{
    (void)ctx, (void)db, (void)name;
    g_frames += frames >= g_last ? frames - g_last : frames;
    g_last = frames;
    return SQLITE_OK;
}

static void
exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        TEST_FAIL("%s: %s", sql, msg ? msg : "?");
}

/* How many groups of the grouped queue do not have k running jobs. */
static int
uneven_groups(sqlite3 *db, int k)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM (SELECT grp FROM jobs WHERE queue = 'grouped'"
             " AND status = 'running' GROUP BY grp HAVING count(*) <> %d)",
             k);
    sqlite3_stmt *stmt;
    ASSERT_EQ(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
    int n = sqlite3_column_int(stmt, 0);
    sqlite3_finalize(stmt);
    return n;
}

/* WAL frames of draining queue q by CLAIMS claims of CLAIM jobs, each
 * claim's jobs completed in batches of 100, as a worker reports them:
 * the claims' frames into *claims, the completions' into *done. Each
 * claim of the grouped queue takes one job of every group (the k-th). */
static void
drain_frames(struct store *st, const char *q, int64_t *claims, int64_t *done)
{
    struct jobd_error err = {0};
    const char *qs[] = {q};
    struct claim_req req = {.worker_id = "w", .queues = qs, .n_queues = 1, .limit = CLAIM};
    *claims = *done = 0;
    for (int i = 0; i < CLAIMS; i++) {
        struct job_list l = {0};
        int64_t before = g_frames;
        ASSERT_OK(store_claim(st, &req, &l, &err), &err);
        *claims += g_frames - before;
        ASSERT_EQ(l.n, (size_t)CLAIM);
        if (strcmp(q, "grouped") == 0)
            ASSERT_EQ(uneven_groups(((struct sqlite_store *)st)->db, 1), 0);
        for (size_t k = 0; k < l.n; k += 100) {
            struct completion c[100];
            int outcome[100];
            size_t m = l.n - k < 100 ? l.n - k : 100;
            for (size_t j = 0; j < m; j++)
                c[j] = (struct completion){.id = l.v[k + j].id, .attempt = l.v[k + j].attempt};
            before = g_frames;
            ASSERT_OK(store_complete_batch(st, c, m, outcome, &err), &err);
            *done += g_frames - before;
            for (size_t j = 0; j < m; j++)
                ASSERT_EQ(outcome[j], JOBD_OK);
        }
        job_list_fini(&l);
    }
}

TEST(sqlite_drain_of_many_groups_writes_near_the_pages_of_plain_jobs)
{
    struct jobd_error err = {0};
    struct store *st = NULL;
    char url[600];
    snprintf(url, sizeof url, "sqlite:%s", test_path("group_pages.db"));
    ASSERT_OK(store_open(url, &st, &err), &err);
    ASSERT_OK(store_migrate(st, &err), &err);
    sqlite3 *db = ((struct sqlite_store *)st)->db;
    char sql[1024];
    /* the same jobs twice, in turn over the groups (as bench/bench_db.c seeds them) and plain */
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < %d) "
             "INSERT INTO jobs (queue, type, payload, status, priority, run_at, max_attempts,"
             "  created_at, grp) "
             "SELECT q, 't', '{}', 'pending', 0, 1000000 + i, 25, 1000000,"
             "  CASE WHEN q = 'grouped' THEN 'g' || (i %% %d) END"
             "  FROM c, (SELECT 'grouped' AS q UNION ALL SELECT 'plain') ORDER BY q, i",
             GROUPS * PER_GROUP - 1, GROUPS);
    exec(db, "BEGIN");
    exec(db, "INSERT INTO queues (name, grouped) VALUES ('grouped', 1)");
    exec(db, sql);
    exec(db, "INSERT OR IGNORE INTO job_groups (queue, grp) SELECT DISTINCT queue, grp FROM jobs"
             " WHERE grp IS NOT NULL");
    exec(db, "COMMIT");
    sqlite3_wal_hook(db, count_frames, NULL);
    int64_t pc, pd, gc, gd;
    drain_frames(st, "plain", &pc, &pd);
    drain_frames(st, "grouped", &gc, &gd);
    printf("  WAL frames of draining %d jobs (claims + completions): plain %lld + %lld,"
           " %d groups %lld + %lld\n",
           CLAIMS * CLAIM, (long long)pc, (long long)pd, GROUPS, (long long)gc, (long long)gd);
    ASSERT(pc > 0 && pd > 0);
    /* measured: claims 1.43 times plain's with tags, 2.29 times by the
     * probes of jobs_group_claim (their tagging counted in: the queue is
     * drained) */
    if (4 * gc > 7 * pc)
        TEST_FAIL("claims of %d groups wrote %lld WAL frames, plain ones %lld: over 1.75 times",
                  GROUPS, (long long)gc, (long long)pc);
    /* measured: the drain XXX times plain's with the indexes by group
     * within buckets of ids, 1.63 with them in group order (jobs_grp_id,
     * jobs_done_grp_id: a completion batch changed a leaf of each per group) */
    if (20 * (gc + gd) > 29 * (pc + pd))
        TEST_FAIL("draining %d groups wrote %lld WAL frames, plain jobs %lld: over 1.45 times",
                  GROUPS, (long long)(gc + gd), (long long)(pc + pd));
    store_close(st);
}

/* Claims up to n jobs of queue "rq" into l (appended). */
static void
claim_rq(struct store *st, int n, struct job_list *l)
{
    struct jobd_error err = {0};
    const char *qs[] = {"rq"};
    struct claim_req req = {.worker_id = "w", .queues = qs, .n_queues = 1, .limit = n};
    ASSERT_OK(store_claim(st, &req, l, &err), &err);
}

/* A job back to pending (here a retry) loses its tag (the trigger
 * jobs_untag) and is tagged again behind its group's backlog, not at its
 * old place ahead of the other groups (tag 0 of a, then tag 3). */
TEST(sqlite_job_back_to_pending_is_tagged_again_behind_its_group)
{
    struct jobd_error err = {0};
    struct store *st = NULL;
    char url[600];
    snprintf(url, sizeof url, "sqlite:%s", test_path("group_retag.db"));
    ASSERT_OK(store_open(url, &st, &err), &err);
    ASSERT_OK(store_migrate(st, &err), &err);
    struct job_spec specs[6];
    for (int i = 0; i < 6; i++)
        specs[i] = (struct job_spec){.type = "t", .queue = "rq", .group = i < 3 ? "a" : "b"};
    ASSERT_OK(store_enqueue_batch(st, specs, 6, NULL, NULL, &err), &err);
    struct job_list l = {0};
    claim_rq(st, 1, &l); /* a's first: tags a 0..2, b 0..2 */
    ASSERT_EQ(l.n, (size_t)1);
    ASSERT_STR_EQ(l.v[0].group, "a");
    int64_t first = l.v[0].id;
    ASSERT_OK(store_fail(st, first, l.v[0].attempt, "x", true, 0, NULL, &err), &err);
    sqlite3_stmt *stmt;
    sqlite3 *db = ((struct sqlite_store *)st)->db;
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT tag IS NULL FROM jobs WHERE id = ?1", -1, &stmt, NULL),
              SQLITE_OK);
    sqlite3_bind_int64(stmt, 1, first);
    ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
    ASSERT_EQ(sqlite3_column_int(stmt, 0), 1);
    sqlite3_finalize(stmt);
    /* b's first and a's second next; the retried job last of all */
    claim_rq(st, 4, &l);
    ASSERT_EQ(l.n, (size_t)5);
    for (size_t i = 1; i < l.n; i++)
        ASSERT(l.v[i].id != first);
    claim_rq(st, 2, &l); /* b's third, then the retried job (a's fourth turn) */
    ASSERT_EQ(l.n, (size_t)7);
    ASSERT_STR_EQ(l.v[5].group, "b");
    ASSERT_EQ(l.v[6].id, first);
    job_list_fini(&l);
    store_close(st);
}
