/*
 * conformance_workflow_ops.c — the conformance cases of a workflow after
 * its submit (docs/API.md, Workflows): steps added at run time before a
 * waiting step, and refused naming the step; cancel, retry and delete of a
 * whole workflow; a step's parents named by ref; and the races that matter:
 * an add before a step whose last old parent ends at once (released
 * exactly once), a cancel while running steps complete (no deadlock).
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "conformance_wf.h"
#include "store/workflow.h"

/* ---- after the submit: steps added at run time, cancel, retry, delete ---- */

/* Adds steps s (n) before the refs of before (nb) to workflow id; answers the store's rc. */
static int
add_steps(struct fx *f, int64_t id, struct workflow_step_spec *s, size_t n,
          const char *const *before, size_t nb, int64_t *ids)
{
    struct workflow_add add = {.steps = s, .n = n, .before = before, .n_before = nb};
    return store_workflow_add_steps(f->st, id, &add, ids, &f->err);
}

TEST(workflow_add_steps_fan_out_before_a_waiting_step)
{
    struct fx f;
    fx_open(&f);
    int64_t ids[4], x[3];
    int64_t id = submit_diamond(&f, NULL, ids, NULL);
    /* x1 and x2 after a, x3 after x1; all three before d */
    static const char *const after_x1[] = {"x1"}, *const before_d[] = {"d"};
    struct workflow_step_spec s[3] = {step("x3", after_x1, 1), step("x1", after_a, 1),
                                      step("x2", after_a, 1)};
    ASSERT_OK(add_steps(&f, id, s, 3, before_d, 1, x), &f.err);
    ASSERT(x[0] > x[1]); /* x3 after its parent x1 */
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(status_of(&f, x[i]), JOB_WAITING);
    struct job d = getj(&f, ids[3]);
    ASSERT_EQ(d.n_depends_on, 5);
    job_fini(&d);
    struct job x3 = getj(&f, x[0]);
    ASSERT_EQ(x3.workflow, id);
    ASSERT_STR_EQ(x3.step, "x3");
    job_fini(&x3);
    expect_wf(&f, id, WF_RUNNING, 6, 1, 0, 0, 0);
    run_ok(&f, ids[0]);
    run_ok(&f, ids[1]);
    run_ok(&f, ids[2]);
    ASSERT_EQ(status_of(&f, ids[3]), JOB_WAITING); /* the new parents have not ended */
    run_ok(&f, x[1]);
    run_ok(&f, x[2]);
    ASSERT_EQ(status_of(&f, ids[3]), JOB_WAITING);
    run_ok(&f, x[0]);
    ASSERT_EQ(status_of(&f, ids[3]), JOB_PENDING);
    /* a step after one that succeeded already is due at once; refs stay in request order */
    struct workflow_step_spec late[1] = {step("late", after_a, 1)};
    int64_t l;
    ASSERT_OK(add_steps(&f, id, late, 1, NULL, 0, &l), &f.err);
    ASSERT_EQ(status_of(&f, l), JOB_PENDING);
    struct workflow w;
    ASSERT_OK(store_workflow_get(f.st, id, &w, &f.err), &f.err);
    ASSERT_EQ(w.n_steps, 8);
    ASSERT_STR_EQ(w.steps[4].ref, "x3");
    ASSERT_STR_EQ(w.steps[7].ref, "late");
    ASSERT_EQ(w.steps[7].n_parents, 1);
    workflow_fini(&w);
    fx_close(&f);
}

TEST(workflow_add_steps_refusals_write_nothing)
{
    struct fx f;
    fx_open(&f);
    int64_t ids[4], x[2];
    int64_t id = submit_diamond(&f, NULL, ids, NULL);
    long jobs = count_of(&f, "jobs") + count_of(&f, "jobs_waiting");
    static const char *const after_q[] = {"q"}, *const after_y[] = {"y"};
    static const char *const before_a[] = {"a"}, *const before_zz[] = {"d", "zz"};
    struct workflow_step_spec s1[1] = {step("y", after_q, 1)};
    ASSERT_EQ(add_steps(&f, id, s1, 1, NULL, 0, x), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "steps[0].depends_on");
    struct workflow_step_spec s2[1] = {step("b", NULL, 0)};
    ASSERT_EQ(add_steps(&f, id, s2, 1, NULL, 0, x), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "steps[0].ref");
    struct workflow_step_spec s3[2] = {step("y", NULL, 0), step("y", NULL, 0)};
    ASSERT_EQ(add_steps(&f, id, s3, 2, NULL, 0, x), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "steps[1].ref");
    struct workflow_step_spec s4[2] = {step("y", after_q, 1), step("q", after_y, 1)};
    ASSERT_EQ(add_steps(&f, id, s4, 2, NULL, 0, x), JOBD_E_INVALID);
    ASSERT(strstr(f.err.field, "].depends_on") != NULL);
    struct workflow_step_spec s5[1] = {step("y", NULL, 0)};
    ASSERT_EQ(add_steps(&f, id, s5, 1, before_zz, 2, x), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "before[1]");
    /* a is pending, not waiting: the step would be held by a parent it never had */
    ASSERT_EQ(add_steps(&f, id, s5, 1, before_a, 1, x), JOBD_E_CONFLICT);
    ASSERT_STR_EQ(f.err.field, "before[0]");
    ASSERT(strstr(f.err.msg, "'a'") != NULL);
    ASSERT_EQ(add_steps(&f, id + 1000, s5, 1, NULL, 0, x), JOBD_E_NOTFOUND);
    ASSERT_EQ(count_of(&f, "jobs") + count_of(&f, "jobs_waiting"), jobs);
    ASSERT_EQ(count_of(&f, "workflow_steps"), 4);
    /* a workflow whose every step ended takes no more */
    int32_t a = claim_one(&f, ids[0]);
    ASSERT_OK(store_fail(f.st, ids[0], a, "boom", false, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(add_steps(&f, id, s5, 1, NULL, 0, x), JOBD_E_STATE);
    ASSERT_EQ(count_of(&f, "workflow_steps"), 4);
    fx_close(&f);
}

TEST(workflow_cancel_then_retry)
{
    struct fx f;
    fx_open(&f);
    int64_t ids[4];
    int64_t id = submit_diamond(&f, NULL, ids, NULL);
    int32_t a = claim_one(&f, ids[0]);
    struct workflow_change ch;
    ASSERT_OK(store_workflow_cancel(f.st, id, &ch, &f.err), &f.err);
    ASSERT_EQ(ch.requested, 1);
    ASSERT_EQ(ch.cancelled, 3);
    struct job ja = getj(&f, ids[0]);
    ASSERT_EQ(ja.status, JOB_RUNNING);
    ASSERT(ja.cancel_requested);
    job_fini(&ja);
    expect_wf(&f, id, WF_RUNNING, 0, 0, 0, 0, 3);
    /* again: nothing left to cancel, the request stands */
    ASSERT_OK(store_workflow_cancel(f.st, id, &ch, &f.err), &f.err);
    ASSERT_EQ(ch.requested + ch.cancelled, 0);
    ASSERT_OK(store_complete(f.st, ids[0], a, NULL, NULL, &f.err), &f.err);
    expect_wf(&f, id, WF_FAILED, 0, 0, 1, 0, 3);
    /* b and c: their parent succeeded, due now; d waits for them */
    ASSERT_OK(store_workflow_retry(f.st, id, &ch, &f.err), &f.err);
    ASSERT_EQ(ch.retried, 3);
    ASSERT_EQ(status_of(&f, ids[1]), JOB_PENDING);
    ASSERT_EQ(status_of(&f, ids[2]), JOB_PENDING);
    ASSERT_EQ(status_of(&f, ids[3]), JOB_WAITING);
    run_ok(&f, ids[1]);
    run_ok(&f, ids[2]);
    run_ok(&f, ids[3]);
    expect_wf(&f, id, WF_SUCCEEDED, 0, 0, 4, 0, 0);
    ASSERT_EQ(store_workflow_cancel(f.st, id + 1000, &ch, &f.err), JOBD_E_NOTFOUND);
    ASSERT_EQ(store_workflow_retry(f.st, id + 1000, &ch, &f.err), JOBD_E_NOTFOUND);
    fx_close(&f);
}

TEST(workflow_retry_brings_back_what_a_dead_step_cancelled)
{
    struct fx f;
    fx_open(&f);
    int64_t ids[4];
    int64_t id = submit_diamond(&f, NULL, ids, NULL);
    int32_t a = claim_one(&f, ids[0]);
    ASSERT_OK(store_fail(f.st, ids[0], a, "boom", false, 0, NULL, &f.err), &f.err);
    expect_wf(&f, id, WF_FAILED, 0, 0, 0, 1, 3);
    struct workflow_change ch;
    ASSERT_OK(store_workflow_retry(f.st, id, &ch, &f.err), &f.err);
    ASSERT_EQ(ch.retried, 1); /* a; b, c and d came back with it */
    expect_wf(&f, id, WF_RUNNING, 3, 1, 0, 0, 0);
    run_ok(&f, ids[0]);
    run_ok(&f, ids[1]);
    run_ok(&f, ids[2]);
    run_ok(&f, ids[3]);
    expect_wf(&f, id, WF_SUCCEEDED, 0, 0, 4, 0, 0);
    /* a pending workflow cancelled and retried: a due, the others waiting again */
    int64_t id2 = submit_diamond(&f, NULL, ids, NULL);
    ASSERT_OK(store_workflow_cancel(f.st, id2, &ch, &f.err), &f.err);
    ASSERT_EQ(ch.cancelled, 4);
    expect_wf(&f, id2, WF_FAILED, 0, 0, 0, 0, 4);
    ASSERT_OK(store_workflow_retry(f.st, id2, &ch, &f.err), &f.err);
    expect_wf(&f, id2, WF_RUNNING, 3, 1, 0, 0, 0);
    fx_close(&f);
}

TEST(workflow_delete_only_when_ended)
{
    struct fx f;
    fx_open(&f);
    int64_t ids[4];
    int64_t id = submit_diamond(&f, "kd", ids, NULL);
    ASSERT_EQ(store_workflow_delete(f.st, id, &f.err), JOBD_E_STATE);
    ASSERT_STR_EQ(f.err.field, "status");
    int32_t a = claim_one(&f, ids[0]);
    ASSERT_OK(store_workflow_cancel(f.st, id, NULL, &f.err), &f.err);
    ASSERT_EQ(store_workflow_delete(f.st, id, &f.err), JOBD_E_STATE); /* a still runs */
    ASSERT_OK(store_complete(f.st, ids[0], a, NULL, NULL, &f.err), &f.err);
    /* a job outside the workflow waits for a step (and a job of its own) */
    int64_t parents[2] = {ids[0], enq(&f, "t", NULL, 0, 0)};
    struct job_spec child = {.type = "t", .depends_on = parents, .n_depends_on = 2};
    struct job cj = {0};
    ASSERT_OK(store_enqueue(f.st, &child, &cj, NULL, &f.err), &f.err);
    int64_t outside = cj.id;
    job_fini(&cj);
    ASSERT_EQ(status_of(&f, outside), JOB_WAITING);
    ASSERT_EQ(store_workflow_delete(f.st, id, &f.err), JOBD_E_STATE);
    ASSERT_STR_EQ(f.err.field, "depends_on");
    ASSERT_OK(store_cancel(f.st, parents[1], NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, outside), JOB_CANCELLED);
    ASSERT_OK(store_workflow_delete(f.st, id, &f.err), &f.err);
    struct workflow w;
    ASSERT_EQ(store_workflow_get(f.st, id, &w, &f.err), JOBD_E_NOTFOUND);
    ASSERT_EQ(store_workflow_delete(f.st, id, &f.err), JOBD_E_NOTFOUND);
    for (int i = 0; i < 4; i++) {
        struct job j = {0};
        ASSERT_EQ(store_get(f.st, ids[i], &j, &f.err), JOBD_E_NOTFOUND);
    }
    ASSERT_EQ(count_of(&f, "workflow_steps") + count_of(&f, "workflows"), 0);
    struct job o = getj(&f, outside);
    ASSERT_EQ(o.n_depends_on, 1); /* the deleted step's edge went with it */
    job_fini(&o);
    /* its key is free */
    bool replayed = true;
    ASSERT(submit_diamond(&f, "kd", ids, &replayed) != id);
    ASSERT(!replayed);
    fx_close(&f);
}

/*
 * A step added before c while c's last old parent p completes on another
 * connection: c is released exactly once, after every parent it has.
 * Either the completion settled c first (the add is refused: c is no
 * longer waiting) or the add went first (c waits for the new step too).
 */
struct race {
    struct fx *f;
    struct store *st;
    int64_t wf, p;
    int32_t attempt;
    pthread_barrier_t *go;
    int rc;
    int64_t x;
};

static void *
race_complete(void *v)
{
    struct race *r = v;
    struct jobd_error e = {0};
    pthread_barrier_wait(r->go);
    r->rc = store_complete(r->st, r->p, r->attempt, NULL, NULL, &e);
    return NULL;
}

static void *
race_add(void *v)
{
    struct race *r = v;
    struct jobd_error e = {0};
    static const char *const before_c[] = {"c"};
    struct workflow_step_spec s[1] = {step("x", NULL, 0)};
    s[0].job.type = "x";
    struct workflow_add add = {.steps = s, .n = 1, .before = before_c, .n_before = 1};
    pthread_barrier_wait(r->go);
    r->rc = store_workflow_add_steps(r->st, r->wf, &add, &r->x, &e);
    return NULL;
}

TEST(workflow_add_before_races_the_last_parent)
{
    struct fx f;
    fx_open(&f);
    static const char *const after_p[] = {"p"};
    int added = 0, refused = 0;
    /* Two connections for all the rounds: a connection per thread and round
     * cost more than the round (PostgreSQL starts a backend for each). */
    struct store *sa = fx_connect(&f), *sb = fx_connect(&f);
    for (int round = 0; round < 30; round++) {
        struct workflow_step_spec s[2] = {step("p", NULL, 0), step("c", after_p, 1)};
        s[1].job.type = "c";
        struct workflow_spec w = {.name = "race", .steps = s, .n = 2};
        int64_t ids[2], id = 0;
        ASSERT_OK(store_workflow_submit(f.st, &w, &id, ids, NULL, &f.err), &f.err);
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, 2);
        struct race a = {.f = &f, .st = sa, .wf = id, .p = ids[0], .go = &go};
        struct race b = a;
        b.st = sb;
        a.attempt = claim_one(&f, ids[0]);
        pthread_t ta, tb;
        ASSERT_EQ(pthread_create(&ta, NULL, race_complete, &a), 0);
        ASSERT_EQ(pthread_create(&tb, NULL, race_add, &b), 0);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        pthread_barrier_destroy(&go);
        ASSERT_EQ(a.rc, JOBD_OK);
        if (b.rc == JOBD_E_CONFLICT) {
            refused++;
            ASSERT_EQ(status_of(&f, ids[1]), JOB_PENDING);
            expect_wf(&f, id, WF_RUNNING, 0, 1, 1, 0, 0);
        } else {
            ASSERT_EQ(b.rc, JOBD_OK);
            added++;
            ASSERT_EQ(status_of(&f, ids[1]), JOB_WAITING); /* x has not run */
            run_ok(&f, b.x);
            ASSERT_EQ(status_of(&f, ids[1]), JOB_PENDING);
        }
        run_ok(&f, ids[1]); /* claimable once: the next claim finds the next round's p */
        expect_wf(&f, id, WF_SUCCEEDED, 0, 0, b.rc == JOBD_OK ? 3 : 2, 0, 0);
    }
    fprintf(stderr, "    %d added first, %d refused (the release went first)\n", added, refused);
    ASSERT_EQ(added + refused, 30);
    store_close(sa);
    store_close(sb);
    fx_close(&f);
}

/*
 * A workflow cancel while its running steps complete on another
 * connection: neither fails (no deadlock between the cancel's locks and a
 * completion's release of its children), and every child ends cancelled,
 * whether it was waiting or had just been released.
 */
enum { CR_PAIRS = 12 };

struct cancel_race {
    struct store *st;
    int64_t wf;
    int64_t ids[CR_PAIRS];
    int32_t attempts[CR_PAIRS];
    pthread_barrier_t *go;
    int rc;
};

static void *
cr_complete(void *v)
{
    struct cancel_race *r = v;
    struct jobd_error e = {0};
    pthread_barrier_wait(r->go);
    for (int i = 0; i < CR_PAIRS && r->rc == JOBD_OK; i++)
        r->rc = store_complete(r->st, r->ids[i], r->attempts[i], NULL, NULL, &e);
    return NULL;
}

static void *
cr_cancel(void *v)
{
    struct cancel_race *r = v;
    struct jobd_error e = {0};
    pthread_barrier_wait(r->go);
    r->rc = store_workflow_cancel(r->st, r->wf, NULL, &e);
    return NULL;
}

TEST(workflow_cancel_races_completions)
{
    struct fx f;
    fx_open(&f);
    for (int round = 0; round < 5; round++) {
        struct workflow_step_spec s[2 * CR_PAIRS];
        char refs[2 * CR_PAIRS][8];
        const char *after[CR_PAIRS];
        for (int i = 0; i < CR_PAIRS; i++) {
            snprintf(refs[i], sizeof refs[i], "r%d", i);
            snprintf(refs[CR_PAIRS + i], sizeof refs[i], "c%d", i);
            after[i] = refs[i];
            s[i] = step(refs[i], NULL, 0);
            s[CR_PAIRS + i] = step(refs[CR_PAIRS + i], &after[i], 1);
            s[CR_PAIRS + i].job.type = "c";
        }
        struct workflow_spec w = {.name = "cr", .steps = s, .n = 2 * CR_PAIRS};
        int64_t ids[2 * CR_PAIRS], id = 0;
        ASSERT_OK(store_workflow_submit(f.st, &w, &id, ids, NULL, &f.err), &f.err);
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, 2);
        struct cancel_race a = {.st = fx_connect(&f), .wf = id, .go = &go};
        struct cancel_race b = {.st = fx_connect(&f), .wf = id, .go = &go};
        for (int i = 0; i < CR_PAIRS; i++) {
            a.ids[i] = ids[i];
            a.attempts[i] = claim_one(&f, ids[i]);
        }
        pthread_t ta, tb;
        ASSERT_EQ(pthread_create(&ta, NULL, cr_complete, &a), 0);
        ASSERT_EQ(pthread_create(&tb, NULL, cr_cancel, &b), 0);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        pthread_barrier_destroy(&go);
        store_close(a.st);
        store_close(b.st);
        ASSERT_EQ(a.rc, JOBD_OK);
        ASSERT_EQ(b.rc, JOBD_OK);
        for (int i = 0; i < CR_PAIRS; i++)
            ASSERT_EQ(status_of(&f, ids[i]), JOB_SUCCEEDED);
        /* a child released before the cancel began was pending, and cancelled too */
        for (int i = CR_PAIRS; i < 2 * CR_PAIRS; i++)
            ASSERT_EQ(status_of(&f, ids[i]), JOB_CANCELLED);
        expect_wf(&f, id, WF_FAILED, 0, 0, CR_PAIRS, 0, CR_PAIRS);
    }

    fx_close(&f);
}

/* A step's handler sees its parents by step ref (docs/WORKER.md, Parents). */
TEST(workflow_parents_name_their_steps)
{
    struct fx f;
    fx_open(&f);
    int64_t ids[4];
    submit_diamond(&f, NULL, ids, NULL);
    run_ok(&f, ids[0]);
    run_ok(&f, ids[1]);
    run_ok(&f, ids[2]);
    struct job_list l = {0};
    claim(&f, 10, 60000, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, ids[3]);
    json_error_t je;
    json_t *arr = json_loads(l.v[0].parents, 0, &je);
    ASSERT_EQ(json_array_size(arr), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *o = json_array_get(arr, i);
        int64_t id = json_integer_value(json_object_get(o, "id"));
        ASSERT_STR_EQ(json_string_value(json_object_get(o, "step")), id == ids[1] ? "b" : "c");
    }
    json_decref(arr);
    job_list_fini(&l);
    fx_close(&f);
}

/* New steps after a step that already failed settle at once, by their on_parent_failure. */
TEST(workflow_add_steps_after_a_dead_step)
{
    struct fx f;
    fx_open(&f);
    struct workflow_step_spec s[2] = {step("a", NULL, 0), step("z", NULL, 0)};
    s[1].job.type = "z";
    struct workflow_spec w = {.name = "two", .steps = s, .n = 2};
    int64_t ids[2], id = 0, x[2];
    ASSERT_OK(store_workflow_submit(f.st, &w, &id, ids, NULL, &f.err), &f.err);
    int32_t a = claim_one(&f, ids[0]);
    ASSERT_OK(store_fail(f.st, ids[0], a, "boom", false, 0, NULL, &f.err), &f.err);
    struct workflow_step_spec add[2] = {step("y", after_a, 1), step("y2", after_a, 1)};
    add[1].job.run_on_parent_failure = true;
    ASSERT_OK(add_steps(&f, id, add, 2, NULL, 0, x), &f.err);
    struct job y = getj(&f, x[0]);
    ASSERT_EQ(y.status, JOB_CANCELLED);
    ASSERT(y.last_error != NULL && strstr(y.last_error, "dead") != NULL);
    job_fini(&y);
    ASSERT_EQ(status_of(&f, x[1]), JOB_PENDING);
    expect_wf(&f, id, WF_RUNNING, 0, 2, 0, 1, 1);
    /* the workflow retried: y comes back with a, y2 stays as it is */
    ASSERT_OK(store_workflow_retry(f.st, id, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, x[0]), JOB_WAITING);
    fx_close(&f);
}
