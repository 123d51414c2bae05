/*
 * test_pg_layout.c — the PostgreSQL table layout of schema version 38
 * (docs/DESIGN.md, Table layout, round three) beside test_pg_store.c:
 * where a job's row lives through its life, retention by dropping whole
 * (day, status) partitions of jobd.jobs_done, the hot table's vacuum
 * settings (versions 41 and 42), and migration 38 from a store at version
 * 37 keeping every job. A file of its own because
 * test_pg_store.c is at its size limit. Each test program makes its own
 * database (tests/pgtest.h).
 */
#include <libpq-fe.h>
#include <pthread.h>
#include <unistd.h>

#include "core/err.h"
#include "pgstoretest.h"
#include "store/operator.h"
#include "store/store.h"
#include "store/pg/internal.h"
#include "test.h"
#include "util/clock.h"

/* Runs SQL statements on the test database; fails the test on an error. */
static void
sql_run(const char *sql)
{
    if (pgtest_exec(g_url, sql) != 0)
        TEST_FAIL("%.200s failed", sql);
}

TEST(lifecycle_moves_rows_between_tables)
{
    struct manual_clock mc;
    manual_clock_init(&mc, 1800000000000000LL);
    struct store *st = fresh_store(&mc);
    struct jobd_error e = {0};
    struct job j = {0};
    struct job_spec sp = {.type = "email.send", .payload = "{\"to\":\"a@b.c\"}"};
    ASSERT_OK(store_enqueue(st, &sp, &j, NULL, &e), &e);
    ASSERT(j.id > 0);
    ASSERT_EQ(j.status, JOB_PENDING);
    ASSERT_STR_EQ(j.queue, "default");
    ASSERT_EQ(j.max_attempts, 25);
    ASSERT_EQ(j.run_at_us, 1800000000000000LL);
    ASSERT_EQ(j.created_at_us, 1800000000000000LL);
    int64_t id = j.id;
    job_fini(&j);

    struct claim_req req = {.worker_id = "w1", .limit = 10, .lease_ms = 1000};
    struct job_list l = {0};
    ASSERT_OK(store_claim(st, &req, &l, &e), &e);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].attempt, 1);
    ASSERT_EQ(l.v[0].status, JOB_RUNNING);
    ASSERT_STR_EQ(l.v[0].worker_id, "w1");
    ASSERT_EQ(l.v[0].lease_expires_at_us, 1800000000000000LL + 1000000);
    job_list_fini(&l);

    int64_t lease = 0;
    bool cancel = true;
    manual_clock_advance(&mc, 500000);
    ASSERT_OK(store_heartbeat(st, id, 1, 2000, &lease, &cancel, &e), &e);
    ASSERT_EQ(lease, 1800000000500000LL + 2000000);
    ASSERT(!cancel);
    ASSERT_EQ(store_heartbeat(st, id, 2, 2000, &lease, &cancel, &e), JOBD_E_STALE);
    ASSERT_EQ(store_complete(st, id, 2, NULL, NULL, &e), JOBD_E_STALE);
    ASSERT_OK(store_complete(st, id, 1, "{\"ok\":true}", &j, &e), &e);
    ASSERT_EQ(j.status, JOB_SUCCEEDED);
    ASSERT_EQ(j.finished_at_us, 1800000000500000LL);
    ASSERT(j.result != NULL);
    job_fini(&j);
    ASSERT_EQ(store_complete(st, id, 1, NULL, NULL, &e), JOBD_E_STALE);
    /* Moved at once (migration 38): no row in jobs, one in jobs_done, in the
     * partition of its day (2027-01-15 has none made: the default one)... */
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs"), 0);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs_done WHERE status = 'succeeded'"
                      " AND lease_expires_at IS NULL"),
              1);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs_done_default"), 1);
    /* ...so the archive pass has nothing to move... */
    int moved = -1;
    ASSERT_OK(store_archive(st, 1800000000500001LL, 100, &moved, &e), &e);
    ASSERT_EQ(moved, 0);
    /* ...and a reader sees it as it was completed. */
    ASSERT_OK(store_get(st, id, &j, &e), &e);
    ASSERT_EQ(j.status, JOB_SUCCEEDED);
    ASSERT_EQ(j.finished_at_us, 1800000000500000LL);
    ASSERT_EQ(j.attempt, 1);
    ASSERT_STR_EQ(j.worker_id, "w1");
    ASSERT_STR_EQ(j.result, "{\"ok\":true}");
    job_fini(&j);
    /* The plane makes that day's partition: the row moves into its leaf. */
    int made = 0;
    ASSERT_OK(store_archive_days(st, 1800000000500000LL, 0, &made, &e), &e);
    ASSERT_EQ(made, 1);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs_done_default"), 0);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs_done_20270115_s"), 1);
    ASSERT_OK(store_archive_days(st, 1800000000500000LL, 0, &made, &e), &e);
    ASSERT_EQ(made, 0);
    ASSERT_OK(store_get(st, id, &j, &e), &e);
    ASSERT_EQ(j.status, JOB_SUCCEEDED);
    ASSERT_EQ(j.finished_at_us, 1800000000500000LL);
    ASSERT_STR_EQ(j.result, "{\"ok\":true}");
    job_fini(&j);
    ASSERT_EQ(store_get(st, id + 100, &j, &e), JOBD_E_NOTFOUND);
    store_close(st);
}

/* Enqueues a job with key "k<i>", claims it and completes it (ok) or fails it dead. */
static int64_t
end_one(struct store *st, int i, bool ok)
{
    struct jobd_error e = {0};
    char key[16];
    snprintf(key, sizeof key, "k%d", i);
    struct job_spec sp = {.type = "t", .idempotency_key = key, .max_attempts = 1};
    struct job j = {0};
    ASSERT_OK(store_enqueue(st, &sp, &j, NULL, &e), &e);
    int64_t id = j.id;
    job_fini(&j);
    struct claim_req req = {.worker_id = "w", .limit = 1, .lease_ms = 60000};
    struct job_list l = {0};
    ASSERT_OK(store_claim(st, &req, &l, &e), &e);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, id);
    job_list_fini(&l);
    if (ok)
        ASSERT_OK(store_complete(st, id, 1, NULL, NULL, &e), &e);
    else
        ASSERT_OK(store_fail(st, id, 1, "boom", false, -1, NULL, &e), &e);
    return id;
}

/*
 * Retention drops the whole (day, status) leaves of the archive before the
 * cutoff (migration 38), with their jobs' keys and history, and deletes
 * the boundary day's rows one by one; a leaf of another outcome stays.
 */
TEST(retention_drops_whole_day_partitions)
{
    const int64_t day0 = 1800057600000000LL; /* 2027-01-16 00:00 UTC */
    const int64_t hour = 3600000000LL;
    struct manual_clock mc;
    manual_clock_init(&mc, day0 + 10 * hour);
    struct store *st = fresh_store(&mc);
    struct jobd_error e = {0};
    int made = 0;
    ASSERT_OK(store_archive_days(st, day0, 2, &made, &e), &e);
    ASSERT_EQ(made, 3);
    int64_t ok0 = end_one(st, 0, true), ok1 = end_one(st, 1, true), dead0 = end_one(st, 2, false);
    manual_clock_advance(&mc, 24 * hour); /* the next day, 10:00 */
    int64_t ok2 = end_one(st, 3, true), ok3 = end_one(st, 4, true);
    manual_clock_advance(&mc, 4 * hour); /* 14:00 */
    int64_t ok4 = end_one(st, 5, true);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs"), 0);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs_done_20270116_s"), 2);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs_done_20270117_s"), 3);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs_done_20270116_d"), 1);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs_done_default"), 0);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.job_keys"), 6);
    long long hist = sql_num("SELECT count(*) FROM jobd.job_attempts");
    long long hist_dead = sql_num("SELECT count(*) FROM jobd.job_attempts WHERE outcome = 'dead'");
    long long hist_ok = (hist - hist_dead) / 5; /* each success's rows */
    ASSERT(hist_dead == 1);
    /* succeeded before the next day's noon: the first day's leaf goes whole
     * (2 jobs), then the next day's 10:00 ones by the batched delete */
    int deleted = 0;
    ASSERT_OK(store_prune_status(st, true, day0 + 36 * hour, 100, &deleted, &e), &e);
    ASSERT_EQ(deleted, 4);
    ASSERT_EQ(sql_num("SELECT (to_regclass('jobd.jobs_done_20270116_s') IS NULL)::int"), 1);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs_done_20270117_s"), 1);
    struct job j = {0};
    ASSERT_EQ(store_get(st, ok0, &j, &e), JOBD_E_NOTFOUND);
    ASSERT_EQ(store_get(st, ok1, &j, &e), JOBD_E_NOTFOUND);
    ASSERT_EQ(store_get(st, ok2, &j, &e), JOBD_E_NOTFOUND);
    ASSERT_EQ(store_get(st, ok3, &j, &e), JOBD_E_NOTFOUND);
    ASSERT_OK(store_get(st, ok4, &j, &e), &e);
    job_fini(&j);
    ASSERT_OK(store_get(st, dead0, &j, &e), &e); /* another outcome's leaf stays */
    ASSERT_EQ(j.status, JOB_DEAD);
    job_fini(&j);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.job_keys"), 2);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.job_attempts"), hist - 4 * hist_ok);
    /* a late success of the first day still finds a partition (its _x leaf) */
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs_done_20270116_x"), 0);
    /* dead and cancelled before the same cutoff: the day has no leaf left and goes */
    ASSERT_OK(store_prune_status(st, false, day0 + 36 * hour, 100, &deleted, &e), &e);
    ASSERT_EQ(deleted, 1);
    ASSERT_EQ(store_get(st, dead0, &j, &e), JOBD_E_NOTFOUND);
    ASSERT_EQ(sql_num("SELECT (to_regclass('jobd.jobs_done_20270116') IS NULL)::int"), 1);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.job_keys"), 1);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.job_attempts"), hist_ok);
    store_close(st);
}

/* Every job's every column, and the rows beside them, as one text. */
#define STORE_IMAGE                                                                                \
    "SELECT string_agg(x, E'\n' ORDER BY x) FROM ("                                                \
    " SELECT 'job ' || row_to_json(a)::text AS x FROM jobd.all_jobs a"                             \
    " UNION ALL SELECT 'dep ' || row_to_json(d)::text FROM jobd.job_deps d"                        \
    " UNION ALL SELECT 'key ' || row_to_json(k)::text FROM jobd.job_keys k"                        \
    " UNION ALL SELECT 'att ' || row_to_json(t)::text FROM jobd.job_attempts t"                    \
    " UNION ALL SELECT 'prg ' || row_to_json(p)::text FROM jobd.job_progress p"                    \
    " UNION ALL SELECT 'evt ' || row_to_json(e)::text FROM jobd.events e) y"

/* store_archive_days on its own store, in a thread of the test. */
struct days_call {
    struct store *st;
    int64_t at_us;
    int made, rc;
    struct jobd_error e;
};

static void *
days_thread(void *arg)
{
    struct days_call *c = arg;
    c->rc = store_archive_days(c->st, c->at_us, 0, &c->made, &c->e);
    return NULL;
}

/*
 * The plane makes a day's partition while a retry takes one of that day's
 * dead jobs out of the default partition (migration 39): the job is moved
 * once, by the retry. Migration 38's function read the day's rows before
 * deleting them, so a row the retry deleted in between came back from its
 * array: the job was then pending in jobs and dead in jobs_done at once.
 * The retry here is its DELETE, held open until the plane's call waits on
 * it.
 */
TEST(archive_days_beside_a_retry_moves_a_job_once)
{
    struct manual_clock mc;
    manual_clock_init(&mc, 1800000000000000LL);
    struct store *st = fresh_store(&mc);
    int64_t id = end_one(st, 1, false);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs_done_default"), 1);
    PGconn *retry = PQconnectdb(g_url);
    ASSERT_EQ(PQstatus(retry), CONNECTION_OK);
    char sql[160];
    snprintf(sql, sizeof sql, "BEGIN; DELETE FROM jobd.jobs_done WHERE id = %lld", (long long)id);
    PGresult *r = PQexec(retry, sql);
    ASSERT_EQ(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    struct days_call call = {.st = st, .at_us = 1800000000000000LL};
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, days_thread, &call), 0);
    /* until the plane's call waits for the retry's lock (no fixed sleep) */
    while (sql_num("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                   " AND query LIKE '%archive_days%'") == 0)
        usleep(10000);
    r = PQexec(retry, "COMMIT");
    ASSERT_EQ(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    PQfinish(retry);
    ASSERT_EQ(pthread_join(t, NULL), 0);
    ASSERT_OK(call.rc, &call.e);
    ASSERT_EQ(call.made, 1);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM jobd.all_jobs WHERE id = %lld", (long long)id);
    ASSERT_EQ(sql_num(sql), 0);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs_done_default"), 0);
    store_close(st);
}

/*
 * The plane's vacuum of jobd.jobs (store_vacuum_hot) keeps the table's
 * pages when the rows at its end are gone (schema version 41): a queue's
 * next enqueues would only extend the file again, and giving the pages back
 * takes a lock every claim queues behind. Without version 41 the vacuum
 * cuts the emptied table to nothing.
 */
TEST(vacuum_keeps_the_hot_tables_empty_pages)
{
    struct store *st = fresh_store(NULL);
    struct jobd_error e = {0};
    sql_run("INSERT INTO jobd.jobs (type, payload, run_at)"
            " SELECT 'churn', '{}', now() FROM generate_series(1, 5000)");
    long long pages = sql_num("SELECT pg_relation_size('jobd.jobs') / 8192");
    ASSERT(pages > 10);
    sql_run("DELETE FROM jobd.jobs");
    bool vacuumed = false;
    ASSERT_OK(store_vacuum_hot(st, &vacuumed, &e), &e);
    ASSERT(vacuumed);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs"), 0);
    ASSERT_EQ(sql_num("SELECT pg_relation_size('jobd.jobs') / 8192"), pages);
    /* autovacuum, the fallback (schema version 42): not for inserts, and for
     * dead rows only past what the plane's vacuums let pile up */
    ASSERT_EQ(sql_num("SELECT count(*) FROM pg_class, unnest(reloptions) o"
                      " WHERE oid = 'jobd.jobs'::regclass AND o IN"
                      " ('autovacuum_vacuum_insert_threshold=-1',"
                      "  'autovacuum_vacuum_threshold=200000')"),
              2);
    store_close(st);
}

/*
 * Migration 38 (the table layout move_slim) from a store at version 37
 * holding jobs in every status: pending, running (a parent with a waiting
 * child), succeeded in jobs (not archived yet) and in jobs_done, dead,
 * cancelled, waiting, with edges, keys, history, progress and events. Every
 * job and every one of its columns, and every row beside them, reads the
 * same after it; the succeeded row left jobs; the running parent's
 * completion then moves it and releases its child.
 */
TEST(migration_38_keeps_every_job_of_a_version_37_store)
{
    reset_db();
    sql_run("CREATE SCHEMA jobd; CREATE TABLE jobd.schema_migrations (version int PRIMARY KEY,"
            " name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
    for (size_t i = 0; i < pg_migrations_count && pg_migrations[i].version <= 37; i++) {
        sql_run(pg_migrations[i].sql);
        char ins[128];
        snprintf(ins, sizeof ins, "INSERT INTO jobd.schema_migrations VALUES (%d, 'm')",
                 pg_migrations[i].version);
        sql_run(ins);
    }
    ASSERT_EQ(sql_num("SELECT max(version) FROM jobd.schema_migrations"), 37);
    sql_run("UPDATE jobd.event_log SET listened_at = now()"); /* events recorded */
    sql_run(
        "INSERT INTO jobd.jobs (id, type, payload, status, priority, attempt, idempotency_key,"
        " grp, traceparent) VALUES (1, 'p', '{\"a\":1}', 'pending', 3, 0, 'key-1', 'g1',"
        " '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');"
        "INSERT INTO jobd.jobs (id, type, status, attempt, worker_id, lease_expires_at,"
        " started_at, lease_token_hash, has_children)"
        " VALUES (2, 'r', 'running', 1, 'w1', now() + interval '1 hour', now(), 'h2', true);"
        "INSERT INTO jobd.jobs (id, type, status, attempt, worker_id, result, started_at,"
        " finished_at, lease_token_hash) VALUES (3, 's', 'succeeded', 1, 'w1', '{\"r\":3}',"
        " now() - interval '2 s', now() - interval '1 s', 'h3');"
        "INSERT INTO jobd.jobs_done (id, queue, type, payload, status, priority, run_at, attempt,"
        " attempt_floor, max_attempts, cancel_requested, created_at, started_at, finished_at,"
        " result, last_error, worker_id, lease_token_hash, grp) VALUES"
        " (4, 'q', 'a', '{}', 'succeeded', 0, now() - interval '3 days', 1, 0, 25, false,"
        "  now() - interval '3 days', now() - interval '3 days', now() - interval '3 days',"
        "  '{\"r\":4}', NULL, 'w2', 'h4', 'g1'),"
        " (5, 'q', 'd', '{}', 'dead', 0, now(), 3, 0, 3, false, now() - interval '1 day',"
        "  now() - interval '1 day', now() - interval '1 day', NULL, 'boom', 'w2', NULL, NULL),"
        " (6, 'q', 'c', '{}', 'cancelled', 0, now(), 0, 0, 25, true, now(), NULL, now(), NULL,"
        "  NULL, NULL, NULL, NULL);"
        "INSERT INTO jobd.jobs_waiting (id, type, status) VALUES (7, 'w', 'waiting');"
        "INSERT INTO jobd.job_deps (parent, child) VALUES (2, 7);"
        "INSERT INTO jobd.job_keys VALUES ('key-1', 1);"
        "INSERT INTO jobd.job_attempts (job_id, attempt, worker_id, started_at, finished_at,"
        " outcome, error) VALUES (5, 1, 'w2', now(), now(), 'failed', 'e1'),"
        " (5, 2, 'w2', now(), now(), 'failed', 'e2'), (5, 3, 'w2', now(), now(), 'dead', 'boom');"
        "INSERT INTO jobd.job_progress (job_id, attempt, percent, message, at)"
        " VALUES (2, 1, 50, 'half', now());"
        "SELECT setval('jobd.job_id_seq', 100)");
    ASSERT(sql_num("SELECT count(*) FROM jobd.events") > 0); /* by triggers of version 37 */
    char *before = sql_text(STORE_IMAGE);
    struct jobd_error e = {0};
    struct store *st = NULL;
    ASSERT_OK(store_open(g_url, &st, &e), &e);
    ASSERT_OK(store_migrate(st, &e), &e);
    ASSERT_EQ(sql_num("SELECT max(version) FROM jobd.schema_migrations"),
              pg_migrations[pg_migrations_count - 1].version);
    char *after = sql_text(STORE_IMAGE);
    ASSERT_STR_EQ(after, before);
    free(before);
    free(after);
    /* jobs holds pending and running rows only; the rest is in the archive */
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs"), 2);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs_done_legacy"), 4);
    ASSERT_EQ(sql_num("SELECT count(*) FROM pg_indexes WHERE indexname = 'jobs_succeeded'"), 0);
    ASSERT_EQ(sql_num("SELECT count(*) FROM pg_trigger WHERE tgname IN"
                      " ('jobs_events_updated', 'jobs_deps_succeeded')"),
              0);
    /* the running parent completes: moved, its child released, events kept */
    struct job j = {0};
    ASSERT_OK(store_complete(st, 2, 1, "{\"r\":2}", &j, &e), &e);
    ASSERT_EQ(j.status, JOB_SUCCEEDED);
    job_fini(&j);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs WHERE id = 2"), 0);
    ASSERT_EQ(
        sql_num("SELECT count(*) FROM jobd.jobs_done WHERE id = 2 AND lease_token_hash = 'h2'"), 1);
    ASSERT_OK(store_get(st, 7, &j, &e), &e);
    ASSERT_EQ(j.status, JOB_PENDING);
    job_fini(&j);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.events WHERE from_st = 'running'"
                      " AND to_st = 'succeeded' AND jobs = '{2}' AND attempts = '{1}'"),
              1);
    store_close(st);
}
