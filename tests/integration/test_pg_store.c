/*
 * test_pg_store.c — the PostgreSQL backend's own checks, beside the shared
 * conformance suite: the statements the backend-neutral suite cannot see
 * (jobs vs jobs_done placement, the migration lock, the claim plans, SQL
 * NOTIFY wake-ups). Each test makes its own database (tests/pgtest.h).
 */
#include <libpq-fe.h>
#include <pthread.h>

#include "core/err.h"
#include "pgstoretest.h"
#include "store/operator.h"
#include "store/store.h"
#include "store/pg/internal.h"
#include "test.h"
#include "util/clock.h"

static void
done(struct store *st)
{
    store_close(st);
}

TEST(migrate_is_idempotent_and_concurrent_safe)
{
    struct store *st = fresh_store(NULL);
    struct jobd_error e = {0};
    ASSERT_OK(store_migrate(st, &e), &e);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.schema_migrations"), pg_migrations_count);
    ASSERT_OK(store_ping(st, &e), &e);
    done(st);
}

static void *
migrate_thread(void *arg)
{
    struct store *st = NULL;
    struct jobd_error e = {0};
    long rc = store_open(arg, &st, &e);
    if (rc == 0)
        rc = store_migrate(st, &e);
    if (rc != 0)
        fprintf(stderr, "migrate: %s\n", e.msg);
    store_close(st);
    return (void *)rc;
}

TEST(migrate_from_many_processes_at_once)
{
    reset_db();
    pthread_t t[6];
    for (int i = 0; i < 6; i++)
        pthread_create(&t[i], NULL, migrate_thread, g_url);
    for (int i = 0; i < 6; i++) {
        void *rc;
        pthread_join(t[i], &rc);
        ASSERT_EQ((long)rc, 0);
    }
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.schema_migrations"), pg_migrations_count);
}

/*
 * A completion in place writes no entry into the claim indexes: after a
 * VACUUM each partial index counts only the rows its predicate promises
 * (pending ones for claims, succeeded ones for jobs_succeeded, none with a
 * lease), so a claim never walks past finished rows; jobs_type_id holds
 * only the pending ones (migration 14: claims and completions write no
 * entry there), and so does jobs_grp_id (migration 37): q2's jobs have a
 * group, and all of them are claimed first (a grouped queue's claim goes
 * before the ordinary one), so none of its entries is left. Through both
 * completion statements: one at a time and batched (and batched with one
 * id twice, which takes the join).
 */
TEST(completed_rows_stay_out_of_the_claim_indexes)
{
    struct store *st = fresh_store(NULL);
    struct jobd_error e = {0};
    static struct job_spec specs[300];
    for (int i = 0; i < 300; i++)
        specs[i] = (struct job_spec){
            .type = i % 2 ? "a" : "b", .queue = i % 3 ? "q1" : "q2", .group = i % 3 ? NULL : "g"};
    ASSERT_OK(store_enqueue_batch(st, specs, 300, NULL, NULL, &e), &e);
    struct claim_req req = {
        .worker_id = "w", .limit = 200, .types = (const char *[]){"a", "b"}, .n_types = 2};
    struct job_list l = {0};
    ASSERT_OK(store_claim(st, &req, &l, &e), &e);
    ASSERT_EQ(l.n, 200);
    struct completion c[151];
    for (size_t i = 0; i < 150; i++)
        c[i] = (struct completion){.id = l.v[i].id, .attempt = l.v[i].attempt};
    int out[151];
    ASSERT_OK(store_complete_batch(st, c, 100, out, &e), &e);
    c[150] = (struct completion){.id = c[100].id, .attempt = c[100].attempt + 1};
    ASSERT_OK(store_complete_batch(st, c + 100, 51, out, &e), &e); /* the join */
    ASSERT_EQ(out[0], JOBD_OK);
    ASSERT_EQ(out[50], JOBD_E_STALE);
    for (size_t i = 150; i < 180; i++)
        ASSERT_OK(store_complete(st, l.v[i].id, l.v[i].attempt, NULL, NULL, &e), &e);
    job_list_fini(&l);
    PGconn *pc = PQconnectdb(g_url);
    PQclear(PQexec(pc, "VACUUM jobd.jobs"));
    PQfinish(pc);
    /* 100 pending, 20 running; the 180 succeeded moved out (migration 38). */
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs_done WHERE status = 'succeeded'"), 180);
    static const struct {
        const char *index;
        int entries;
    } want[] = {{"jobs_claim_queue", 100}, {"jobs_claim_type", 100},
                {"jobs_next_type", 100},   {"jobs_lease", 20},
                {"jobs_pkey", 120},        {"jobs_type_id", 100},
                {"jobs_queue_id", 100},    {"jobs_pending_queue_type", 100},
                {"jobs_group_claim", 100}, {"jobs_grp_id", 0}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char sql[160];
        snprintf(sql, sizeof sql, "SELECT reltuples::bigint FROM pg_class WHERE relname = '%s'",
                 want[i].index);
        long long n = sql_num(sql);
        if (n != want[i].entries)
            TEST_FAIL("%s has %lld entries, want %d", want[i].index, n, want[i].entries);
    }
    /* Those and jobs_schedule_firing, no more: every index a pending row
     * meets is written by each enqueue (migration 16 dropped two;
     * migration 29 added jobs_group_claim, docs/DESIGN.md, Groups; migration
     * 33 jobs_grp_id, whose entries are the pending grouped rows only,
     * migration 37; migration 38 dropped jobs_succeeded). */
    ASSERT_EQ(sql_num("SELECT count(*) FROM pg_indexes WHERE schemaname = 'jobd'"
                      " AND tablename = 'jobs'"),
              (long long)(sizeof want / sizeof want[0]) + 1);
    done(st);
}

TEST(fail_retry_dead_and_manual_retry)
{
    struct manual_clock mc;
    manual_clock_init(&mc, 1800000000000000LL);
    struct store *st = fresh_store(&mc);
    struct jobd_error e = {0};
    struct job j = {0};
    struct job_spec sp = {.type = "t", .max_attempts = 2};
    ASSERT_OK(store_enqueue(st, &sp, &j, NULL, &e), &e);
    int64_t id = j.id;
    job_fini(&j);
    struct claim_req req = {.worker_id = "w", .limit = 1};
    struct job_list l = {0};
    ASSERT_OK(store_claim(st, &req, &l, &e), &e);
    ASSERT_EQ(l.n, 1);
    job_list_fini(&l);
    ASSERT_OK(store_fail(st, id, 1, "boom", true, 3000, &j, &e), &e);
    ASSERT_EQ(j.status, JOB_PENDING);
    ASSERT_EQ(j.run_at_us, 1800000000000000LL + 3000000);
    ASSERT_STR_EQ(j.last_error, "boom");
    job_fini(&j);
    ASSERT_OK(store_claim(st, &req, &l, &e), &e);
    ASSERT_EQ(l.n, 0); /* not due yet */
    int64_t next = 0;
    ASSERT_OK(store_next_run_at(st, &req, &next, &e), &e);
    ASSERT_EQ(next, 1800000000000000LL + 3000000);
    manual_clock_advance(&mc, 3000000);
    ASSERT_OK(store_claim(st, &req, &l, &e), &e);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].attempt, 2);
    job_list_fini(&l);
    ASSERT_OK(store_fail(st, id, 2, "boom again", true, 0, &j, &e), &e);
    ASSERT_EQ(j.status, JOB_DEAD);
    job_fini(&j);
    ASSERT_EQ(store_fail(st, id, 2, "late", true, 0, NULL, &e), JOBD_E_STALE);
    /* Manual retry: two fresh attempts, attempt keeps growing. */
    ASSERT_OK(store_retry(st, id, &j, &e), &e);
    ASSERT_EQ(j.status, JOB_PENDING);
    ASSERT_EQ(j.attempt, 2);
    job_fini(&j);
    ASSERT_EQ(store_retry(st, id, &j, &e), JOBD_E_STATE);
    for (int a = 3; a <= 4; a++) {
        ASSERT_OK(store_claim(st, &req, &l, &e), &e);
        ASSERT_EQ(l.n, 1);
        ASSERT_EQ(l.v[0].attempt, a);
        job_list_fini(&l);
        ASSERT_OK(store_fail(st, id, a, "x", true, 0, &j, &e), &e);
        ASSERT_EQ(j.status, a == 3 ? JOB_PENDING : JOB_DEAD);
        job_fini(&j);
    }
    /* Permanent failure: dead at once. */
    ASSERT_OK(store_retry(st, id, &j, &e), &e);
    job_fini(&j);
    ASSERT_OK(store_claim(st, &req, &l, &e), &e);
    job_list_fini(&l);
    ASSERT_OK(store_fail(st, id, 5, "bad input", false, 0, &j, &e), &e);
    ASSERT_EQ(j.status, JOB_DEAD);
    job_fini(&j);
    done(st);
}

TEST(cancel_pending_running_terminal)
{
    struct store *st = fresh_store(NULL);
    struct jobd_error e = {0};
    struct job a = {0}, b = {0}, j = {0};
    struct job_spec sp = {.type = "t"};
    ASSERT_OK(store_enqueue(st, &sp, &a, NULL, &e), &e);
    ASSERT_OK(store_enqueue(st, &sp, &b, NULL, &e), &e);
    ASSERT_OK(store_cancel(st, a.id, &j, &e), &e);
    ASSERT_EQ(j.status, JOB_CANCELLED);
    job_fini(&j);
    ASSERT_EQ(store_cancel(st, a.id, &j, &e), JOBD_E_STATE);
    ASSERT_EQ(store_cancel(st, 999999, &j, &e), JOBD_E_NOTFOUND);
    struct claim_req req = {.worker_id = "w", .limit = 5};
    struct job_list l = {0};
    ASSERT_OK(store_claim(st, &req, &l, &e), &e);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, b.id);
    job_list_fini(&l);
    ASSERT_OK(store_cancel(st, b.id, &j, &e), &e);
    ASSERT_EQ(j.status, JOB_RUNNING);
    ASSERT(j.cancel_requested);
    job_fini(&j);
    bool cancel = false;
    ASSERT_OK(store_heartbeat(st, b.id, 1, 0, NULL, &cancel, &e), &e);
    ASSERT(cancel);
    ASSERT_OK(store_fail(st, b.id, 1, "stopped", true, 0, &j, &e), &e);
    ASSERT_EQ(j.status, JOB_CANCELLED);
    job_fini(&j);
    ASSERT_OK(store_retry(st, a.id, &j, &e), &e);
    ASSERT_EQ(j.status, JOB_PENDING);
    job_fini(&j);
    job_fini(&a);
    job_fini(&b);
    done(st);
}

TEST(claim_order_filters_and_paused_queues)
{
    struct manual_clock mc;
    manual_clock_init(&mc, 1800000000000000LL);
    struct store *st = fresh_store(&mc);
    struct jobd_error e = {0};
    struct job_spec specs[6] = {
        {.type = "a", .queue = "q1", .priority = 0},
        {.type = "a", .queue = "q2", .priority = 5},
        {.type = "b", .queue = "q1", .priority = 5},
        {.type = "a", .queue = "q3", .priority = 9},
        {.type = "a", .queue = "q1", .priority = 1, .run_at_us = 1800000000000000LL - 10},
        {.type = "a", .queue = "q1", .priority = 0, .run_at_us = 1800000001000000LL},
    };
    struct job out[6] = {{0}};
    ASSERT_OK(store_enqueue_batch(st, specs, 6, out, NULL, &e), &e);
    for (int i = 1; i < 6; i++)
        ASSERT(out[i].id > out[i - 1].id);
    ASSERT_OK(store_queue_pause(st, "q3", true, &e), &e);
    const char *types[] = {"a"};
    const char *queues[] = {"q1", "q2", "q3"};
    struct claim_req req = {.worker_id = "w",
                            .limit = 10,
                            .types = types,
                            .n_types = 1,
                            .queues = queues,
                            .n_queues = 3};
    struct job_list l = {0};
    ASSERT_OK(store_claim(st, &req, &l, &e), &e);
    ASSERT_EQ(l.n, 3);
    ASSERT_EQ(l.v[0].id, out[1].id); /* prio 5 */
    ASSERT_EQ(l.v[1].id, out[4].id); /* prio 1 */
    ASSERT_EQ(l.v[2].id, out[0].id); /* prio 0 */
    job_list_fini(&l);
    ASSERT_OK(store_queue_pause(st, "q3", false, &e), &e);
    struct claim_req any = {.worker_id = "w", .limit = 10};
    ASSERT_OK(store_claim(st, &any, &l, &e), &e);
    ASSERT_EQ(l.n, 2);
    ASSERT_EQ(l.v[0].id, out[3].id);
    ASSERT_EQ(l.v[1].id, out[2].id);
    job_list_fini(&l);
    struct queue_stat *qs = NULL;
    size_t nq = 0;
    ASSERT_OK(store_queue_stats(st, &qs, &nq, &e), &e);
    ASSERT_EQ(nq, 3);
    ASSERT_STR_EQ(qs[0].name, "q1");
    ASSERT_EQ(qs[0].count[JOB_RUNNING], 3);
    ASSERT_EQ(qs[0].count[JOB_PENDING], 1);
    free(qs);
    for (int i = 0; i < 6; i++)
        job_fini(&out[i]);
    done(st);
}

/*
 * A worker's claim (claim_req.run_only) brings back what a run needs, in
 * claim order, and not the rest of the row (less to convert and send per
 * job: docs/WORKER.md "How the loop works"); a claim without it brings every field.
 */
TEST(a_run_only_claim_brings_what_a_run_needs_and_no_more)
{
    struct manual_clock mc;
    manual_clock_init(&mc, 1800000000000000LL);
    struct store *st = fresh_store(&mc);
    struct jobd_error e = {0};
    struct job_spec specs[3] = {
        {.type = "r", .queue = "q1", .payload = "{\"n\":1}", .priority = 0},
        {.type = "r",
         .queue = "q2",
         .payload = "{\"n\":2}",
         .priority = 7,
         .idempotency_key = "k2",
         .timeout_ms = 1500,
         .run_at_us = 1800000000000000LL - 10},
        {.type = "r", .queue = "q1", .payload = "{\"n\":3}", .priority = 0},
    };
    struct job out[3] = {{0}};
    ASSERT_OK(store_enqueue_batch(st, specs, 3, out, NULL, &e), &e);
    manual_clock_advance(&mc, 250000);
    const char *types[] = {"r"};
    for (int full = 0; full < 2; full++) {
        struct claim_req req = {.worker_id = "w",
                                .limit = 2,
                                .types = types,
                                .n_types = 1,
                                .lease_ms = 1000,
                                .run_only = !full};
        struct job_list l = {0};
        ASSERT_OK(store_claim(st, &req, &l, &e), &e);
        if (full) {
            ASSERT_EQ(l.n, 1);
            ASSERT_EQ(l.v[0].id, out[2].id);
            ASSERT_STR_EQ(l.v[0].worker_id, "w");
            ASSERT_EQ(l.v[0].created_at_us, 1800000000000000LL);
            ASSERT_EQ(l.v[0].lease_expires_at_us, 1800000000250000LL + 1000000);
            ASSERT_EQ(l.v[0].max_attempts, 25);
            job_list_fini(&l);
            continue;
        }
        ASSERT_EQ(l.n, 2);
        const struct job *a = &l.v[0], *b = &l.v[1];
        ASSERT_EQ(a->id, out[1].id); /* priority 7 first */
        ASSERT_EQ(b->id, out[0].id);
        ASSERT_STR_EQ(a->queue, "q2");
        ASSERT_STR_EQ(a->type, "r");
        ASSERT_STR_EQ(a->payload, "{\"n\":2}");
        ASSERT_EQ(a->status, JOB_RUNNING);
        ASSERT_EQ(a->priority, 7);
        ASSERT_EQ(a->run_at_us, 1800000000000000LL - 10);
        ASSERT_EQ(a->attempt, 1);
        ASSERT_EQ(a->attempt_floor, 0);
        ASSERT_STR_EQ(a->idempotency_key, "k2");
        ASSERT_EQ(a->timeout_ms, 1500);
        ASSERT_EQ(a->started_at_us, 1800000000250000LL);
        ASSERT(b->idempotency_key == NULL);
        ASSERT_EQ(b->timeout_ms, 0);
        ASSERT_EQ(b->scheduled_for_us, 0);
        /* ... and nothing else of the row */
        ASSERT(a->worker_id == NULL);
        ASSERT_EQ(a->created_at_us, 0);
        ASSERT_EQ(a->lease_expires_at_us, 0);
        ASSERT_EQ(a->max_attempts, 0);
        job_list_fini(&l);
    }
    for (int i = 0; i < 3; i++)
        job_fini(&out[i]);
    done(st);
}

TEST(idempotency_replay_and_conflict)
{
    struct store *st = fresh_store(NULL);
    struct jobd_error e = {0};
    struct job a = {0}, b = {0};
    bool rep = true;
    struct job_spec sp = {.type = "t", .payload = "{\"a\":1,\"b\":[1,2]}", .idempotency_key = "k1"};
    ASSERT_OK(store_enqueue(st, &sp, &a, &rep, &e), &e);
    ASSERT(!rep);
    ASSERT_OK(store_enqueue(st, &sp, &b, &rep, &e), &e);
    ASSERT(rep);
    ASSERT_EQ(a.id, b.id);
    job_fini(&b);
    struct job_spec other = sp;
    other.payload = "{\"a\":2}";
    ASSERT_EQ(store_enqueue(st, &other, &b, &rep, &e), JOBD_E_CONFLICT);
    other = sp;
    other.queue = "other";
    ASSERT_EQ(store_enqueue(st, &other, &b, &rep, &e), JOBD_E_CONFLICT);
    /* Batch: all or nothing; a replay inside a batch is marked. */
    struct job_spec batch[2] = {{.type = "t", .idempotency_key = "k2"}, sp};
    struct job bo[2] = {{0}};
    bool brep[2];
    ASSERT_OK(store_enqueue_batch(st, batch, 2, bo, brep, &e), &e);
    ASSERT(!brep[0]);
    ASSERT(brep[1]);
    ASSERT_EQ(bo[1].id, a.id);
    job_fini(&bo[0]);
    job_fini(&bo[1]);
    struct job_spec bad[2] = {{.type = "t", .idempotency_key = "k3"}, other};
    ASSERT_EQ(store_enqueue_batch(st, bad, 2, bo, brep, &e), JOBD_E_CONFLICT);
    ASSERT_STR_EQ(e.field, "jobs[1].idempotency_key");
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.job_keys WHERE idempotency_key = 'k3'"), 0);
    /* The key follows the job into jobs_done. */
    struct claim_req req = {.worker_id = "w", .limit = 10};
    struct job_list l = {0};
    ASSERT_OK(store_claim(st, &req, &l, &e), &e);
    for (size_t i = 0; i < l.n; i++)
        ASSERT_OK(store_complete(st, l.v[i].id, l.v[i].attempt, NULL, NULL, &e), &e);
    job_list_fini(&l);
    ASSERT_OK(store_enqueue(st, &sp, &b, &rep, &e), &e);
    ASSERT(rep);
    ASSERT_EQ(b.status, JOB_SUCCEEDED);
    job_fini(&b);
    job_fini(&a);
    done(st);
}

TEST(reap_backoff_dead_and_cancelled)
{
    struct manual_clock mc;
    manual_clock_init(&mc, 1800000000000000LL);
    struct store *st = fresh_store(&mc);
    struct jobd_error e = {0};
    struct job_spec specs[3] = {{.type = "t"}, {.type = "t", .max_attempts = 1}, {.type = "t"}};
    struct job out[3] = {{0}};
    ASSERT_OK(store_enqueue_batch(st, specs, 3, out, NULL, &e), &e);
    struct claim_req req = {.worker_id = "w", .limit = 10, .lease_ms = 1000};
    struct job_list l = {0};
    ASSERT_OK(store_claim(st, &req, &l, &e), &e);
    ASSERT_EQ(l.n, 3);
    job_list_fini(&l);
    struct job j = {0};
    ASSERT_OK(store_cancel(st, out[2].id, &j, &e), &e);
    job_fini(&j);
    int reaped = -1;
    struct backoff_policy bp = {.base_ms = 1000, .cap_ms = 5000};
    ASSERT_OK(store_reap(st, 100, &bp, &reaped, &e), &e);
    ASSERT_EQ(reaped, 0);
    manual_clock_advance(&mc, 1000001);
    ASSERT_OK(store_reap(st, 100, &bp, &reaped, &e), &e);
    ASSERT_EQ(reaped, 3);
    ASSERT_OK(store_get(st, out[0].id, &j, &e), &e);
    ASSERT_EQ(j.status, JOB_PENDING);
    ASSERT_STR_EQ(j.last_error, "lease expired");
    int64_t now = 1800000000000000LL + 1000001;
    ASSERT(j.run_at_us >= now && j.run_at_us <= now + 2000000);
    job_fini(&j);
    ASSERT_OK(store_get(st, out[1].id, &j, &e), &e);
    ASSERT_EQ(j.status, JOB_DEAD);
    job_fini(&j);
    ASSERT_OK(store_get(st, out[2].id, &j, &e), &e);
    ASSERT_EQ(j.status, JOB_CANCELLED);
    job_fini(&j);
    ASSERT_EQ(store_heartbeat(st, out[0].id, 1, 0, NULL, NULL, &e), JOBD_E_STALE);
    /* Prune: terminal jobs finished before the cutoff, keys freed. */
    int deleted = 0;
    ASSERT_OK(store_prune(st, now + 1, 100, &deleted, &e), &e);
    ASSERT_EQ(deleted, 2);
    ASSERT_EQ(store_get(st, out[1].id, &j, &e), JOBD_E_NOTFOUND);
    for (int i = 0; i < 3; i++)
        job_fini(&out[i]);
    done(st);
}

TEST(list_pages_newest_first)
{
    struct store *st = fresh_store(NULL);
    struct jobd_error e = {0};
    struct job_spec specs[5] = {{.type = "a"},
                                {.type = "b"},
                                {.type = "a"},
                                {.type = "a"},
                                {.type = "a", .queue = "other"}};
    ASSERT_OK(store_enqueue_batch(st, specs, 5, NULL, NULL, &e), &e);
    struct job_filter f = {.status = STORE_ANY, .type = "a", .limit = 2};
    struct job_list l = {0};
    int64_t cur = 0;
    ASSERT_OK(store_list(st, &f, &l, &cur, &e), &e);
    ASSERT_EQ(l.n, 2);
    ASSERT(l.v[0].id > l.v[1].id);
    ASSERT_EQ(cur, l.v[1].id);
    f.before_id = cur;
    job_list_fini(&l);
    ASSERT_OK(store_list(st, &f, &l, &cur, &e), &e);
    ASSERT_EQ(l.n, 2);
    ASSERT_EQ(cur, 0);
    job_list_fini(&l);
    struct job_filter g = {.status = JOB_SUCCEEDED};
    ASSERT_OK(store_list(st, &g, &l, &cur, &e), &e);
    ASSERT_EQ(l.n, 0);
    job_list_fini(&l);
    done(st);
}

TEST(wait_is_woken_by_enqueue_and_sql_enqueue)
{
    struct store *st = fresh_store(NULL);
    struct jobd_error e = {0};
    ASSERT_EQ(store_wait(st, 10, &e), 0); /* LISTEN, nothing yet */
    struct store *other = NULL;
    ASSERT_OK(store_open(g_url, &other, &e), &e);
    struct job_spec sp = {.type = "t"};
    ASSERT_OK(store_enqueue(other, &sp, NULL, NULL, &e), &e);
    ASSERT_EQ(store_wait(st, 5000, &e), 1);
    ASSERT_EQ(store_wait(st, 10, &e), 0);
    ASSERT_EQ(sql_num("SELECT jobd.enqueue('from.sql')") > 0, 1);
    ASSERT_EQ(store_wait(st, 5000, &e), 1);
    ASSERT_EQ(store_wait(st, 10, &e), 0);
    /* The unkeyed batch (the group committer's) notifies from its own
     * statement, not through the trigger. */
    struct job_spec two[2] = {{.type = "t"}, {.type = "t", .queue = "q2"}};
    ASSERT_OK(store_enqueue_batch(other, two, 2, NULL, NULL, &e), &e);
    ASSERT_EQ(store_wait(st, 5000, &e), 1);
    store_close(other);
    done(st);
}

TEST(batch_with_a_key_twice)
{
    struct store *st = fresh_store(NULL);
    struct jobd_error e = {0};
    struct job_spec same[3] = {{.type = "t", .payload = "{\"n\":1}", .idempotency_key = "dup"},
                               {.type = "t"},
                               {.type = "t", .payload = "{\"n\":1}", .idempotency_key = "dup"}};
    struct job out[3] = {{0}};
    bool rep[3];
    ASSERT_OK(store_enqueue_batch(st, same, 3, out, rep, &e), &e);
    ASSERT(!rep[0]);
    ASSERT(!rep[1]);
    ASSERT(rep[2]);
    ASSERT_EQ(out[2].id, out[0].id);
    ASSERT(out[1].id > out[0].id);
    for (int i = 0; i < 3; i++)
        job_fini(&out[i]);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs"), 2);
    struct job_spec clash[3] = {{.type = "t", .idempotency_key = "x1"},
                                {.type = "t", .idempotency_key = "x2"},
                                {.type = "u", .idempotency_key = "x1"}};
    ASSERT_EQ(store_enqueue_batch(st, clash, 3, out, rep, &e), JOBD_E_CONFLICT);
    ASSERT_STR_EQ(e.field, "jobs[2].idempotency_key");
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.jobs"), 2);
    ASSERT_EQ(sql_num("SELECT count(*) FROM jobd.job_keys"), 1);
    done(st);
}

/* The value of connection option key on c, or "" (PQconninfo). */
static void
conn_opt(PGconn *c, const char *key, char *buf, size_t n)
{
    PQconninfoOption *o = PQconninfo(c);
    snprintf(buf, n, "%s", "");
    for (PQconninfoOption *p = o; p != NULL && p->keyword != NULL; p++)
        if (strcmp(p->keyword, key) == 0 && p->val != NULL)
            snprintf(buf, n, "%s", p->val);
    PQconninfoFree(o);
}

TEST(connections_get_keepalives_and_a_tcp_user_timeout)
{
    /* A silent peer must end a call in seconds (pg/conn.c). */
    struct jobd_error e = {0};
    PGconn *c = NULL;
    bool pooled = true;
    ASSERT_OK(pg_connect(g_url, &c, &pooled, &e), &e);
    ASSERT(!pooled);
    char v[64];
    conn_opt(c, "keepalives", v, sizeof v);
    ASSERT_STR_EQ(v, "1");
    conn_opt(c, "keepalives_idle", v, sizeof v);
    ASSERT_STR_EQ(v, "5");
    conn_opt(c, "keepalives_interval", v, sizeof v);
    ASSERT_STR_EQ(v, "2");
    conn_opt(c, "keepalives_count", v, sizeof v);
    ASSERT_STR_EQ(v, "3");
    conn_opt(c, "tcp_user_timeout", v, sizeof v);
    ASSERT_STR_EQ(v, "5000");
    conn_opt(c, "connect_timeout", v, sizeof v);
    ASSERT_STR_EQ(v, "5");
    PQfinish(c);
    /* What the URL sets itself wins. */
    char url[1024];
    snprintf(url, sizeof url, "%s%skeepalives_idle=7&tcp_user_timeout=9000", g_url,
             strchr(g_url, '?') ? "&" : "?");
    ASSERT_OK(pg_connect(url, &c, &pooled, &e), &e);
    conn_opt(c, "keepalives_idle", v, sizeof v);
    ASSERT_STR_EQ(v, "7");
    conn_opt(c, "tcp_user_timeout", v, sizeof v);
    ASSERT_STR_EQ(v, "9000");
    conn_opt(c, "keepalives_count", v, sizeof v);
    ASSERT_STR_EQ(v, "3");
    PQfinish(c);
}

/* The URL with extra query parameters appended. */
static void
url_plus(char *buf, size_t n, const char *params)
{
    snprintf(buf, n, "%s%s%s", g_url, strchr(g_url, '?') ? "&" : "?", params);
}

TEST(pooler_transaction_is_jobds_own_and_means_unnamed_statements)
{
    /* libpq does not know pooler=: it is taken out, and it only says "pooled". */
    struct jobd_error e = {0};
    PGconn *c = NULL;
    bool pooled = false;
    char url[1024];
    url_plus(url, sizeof url, "pooler=transaction&keepalives_idle=7");
    ASSERT_OK(pg_connect(url, &c, &pooled, &e), &e);
    ASSERT(pooled);
    char v[64];
    conn_opt(c, "keepalives_idle", v, sizeof v);
    ASSERT_STR_EQ(v, "7");
    PQfinish(c);
    url_plus(url, sizeof url, "pooler=session");
    ASSERT_EQ(pg_connect(url, &c, &pooled, &e), JOBD_E_INVALID);
    ASSERT(strstr(e.msg, "pooler must be 'transaction'") != NULL);

    /* A pooled store prepares nothing on the server and says it cannot LISTEN. */
    reset_db();
    url_plus(url, sizeof url, "pooler=transaction");
    struct store *st = NULL;
    ASSERT_OK(store_open(url, &st, &e), &e);
    ASSERT_OK(store_migrate(st, &e), &e);
    ASSERT(!store_wait_ready(st));
    struct job_spec sp = {.type = "pooled", .payload = "{}"};
    struct job j = {0}, g = {0};
    ASSERT_OK(store_enqueue(st, &sp, &j, NULL, &e), &e);
    ASSERT_OK(store_get(st, j.id, &g, &e), &e);
    ASSERT_STR_EQ(g.type, "pooled");
    job_fini(&g);
    struct store_pg *s = (struct store_pg *)st;
    PGresult *r = PQexec(s->conn, "SELECT count(*) FROM pg_prepared_statements");
    ASSERT_STR_EQ(PQgetvalue(r, 0, 0), "0");
    PQclear(r);
    job_fini(&j);
    store_close(st);
}

/* The plan of the worker's claim as this session would run it, generic (text). */
static char *
claim_plan(struct store_pg *s)
{
    PQclear(PQexec(s->conn, "SET plan_cache_mode = force_generic_plan"));
    PGresult *r = PQexec(s->conn, "EXPLAIN EXECUTE st_claim_types_run('w', 10, 60000, '{walk}',"
                                  " NULL, NULL)");
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        TEST_FAIL("explain: %s", PQresultErrorMessage(r));
    size_t cap = 1, n = 0;
    for (int i = 0; i < PQntuples(r); i++)
        cap += strlen(PQgetvalue(r, i, 0)) + 1;
    char *plan = malloc(cap);
    ASSERT(plan != NULL);
    for (int i = 0; i < PQntuples(r); i++)
        n += (size_t)sprintf(plan + n, "%s\n", PQgetvalue(r, i, 0));
    PQclear(r);
    PQclear(PQexec(s->conn, "RESET plan_cache_mode"));
    return plan;
}

/*
 * A worker's claim walks jobs_claim_type in claim order even before the
 * table's first ANALYZE: by its default selectivities the planner expects a
 * handful of rows and, free to choose, reads every due job of the type with
 * a bitmap scan and sorts them, at every claim (docs/BENCHMARKS.md). Only a
 * worker loop's connection (store_offload) is set so.
 */
TEST(a_worker_claim_walks_the_claim_index_without_statistics)
{
    struct store *st = fresh_store(NULL);
    struct jobd_error e = {0};
    PGconn *c = PQconnectdb(g_url);
    ASSERT_EQ(PQstatus(c), CONNECTION_OK);
    PQclear(PQexec(c, "ALTER TABLE jobd.jobs SET (autovacuum_enabled = false)"));
    PGresult *r = PQexec(c, "INSERT INTO jobd.jobs (type, payload, run_at)"
                            " SELECT 'walk', '{}', now() - interval '1 hour'"
                            " FROM generate_series(1, 5000)");
    ASSERT_EQ(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    PQfinish(c);
    ASSERT_EQ(sql_num("SELECT count(*) FROM pg_stats WHERE schemaname = 'jobd'"
                      " AND tablename = 'jobs'"),
              0);
    const char *types[] = {"walk"};
    struct claim_req req = {.worker_id = "w",
                            .types = types,
                            .n_types = 1,
                            .limit = 10,
                            .lease_ms = 60000,
                            .run_only = true};
    struct store *loop = NULL;
    ASSERT_OK(store_open(g_url, &loop, &e), &e);
    store_offload(loop);
    for (int i = 0; i < 2; i++) { /* a claim each: the plain and the worker's connection */
        struct store *who = i == 0 ? st : loop;
        struct job_list got = {0};
        ASSERT_OK(store_claim(who, &req, &got, &e), &e);
        ASSERT_EQ(got.n, 10);
        job_list_fini(&got);
        char *plan = claim_plan((struct store_pg *)who);
        if (i == 0) /* what the planner picks by itself here: the test's premise */
            ASSERT(strstr(plan, "Bitmap Heap Scan on jobs ") != NULL);
        else if (strstr(plan, "Index Scan using jobs_claim_type") == NULL ||
                 strstr(plan, "Bitmap Heap Scan on jobs ") != NULL)
            TEST_FAIL("the worker's claim does not walk jobs_claim_type:\n%s", plan);
        free(plan);
    }
    store_close(loop);
    done(st);
}
