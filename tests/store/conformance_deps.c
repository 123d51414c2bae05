/*
 * conformance_deps.c — the conformance cases of dependencies
 * (docs/MODEL.md, Dependencies): waiting jobs are never claimed and are
 * released (or cancelled for a parent that did not succeed) by the end of
 * their last parent, on every path that ends a job, exactly once.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "conformance.h"
#include "store/operator.h"

/* Enqueues a job of type t that depends on the n ids of parents. */
static int64_t
enq_child(struct fx *f, const char *t, const int64_t *parents, size_t n, bool run)
{
    struct job_spec s = {
        .type = t, .depends_on = parents, .n_depends_on = n, .run_on_parent_failure = run};
    struct job j = {0};
    ASSERT_OK(store_enqueue(f->st, &s, &j, NULL, &f->err), &f->err);
    ASSERT_EQ(j.n_depends_on, n > 0 ? j.n_depends_on : 0);
    int64_t id = j.id;
    job_fini(&j);
    return id;
}

/* Claims exactly the job id (of type t) and completes it. */
static void
run_ok(struct fx *f, int64_t id)
{
    int32_t a = claim_one(f, id);
    ASSERT_OK(store_complete(f->st, id, a, NULL, NULL, &f->err), &f->err);
}

/* Claims id and fails it for good. */
static void
run_dead(struct fx *f, int64_t id)
{
    int32_t a = claim_one(f, id);
    ASSERT_OK(store_fail(f->st, id, a, "boom", false, 0, NULL, &f->err), &f->err);
    ASSERT_EQ(status_of(f, id), JOB_DEAD);
}

static void
assert_nothing_claimable(struct fx *f)
{
    struct job_list l = {0};
    claim(f, 10, 60000, &l);
    ASSERT_EQ(l.n, 0);
    job_list_fini(&l);
}

TEST(deps_chain)
{
    struct fx f;
    fx_open(&f);
    int64_t a = enq(&f, "t", NULL, 0, 0);
    int64_t b = enq_child(&f, "t", &a, 1, false);
    int64_t c = enq_child(&f, "t", &b, 1, false);
    ASSERT_EQ(status_of(&f, b), JOB_WAITING);
    ASSERT_EQ(status_of(&f, c), JOB_WAITING);
    struct job g = getj(&f, c);
    ASSERT_EQ(g.n_depends_on, 1);
    ASSERT_EQ(g.depends_on[0], b);
    ASSERT(!g.run_on_parent_failure);
    job_fini(&g);
    /* waiting jobs are listed as such and counted per queue */
    struct job_filter flt = {.status = JOB_WAITING};
    struct job_list l = {0};
    int64_t next = 0;
    ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
    ASSERT_EQ(l.n, 2);
    ASSERT_EQ(l.v[0].id, c);
    ASSERT_EQ(l.v[0].n_depends_on, 1);
    job_list_fini(&l);
    bool recounted = false; /* PostgreSQL's counts are a cache, recounted on demand here */
    ASSERT_OK(store_counts_refresh(f.st, 0, &recounted, &f.err), &f.err);
    struct queue_stat *qs = NULL;
    size_t nq = 0;
    ASSERT_OK(store_queue_stats(f.st, &qs, &nq, &f.err), &f.err);
    ASSERT_EQ(nq, 1);
    ASSERT_EQ(qs[0].count[JOB_WAITING], 2);
    free(qs);
    manual_clock_advance(&f.mc, 10 * SEC);
    run_ok(&f, a); /* only a is claimable */
    g = getj(&f, b);
    ASSERT_EQ(g.status, JOB_PENDING);
    ASSERT_EQ(g.run_at_us, T0 + 10 * SEC); /* max(run_at, now) */
    job_fini(&g);
    ASSERT_EQ(status_of(&f, c), JOB_WAITING);
    run_ok(&f, b);
    ASSERT_EQ(status_of(&f, c), JOB_PENDING);
    run_ok(&f, c);
    assert_nothing_claimable(&f);
    fx_close(&f);
}

TEST(deps_child_keeps_its_later_run_at)
{
    struct fx f;
    fx_open(&f);
    int64_t a = enq(&f, "t", NULL, 0, 0);
    struct job_spec s = {
        .type = "t", .run_at_us = T0 + 100 * SEC, .depends_on = &a, .n_depends_on = 1};
    int64_t b = enq_spec(&f, &s);
    run_ok(&f, a);
    struct job g = getj(&f, b);
    ASSERT_EQ(g.status, JOB_PENDING);
    ASSERT_EQ(g.run_at_us, T0 + 100 * SEC);
    job_fini(&g);
    assert_nothing_claimable(&f);
    fx_close(&f);
}

TEST(deps_diamond)
{
    struct fx f;
    fx_open(&f);
    int64_t a = enq(&f, "t", NULL, 0, 0);
    int64_t b = enq_child(&f, "t", &a, 1, false);
    int64_t c = enq_child(&f, "t", &a, 1, false);
    int64_t bc[2] = {c, b};
    int64_t d = enq_child(&f, "t", bc, 2, false);
    struct job g = getj(&f, d);
    ASSERT_EQ(g.n_depends_on, 2);
    ASSERT_EQ(g.depends_on[0], b); /* ascending */
    job_fini(&g);
    run_ok(&f, a);
    ASSERT_EQ(status_of(&f, b), JOB_PENDING);
    ASSERT_EQ(status_of(&f, c), JOB_PENDING);
    run_ok(&f, b);
    ASSERT_EQ(status_of(&f, d), JOB_WAITING);
    run_ok(&f, c);
    ASSERT_EQ(status_of(&f, d), JOB_PENDING);
    fx_close(&f);
}

/* One parent, 1,000 children made in one batch, one child of them all. */
TEST(deps_fan_out_fan_in)
{
    struct fx f;
    fx_open(&f);
    enum { N = 1000 };
    int64_t p = enq(&f, "t", NULL, 0, 0);
    struct job_spec *specs = calloc(N, sizeof *specs);
    struct job *outs = calloc(N, sizeof *outs);
    int64_t *kids = calloc(N, sizeof *kids);
    ASSERT(specs && outs && kids);
    for (int i = 0; i < N; i++)
        specs[i] = (struct job_spec){.type = "k", .depends_on = &p, .n_depends_on = 1};
    ASSERT_OK(store_enqueue_batch(f.st, specs, N, outs, NULL, &f.err), &f.err);
    for (int i = 0; i < N; i++) {
        ASSERT_EQ(outs[i].status, JOB_WAITING);
        kids[i] = outs[i].id;
        job_fini(&outs[i]);
    }
    int64_t last = enq_child(&f, "z", kids, N, false);
    run_ok(&f, p);
    /* every child is pending now: claim and complete them in batches */
    int done = 0;
    while (done < N) {
        struct job_list l = {0};
        claim(&f, 500, 60000, &l);
        ASSERT(l.n > 0);
        struct completion *c = calloc(l.n, sizeof *c);
        int *outcome = calloc(l.n, sizeof *outcome);
        ASSERT(c && outcome);
        for (size_t i = 0; i < l.n; i++) {
            ASSERT_NE(l.v[i].id, last);
            c[i] = (struct completion){.id = l.v[i].id, .attempt = l.v[i].attempt};
        }
        ASSERT_EQ(status_of(&f, last), JOB_WAITING);
        ASSERT_OK(store_complete_batch(f.st, c, l.n, outcome, &f.err), &f.err);
        for (size_t i = 0; i < l.n; i++)
            ASSERT_EQ(outcome[i], JOBD_OK);
        done += (int)l.n;
        free(c);
        free(outcome);
        job_list_fini(&l);
    }
    ASSERT_EQ(status_of(&f, last), JOB_PENDING);
    run_ok(&f, last);
    free(specs);
    free(outs);
    free(kids);
    fx_close(&f);
}

TEST(deps_parent_dead_cancels_or_runs)
{
    struct fx f;
    fx_open(&f);
    int64_t p = enq(&f, "t", NULL, 0, 0);
    int64_t cancel = enq_child(&f, "t", &p, 1, false);
    int64_t run = enq_child(&f, "t", &p, 1, true);
    int64_t grand = enq_child(&f, "t", &cancel, 1, false); /* cascades */
    manual_clock_advance(&f.mc, 3 * SEC);
    run_dead(&f, p);
    struct job g = getj(&f, cancel);
    ASSERT_EQ(g.status, JOB_CANCELLED);
    ASSERT_EQ(g.finished_at_us, T0 + 3 * SEC);
    char want[64];
    snprintf(want, sizeof want, "parent job %lld is dead", (long long)p);
    ASSERT_STR_EQ(g.last_error, want);
    job_fini(&g);
    g = getj(&f, grand);
    ASSERT_EQ(g.status, JOB_CANCELLED);
    snprintf(want, sizeof want, "parent job %lld is cancelled", (long long)cancel);
    ASSERT_STR_EQ(g.last_error, want);
    job_fini(&g);
    g = getj(&f, run);
    ASSERT_EQ(g.status, JOB_PENDING);
    ASSERT(g.run_on_parent_failure);
    job_fini(&g);
    run_ok(&f, run);
    fx_close(&f);
}

TEST(deps_parent_reaped_dead_releases)
{
    struct fx f;
    fx_open(&f);
    struct job_spec ps = {.type = "t", .max_attempts = 1};
    int64_t p = enq_spec(&f, &ps);
    int64_t c = enq_child(&f, "t", &p, 1, true);
    claim_one(&f, p);
    manual_clock_advance(&f.mc, 61 * SEC);
    int reaped = 0;
    ASSERT_OK(store_reap(f.st, 10, NULL, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 1);
    ASSERT_EQ(status_of(&f, p), JOB_DEAD);
    ASSERT_EQ(status_of(&f, c), JOB_PENDING);
    fx_close(&f);
}

TEST(deps_cancel_parent_cancels_child)
{
    struct fx f;
    fx_open(&f);
    int64_t p = enq(&f, "t", NULL, 0, T0 + 100 * SEC);
    int64_t c = enq_child(&f, "t", &p, 1, false);
    ASSERT_OK(store_cancel(f.st, p, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, c), JOB_CANCELLED);
    /* a waiting job itself is cancellable */
    int64_t q = enq(&f, "t", NULL, 0, T0 + 100 * SEC);
    int64_t d = enq_child(&f, "t", &q, 1, false);
    struct job j = {0};
    ASSERT_OK(store_cancel(f.st, d, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_CANCELLED);
    job_fini(&j);
    ASSERT_EQ(status_of(&f, q), JOB_PENDING);
    fx_close(&f);
}

TEST(deps_delete_parent_refused)
{
    struct fx f;
    fx_open(&f);
    int64_t p = enq(&f, "t", NULL, 0, T0 + 100 * SEC);
    int64_t c = enq_child(&f, "t", &p, 1, false);
    ASSERT_EQ(store_delete(f.st, p, &f.err), JOBD_E_STATE);
    ASSERT_EQ(status_of(&f, p), JOB_PENDING);
    ASSERT_OK(store_delete(f.st, c, &f.err), &f.err); /* a waiting job is deletable */
    struct job j = {0};
    ASSERT_EQ(store_get(f.st, c, &j, &f.err), JOBD_E_NOTFOUND);
    ASSERT_OK(store_delete(f.st, p, &f.err), &f.err);
    fx_close(&f);
}

TEST(deps_retry_dead_parent_rewaits_children)
{
    struct fx f;
    fx_open(&f);
    int64_t p = enq(&f, "t", NULL, 0, 0);
    int64_t c = enq_child(&f, "t", &p, 1, false);
    int64_t g2 = enq_child(&f, "t", &c, 1, false);
    run_dead(&f, p);
    ASSERT_EQ(status_of(&f, c), JOB_CANCELLED);
    ASSERT_EQ(status_of(&f, g2), JOB_CANCELLED);
    ASSERT_OK(store_retry(f.st, p, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, c), JOB_WAITING);
    ASSERT_EQ(status_of(&f, g2), JOB_WAITING);
    run_ok(&f, p);
    ASSERT_EQ(status_of(&f, c), JOB_PENDING);
    run_ok(&f, c);
    ASSERT_EQ(status_of(&f, g2), JOB_PENDING);
    fx_close(&f);
}

TEST(deps_parents_already_terminal)
{
    struct fx f;
    fx_open(&f);
    int64_t ok = enq(&f, "t", NULL, 0, 0);
    run_ok(&f, ok);
    int64_t bad = enq(&f, "t", NULL, 0, 0);
    run_dead(&f, bad);
    int64_t c1 = enq_child(&f, "t", &ok, 1, false);
    ASSERT_EQ(status_of(&f, c1), JOB_PENDING);
    int64_t both[2] = {ok, bad};
    int64_t c2 = enq_child(&f, "t", both, 2, false);
    struct job g = getj(&f, c2);
    ASSERT_EQ(g.status, JOB_CANCELLED);
    ASSERT(g.last_error != NULL);
    job_fini(&g);
    int64_t c3 = enq_child(&f, "t", both, 2, true);
    ASSERT_EQ(status_of(&f, c3), JOB_PENDING);
    /* a retry of the dead parent puts c2 back to waiting */
    ASSERT_OK(store_retry(f.st, bad, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, c2), JOB_WAITING);
    fx_close(&f);
}

TEST(deps_unknown_parent_refused)
{
    struct fx f;
    fx_open(&f);
    int64_t p = enq(&f, "t", NULL, 0, 0);
    int64_t ids[2] = {p, p + 777};
    struct job_spec s = {.type = "t", .depends_on = ids, .n_depends_on = 2};
    struct job j = {0};
    ASSERT_EQ(store_enqueue(f.st, &s, &j, NULL, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "depends_on");
    char want[32];
    snprintf(want, sizeof want, "%lld", (long long)(p + 777));
    ASSERT(strstr(f.err.msg, want) != NULL);
    /* nothing was written */
    struct job_filter flt = {.status = STORE_ANY};
    struct job_list l = {0};
    int64_t next = 0;
    ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    job_list_fini(&l);
    /* in a batch, the item is named */
    struct job_spec b[2] = {{.type = "t"}, s};
    ASSERT_EQ(store_enqueue_batch(f.st, b, 2, NULL, NULL, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "jobs[1].depends_on");
    /* too many */
    int64_t *many = calloc(JOB_DEPS_MAX + 1, sizeof *many);
    ASSERT(many != NULL);
    for (int i = 0; i <= JOB_DEPS_MAX; i++)
        many[i] = p;
    s = (struct job_spec){.type = "t", .depends_on = many, .n_depends_on = JOB_DEPS_MAX + 1};
    ASSERT_EQ(store_enqueue(f.st, &s, NULL, NULL, &f.err), JOBD_E_INVALID);
    free(many);
    fx_close(&f);
}

/* ---- concurrency: parents completed by many threads at once ---- */

enum { PAR_THREADS = 6, PAR_PARENTS = 60 };

struct par_arg {
    struct fx *f;
    int n; /* parents this thread completed */
    int errors;
    char worker[16];
};

static void *
par_worker(void *p)
{
    struct par_arg *a = p;
    struct store *st = fx_connect(a->f);
    struct jobd_error e = {0};
    const char *types[1] = {"p"};
    for (;;) {
        struct claim_req r = {.worker_id = a->worker, .types = types, .n_types = 1, .limit = 1};
        struct job_list l = {0};
        if (store_claim(st, &r, &l, &e) != JOBD_OK) {
            a->errors++;
            break;
        }
        if (l.n == 0) {
            job_list_fini(&l);
            break;
        }
        if (store_complete(st, l.v[0].id, l.v[0].attempt, NULL, NULL, &e) != JOBD_OK) {
            fprintf(stderr, "complete: %s\n", e.msg);
            a->errors++;
        } else {
            a->n++;
        }
        job_list_fini(&l);
    }
    store_close(st);
    return NULL;
}

TEST(deps_concurrent_parents_release_child_once)
{
    struct fx f;
    fx_open(&f);
    int64_t parents[PAR_PARENTS];
    for (int i = 0; i < PAR_PARENTS; i++)
        parents[i] = enq(&f, "p", NULL, 0, 0);
    int64_t child = enq_child(&f, "c", parents, PAR_PARENTS, false);
    pthread_t th[PAR_THREADS];
    struct par_arg args[PAR_THREADS];
    for (int i = 0; i < PAR_THREADS; i++) {
        args[i] = (struct par_arg){.f = &f};
        snprintf(args[i].worker, sizeof args[i].worker, "w%d", i);
        ASSERT_EQ(pthread_create(&th[i], NULL, par_worker, &args[i]), 0);
    }
    int total = 0, errors = 0;
    for (int i = 0; i < PAR_THREADS; i++) {
        pthread_join(th[i], NULL);
        total += args[i].n;
        errors += args[i].errors;
    }
    ASSERT_EQ(errors, 0);
    ASSERT_EQ(total, PAR_PARENTS);
    ASSERT_EQ(status_of(&f, child), JOB_PENDING);
    /* pending once: one claim finds it, a second finds nothing */
    run_ok(&f, child);
    assert_nothing_claimable(&f);
    bool recounted = false; /* PostgreSQL's counts are a cache, recounted on demand here */
    ASSERT_OK(store_counts_refresh(f.st, 0, &recounted, &f.err), &f.err);
    struct queue_stat *qs = NULL;
    size_t nq = 0;
    ASSERT_OK(store_queue_stats(f.st, &qs, &nq, &f.err), &f.err);
    ASSERT_EQ(nq, 1);
    ASSERT_EQ(qs[0].count[JOB_WAITING], 0);
    ASSERT_EQ(qs[0].count[JOB_PENDING], 0);
    free(qs);
    fx_close(&f);
}

/*
 * ---- concurrency: two parents of the same children ending at once ----
 *
 * Each round, two parents share PAIR_KIDS children and two threads, each on
 * a connection of its own, end one parent each at the same instant (a
 * barrier). Whichever order their transactions meet in, every child is
 * released exactly once: pending (claimable once) when both succeeded,
 * cancelled for the one that died otherwise; none stays waiting. A release
 * that checked its children under a snapshot older than its locks would
 * leave some waiting; one that did not lock them would release some twice
 * or deadlock. Many rounds, as the race is won differently each time.
 */
enum { PAIR_ROUNDS = 25, PAIR_KIDS = 40 };

struct pair_arg {
    struct store *st; /* its own connection, kept across the rounds */
    int64_t id;
    int32_t attempt;
    bool fail; /* ends its parent dead, not succeeded */
    pthread_barrier_t *go;
    int errors;
};

static void *
pair_end(void *p)
{
    struct pair_arg *a = p;
    struct jobd_error e = {0};
    pthread_barrier_wait(a->go);
    int rc = a->fail ? store_fail(a->st, a->id, a->attempt, "boom", false, 0, NULL, &e)
                     : store_complete(a->st, a->id, a->attempt, NULL, NULL, &e);
    if (rc != JOBD_OK) {
        fprintf(stderr, "end of parent %lld: %s\n", (long long)a->id, e.msg);
        a->errors++;
    }
    return NULL;
}

/* One round: parents ps[0..2) of kids[0..PAIR_KIDS) end at once, each on
 * its connection of st; ps[1] dies if fail. */
static void
pair_round(struct fx *f, struct store *const st[2], const int64_t *ps, const int64_t *kids,
           bool fail)
{
    pthread_barrier_t go;
    ASSERT_EQ(pthread_barrier_init(&go, NULL, 2), 0);
    pthread_t th[2];
    struct pair_arg args[2];
    for (int i = 0; i < 2; i++) {
        args[i] = (struct pair_arg){.st = st[i],
                                    .id = ps[i],
                                    .attempt = claim_one(f, ps[i]),
                                    .fail = fail && i == 1,
                                    .go = &go};
    }
    for (int i = 0; i < 2; i++)
        ASSERT_EQ(pthread_create(&th[i], NULL, pair_end, &args[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&go);
    ASSERT_EQ(args[0].errors + args[1].errors, 0);
    char want[64];
    snprintf(want, sizeof want, "parent job %lld is dead", (long long)ps[1]);
    for (int k = 0; k < PAIR_KIDS; k++) {
        struct job j = getj(f, kids[k]);
        ASSERT_EQ(j.status, fail ? JOB_CANCELLED : JOB_PENDING);
        if (fail)
            ASSERT_STR_EQ(j.last_error, want);
        job_fini(&j);
    }
    /* each released child is claimable once: all of them now, then none */
    struct job_list l = {0};
    claim(f, 2 * PAIR_KIDS, 60000, &l);
    ASSERT_EQ(l.n, fail ? 0 : (size_t)PAIR_KIDS);
    job_list_fini(&l);
    assert_nothing_claimable(f);
}

TEST(deps_two_parents_ending_at_once_release_children_once)
{
    struct fx f;
    fx_open(&f);
    /* Two connections for all the rounds: a connection per thread and round
     * cost more than the round (PostgreSQL starts a backend for each). */
    struct store *st[2] = {fx_connect(&f), fx_connect(&f)};
    for (int round = 0; round < PAIR_ROUNDS; round++) {
        int64_t ps[2] = {enq(&f, "p", NULL, 0, 0), enq(&f, "p", NULL, 0, 0)};
        int64_t kids[PAIR_KIDS];
        for (int k = 0; k < PAIR_KIDS; k++)
            kids[k] = enq_child(&f, "c", ps, 2, false);
        pair_round(&f, st, ps, kids, round % 3 == 2);
    }
    store_close(st[0]);
    store_close(st[1]);
    bool recounted = false;
    ASSERT_OK(store_counts_refresh(f.st, 0, &recounted, &f.err), &f.err);
    struct queue_stat *qs = NULL;
    size_t nq = 0;
    ASSERT_OK(store_queue_stats(f.st, &qs, &nq, &f.err), &f.err);
    ASSERT_EQ(nq, 1);
    ASSERT_EQ(qs[0].count[JOB_WAITING], 0);
    free(qs);
    fx_close(&f);
}

/* A released or cancelled child keeps its group (docs/MODEL.md, Groups), on every path. */
TEST(deps_release_keeps_the_group)
{
    struct fx f;
    fx_open(&f);
    int64_t p[3] = {enq(&f, "t", NULL, 0, 0), enq(&f, "t", NULL, 0, 0), enq(&f, "t", NULL, 0, 0)};
    const char *g[4] = {"g0", "g1", "g2", "g3"};
    int64_t kid[4];
    for (int i = 0; i < 4; i++) { /* two children of p[0] (a set), one each of p[1], p[2] */
        struct job_spec s = {
            .type = "t", .group = g[i], .depends_on = &p[i ? i - 1 : 0], .n_depends_on = 1};
        kid[i] = enq_spec(&f, &s);
    }
    struct job_list l = {0}; /* the parents, claimed before any child is pending */
    claim(&f, 10, 60000, &l);
    ASSERT_EQ(l.n, 3);
    for (size_t i = 0; i < l.n; i++)
        ASSERT_OK(l.v[i].id == p[2]
                      ? store_fail(f.st, p[2], l.v[i].attempt, "boom", false, 0, NULL, &f.err)
                      : store_complete(f.st, l.v[i].id, l.v[i].attempt, NULL, NULL, &f.err),
                  &f.err);
    job_list_fini(&l);
    for (int i = 0; i < 4; i++) {
        struct job j = getj(&f, kid[i]);
        ASSERT_EQ(j.status, i == 3 ? JOB_CANCELLED : JOB_PENDING);
        ASSERT_STR_EQ(j.group, g[i]);
        job_fini(&j);
    }
    fx_close(&f);
}

/* A claimed child carries its parents for its handler (docs/WORKER.md, Parents). */
TEST(deps_claim_carries_parents)
{
    struct fx f;
    fx_open(&f);
    int64_t p = enq(&f, "t", NULL, 0, 0);
    int64_t q = enq(&f, "t", NULL, 0, 0);
    int64_t pq[2] = {p, q};
    int64_t c = enq_child(&f, "t", pq, 2, true);
    int32_t a = claim_one(&f, p);
    ASSERT_OK(store_complete(f.st, p, a, "{\"n\":1}", NULL, &f.err), &f.err);
    run_dead(&f, q);
    struct job_list l = {0};
    claim(&f, 10, 60000, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, c);
    ASSERT(l.v[0].parents != NULL);
    json_error_t je;
    json_t *arr = json_loads(l.v[0].parents, 0, &je);
    ASSERT(json_is_array(arr));
    ASSERT_EQ(json_array_size(arr), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *o = json_array_get(arr, i);
        int64_t id = json_integer_value(json_object_get(o, "id"));
        ASSERT(id == p || id == q);
        ASSERT_STR_EQ(json_string_value(json_object_get(o, "type")), "t");
        ASSERT(json_is_null(json_object_get(o, "step")));
        const char *st = json_string_value(json_object_get(o, "status"));
        ASSERT_STR_EQ(st, id == p ? "succeeded" : "dead");
        json_t *res = json_object_get(o, "result");
        if (id == p)
            ASSERT_EQ(json_integer_value(json_object_get(res, "n")), 1);
        else
            ASSERT(json_is_null(res));
    }
    json_decref(arr);
    job_list_fini(&l);
    /* a job without parents has none */
    int64_t lone = enq(&f, "t", NULL, 0, 0);
    claim(&f, 10, 60000, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, lone);
    ASSERT_NULL(l.v[0].parents);
    job_list_fini(&l);
    fx_close(&f);
}

/* Retention takes a finished child's edges with it; a waiting child keeps its. */
TEST(deps_prune_takes_finished_childrens_edges)
{
    struct fx f;
    fx_open(&f);
    int64_t p = enq(&f, "t", NULL, 0, 0);
    int64_t c = enq_child(&f, "t", &p, 1, false);
    run_ok(&f, p);
    run_ok(&f, c);
    int64_t q = enq(&f, "t", NULL, 0, T0 + 1000 * SEC);
    int64_t w = enq_child(&f, "t", &q, 1, false);
    ASSERT_EQ(raw_count(&f, is_pg() ? "SELECT count(*) FROM jobd.job_deps"
                                    : "SELECT count(*) FROM job_deps"),
              2);
    manual_clock_advance(&f.mc, 10 * SEC);
    int deleted = 0;
    ASSERT_OK(store_prune(f.st, now_of(&f), 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 2);
    ASSERT_EQ(raw_count(&f, is_pg() ? "SELECT count(*) FROM jobd.job_deps"
                                    : "SELECT count(*) FROM job_deps"),
              1);
    ASSERT_EQ(status_of(&f, w), JOB_WAITING);
    fx_close(&f);
}

/* The traceparent of a job enqueued with one (docs/API.md, Trace context). */
static void
expect_tp(struct fx *f, int64_t id, enum job_status st, const char *tp)
{
    struct job g = getj(f, id);
    ASSERT_EQ(g.status, st);
    ASSERT(g.traceparent != NULL);
    ASSERT_STR_EQ(g.traceparent, tp);
    job_fini(&g);
}

/*
 * A child keeps the traceparent it was enqueued with wherever its row moves:
 * waiting, released to pending and claimed, cancelled for a parent that went
 * dead, waiting again after the parent's retry, cancelled while waiting.
 */
TEST(deps_child_keeps_its_traceparent)
{
    static const char tp[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    struct fx f;
    fx_open(&f);
    int64_t p = enq(&f, "t", NULL, 0, 0);
    int64_t q = enq(&f, "t", NULL, 0, 0);
    struct job_spec s1 = {.type = "t", .traceparent = tp, .depends_on = &p, .n_depends_on = 1};
    int64_t c1 = enq_spec(&f, &s1);
    struct job_spec s2 = {.type = "t", .traceparent = tp, .depends_on = &q, .n_depends_on = 1};
    int64_t c2 = enq_spec(&f, &s2);
    int64_t c3 = enq_spec(&f, &s2);
    expect_tp(&f, c1, JOB_WAITING, tp);
    ASSERT_OK(store_cancel(f.st, c3, NULL, &f.err), &f.err);
    expect_tp(&f, c3, JOB_CANCELLED, tp);
    run_ok(&f, p);
    expect_tp(&f, c1, JOB_PENDING, tp);
    run_dead(&f, q);
    expect_tp(&f, c2, JOB_CANCELLED, tp);
    ASSERT_OK(store_retry(f.st, q, NULL, &f.err), &f.err);
    expect_tp(&f, c2, JOB_WAITING, tp);
    run_ok(&f, q);
    expect_tp(&f, c2, JOB_PENDING, tp);
    struct job_list l = {0};
    claim(&f, 10, 60000, &l);
    ASSERT_EQ(l.n, 2);
    for (size_t i = 0; i < l.n; i++) {
        ASSERT(l.v[i].id == c1 || l.v[i].id == c2);
        ASSERT(l.v[i].traceparent != NULL);
        ASSERT_STR_EQ(l.v[i].traceparent, tp);
    }
    job_list_fini(&l);
    fx_close(&f);
}

/*
 * ---- concurrency: batches of completions whose children cross ----
 *
 * Each round, two threads each complete CROSS_K parents in one batch (as
 * the worker's completer does: store_complete_batch), at the same moment:
 * thread 0 the parents a[0..K-1], thread 1 the parents b[0..K-1], and
 * child x[i] waits for a[i] and b[K-1-i]. Thread 0's batch ends a[0]
 * first, thread 1's ends b[0] first: if a parent's end locked its children
 * one parent at a time, thread 0 would lock x[0], x[1], ... and thread 1
 * x[K-1], x[K-2], ..., and the two batches would deadlock: one of them
 * fails, and its completions are lost (its jobs reaped and run again).
 */
enum { CROSS_ROUNDS = 16, CROSS_K = 32 };

struct cross_arg {
    struct fx *f;
    pthread_barrier_t *bar;
    const char *type;
    int errors;
    char worker[16];
};

static void *
cross_worker(void *p)
{
    struct cross_arg *a = p;
    struct store *st = fx_connect(a->f);
    struct jobd_error e = {0};
    const char *types[1] = {a->type};
    for (int r = 0; r < CROSS_ROUNDS; r++) {
        struct claim_req q = {
            .worker_id = a->worker, .types = types, .n_types = 1, .limit = CROSS_K};
        struct job_list l = {0};
        struct completion c[CROSS_K];
        int outcome[CROSS_K];
        if (store_claim(st, &q, &l, &e) != JOBD_OK || l.n != CROSS_K) {
            fprintf(stderr, "round %d: claim: %s (%zu jobs)\n", r, e.msg, l.n);
            a->errors++;
        }
        for (size_t i = 0; i < l.n; i++)
            c[i] = (struct completion){.id = l.v[i].id, .attempt = l.v[i].attempt};
        pthread_barrier_wait(a->bar);
        if (l.n > 0 && store_complete_batch(st, c, l.n, outcome, &e) != JOBD_OK) {
            fprintf(stderr, "round %d: complete_batch: %s\n", r, e.msg);
            a->errors++;
        } else {
            for (size_t i = 0; i < l.n; i++)
                a->errors += outcome[i] != JOBD_OK;
        }
        job_list_fini(&l);
        pthread_barrier_wait(a->bar);
    }
    store_close(st);
    return NULL;
}

TEST(deps_concurrent_batches_with_crossed_children)
{
    struct fx f;
    fx_open(&f);
    int64_t kids[CROSS_ROUNDS][CROSS_K];
    for (int r = 0; r < CROSS_ROUNDS; r++) {
        /* claimed in id order: one round's parents come before the next's */
        struct job_spec ps[2 * CROSS_K], cs[CROSS_K];
        struct job out[2 * CROSS_K];
        int64_t two[CROSS_K][2];
        for (int i = 0; i < 2 * CROSS_K; i++)
            ps[i] = (struct job_spec){.type = i < CROSS_K ? "pa" : "pb"};
        memset(out, 0, sizeof out);
        ASSERT_OK(store_enqueue_batch(f.st, ps, 2 * CROSS_K, out, NULL, &f.err), &f.err);
        for (int i = 0; i < CROSS_K; i++) {
            two[i][0] = out[i].id;                   /* a[i] */
            two[i][1] = out[2 * CROSS_K - 1 - i].id; /* b[K-1-i] */
            cs[i] = (struct job_spec){.type = "c", .depends_on = two[i], .n_depends_on = 2};
        }
        for (int i = 0; i < 2 * CROSS_K; i++)
            job_fini(&out[i]);
        memset(out, 0, sizeof out);
        ASSERT_OK(store_enqueue_batch(f.st, cs, CROSS_K, out, NULL, &f.err), &f.err);
        for (int i = 0; i < CROSS_K; i++) {
            ASSERT_EQ(out[i].status, JOB_WAITING);
            kids[r][i] = out[i].id;
            job_fini(&out[i]);
        }
    }
    pthread_barrier_t bar;
    ASSERT_EQ(pthread_barrier_init(&bar, NULL, 2), 0);
    pthread_t th[2];
    struct cross_arg args[2];
    for (int i = 0; i < 2; i++) {
        args[i] = (struct cross_arg){.f = &f, .bar = &bar, .type = i == 0 ? "pa" : "pb"};
        snprintf(args[i].worker, sizeof args[i].worker, "w%d", i);
        ASSERT_EQ(pthread_create(&th[i], NULL, cross_worker, &args[i]), 0);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&bar);
    ASSERT_EQ(args[0].errors + args[1].errors, 0);
    for (int r = 0; r < CROSS_ROUNDS; r++)
        for (int i = 0; i < CROSS_K; i++)
            ASSERT_EQ(status_of(&f, kids[r][i]), JOB_PENDING);
    fx_close(&f);
}
