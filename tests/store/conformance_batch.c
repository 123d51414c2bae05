/*
 * conformance_batch.c — the conformance cases of batches: store_enqueue_batch
 * (all or nothing, each result its own item's) and store_complete_batch
 * (mixed outcomes, one job's two attempts).
 */
#include "conformance.h"

/* ------------------------------------------------------------------ */
/* batch                                                               */

static int
count_jobs(struct fx *f)
{
    struct job_list l = {0};
    int64_t next;
    struct job_filter flt = {.status = STORE_ANY, .limit = 1000};
    ASSERT_OK(store_list(f->st, &flt, &l, &next, &f->err), &f->err);
    int n = (int)l.n;
    job_list_fini(&l);
    return n;
}

/* Without keys the PostgreSQL batch takes one round trip (ids from the
 * statement): every result must still belong to its own item, in order. */
TEST(batch_enqueue_unkeyed_maps_items)
{
    struct fx f;
    fx_open(&f);
    enum { N = 60 };
    struct job_spec specs[N];
    char types[N][16], payloads[N][32];
    for (int i = 0; i < N; i++) {
        snprintf(types[i], sizeof types[i], "t%d", i);
        snprintf(payloads[i], sizeof payloads[i], "{\"i\":%d}", i);
        specs[i] = (struct job_spec){.type = types[i],
                                     .payload = payloads[i],
                                     .priority = (N - i) % 7,
                                     .queue = i % 2 ? "odd" : NULL};
    }
    struct job out[N];
    memset(out, 0, sizeof out);
    bool rep[N];
    ASSERT_OK(store_enqueue_batch(f.st, specs, N, out, rep, &f.err), &f.err);
    for (int i = 0; i < N; i++) {
        ASSERT_STR_EQ(out[i].type, types[i]);
        ASSERT_STR_EQ(out[i].payload, payloads[i]);
        ASSERT_STR_EQ(out[i].queue, i % 2 ? "odd" : "default");
        ASSERT_EQ(out[i].priority, (N - i) % 7);
        ASSERT(!rep[i]);
        if (i > 0)
            ASSERT(out[i].id > out[i - 1].id);
        struct job g = {0};
        ASSERT_OK(store_get(f.st, out[i].id, &g, &f.err), &f.err);
        ASSERT_STR_EQ(g.type, types[i]);
        job_fini(&g);
        job_fini(&out[i]);
    }
    fx_close(&f);
}

/* NULL-safe string equality for same_job. */
static bool
str_same(const char *a, const char *b)
{
    return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* Whether every field of two jobs is equal. */
static bool
same_job(const struct job *a, const struct job *b)
{
    return a->id == b->id && str_same(a->queue, b->queue) && str_same(a->type, b->type) &&
           str_same(a->payload, b->payload) && a->status == b->status &&
           a->priority == b->priority && a->run_at_us == b->run_at_us && a->attempt == b->attempt &&
           a->attempt_floor == b->attempt_floor && a->max_attempts == b->max_attempts &&
           str_same(a->idempotency_key, b->idempotency_key) && str_same(a->schedule, b->schedule) &&
           a->scheduled_for_us == b->scheduled_for_us && str_same(a->worker_id, b->worker_id) &&
           a->lease_expires_at_us == b->lease_expires_at_us && a->timeout_ms == b->timeout_ms &&
           a->cancel_requested == b->cancel_requested && str_same(a->last_error, b->last_error) &&
           str_same(a->result, b->result) && a->created_at_us == b->created_at_us &&
           a->started_at_us == b->started_at_us && a->finished_at_us == b->finished_at_us;
}

/* An unkeyed batch hands back each job exactly as stored (PostgreSQL builds
 * it from the spec and the id and created_at the insert returns): every
 * field set, and every field left to its default. */
TEST(batch_enqueue_unkeyed_returns_stored_jobs)
{
    struct fx f;
    fx_open(&f);
    struct job_spec specs[3] = {
        {.type = "bare"},
        {.type = "full",
         .payload = "{\"a\":[1,2]}",
         .queue = "mail_2",
         .priority = -7,
         .run_at_us = T0 + 90 * SEC,
         .max_attempts = 3,
         .timeout_ms = 1500,
         .schedule = "nightly",
         .scheduled_for_us = T0 + 60 * SEC},
        {.type = "later", .run_at_us = T0 + SEC, .priority = 5},
    };
    struct job out[3] = {{0}};
    ASSERT_OK(store_enqueue_batch(f.st, specs, 3, out, NULL, &f.err), &f.err);
    for (int i = 0; i < 3; i++) {
        struct job g = {0};
        ASSERT_OK(store_get(f.st, out[i].id, &g, &f.err), &f.err);
        ASSERT_STR_EQ(out[i].type, specs[i].type);
        ASSERT_EQ(out[i].status, JOB_PENDING);
        ASSERT(same_job(&out[i], &g));
        job_fini(&g);
        job_fini(&out[i]);
    }
    fx_close(&f);
}

TEST(batch_enqueue)
{
    struct fx f;
    fx_open(&f);
    struct job_spec specs[3] = {
        {.type = "a"},
        {.type = "b", .queue = "q2", .priority = 4, .payload = "{\"n\":2}"},
        {.type = "c", .idempotency_key = "bk", .run_at_us = T0 + SEC},
    };
    struct job out[3] = {{0}};
    bool rep[3] = {true, true, true};
    ASSERT_OK(store_enqueue_batch(f.st, specs, 3, out, rep, &f.err), &f.err);
    ASSERT(out[0].id > 0 && out[1].id > out[0].id && out[2].id > out[1].id);
    ASSERT_STR_EQ(out[0].type, "a");
    ASSERT_STR_EQ(out[0].queue, "default");
    ASSERT_STR_EQ(out[1].queue, "q2");
    ASSERT_EQ(out[1].priority, 4);
    ASSERT_STR_EQ(out[1].payload, "{\"n\":2}");
    ASSERT_EQ(out[2].run_at_us, T0 + SEC);
    ASSERT(!rep[0] && !rep[1] && !rep[2]);
    int64_t keyed = out[2].id;
    for (int i = 0; i < 3; i++)
        job_fini(&out[i]);
    ASSERT_EQ(count_jobs(&f), 3);
    /* a replayed item inside a batch */
    struct job_spec again[2] = {{.type = "d"}, specs[2]};
    ASSERT_OK(store_enqueue_batch(f.st, again, 2, out, rep, &f.err), &f.err);
    ASSERT(!rep[0]);
    ASSERT(rep[1]);
    ASSERT_EQ(out[1].id, keyed);
    job_fini(&out[0]);
    job_fini(&out[1]);
    ASSERT_EQ(count_jobs(&f), 4);
    /* out and replayed may be NULL */
    ASSERT_OK(store_enqueue_batch(f.st, specs, 2, NULL, NULL, &f.err), &f.err);
    ASSERT_EQ(count_jobs(&f), 6);
    fx_close(&f);
}

TEST(batch_all_or_nothing_invalid)
{
    struct fx f;
    fx_open(&f);
    struct job_spec specs[3] = {{.type = "a"}, {.type = "ok", .queue = "Bad"}, {.type = "c"}};
    struct job out[3] = {{0}};
    ASSERT_EQ(store_enqueue_batch(f.st, specs, 3, out, NULL, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "jobs[1].queue");
    ASSERT_EQ(count_jobs(&f), 0);
    fx_close(&f);
}

TEST(batch_all_or_nothing_conflict)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .payload = "1", .idempotency_key = "taken"};
    enq_spec(&f, &s);
    struct job_spec specs[4] = {
        {.type = "a", .idempotency_key = "fresh"},
        {.type = "b"},
        {.type = "t", .payload = "2", .idempotency_key = "taken"},
        {.type = "c"},
    };
    struct job out[4] = {{0}};
    bool rep[4];
    ASSERT_EQ(store_enqueue_batch(f.st, specs, 4, out, rep, &f.err), JOBD_E_CONFLICT);
    ASSERT(strncmp(f.err.field, "jobs[2]", 7) == 0);
    for (int i = 0; i < 4; i++)
        job_fini(&out[i]);
    ASSERT_EQ(count_jobs(&f), 1);
    /* "fresh" was not consumed by the failed batch */
    struct job_spec fresh = {.type = "other", .idempotency_key = "fresh"};
    struct job j = {0};
    bool r = true;
    ASSERT_OK(store_enqueue(f.st, &fresh, &j, &r, &f.err), &f.err);
    ASSERT(!r);
    job_fini(&j);
    /* two items with one key but different requests conflict inside a batch */
    struct job_spec dup[2] = {
        {.type = "t", .payload = "1", .idempotency_key = "dup"},
        {.type = "t", .payload = "2", .idempotency_key = "dup"},
    };
    ASSERT_EQ(store_enqueue_batch(f.st, dup, 2, NULL, NULL, &f.err), JOBD_E_CONFLICT);
    ASSERT(strncmp(f.err.field, "jobs[1]", 7) == 0);
    ASSERT_EQ(count_jobs(&f), 2);
    fx_close(&f);
}

TEST(complete_batch_mixed)
{
    struct fx f;
    fx_open(&f);
    int64_t a = enq(&f, "t", NULL, 2, 0);
    int64_t b = enq(&f, "t", NULL, 1, 0);
    int64_t c = enq(&f, "t", NULL, 0, 0);
    struct job_list l = {0};
    claim(&f, 3, 10000, &l);
    ASSERT_EQ(l.n, 3);
    job_list_fini(&l);
    /* b's lease expires and b is claimed again: attempt 1 is stale */
    int64_t until;
    bool cancel;
    ASSERT_OK(store_heartbeat(f.st, a, 1, 60000, &until, &cancel, &f.err), &f.err);
    ASSERT_OK(store_heartbeat(f.st, c, 1, 60000, &until, &cancel, &f.err), &f.err);
    manual_clock_advance(&f.mc, 11 * SEC);
    struct backoff_policy bp = {.base_ms = 1, .cap_ms = 1};
    int reaped = 0;
    ASSERT_OK(store_reap(f.st, 10, &bp, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 1);
    manual_clock_advance(&f.mc, 1 * SEC);
    ASSERT_EQ(claim_one(&f, b), 2);
    struct completion cs[4] = {
        {.id = a, .attempt = 1, .result = "{\"a\":1}"},
        {.id = b, .attempt = 1, .result = "{\"b\":1}"},
        {.id = c, .attempt = 1, .result = NULL},
        {.id = c + 100, .attempt = 1, .result = NULL},
    };
    int outcome[4] = {99, 99, 99, 99};
    ASSERT_OK(store_complete_batch(f.st, cs, 4, outcome, &f.err), &f.err);
    ASSERT_EQ(outcome[0], JOBD_OK);
    ASSERT_EQ(outcome[1], JOBD_E_STALE);
    ASSERT_EQ(outcome[2], JOBD_OK);
    ASSERT_EQ(outcome[3], JOBD_E_STALE);
    struct job g = getj(&f, a);
    ASSERT_EQ(g.status, JOB_SUCCEEDED);
    ASSERT_STR_EQ(g.result, "{\"a\":1}");
    ASSERT_EQ(g.finished_at_us, now_of(&f));
    job_fini(&g);
    g = getj(&f, b);
    ASSERT_EQ(g.status, JOB_RUNNING);
    ASSERT_EQ(g.attempt, 2);
    ASSERT_NULL(g.result);
    job_fini(&g);
    ASSERT_EQ(status_of(&f, c), JOB_SUCCEEDED);
    /* completing the same attempt again: stale */
    ASSERT_OK(store_complete_batch(f.st, cs, 1, outcome, &f.err), &f.err);
    ASSERT_EQ(outcome[0], JOBD_E_STALE);
    fx_close(&f);
}

/* One batch naming a job twice: its stale attempt first, then its current
 * one, then the current one again (a duplicate report). */
TEST(complete_batch_same_id_two_attempts)
{
    struct fx f;
    fx_open(&f);
    int64_t b = enq(&f, "t", NULL, 0, 0);
    int64_t a = enq(&f, "t", NULL, 0, 0);
    ASSERT_EQ(claim_one(&f, b), 1);
    ASSERT_EQ(claim_one(&f, a), 1);
    /* a's lease is extended, b's runs out and b is claimed again */
    manual_clock_advance(&f.mc, 31 * SEC);
    int64_t until;
    bool cancel;
    ASSERT_OK(store_heartbeat(f.st, a, 1, 60000, &until, &cancel, &f.err), &f.err);
    manual_clock_advance(&f.mc, 30 * SEC);
    struct backoff_policy bp = {.base_ms = 1, .cap_ms = 1};
    int reaped = 0;
    ASSERT_OK(store_reap(f.st, 10, &bp, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 1);
    manual_clock_advance(&f.mc, 1 * SEC);
    ASSERT_EQ(claim_one(&f, b), 2);
    struct completion cs[4] = {
        {.id = b, .attempt = 1, .result = "{\"old\":1}"},
        {.id = a, .attempt = 1, .result = NULL},
        {.id = b, .attempt = 2, .result = "{\"new\":2}"},
        {.id = b, .attempt = 2, .result = "{\"dup\":3}"},
    };
    int outcome[4] = {99, 99, 99, 99};
    ASSERT_OK(store_complete_batch(f.st, cs, 4, outcome, &f.err), &f.err);
    ASSERT_EQ(outcome[0], JOBD_E_STALE);
    ASSERT_EQ(outcome[1], JOBD_OK);
    ASSERT_EQ(outcome[2], JOBD_OK);
    ASSERT_EQ(outcome[3], JOBD_E_STALE);
    struct job g = getj(&f, b);
    ASSERT_EQ(g.status, JOB_SUCCEEDED);
    ASSERT_EQ(g.attempt, 2);
    ASSERT_STR_EQ(g.result, "{\"new\":2}");
    job_fini(&g);
    ASSERT_EQ(status_of(&f, a), JOB_SUCCEEDED);
    fx_close(&f);
}
