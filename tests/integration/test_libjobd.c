/*
 * test_libjobd.c — the public client API of libjobd (include/jobd.h) on a
 * real SQLite file: open + migrate, enqueue (defaults, validation, canonical
 * payloads, idempotency), batches, status, and the worker primitives (claim
 * order and filters, heartbeat, complete, fail with backoff, fencing), with
 * a manual clock so no test waits for time to pass. Each such test runs
 * twice, NAME_sqlite on a real SQLite file and NAME_pg on a fresh PostgreSQL
 * database (JOBD_TEST_PG_URL, tests/pgtest.h; skipped without it, failed
 * under JOBD_TEST_REQUIRE_PG: TEST_NEED_PG); jobd_enqueue_pg is checked
 * inside the caller's own transaction.
 *
 * Until a backend exists its variants skip, and say so, ONLY when the store
 * answers exactly "the sqlite backend is not built yet" (or "pg").
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/job.h"
#include "core/json.h"
#include "jobd.h"
#include "lib/lib.h"
#include "test.h"
#include "util/clock.h"

#if __has_include("pgtest.h")
#define HAVE_PGTEST 1
#include <libpq-fe.h>

#include "pgtest.h"
#endif

#define T0 INT64_C(1796220197120000) /* 2026-12-02T14:03:17.120Z */
#define SQLITE_NOT_BUILT "the sqlite backend is not built yet"

/* Tells the person running the suite, once, what was not exercised. */
__attribute__((constructor)) static void
announce_skips(void)
{
    static const char *const probes[] = {"sqlite:/nonexistent-dir-for-probe/x.db",
                                         "postgresql://127.0.0.1:1/probe?connect_timeout=1"};
    for (size_t i = 0; i < 2; i++) {
        struct store *st = NULL;
        struct jobd_error e = {0};
        if (store_open(probes[i], &st, &e) != JOBD_OK &&
            strstr(e.msg, "backend is not built yet") != NULL)
            printf("SKIP test_libjobd: %s\n", e.msg);
        store_close(st);
    }
#ifndef HAVE_PGTEST
    printf("SKIP test_libjobd: the _pg variants need tests/pgtest.h, not there yet\n");
#endif
}

#ifdef HAVE_PGTEST
/* The database of this test's pg variant, dropped by close_client. */
static char pg_url[512];
#endif

/*
 * Opens a client on backend ("sqlite": sqlite:test.db in the test's temp
 * dir; "pg": a fresh database), with a manual clock at T0 if mc is given.
 * Returns NULL to skip (that backend is not built yet); any other failure
 * fails the test.
 */
static jobd_client *
open_client(const char *backend, struct manual_clock *mc)
{
    const char *url = "sqlite:test.db";
    if (strcmp(backend, "pg") == 0) {
#ifdef HAVE_PGTEST
        TEST_NEED_PG();
        if (pgtest_fresh_db(pg_url, sizeof pg_url) != 0)
            TEST_FAIL("no PostgreSQL for this test (see above)");
        url = pg_url;
#else
        TEST_SKIP("tests/pgtest.h is not there yet");
#endif
    }
    jobd_client *c = NULL;
    struct jobd_error e = {0};
    int rc = jobd_client_open(url, &c, &e);
    if (rc != JOBD_OK && strstr(e.msg, "backend is not built yet") != NULL &&
        strstr(e.msg, backend) != NULL)
        TEST_SKIP("%s", e.msg);
    ASSERT_OK(rc, &e);
    ASSERT(c != NULL);
    if (mc != NULL) {
        manual_clock_init(mc, T0);
        store_set_clock(lib_client_store(c), &mc->clock);
    }
    return c;
}

static void
close_client(jobd_client *c)
{
    jobd_client_close(c);
#ifdef HAVE_PGTEST
    if (pg_url[0] != '\0')
        pgtest_drop_db(pg_url);
#endif
}

/* A test body run once per backend: NAME_sqlite and NAME_pg. */
#define BOTH(name)                                                                                 \
    static void body_##name(const char *backend);                                                  \
    TEST(name##_sqlite)                                                                            \
    {                                                                                              \
        body_##name("sqlite");                                                                     \
    }                                                                                              \
    TEST(name##_pg)                                                                                \
    {                                                                                              \
        body_##name("pg");                                                                         \
    }                                                                                              \
    static void body_##name(const char *backend)

static jobd_job_batch *
claim(jobd_client *c, int limit, const char *const *types, size_t n_types)
{
    struct jobd_claim_opts co = {
        .worker_id = "w1", .types = types, .n_types = n_types, .limit = limit};
    jobd_job_batch *b = NULL;
    struct jobd_error e = {0};
    ASSERT_OK(jobd_claim(c, &co, &b, &e), &e);
    ASSERT(b != NULL);
    return b;
}

static void
expect_status(jobd_client *c, int64_t id, const char *status, int32_t attempt)
{
    const char *s = NULL;
    int32_t a = -1;
    struct jobd_error e = {0};
    ASSERT_OK(jobd_get_status(c, id, &s, &a, &e), &e);
    if (strcmp(s, status) != 0 || a != attempt)
        TEST_FAIL("job %lld: %s attempt %d, want %s attempt %d", (long long)id, s, a, status,
                  attempt);
}

TEST(open_migrates_and_reopens)
{
    jobd_client *c = open_client("sqlite", NULL);
    if (c == NULL)
        return;
    jobd_client_close(c);
    struct stat sb;
    ASSERT_EQ(stat("test.db", &sb), 0);
    c = open_client("sqlite", NULL); /* migrating again is a no-op */
    int64_t id = 0;
    struct jobd_error e = {0};
    struct jobd_job_opts o = {.type = "t"};
    ASSERT_OK(jobd_enqueue(c, &o, &id, &e), &e);
    ASSERT(id > 0);
    jobd_client_close(c);
    jobd_client_close(NULL);
}

TEST(open_errors)
{
    jobd_client *c = (jobd_client *)1;
    struct jobd_error e = {0};
    ASSERT_EQ(jobd_client_open("mysql://localhost/x", &c, &e), JOBD_E_INVALID);
    ASSERT_NULL(c);
    ASSERT_STR_EQ(e.field, "db");
    ASSERT_EQ(jobd_client_open(NULL, &c, &e), JOBD_E_INVALID);
    ASSERT_EQ(jobd_client_open("", &c, &e), JOBD_E_INVALID);
    ASSERT_EQ(jobd_client_open("sqlite:x.db", NULL, &e), JOBD_E_INVALID);
    /* A file that is not a database. */
    FILE *f = fopen("junk.db", "w");
    for (int i = 0; i < 200; i++)
        fputs("this is not a database file\n", f);
    fclose(f);
    int rc = jobd_client_open("sqlite:junk.db", &c, &e);
    if (rc != JOBD_OK && strstr(e.msg, SQLITE_NOT_BUILT) != NULL)
        return;
    ASSERT_EQ(rc, JOBD_E_STORE);
    ASSERT_NULL(c);
}

BOTH(enqueue_defaults_and_canonical_payload)
{
    struct manual_clock mc;
    jobd_client *c = open_client(backend, &mc);
    if (c == NULL)
        return;
    struct jobd_error e = {0};
    int64_t id = 0;
    struct jobd_job_opts o = {.type = "email.send",
                              .payload = " { \"to\" : \"a@b.c\", "
                                         "\"n\" : 1.50 }\n"};
    ASSERT_OK(jobd_enqueue(c, &o, &id, &e), &e);
    ASSERT(id > 0);
    expect_status(c, id, "pending", 0);
    int64_t id2 = 0;
    struct jobd_job_opts o2 = {.type = "t2"}; /* payload NULL = {} */
    ASSERT_OK(jobd_enqueue(c, &o2, &id2, &e), &e);
    ASSERT(id2 > id);
    ASSERT_OK(jobd_enqueue(c, &o2, NULL, &e), &e); /* id_out may be NULL */

    jobd_job_batch *b = claim(c, 10, NULL, 0);
    ASSERT_EQ(jobd_job_batch_count(b), 3);
    const jobd_job *j = jobd_job_batch_get(b, 0);
    ASSERT_EQ(jobd_job_id(j), id);
    ASSERT_EQ(jobd_job_attempt(j), 1);
    ASSERT_STR_EQ(jobd_job_type(j), "email.send");
    ASSERT_STR_EQ(jobd_job_queue(j), "default");
    ASSERT_STR_EQ(jobd_job_payload(j), "{\"n\":1.5,\"to\":\"a@b.c\"}");
    ASSERT_NULL(jobd_job_idempotency_key(j));
    ASSERT_EQ(jobd_job_timeout_ms(j), 0);
    ASSERT_EQ(jobd_job_scheduled_for_us(j), 0);
    ASSERT_EQ(jobd_job_lease_expires_at_us(j), T0 + JOB_DEFAULT_LEASE_MS * 1000);
    ASSERT_STR_EQ(jobd_job_payload(jobd_job_batch_get(b, 1)), "{}");
    ASSERT_NULL(jobd_job_batch_get(b, 3));
    expect_status(c, id, "running", 1);
    jobd_job_batch_free(b);
    jobd_job_batch_free(NULL);
    ASSERT_EQ(jobd_job_batch_count(NULL), 0);
    close_client(c);
}

BOTH(enqueue_all_options)
{
    struct manual_clock mc;
    jobd_client *c = open_client(backend, &mc);
    if (c == NULL)
        return;
    struct jobd_error e = {0};
    int64_t id = 0;
    struct jobd_job_opts o = {.type = "report:build",
                              .payload = "[1,2]",
                              .queue = "mail",
                              .priority = 7,
                              .run_at_us = T0 + 5000000,
                              .max_attempts = 3,
                              .idempotency_key = "k-1",
                              .timeout_ms = 30000};
    ASSERT_OK(jobd_enqueue(c, &o, &id, &e), &e);
    jobd_job_batch *b = claim(c, 10, NULL, 0);
    ASSERT_EQ(jobd_job_batch_count(b), 0); /* not due yet */
    jobd_job_batch_free(b);
    manual_clock_advance(&mc, 5000000);
    b = claim(c, 10, NULL, 0);
    ASSERT_EQ(jobd_job_batch_count(b), 1);
    const jobd_job *j = jobd_job_batch_get(b, 0);
    ASSERT_EQ(jobd_job_id(j), id);
    ASSERT_STR_EQ(jobd_job_queue(j), "mail");
    ASSERT_STR_EQ(jobd_job_payload(j), "[1,2]");
    ASSERT_STR_EQ(jobd_job_idempotency_key(j), "k-1");
    ASSERT_EQ(jobd_job_timeout_ms(j), 30000);
    jobd_job_batch_free(b);
    close_client(c);
}

BOTH(enqueue_refusals_name_the_field)
{
    jobd_client *c = open_client(backend, NULL);
    if (c == NULL)
        return;
    static const struct {
        struct jobd_job_opts o;
        int code;
        const char *field;
        const char *msg_part;
    } bad[] = {
        {{.payload = "{}"}, JOBD_E_INVALID, "type", "required"},
        {{.type = "has space"}, JOBD_E_INVALID, "type", "type"},
        {{.type = "t", .queue = "Mail"}, JOBD_E_INVALID, "queue", "queue"},
        {{.type = "t", .payload = "{\"a\":1,}"}, JOBD_E_INVALID, "payload", "line 1, column"},
        {{.type = "t", .payload = "{\"a\":1,\"a\":2}"}, JOBD_E_INVALID, "payload", "duplicate"},
        {{.type = "t", .payload = ""}, JOBD_E_INVALID, "payload", "empty"},
        {{.type = "t", .payload = "\"\xff\""}, JOBD_E_INVALID, "payload", "payload"},
        {{.type = "t", .priority = 2000000}, JOBD_E_INVALID, "priority", NULL},
        {{.type = "t", .max_attempts = -1}, JOBD_E_INVALID, "max_attempts", NULL},
        {{.type = "t", .idempotency_key = ""}, JOBD_E_INVALID, "idempotency_key", NULL},
        {{.type = "t", .timeout_ms = -5}, JOBD_E_INVALID, "timeout_ms", "negative"},
        {{.type = "t", .run_at_us = -1}, JOBD_E_INVALID, "run_at_us", "negative"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct jobd_error e = {0};
        int64_t id = -7;
        int rc = jobd_enqueue(c, &bad[i].o, &id, &e);
        if (rc != bad[i].code || strcmp(e.field, bad[i].field) != 0)
            TEST_FAIL("case %zu: rc %d field '%s' (%s), want %d '%s'", i, rc, e.field, e.msg,
                      bad[i].code, bad[i].field);
        if (bad[i].msg_part != NULL && strstr(e.msg, bad[i].msg_part) == NULL)
            TEST_FAIL("case %zu: '%s' lacks '%s'", i, e.msg, bad[i].msg_part);
        ASSERT_EQ(id, -7);
    }
    /* A payload over 256 KiB. */
    size_t n = JOB_PAYLOAD_MAX + 10;
    char *big = malloc(n + 1);
    memset(big, 'x', n);
    big[0] = '"';
    big[n - 1] = '"';
    big[n] = '\0';
    struct jobd_job_opts o = {.type = "t", .payload = big};
    struct jobd_error e = {0};
    ASSERT_EQ(jobd_enqueue(c, &o, NULL, &e), JOBD_E_TOOBIG);
    ASSERT_STR_EQ(e.field, "payload");
    free(big);
    ASSERT_EQ(jobd_enqueue(c, NULL, NULL, &e), JOBD_E_INVALID);
    /* Nothing was enqueued by any of that. */
    jobd_job_batch *b = claim(c, 100, NULL, 0);
    ASSERT_EQ(jobd_job_batch_count(b), 0);
    jobd_job_batch_free(b);
    close_client(c);
}

BOTH(idempotency_key_replays_and_conflicts)
{
    jobd_client *c = open_client(backend, NULL);
    if (c == NULL)
        return;
    struct jobd_error e = {0};
    int64_t a = 0, b = 0;
    struct jobd_job_opts o = {.type = "t", .payload = "{\"x\":1,\"y\":2}", .idempotency_key = "k"};
    ASSERT_OK(jobd_enqueue(c, &o, &a, &e), &e);
    /* Same document, other formatting: canonical text is equal -> replay. */
    o.payload = "{ \"y\": 2, \"x\": 1 }";
    ASSERT_OK(jobd_enqueue(c, &o, &b, &e), &e);
    ASSERT_EQ(a, b);
    o.payload = "{\"x\":2}";
    ASSERT_EQ(jobd_enqueue(c, &o, &b, &e), JOBD_E_CONFLICT);
    jobd_job_batch *batch = claim(c, 10, NULL, 0);
    ASSERT_EQ(jobd_job_batch_count(batch), 1);
    jobd_job_batch_free(batch);
    close_client(c);
}

BOTH(batch_all_or_nothing)
{
    jobd_client *c = open_client(backend, NULL);
    if (c == NULL)
        return;
    struct jobd_error e = {0};
    struct jobd_job_opts o[3] = {
        {.type = "a", .payload = "{\"i\":0}"},
        {.type = "b", .payload = "{\"i\":1}", .priority = 5},
        {.type = "c"},
    };
    int64_t ids[3] = {0};
    ASSERT_OK(jobd_enqueue_batch(c, o, 3, ids, &e), &e);
    ASSERT(ids[0] > 0 && ids[1] > ids[0] && ids[2] > ids[1]);
    /* One bad item fails the batch and is named. */
    o[1].type = "bad type";
    ASSERT_EQ(jobd_enqueue_batch(c, o, 3, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "jobs[1].type");
    o[1].type = "b";
    o[2].payload = "[";
    ASSERT_EQ(jobd_enqueue_batch(c, o, 3, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "jobs[2].payload");
    o[2].payload = NULL;
    o[2].timeout_ms = -1;
    ASSERT_EQ(jobd_enqueue_batch(c, o, 3, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "jobs[2].timeout_ms");
    ASSERT_OK(jobd_enqueue_batch(c, o, 0, NULL, &e), &e);
    ASSERT_EQ(jobd_enqueue_batch(c, o, 10001, NULL, &e), JOBD_E_TOOBIG);
    ASSERT_EQ(jobd_enqueue_batch(c, NULL, 2, NULL, &e), JOBD_E_INVALID);
    jobd_job_batch *b = claim(c, 100, NULL, 0);
    ASSERT_EQ(jobd_job_batch_count(b), 3);
    ASSERT_EQ(jobd_job_id(jobd_job_batch_get(b, 0)), ids[1]); /* priority 5 first */
    jobd_job_batch_free(b);
    close_client(c);
}

BOTH(claim_order_and_filters)
{
    struct manual_clock mc;
    jobd_client *c = open_client(backend, &mc);
    if (c == NULL)
        return;
    struct jobd_error e = {0};
    int64_t low = 0, high = 0, later = 0, other_q = 0, other_t = 0;
    struct jobd_job_opts o = {.type = "t", .priority = -1};
    ASSERT_OK(jobd_enqueue(c, &o, &low, &e), &e);
    o.priority = 10;
    ASSERT_OK(jobd_enqueue(c, &o, &high, &e), &e);
    o.priority = 0;
    o.run_at_us = T0 + 60000000;
    ASSERT_OK(jobd_enqueue(c, &o, &later, &e), &e);
    o.run_at_us = 0;
    o.queue = "other";
    ASSERT_OK(jobd_enqueue(c, &o, &other_q, &e), &e);
    o.queue = NULL;
    o.type = "u";
    ASSERT_OK(jobd_enqueue(c, &o, &other_t, &e), &e);

    /* Only type t in queue default. */
    const char *types[] = {"t"};
    const char *queues[] = {"default"};
    struct jobd_claim_opts co = {.worker_id = "w",
                                 .types = types,
                                 .n_types = 1,
                                 .queues = queues,
                                 .n_queues = 1,
                                 .limit = 10,
                                 .lease_ms = 5000};
    jobd_job_batch *b = NULL;
    ASSERT_OK(jobd_claim(c, &co, &b, &e), &e);
    ASSERT_EQ(jobd_job_batch_count(b), 2);
    ASSERT_EQ(jobd_job_id(jobd_job_batch_get(b, 0)), high);
    ASSERT_EQ(jobd_job_id(jobd_job_batch_get(b, 1)), low);
    ASSERT_EQ(jobd_job_lease_expires_at_us(jobd_job_batch_get(b, 0)), T0 + 5000000);
    jobd_job_batch_free(b);
    /* limit 0 means 1. */
    co.limit = 0;
    co.queues = NULL;
    co.n_queues = 0;
    ASSERT_OK(jobd_claim(c, &co, &b, &e), &e);
    ASSERT_EQ(jobd_job_batch_count(b), 1);
    ASSERT_EQ(jobd_job_id(jobd_job_batch_get(b, 0)), other_q);
    jobd_job_batch_free(b);
    manual_clock_advance(&mc, 60000000);
    b = claim(c, 10, NULL, 0);
    ASSERT_EQ(jobd_job_batch_count(b), 2);
    ASSERT_EQ(jobd_job_id(jobd_job_batch_get(b, 0)), other_t); /* run_at earlier */
    ASSERT_EQ(jobd_job_id(jobd_job_batch_get(b, 1)), later);
    jobd_job_batch_free(b);
    /* Bad claims. */
    co.worker_id = NULL;
    ASSERT_EQ(jobd_claim(c, &co, &b, &e), JOBD_E_INVALID);
    ASSERT_NULL(b);
    co.worker_id = "w";
    co.limit = 1001;
    ASSERT_EQ(jobd_claim(c, &co, &b, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "limit");
    co.limit = 1;
    co.lease_ms = -1;
    ASSERT_EQ(jobd_claim(c, &co, &b, &e), JOBD_E_INVALID);
    ASSERT_EQ(jobd_claim(c, NULL, &b, &e), JOBD_E_INVALID);
    ASSERT_EQ(jobd_claim(c, &co, NULL, &e), JOBD_E_INVALID);
    close_client(c);
}

BOTH(heartbeat_complete_and_fencing)
{
    struct manual_clock mc;
    jobd_client *c = open_client(backend, &mc);
    if (c == NULL)
        return;
    struct jobd_error e = {0};
    int64_t id = 0;
    struct jobd_job_opts o = {.type = "t"};
    ASSERT_OK(jobd_enqueue(c, &o, &id, &e), &e);
    jobd_job_batch *b = claim(c, 1, NULL, 0);
    ASSERT_EQ(jobd_job_batch_count(b), 1);
    int32_t attempt = jobd_job_attempt(jobd_job_batch_get(b, 0));
    jobd_job_batch_free(b);
    bool cancel = true;
    ASSERT_OK(jobd_heartbeat(c, id, attempt, 0, &cancel, &e), &e);
    ASSERT(!cancel);
    ASSERT_OK(jobd_heartbeat(c, id, attempt, 1000, NULL, &e), &e);
    ASSERT_EQ(jobd_heartbeat(c, id, attempt + 1, 1000, NULL, &e), JOBD_E_STALE);
    ASSERT_EQ(jobd_complete(c, id, attempt + 1, NULL, &e), JOBD_E_STALE);
    /* A result that is not JSON is refused and changes nothing. */
    ASSERT_EQ(jobd_complete(c, id, attempt, "not json", &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "result");
    expect_status(c, id, "running", 1);
    ASSERT_OK(jobd_complete(c, id, attempt, "{ \"ok\" : true }", &e), &e);
    expect_status(c, id, "succeeded", 1);
    /* Every later report is stale. */
    ASSERT_EQ(jobd_complete(c, id, attempt, NULL, &e), JOBD_E_STALE);
    ASSERT_EQ(jobd_heartbeat(c, id, attempt, 0, NULL, &e), JOBD_E_STALE);
    ASSERT_EQ(jobd_fail(c, id, attempt, "x", true, NULL, &e), JOBD_E_STALE);
    /* The stored result is canonical. */
    struct job j = {0};
    ASSERT_OK(store_get(lib_client_store(c), id, &j, &e), &e);
    ASSERT_STR_EQ(j.result, "{\"ok\":true}");
    job_fini(&j);
    close_client(c);
}

BOTH(fail_retries_with_backoff_then_dies)
{
    struct manual_clock mc;
    jobd_client *c = open_client(backend, &mc);
    if (c == NULL)
        return;
    jobd_client_set_backoff(c, 1000, 1500); /* attempt 1: delay in [0, 1.5 s] */
    struct jobd_error e = {0};
    int64_t id = 0;
    struct jobd_job_opts o = {.type = "t", .max_attempts = 2};
    ASSERT_OK(jobd_enqueue(c, &o, &id, &e), &e);
    jobd_job_batch *b = claim(c, 1, NULL, 0);
    ASSERT_EQ(jobd_job_batch_count(b), 1);
    jobd_job_batch_free(b);
    const char *status = NULL;
    ASSERT_OK(jobd_fail(c, id, 1, "boom", true, &status, &e), &e);
    ASSERT_STR_EQ(status, "pending");
    expect_status(c, id, "pending", 1);
    struct job j = {0};
    ASSERT_OK(store_get(lib_client_store(c), id, &j, &e), &e);
    ASSERT(j.run_at_us >= T0 && j.run_at_us <= T0 + 1500000);
    ASSERT_STR_EQ(j.last_error, "boom");
    job_fini(&j);
    manual_clock_advance(&mc, 1500001);
    b = claim(c, 1, NULL, 0);
    ASSERT_EQ(jobd_job_batch_count(b), 1);
    ASSERT_EQ(jobd_job_attempt(jobd_job_batch_get(b, 0)), 2);
    jobd_job_batch_free(b);
    ASSERT_EQ(jobd_fail(c, id, 1, "late", true, &status, &e), JOBD_E_STALE);
    ASSERT_OK(jobd_fail(c, id, 2, "boom again", true, &status, &e), &e);
    ASSERT_STR_EQ(status, "dead"); /* out of attempts */
    expect_status(c, id, "dead", 2);

    /* A permanent failure is dead at once, attempts left or not. */
    int64_t id2 = 0;
    o.max_attempts = 0;
    ASSERT_OK(jobd_enqueue(c, &o, &id2, &e), &e);
    b = claim(c, 1, NULL, 0);
    ASSERT_EQ(jobd_job_id(jobd_job_batch_get(b, 0)), id2);
    jobd_job_batch_free(b);
    ASSERT_OK(jobd_fail(c, id2, 1, NULL, false, NULL, &e), &e);
    expect_status(c, id2, "dead", 1);
    close_client(c);
}

/*
 * jobd_fail's backoff counts the attempts since the last manual retry (the
 * rule of the worker and the reaper): after 10 attempts each retried by
 * hand, the 11th failure waits at most base * 2^1 = 2 s. Counting all 11 the
 * ceiling would be 2048 s: three jobs within 2 s by chance is one in 10^8.
 */
BOTH(fail_backoff_restarts_after_manual_retry)
{
    struct manual_clock mc;
    jobd_client *c = open_client(backend, &mc);
    if (c == NULL)
        return;
    jobd_client_set_backoff(c, 1000, 3600 * 1000);
    struct jobd_error e = {0};
    for (int k = 0; k < 3; k++) { /* one at a time: the claims find it */
        int64_t id = 0;
        struct jobd_job_opts o = {.type = "t", .max_attempts = 2};
        ASSERT_OK(jobd_enqueue(c, &o, &id, &e), &e);
        for (int a = 1; a <= 11; a++) {
            jobd_job_batch *b = claim(c, 1, NULL, 0);
            ASSERT_EQ(jobd_job_id(jobd_job_batch_get(b, 0)), id);
            ASSERT_EQ(jobd_job_attempt(jobd_job_batch_get(b, 0)), a);
            jobd_job_batch_free(b);
            ASSERT_OK(jobd_fail(c, id, a, "x", a == 11, NULL, &e), &e);
            if (a < 11)
                ASSERT_OK(store_retry(lib_client_store(c), id, NULL, &e), &e);
        }
        struct job j = {0};
        ASSERT_OK(store_get(lib_client_store(c), id, &j, &e), &e);
        ASSERT_EQ(j.status, JOB_PENDING);
        ASSERT(j.run_at_us >= T0 && j.run_at_us <= T0 + 2000000);
        job_fini(&j);
    }
    close_client(c);
}

BOTH(backoff_delays_spread_over_the_ceiling)
{
    /* With the defaults (5 s base), attempt 3 waits in [0, 40 s]; over 40
     * retried jobs the delays must not all be equal and must stay in range. */
    struct manual_clock mc;
    jobd_client *c = open_client(backend, &mc);
    if (c == NULL)
        return;
    struct jobd_error e = {0};
    int64_t min = INT64_MAX, max = INT64_MIN;
    for (int i = 0; i < 40; i++) {
        /* a type of its own: an earlier job whose delay came out 0 is due
         * again on the stopped clock, and must not be the one claimed */
        char type[16];
        snprintf(type, sizeof type, "t%d", i);
        const char *types[] = {type};
        int64_t id = 0;
        struct jobd_job_opts o = {.type = type};
        ASSERT_OK(jobd_enqueue(c, &o, &id, &e), &e);
        jobd_job_batch *b = claim(c, 1, types, 1);
        ASSERT_EQ(jobd_job_id(jobd_job_batch_get(b, 0)), id);
        jobd_job_batch_free(b);
        ASSERT_OK(jobd_fail(c, id, 1, "x", true, NULL, &e), &e);
        struct job j = {0};
        ASSERT_OK(store_get(lib_client_store(c), id, &j, &e), &e);
        int64_t d = j.run_at_us - T0;
        ASSERT(d >= 0 && d <= 10000000); /* attempt 1: 5 s * 2 */
        if (d < min)
            min = d;
        if (d > max)
            max = d;
        job_fini(&j);
    }
    ASSERT(max - min > 1000000);
    close_client(c);
}

BOTH(status_of_unknown_job)
{
    jobd_client *c = open_client(backend, NULL);
    if (c == NULL)
        return;
    struct jobd_error e = {0};
    ASSERT_EQ(jobd_get_status(c, 987654, NULL, NULL, &e), JOBD_E_NOTFOUND);
    ASSERT_EQ(jobd_heartbeat(c, 987654, 1, 0, NULL, &e), JOBD_E_STALE);
    ASSERT_EQ(jobd_complete(c, 987654, 1, NULL, &e), JOBD_E_STALE);
    close_client(c);
}

/* Concurrent claimers: one client per thread, as the header prescribes. */
enum { CC_JOBS = 200, CC_THREADS = 4 };
struct cc_shared {
    const char *url;
    _Atomic int claimed[CC_JOBS + 1]; /* by job id; ids start at 1 in a fresh store */
    _Atomic int total;
    _Atomic int errors;
};

static void *
cc_worker(void *arg)
{
    struct cc_shared *sh = arg;
    jobd_client *c = NULL;
    struct jobd_error e = {0};
    if (jobd_client_open(sh->url, &c, &e) != JOBD_OK) {
        fprintf(stderr, "open: %s\n", e.msg);
        sh->errors++;
        return NULL;
    }
    char wid[32];
    snprintf(wid, sizeof wid, "w-%p", (void *)&wid);
    struct jobd_claim_opts co = {.worker_id = wid, .limit = 5};
    for (;;) {
        jobd_job_batch *b = NULL;
        if (jobd_claim(c, &co, &b, &e) != JOBD_OK) {
            fprintf(stderr, "claim: %s\n", e.msg);
            sh->errors++;
            break;
        }
        size_t n = jobd_job_batch_count(b);
        for (size_t i = 0; i < n; i++) {
            const jobd_job *j = jobd_job_batch_get(b, i);
            int64_t id = jobd_job_id(j);
            if (id >= 1 && id <= CC_JOBS)
                sh->claimed[id]++;
            else
                sh->errors++;
            sh->total++;
            if (jobd_complete(c, id, jobd_job_attempt(j), NULL, &e) != JOBD_OK) {
                fprintf(stderr, "complete %lld: %s\n", (long long)id, e.msg);
                sh->errors++;
            }
        }
        jobd_job_batch_free(b);
        if (n == 0)
            break;
    }
    jobd_client_close(c);
    return NULL;
}

BOTH(concurrent_clients_claim_each_job_once)
{
    jobd_client *c = open_client(backend, NULL);
    if (c == NULL)
        return;
    struct jobd_job_opts *o = calloc(CC_JOBS, sizeof *o);
    for (int i = 0; i < CC_JOBS; i++)
        o[i] = (struct jobd_job_opts){.type = "cc", .priority = i % 7};
    int64_t *ids = calloc(CC_JOBS, sizeof *ids);
    struct jobd_error e = {0};
    ASSERT_OK(jobd_enqueue_batch(c, o, CC_JOBS, ids, &e), &e);
    ASSERT_EQ(ids[0], 1);
    ASSERT_EQ(ids[CC_JOBS - 1], CC_JOBS);
    struct cc_shared *sh = calloc(1, sizeof *sh);
#ifdef HAVE_PGTEST
    sh->url = strcmp(backend, "pg") == 0 ? pg_url : "sqlite:test.db";
#else
    sh->url = "sqlite:test.db";
#endif
    pthread_t t[CC_THREADS];
    for (int i = 0; i < CC_THREADS; i++)
        ASSERT_EQ(pthread_create(&t[i], NULL, cc_worker, sh), 0);
    for (int i = 0; i < CC_THREADS; i++)
        pthread_join(t[i], NULL);
    ASSERT_EQ(sh->errors, 0);
    ASSERT_EQ(sh->total, CC_JOBS);
    for (int id = 1; id <= CC_JOBS; id++) {
        if (sh->claimed[id] != 1)
            TEST_FAIL("job %d claimed %d times", id, sh->claimed[id]);
        expect_status(c, id, "succeeded", 1);
    }
    free(sh);
    free(ids);
    free(o);
    close_client(c);
}

TEST(enqueue_pg_argument_checks)
{
    /* Checked before the connection is touched: no PostgreSQL needed. */
    struct jobd_error e = {0};
    struct jobd_job_opts o = {.type = "t", .timeout_ms = 1000};
    ASSERT_EQ(jobd_enqueue_pg(NULL, &o, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "timeout_ms");
    o.timeout_ms = 0;
    o.payload = "{\"a\":";
    ASSERT_EQ(jobd_enqueue_pg(NULL, &o, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "payload");
    o.payload = NULL;
    o.type = NULL;
    ASSERT_EQ(jobd_enqueue_pg(NULL, &o, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "type");
    o.type = "t";
    ASSERT_EQ(jobd_enqueue_pg(NULL, &o, NULL, &e), JOBD_E_UNAVAILABLE);
}

#ifdef HAVE_PGTEST
static void
pg_exec(PGconn *conn, const char *sql)
{
    PGresult *r = PQexec(conn, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        TEST_FAIL("%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
}

TEST(enqueue_pg_commits_and_rolls_back_with_the_caller)
{
    TEST_NEED_PG();
    char url[512];
    if (pgtest_fresh_db(url, sizeof url) != 0)
        TEST_FAIL("no PostgreSQL for this test (see above)");
    jobd_client *c = NULL;
    struct jobd_error e = {0};
    int rc = jobd_client_open(url, &c, &e);
    if (rc != JOBD_OK && strstr(e.msg, "the pg backend is not built yet") != NULL) {
        pgtest_drop_db(url);
        TEST_SKIP("%s", e.msg);
    }
    ASSERT_OK(rc, &e);
    PGconn *conn = PQconnectdb(url);
    ASSERT_EQ(PQstatus(conn), CONNECTION_OK);

    /* Rolled back: the job never existed. */
    pg_exec(conn, "BEGIN");
    int64_t gone = 0;
    struct jobd_job_opts o = {.type = "pg.txn", .payload = "{ \"b\": 1, \"a\": [true] }"};
    ASSERT_OK(jobd_enqueue_pg(conn, &o, &gone, &e), &e);
    ASSERT(gone > 0);
    pg_exec(conn, "ROLLBACK");
    ASSERT_EQ(jobd_get_status(c, gone, NULL, NULL, &e), JOBD_E_NOTFOUND);

    /* Committed: invisible to others until COMMIT, then pending. */
    pg_exec(conn, "BEGIN");
    int64_t id = 0;
    o.queue = "txq";
    o.priority = 3;
    o.max_attempts = 4;
    o.idempotency_key = "order-17";
    ASSERT_OK(jobd_enqueue_pg(conn, &o, &id, &e), &e);
    ASSERT(id > gone);
    ASSERT_EQ(jobd_get_status(c, id, NULL, NULL, &e), JOBD_E_NOTFOUND);
    pg_exec(conn, "COMMIT");
    expect_status(c, id, "pending", 0);
    jobd_job_batch *b = claim(c, 10, NULL, 0);
    ASSERT_EQ(jobd_job_batch_count(b), 1);
    const jobd_job *j = jobd_job_batch_get(b, 0);
    ASSERT_EQ(jobd_job_id(j), id);
    ASSERT_STR_EQ(jobd_job_queue(j), "txq");
    ASSERT_STR_EQ(jobd_job_idempotency_key(j), "order-17");
    /* Stored by PostgreSQL's jsonb, so compare documents, not bytes. */
    char *canon = NULL;
    ASSERT_OK(json_canonical(jobd_job_payload(j), strlen(jobd_job_payload(j)), 1024, &canon,
                             "payload", &e),
              &e);
    ASSERT_STR_EQ(canon, "{\"a\":[true],\"b\":1}");
    free(canon);
    jobd_job_batch_free(b);

    /* Idempotency through SQL: a replay answers the same id, another
     * request with the key is a conflict. */
    int64_t again = 0;
    ASSERT_OK(jobd_enqueue_pg(conn, &o, &again, &e), &e);
    ASSERT_EQ(again, id);
    o.payload = "{\"different\":true}";
    ASSERT_EQ(jobd_enqueue_pg(conn, &o, &again, &e), JOBD_E_CONFLICT);
    ASSERT(strstr(e.msg, "order-17") != NULL);

    /* A future run_at is honoured (given in microseconds, exactly). */
    int64_t fut = 0;
    struct jobd_job_opts f = {.type = "pg.later", .run_at_us = INT64_C(4102444800123456)};
    ASSERT_OK(jobd_enqueue_pg(conn, &f, &fut, &e), &e); /* autocommit */
    struct job sj = {0};
    ASSERT_OK(store_get(lib_client_store(c), fut, &sj, &e), &e);
    ASSERT_EQ(sj.run_at_us, INT64_C(4102444800123456));
    ASSERT_EQ(sj.max_attempts, 25);
    job_fini(&sj);

    PQfinish(conn);
    jobd_client_close(c);
    pgtest_drop_db(url);
}
#endif
