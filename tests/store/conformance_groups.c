/*
 * conformance_groups.c — groups (docs/MODEL.md, Groups; docs/DESIGN.md,
 * Groups) on every backend: a job's group is kept wherever the row moves
 * and read back by every read; due jobs of different groups are claimed in
 * turn (one group with many due jobs cannot hold back a hundred groups with
 * one each), the jobs without a group being a group of their own; and the
 * queue's group limits (group_max_running, group_rate) hold per group.
 * Claims across processes: tests/integration/test_groups_e2e.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "store/groups.h"
#include "store/operator.h"

/* Enqueues n jobs of type "t" into queue q with group g (NULL = none), priority prio. */
static void
enq_group(struct fx *f, const char *q, const char *g, int n, int32_t prio)
{
    struct job_spec specs[500];
    while (n > 0) {
        int k = n < 500 ? n : 500;
        for (int i = 0; i < k; i++)
            specs[i] = (struct job_spec){.type = "t", .queue = q, .group = g, .priority = prio};
        ASSERT_OK(store_enqueue_batch(f->st, specs, (size_t)k, NULL, NULL, &f->err), &f->err);
        n -= k;
    }
}

/* Claims up to limit jobs of type "t" on st as a worker does; returns how many. */
static size_t
claim_t(struct store *st, int limit, struct job_list *out, int64_t *held)
{
    const char *types[] = {"t"};
    struct claim_req r = {.worker_id = "w1",
                          .types = types,
                          .n_types = 1,
                          .limit = limit,
                          .lease_ms = 60000,
                          .run_only = true,
                          .held_until_us = held};
    struct jobd_error e = {0};
    size_t n0 = out->n;
    ASSERT_OK(store_claim(st, &r, out, &e), &e);
    return out->n - n0;
}

static void
set_group_limits(struct store *st, const char *q, int32_t mr, int32_t rate, int64_t per_ms)
{
    struct queue_limits_change c = {.set_group_max_running = mr >= 0,
                                    .group_max_running = mr,
                                    .set_group_rate = rate >= 0,
                                    .group_rate_limit = rate,
                                    .group_rate_per_ms = per_ms};
    struct jobd_error e = {0};
    ASSERT_OK(store_queue_limits(st, q, &c, &e), &e);
}

/* How many of l.v[from..) are of group g (NULL: no group). */
static int
count_group(const struct job_list *l, size_t from, const char *g)
{
    int n = 0;
    for (size_t i = from; i < l->n; i++)
        if (g == NULL ? l->v[i].group == NULL
                      : l->v[i].group != NULL && strcmp(l->v[i].group, g) == 0)
            n++;
    return n;
}

TEST(groups_kept_wherever_the_job_goes)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .queue = "g", .group = "acme:eu-1"};
    struct job out = {0};
    ASSERT_OK(store_enqueue(f.st, &s, &out, NULL, &f.err), &f.err);
    ASSERT_STR_EQ(out.group, "acme:eu-1");
    int64_t id = out.id;
    job_fini(&out);
    int64_t plain = enq(&f, "u", "g", 0, 0);
    struct job j = getj(&f, plain);
    ASSERT(j.group == NULL);
    job_fini(&j);
    /* a claim (what a run needs), a failure back to pending, a death, a retry */
    struct job_list l = {0};
    ASSERT_EQ(claim_t(f.st, 1, &l, NULL), 1);
    ASSERT_STR_EQ(l.v[0].group, "acme:eu-1");
    ASSERT_OK(store_fail(f.st, id, l.v[0].attempt, "x", true, 0, NULL, &f.err), &f.err);
    j = getj(&f, id);
    ASSERT_EQ(j.status, JOB_PENDING);
    ASSERT_STR_EQ(j.group, "acme:eu-1");
    job_fini(&j);
    ASSERT_OK(store_cancel(f.st, id, NULL, &f.err), &f.err);
    j = getj(&f, id);
    ASSERT_EQ(j.status, JOB_CANCELLED);
    ASSERT_STR_EQ(j.group, "acme:eu-1");
    job_fini(&j);
    ASSERT_OK(store_retry(f.st, id, NULL, &f.err), &f.err);
    j = getj(&f, id);
    ASSERT_EQ(j.status, JOB_PENDING);
    ASSERT_STR_EQ(j.group, "acme:eu-1");
    job_fini(&j);
    /* claimed again after the retry (its group's row may be gone), then done */
    job_list_fini(&l);
    l = (struct job_list){0};
    ASSERT_EQ(claim_t(f.st, 5, &l, NULL), 1);
    ASSERT_EQ(l.v[0].id, id);
    ASSERT_OK(store_complete(f.st, id, l.v[0].attempt, NULL, NULL, &f.err), &f.err);
    j = getj(&f, id);
    ASSERT_EQ(j.status, JOB_SUCCEEDED);
    ASSERT_STR_EQ(j.group, "acme:eu-1");
    job_fini(&j);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(groups_validated_on_enqueue)
{
    struct fx f;
    fx_open(&f);
    const char *bad[] = {"", "a b", "x/y", "é"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct job_spec s = {.type = "t", .group = bad[i]};
        struct jobd_error e = {0};
        ASSERT_EQ(store_enqueue(f.st, &s, NULL, NULL, &e), JOBD_E_INVALID);
        ASSERT_STR_EQ(e.field, "group");
    }
    char longest[JOB_GROUP_MAX + 2];
    memset(longest, 'a', sizeof longest);
    longest[JOB_GROUP_MAX] = '\0';
    struct job_spec ok = {.type = "t", .group = longest};
    ASSERT_OK(store_enqueue(f.st, &ok, NULL, NULL, &f.err), &f.err);
    longest[JOB_GROUP_MAX] = 'a';
    longest[JOB_GROUP_MAX + 1] = '\0';
    struct job_spec two[2] = {{.type = "t", .group = "fine"}, {.type = "t", .group = longest}};
    struct jobd_error e = {0};
    ASSERT_EQ(store_enqueue_batch(f.st, two, 2, NULL, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "jobs[1].group");
    fx_close(&f);
}

/*
 * The promise of docs/MODEL.md, Groups, at a size a conformance run
 * affords (tests/scenarios/scenario_groups_fair.sh has 100,000 under
 * SOAK=1): one group with many due jobs, enqueued first, and 100 groups
 * with one each; two connections claiming in turn, 10 at a time. Every single job starts before 1,000 of
 * the large group's (here: before 100).
 */
TEST(groups_hundred_singles_before_the_large_groups_thousandth)
{
    struct fx f;
    fx_open(&f);
    enq_group(&f, "fair", "big", 3000, 0);
    char names[100][16];
    struct job_spec specs[100];
    for (int i = 0; i < 100; i++) {
        snprintf(names[i], sizeof names[i], "tenant-%03d", i);
        specs[i] = (struct job_spec){.type = "t", .queue = "fair", .group = names[i]};
    }
    ASSERT_OK(store_enqueue_batch(f.st, specs, 100, NULL, NULL, &f.err), &f.err);
    struct store *other = fx_connect(&f);
    struct job_list l = {0};
    int big = 0, singles = 0;
    for (int round = 0; round < 100 && singles < 100; round++) {
        size_t from = l.n;
        ASSERT(claim_t(round % 2 ? other : f.st, 10, &l, NULL) == 10);
        if (getenv("GROUPS_DEBUG")) {
            for (size_t i = from; i < l.n; i++)
                fprintf(stderr, "%s ", l.v[i].group);
            fprintf(stderr, "\n");
        }
        for (size_t i = from; i < l.n && singles < 100; i++)
            if (strcmp(l.v[i].group, "big") == 0)
                big++;
            else
                singles++;
    }
    ASSERT_EQ(singles, 100);
    if (big >= 100)
        fprintf(stderr, "%d jobs of the large group started before the last single one\n", big);
    ASSERT(big < 100);
    job_list_fini(&l);
    store_close(other);
    fx_close(&f);
}

TEST(groups_one_group_alone_fills_a_claim)
{
    struct fx f;
    fx_open(&f);
    enq_group(&f, "solo", "only", 50, 0);
    struct job_list l = {0};
    ASSERT_EQ(claim_t(f.st, 20, &l, NULL), 20);
    ASSERT_EQ(claim_t(f.st, 20, &l, NULL), 20);
    ASSERT_EQ(claim_t(f.st, 20, &l, NULL), 10);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(groups_jobs_without_a_group_are_a_group_of_their_own)
{
    struct fx f;
    fx_open(&f);
    enq_group(&f, "mixed", "big", 500, 0);
    enq_group(&f, "mixed", NULL, 5, 0);
    enq_group(&f, "mixed", "small", 5, 0);
    struct job_list l = {0};
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(claim_t(f.st, 4, &l, NULL), 4);
    /* three groups taken in turn: 20 starts give each of them about a third */
    ASSERT(count_group(&l, 0, NULL) >= 5);
    ASSERT(count_group(&l, 0, "small") >= 5);
    ASSERT(count_group(&l, 0, "big") <= 10);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(groups_higher_priority_first_whatever_the_turn)
{
    struct fx f;
    fx_open(&f);
    char names[40][16];
    for (int i = 0; i < 40; i++) {
        snprintf(names[i], sizeof names[i], "g%02d", i);
        enq_group(&f, "prio", names[i], 2, 0);
    }
    enq_group(&f, "prio", "urgent", 1, 5);
    struct job_list l = {0};
    ASSERT_EQ(claim_t(f.st, 3, &l, NULL), 3);
    ASSERT_EQ(count_group(&l, 0, "urgent"), 1);
    job_list_fini(&l);
    fx_close(&f);
}

/* A group's backlog at one priority does not put its jobs at another
 * behind the other groups' there: the turns are per priority (SQLite's
 * tags are kept per group and priority, docs/DESIGN.md, Groups, "Tags on
 * SQLite"). */
TEST(groups_in_turn_at_each_priority)
{
    struct fx f;
    fx_open(&f);
    enq_group(&f, "pt", "big", 50, 0);
    enq_group(&f, "pt", "a", 1, 0);
    struct job_list l = {0};
    ASSERT_EQ(claim_t(f.st, 1, &l, NULL), 1); /* the backlog is in its turns */
    enq_group(&f, "pt", "big", 3, 5);
    enq_group(&f, "pt", "a", 3, 5);
    enq_group(&f, "pt", "b", 3, 5);
    ASSERT_EQ(claim_t(f.st, 3, &l, NULL), 3);
    ASSERT_EQ(count_group(&l, 1, "big"), 1);
    ASSERT_EQ(count_group(&l, 1, "a"), 1);
    ASSERT_EQ(count_group(&l, 1, "b"), 1);
    for (size_t i = 1; i < l.n; i++) { /* read back: a remote claim's answer has no priority */
        struct job j = getj(&f, l.v[i].id);
        ASSERT_EQ(j.priority, 5);
        job_fini(&j);
    }
    job_list_fini(&l);
    fx_close(&f);
}

/* Jobs of one group that become due together (run_at reached, as a
 * release of dependants or a retry makes them pending) take their turns
 * with the groups already due, not all before them. */
TEST(groups_delayed_burst_takes_turns)
{
    struct fx f;
    fx_open(&f);
    const char *gs[] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < 5; i++)
        enq_group(&f, "db", gs[i], 10, 0);
    struct job_spec late = {
        .type = "t", .queue = "db", .group = "late", .run_at_us = now_of(&f) + 5 * SEC};
    for (int i = 0; i < 40; i++)
        enq_spec(&f, &late);
    struct job_list l = {0};
    ASSERT_EQ(claim_t(f.st, 5, &l, NULL), 5);
    ASSERT_EQ(count_group(&l, 0, "late"), 0);
    manual_clock_set(&f.mc, now_of(&f) + 5 * SEC);
    ASSERT_EQ(claim_t(f.st, 12, &l, NULL), 12);
    ASSERT_EQ(count_group(&l, 5, "late"), 2);
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(count_group(&l, 5, gs[i]), 2);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(groups_max_running_holds_per_group)
{
    struct fx f;
    fx_open(&f);
    enq_group(&f, "gl", "a", 5, 0);
    enq_group(&f, "gl", "b", 5, 0);
    enq_group(&f, "gl", "c", 5, 0);
    set_group_limits(f.st, "gl", 2, -1, 0);
    struct job_list l = {0};
    int64_t held = 0;
    ASSERT_EQ(claim_t(f.st, 10, &l, &held), 6);
    ASSERT_EQ(count_group(&l, 0, "a"), 2);
    ASSERT_EQ(count_group(&l, 0, "b"), 2);
    ASSERT_EQ(count_group(&l, 0, "c"), 2);
    /* the rest is due but held back: the claim says when to look again */
    ASSERT(held > now_of(&f) && held <= now_of(&f) + SEC);
    ASSERT_EQ(claim_t(f.st, 10, &l, &held), 0);
    /* held-back jobs stay pending, no attempt spent */
    long waiting = raw_count(&f, is_pg() ? "SELECT count(*) FROM jobd.jobs WHERE status = "
                                           "'pending' AND attempt = 0 AND queue = 'gl'"
                                         : "SELECT count(*) FROM jobs WHERE status = 'pending' "
                                           "AND attempt = 0 AND queue = 'gl'");
    ASSERT_EQ(waiting, 9);
    /* a slot of group a frees: one more of a, no more of the others */
    size_t i = 0;
    while (strcmp(l.v[i].group, "a") != 0)
        i++;
    ASSERT_OK(store_complete(f.st, l.v[i].id, l.v[i].attempt, NULL, NULL, &f.err), &f.err);
    size_t from = l.n;
    ASSERT_EQ(claim_t(f.st, 10, &l, &held), 1);
    ASSERT_STR_EQ(l.v[from].group, "a");
    /* removed: the rest may go */
    set_group_limits(f.st, "gl", 0, -1, 0);
    ASSERT_EQ(claim_t(f.st, 10, &l, &held), 8);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(groups_rate_holds_per_group_and_window)
{
    struct fx f;
    fx_open(&f); /* T0 is a multiple of 10 s since the epoch: a window starts there */
    enq_group(&f, "gr", "a", 6, 0);
    enq_group(&f, "gr", "b", 6, 0);
    set_group_limits(f.st, "gr", -1, 2, 10000);
    struct job_list l = {0};
    int64_t held = 0;
    ASSERT_EQ(claim_t(f.st, 10, &l, &held), 4);
    ASSERT_EQ(count_group(&l, 0, "a"), 2);
    ASSERT_EQ(count_group(&l, 0, "b"), 2);
    ASSERT_EQ(held, T0 + 10 * SEC);  /* the window's end */
    for (size_t i = 0; i < l.n; i++) /* finishing frees no start within the window */
        ASSERT_OK(store_complete(f.st, l.v[i].id, l.v[i].attempt, NULL, NULL, &f.err), &f.err);
    manual_clock_set(&f.mc, T0 + 10 * SEC - 1);
    ASSERT_EQ(claim_t(f.st, 10, &l, &held), 0);
    manual_clock_set(&f.mc, T0 + 10 * SEC);
    size_t from = l.n;
    ASSERT_EQ(claim_t(f.st, 10, &l, &held), 4);
    ASSERT_EQ(count_group(&l, from, "a"), 2);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(groups_paused_queue_is_not_claimed)
{
    struct fx f;
    fx_open(&f);
    enq_group(&f, "gp", "a", 3, 0);
    ASSERT_OK(store_queue_pause(f.st, "gp", true, &f.err), &f.err);
    struct job_list l = {0};
    ASSERT_EQ(claim_t(f.st, 10, &l, NULL), 0);
    ASSERT_OK(store_queue_pause(f.st, "gp", false, &f.err), &f.err);
    ASSERT_EQ(claim_t(f.st, 10, &l, NULL), 3);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(groups_listed_busiest_first_and_counted)
{
    struct fx f;
    fx_open(&f);
    enq_group(&f, "gl2", "a", 3, 0);
    enq_group(&f, "gl2", "b", 1, 0);
    enq_group(&f, "gl2", NULL, 2, 0);
    enq(&f, "t", "gl2", 0, now_of(&f) + 3600 * SEC); /* due later: in the list, not the count */
    struct job_list l = {0};
    ASSERT_EQ(claim_t(f.st, 1, &l, NULL), 1);
    struct queue_group *v = NULL;
    size_t n = 0;
    ASSERT_OK(store_queue_groups(f.st, "gl2", 10, &v, &n, &f.err), &f.err);
    ASSERT_EQ(n, 3);
    /* a and the jobs without a group have 3 each: no group first, then by name */
    ASSERT(v[0].group == NULL);
    ASSERT_EQ(v[0].pending + v[0].running, 3);
    ASSERT_STR_EQ(v[1].group, "a");
    ASSERT_EQ(v[1].pending + v[1].running, 3);
    ASSERT_STR_EQ(v[2].group, "b");
    ASSERT_EQ(v[0].running + v[1].running + v[2].running, 1);
    queue_groups_free(v, n);
    ASSERT_OK(store_queue_groups(f.st, "gl2", 1, &v, &n, &f.err), &f.err);
    ASSERT_EQ(n, 1);
    queue_groups_free(v, n);
    struct jobd_error e = {0};
    ASSERT_EQ(store_queue_groups(f.st, "gl2", 0, &v, &n, &e), JOBD_E_INVALID);
    struct queue_group_count *c = NULL;
    ASSERT_OK(store_queue_group_counts(f.st, &c, &n, &f.err), &f.err);
    ASSERT_EQ(n, 1);
    ASSERT_STR_EQ(c[0].queue, "gl2");
    ASSERT(c[0].groups >= 2 && c[0].groups <= 3); /* a, b, and '' once it was claimed */
    queue_group_counts_free(c, n);
    job_list_fini(&l);
    fx_close(&f);
}
