/*
 * test_sqlite_group_claim_pages.c — on SQLite a claim of jobs of 1,000
 * groups writes about as many pages to the WAL as a claim of plain jobs
 * (docs/DESIGN.md, Groups, "Tags on SQLite"). Every page a transaction
 * changes goes to the WAL whole, so pages are what a claim costs there:
 * when the claim took each group's head by a probe of an index in group
 * order (jobs_group_claim), each claim of 1,000 jobs in 1,000 groups
 * deleted an entry from nearly every leaf of that index (12 times the
 * frames of a plain claim here), where a walk in tag order deletes
 * neighbours. Counted with a WAL hook of the test's own (so the store's
 * checkpoints stop), not timed: the count does not depend on the machine.
 */
#include <sqlite3.h>
#include <stdio.h>

#include "core/err.h"
#include "store/store.h"
#include "store/sqlite/internal.h"
#include "test.h"

#define GROUPS 1000
#define PER_GROUP 20
#define CLAIM 1000
#define CLAIMS 5

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

/* WAL frames of CLAIMS claims of CLAIM jobs from queue q. */
static int64_t
claim_frames(struct store *st, const char *q)
{
    struct jobd_error err = {0};
    const char *qs[] = {q};
    struct claim_req req = {.worker_id = "w", .queues = qs, .n_queues = 1, .limit = CLAIM};
    int64_t before = g_frames;
    for (int i = 0; i < CLAIMS; i++) {
        struct job_list l = {0};
        ASSERT_OK(store_claim(st, &req, &l, &err), &err);
        ASSERT_EQ(l.n, (size_t)CLAIM);
        job_list_fini(&l);
    }
    return g_frames - before;
}

TEST(sqlite_claim_of_many_groups_writes_the_pages_of_a_plain_claim)
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
    int64_t plain = claim_frames(st, "plain");
    int64_t grouped = claim_frames(st, "grouped");
    printf("  WAL frames of %d claims of %d jobs: plain %lld, %d groups %lld\n", CLAIMS, CLAIM,
           (long long)plain, GROUPS, (long long)grouped);
    ASSERT(plain > 0);
    if (grouped > 2 * plain)
        TEST_FAIL("a claim of %d groups wrote %lld WAL frames, a plain one %lld: more than twice",
                  GROUPS, (long long)grouped, (long long)plain);
    /* the k-th job of every group before the (k+1)-th of any: 5 claims, 5 jobs a group */
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM (SELECT grp FROM jobs WHERE queue = 'grouped'"
             " AND status = 'running' GROUP BY grp HAVING count(*) <> %d)",
             CLAIMS * CLAIM / GROUPS);
    sqlite3_stmt *stmt;
    ASSERT_EQ(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
    ASSERT_EQ(sqlite3_column_int(stmt, 0), 0);
    sqlite3_finalize(stmt);
    store_close(st);
}
