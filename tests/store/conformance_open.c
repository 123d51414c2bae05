/*
 * conformance_open.c — the conformance cases of opening a store (migrations
 * once and concurrently, what is not a database, a missing folder) and of
 * enqueue (defaults, every field, ids that grow and are never reused, invalid
 * specs refused).
 */
#include "conformance.h"

/* ------------------------------------------------------------------ */
/* opening, migrations, bad input                                      */

TEST(migrate_is_idempotent)
{
    struct fx f;
    fx_open(&f);
    ASSERT_OK(store_migrate(f.st, &f.err), &f.err);
    ASSERT_OK(store_migrate(f.st, &f.err), &f.err);
    ASSERT_OK(store_ping(f.st, &f.err), &f.err);
    fx_close(&f);
}

TEST(migrate_concurrent_starters)
{
    struct fx f;
    memset(&f, 0, sizeof f);
    manual_clock_init(&f.mc, T0);
    /* A fresh, unmigrated database that four processes migrate at once. */
    if (is_pg()) {
        pg_fresh(&f);
    } else {
        snprintf(f.url, sizeof f.url, "sqlite:%s", test_path("mig.db"));
    }
    fflush(NULL); /* or the children repeat what is buffered */
    pid_t pids[4];
    for (int i = 0; i < 4; i++) {
        pids[i] = fork();
        ASSERT(pids[i] >= 0);
        if (pids[i] == 0) {
            struct store *st = NULL;
            struct jobd_error e = {0};
            int rc = store_open(f.url, &st, &e);
            if (rc == JOBD_OK)
                rc = store_migrate(st, &e);
            if (rc != JOBD_OK)
                fprintf(stderr, "child %d: %d %s\n", i, rc, e.msg);
            store_close(st);
            child_exit(rc == JOBD_OK ? 0 : 1);
        }
    }
    for (int i = 0; i < 4; i++) {
        int status = 0;
        ASSERT_EQ(waitpid(pids[i], &status, 0), pids[i]);
        ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    f.st = fx_connect(&f);
    enq(&f, "t", NULL, 0, 0);
    fx_close(&f);
}

TEST(open_not_a_database)
{
    if (is_pg()) {
        /* The pg twin: a database that does not exist is a clean error. */
        struct fx f;
        fx_open(&f);
        char bad[1300];
        const char *slash = strrchr(f.url, '/');
        snprintf(bad, sizeof bad, "%.*s/jobd_no_such_database_x", (int)(slash - f.url), f.url);
        struct store *st = NULL;
        struct jobd_error e = {0};
        int rc = store_open(bad, &st, &e);
        if (rc == JOBD_OK)
            rc = store_migrate(st, &e);
        ASSERT_NE(rc, JOBD_OK);
        ASSERT(e.msg[0] != '\0');
        store_close(st);
        fx_close(&f);
        return;
    }
    const char *p = test_path("garbage.db");
    FILE *fp = fopen(p, "w");
    ASSERT(fp != NULL);
    for (int i = 0; i < 200; i++)
        fputs("this is not a sqlite database, just text\n", fp);
    fclose(fp);
    char url[1100];
    snprintf(url, sizeof url, "sqlite:%s", p);
    struct store *st = NULL;
    struct jobd_error e = {0};
    int rc = store_open(url, &st, &e);
    if (rc == JOBD_OK) {
        rc = store_migrate(st, &e);
        store_close(st);
    }
    ASSERT_EQ(rc, JOBD_E_STORE);
    ASSERT(e.msg[0] != '\0');
}

TEST(open_missing_directory)
{
    if (is_pg())
        return;
    struct store *st = NULL;
    struct jobd_error e = {0};
    int rc = store_open("sqlite:/nonexistent-dir-jobd/x/y.db", &st, &e);
    ASSERT_NE(rc, JOBD_OK);
    ASSERT(st == NULL);
    ASSERT(e.msg[0] != '\0');
}

/* ------------------------------------------------------------------ */
/* enqueue                                                             */

TEST(enqueue_defaults)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "email.send"};
    struct job j = {0};
    bool replayed = true;
    ASSERT_OK(store_enqueue(f.st, &s, &j, &replayed, &f.err), &f.err);
    ASSERT(!replayed);
    ASSERT(j.id > 0);
    ASSERT_STR_EQ(j.type, "email.send");
    ASSERT_STR_EQ(j.queue, "default");
    ASSERT_STR_EQ(j.payload, "{}");
    ASSERT_EQ(j.status, JOB_PENDING);
    ASSERT_EQ(j.priority, 0);
    ASSERT_EQ(j.attempt, 0);
    ASSERT_EQ(j.max_attempts, 25);
    ASSERT_EQ(j.run_at_us, T0);
    ASSERT_EQ(j.created_at_us, T0);
    ASSERT_EQ(j.started_at_us, 0);
    ASSERT_EQ(j.finished_at_us, 0);
    ASSERT_EQ(j.lease_expires_at_us, 0);
    ASSERT_EQ(j.timeout_ms, 0);
    ASSERT(!j.cancel_requested);
    ASSERT_NULL(j.idempotency_key);
    ASSERT_NULL(j.schedule);
    ASSERT_NULL(j.worker_id);
    ASSERT_NULL(j.last_error);
    ASSERT_NULL(j.result);
    ASSERT_EQ(j.scheduled_for_us, 0);

    /* get returns the same row */
    struct job g = getj(&f, j.id);
    ASSERT_EQ(g.id, j.id);
    ASSERT_STR_EQ(g.queue, "default");
    ASSERT_STR_EQ(g.payload, "{}");
    ASSERT_EQ(g.status, JOB_PENDING);
    ASSERT_EQ(g.max_attempts, 25);
    ASSERT_EQ(g.run_at_us, T0);
    job_fini(&g);
    job_fini(&j);
    fx_close(&f);
}

TEST(enqueue_all_fields)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "report:build",
                         .payload = "{\"a\":[1,2,{\"b\":\"\\u00e9\"}]}",
                         .queue = "mail_2",
                         .priority = -7,
                         .run_at_us = T0 + 90 * SEC,
                         .max_attempts = 3,
                         .idempotency_key = "key-1",
                         .timeout_ms = 30000,
                         .schedule = "nightly",
                         .scheduled_for_us = T0 + 60 * SEC};
    struct job j = {0};
    ASSERT_OK(store_enqueue(f.st, &s, &j, NULL, &f.err), &f.err);
    struct job g = getj(&f, j.id);
    ASSERT_STR_EQ(g.type, "report:build");
    ASSERT_STR_EQ(g.payload, "{\"a\":[1,2,{\"b\":\"\\u00e9\"}]}");
    ASSERT_STR_EQ(g.queue, "mail_2");
    ASSERT_EQ(g.priority, -7);
    ASSERT_EQ(g.run_at_us, T0 + 90 * SEC);
    ASSERT_EQ(g.max_attempts, 3);
    ASSERT_STR_EQ(g.idempotency_key, "key-1");
    ASSERT_EQ(g.timeout_ms, 30000);
    ASSERT_STR_EQ(g.schedule, "nightly");
    ASSERT_EQ(g.scheduled_for_us, T0 + 60 * SEC);
    ASSERT_EQ(g.created_at_us, T0);
    job_fini(&g);
    job_fini(&j);
    fx_close(&f);
}

TEST(ids_grow_and_get_missing)
{
    struct fx f;
    fx_open(&f);
    int64_t a = enq(&f, "t", NULL, 0, 0);
    int64_t b = enq(&f, "t", NULL, 0, 0);
    ASSERT(b > a);
    struct job j = {0};
    ASSERT_EQ(store_get(f.st, b + 1000, &j, &f.err), JOBD_E_NOTFOUND);
    ASSERT_EQ(store_get(f.st, -1, &j, &f.err), JOBD_E_NOTFOUND);
    fx_close(&f);
}

TEST(ids_never_reused_after_jobs_finish)
{
    struct fx f;
    fx_open(&f);
    int64_t a = enq(&f, "t", NULL, 0, 0);
    int64_t b = enq(&f, "t", NULL, 0, 0);
    /* both finish, so no pending/running row holds the highest id any more */
    struct job_list l = {0};
    claim(&f, 2, 0, &l);
    ASSERT_EQ(l.n, 2);
    ASSERT_OK(store_complete(f.st, l.v[0].id, 1, NULL, NULL, &f.err), &f.err);
    ASSERT_OK(store_fail(f.st, l.v[1].id, 1, "x", false, 0, NULL, &f.err), &f.err);
    job_list_fini(&l);
    int64_t c = enq(&f, "t", NULL, 0, 0);
    ASSERT(c > b && b > a);
    /* a retried job keeps its id and the next new one is still fresh */
    ASSERT_OK(store_retry(f.st, b, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, b), JOB_PENDING);
    int64_t d = enq(&f, "t", NULL, 0, 0);
    ASSERT(d > c);
    ASSERT_EQ(status_of(&f, a), JOB_SUCCEEDED);
    fx_close(&f);
}

TEST(enqueue_invalid_is_rejected)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "bad type"};
    ASSERT_EQ(store_enqueue(f.st, &s, NULL, NULL, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "type");
    struct job_list l = {0};
    int64_t next = 0;
    struct job_filter flt = {.status = STORE_ANY};
    ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
    ASSERT_EQ(l.n, 0);
    job_list_fini(&l);
    fx_close(&f);
}
