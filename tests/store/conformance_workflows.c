/*
 * conformance_workflows.c — the conformance cases of workflows
 * (docs/MODEL.md, Workflows): a submit writes every step's job with its
 * parents among the steps, or nothing; cycles, unknown and duplicate refs
 * are refused naming the step; a key submits once; a read's status and
 * counts follow the steps to succeeded or failed; retention takes
 * workflows whole. After the submit: conformance_workflow_ops.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "store/operator.h"
#include "store/workflow.h"
#include "conformance_wf.h"

TEST(workflow_diamond)
{
    struct fx f;
    fx_open(&f);
    int64_t ids[4];
    bool replayed = true;
    int64_t id = submit_diamond(&f, NULL, ids, &replayed);
    ASSERT(!replayed);
    ASSERT_EQ(status_of(&f, ids[0]), JOB_PENDING);
    for (int i = 1; i < 4; i++)
        ASSERT_EQ(status_of(&f, ids[i]), JOB_WAITING);
    struct job d = getj(&f, ids[3]);
    ASSERT_EQ(d.workflow, id);
    ASSERT_STR_EQ(d.step, "d");
    ASSERT_EQ(d.n_depends_on, 2);
    ASSERT_EQ(d.depends_on[0], ids[1] < ids[2] ? ids[1] : ids[2]);
    ASSERT_EQ(d.depends_on[1], ids[1] < ids[2] ? ids[2] : ids[1]);
    job_fini(&d);

    struct workflow w;
    ASSERT_OK(store_workflow_get(f.st, id, &w, &f.err), &f.err);
    ASSERT_STR_EQ(w.name, "diamond");
    ASSERT_EQ(w.created_at_us, T0);
    ASSERT_EQ(w.n_steps, 4);
    const char *refs[4] = {"a", "b", "c", "d"};
    for (size_t i = 0; i < 4; i++) {
        ASSERT_STR_EQ(w.steps[i].ref, refs[i]);
        ASSERT_EQ(w.steps[i].job_id, ids[i]);
        ASSERT_STR_EQ(w.steps[i].type, "t");
    }
    ASSERT_EQ(w.steps[0].n_parents, 0);
    ASSERT_EQ(w.steps[1].n_parents, 1);
    ASSERT_EQ(w.steps[1].parents[0], ids[0]);
    ASSERT_EQ(w.steps[3].n_parents, 2);
    workflow_fini(&w);
    expect_wf(&f, id, WF_RUNNING, 3, 1, 0, 0, 0);

    run_ok(&f, ids[0]);
    expect_wf(&f, id, WF_RUNNING, 1, 2, 1, 0, 0);
    run_ok(&f, ids[1]);
    run_ok(&f, ids[2]);
    expect_wf(&f, id, WF_RUNNING, 0, 1, 3, 0, 0);
    manual_clock_advance(&f.mc, 5 * SEC);
    run_ok(&f, ids[3]);
    expect_wf(&f, id, WF_SUCCEEDED, 0, 0, 4, 0, 0);
    ASSERT_OK(store_workflow_get(f.st, id, &w, &f.err), &f.err);
    ASSERT_EQ(w.finished_at_us, T0 + 5 * SEC);
    workflow_fini(&w);

    /* a job of no workflow has neither */
    int64_t plain = enq(&f, "t", NULL, 0, 0);
    struct job j = getj(&f, plain);
    ASSERT_EQ(j.workflow, 0);
    ASSERT_NULL(j.step);
    job_fini(&j);
    fx_close(&f);
}

TEST(workflow_failed_step_fails_it)
{
    struct fx f;
    fx_open(&f);
    int64_t ids[4];
    int64_t id = submit_diamond(&f, NULL, ids, NULL);
    int32_t a = claim_one(&f, ids[0]);
    ASSERT_OK(store_fail(f.st, ids[0], a, "boom", false, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, ids[3]), JOB_CANCELLED);
    expect_wf(&f, id, WF_FAILED, 0, 0, 0, 1, 3);
    fx_close(&f);
}

/* Submits s (n steps) expecting JOBD_E_INVALID naming field, and no row written. */
static void
expect_refused(struct fx *f, struct workflow_step_spec *s, size_t n, const char *field)
{
    struct workflow_spec w = {.name = "bad", .steps = s, .n = n};
    int64_t ids[8], id = 7;
    ASSERT_EQ(store_workflow_submit(f->st, &w, &id, ids, NULL, &f->err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f->err.field, field);
    ASSERT_EQ(id, 0);
    ASSERT_EQ(count_of(f, "jobs") + count_of(f, "jobs_waiting"), 0);
    ASSERT_EQ(count_of(f, "workflows"), 0);
    ASSERT_EQ(count_of(f, "workflow_steps"), 0);
}

TEST(workflow_refusals_write_nothing)
{
    struct fx f;
    fx_open(&f);
    static const char *const after_x[] = {"x"};
    struct workflow_step_spec s1[2] = {step("a", NULL, 0), step("b", after_x, 1)};
    expect_refused(&f, s1, 2, "steps[1].depends_on");
    struct workflow_step_spec s2[3] = {step("a", NULL, 0), step("b", after_a, 1),
                                       step("a", NULL, 0)};
    expect_refused(&f, s2, 3, "steps[2].ref");
    /* a bad job in the last step: the steps before it are not written either */
    struct workflow_step_spec s3[2] = {step("a", NULL, 0), step("b", after_a, 1)};
    s3[1].job.max_attempts = -1;
    struct workflow_spec w = {.name = "bad", .steps = s3, .n = 2};
    int64_t ids[2], id = 0;
    ASSERT_EQ(store_workflow_submit(f.st, &w, &id, ids, NULL, &f.err), JOBD_E_INVALID);
    ASSERT(strncmp(f.err.field, "steps[1].", 9) == 0);
    ASSERT_EQ(count_of(&f, "jobs") + count_of(&f, "workflows"), 0);
    ASSERT_EQ(store_workflow_get(f.st, 1, &(struct workflow){0}, &f.err), JOBD_E_NOTFOUND);
    fx_close(&f);
}

TEST(workflow_cycle_refused)
{
    struct fx f;
    fx_open(&f);
    static const char *const after_c[] = {"c"}, *const after_b[] = {"b"};
    /* d -> a -> b -> c -> a: the step named is one on the cycle, not d */
    static const char *const after_d_c[] = {"d", "c"};
    struct workflow_step_spec s[4] = {step("d", NULL, 0), step("a", after_d_c, 2),
                                      step("b", after_a, 1), step("c", after_b, 1)};
    struct workflow_spec w = {.name = "loop", .steps = s, .n = 4};
    int64_t ids[4], id = 0;
    ASSERT_EQ(store_workflow_submit(f.st, &w, &id, ids, NULL, &f.err), JOBD_E_INVALID);
    ASSERT(strcmp(f.err.field, "steps[1].depends_on") == 0 ||
           strcmp(f.err.field, "steps[2].depends_on") == 0 ||
           strcmp(f.err.field, "steps[3].depends_on") == 0);
    ASSERT_EQ(count_of(&f, "jobs") + count_of(&f, "workflows"), 0);
    /* a step that depends on itself */
    struct workflow_step_spec self[1] = {step("c", after_c, 1)};
    expect_refused(&f, self, 1, "steps[0].depends_on");
    fx_close(&f);
}

TEST(workflow_idempotent_submit)
{
    struct fx f;
    fx_open(&f);
    int64_t ids[4], again[4];
    bool replayed = true;
    int64_t id = submit_diamond(&f, "k1", ids, &replayed);
    ASSERT(!replayed);
    int64_t id2 = submit_diamond(&f, "k1", again, &replayed);
    ASSERT(replayed);
    ASSERT_EQ(id2, id);
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(again[i], ids[i]);
    ASSERT_EQ(count_of(&f, "workflows"), 1);
    ASSERT_EQ(count_of(&f, "jobs") + count_of(&f, "jobs_waiting"), 4);
    /* the key names a workflow of another name: a conflict */
    struct workflow_step_spec s[1] = {step("a", NULL, 0)};
    struct workflow_spec w = {.name = "other", .idempotency_key = "k1", .steps = s, .n = 1};
    ASSERT_EQ(store_workflow_submit(f.st, &w, &id2, again, NULL, &f.err), JOBD_E_CONFLICT);
    ASSERT_STR_EQ(f.err.field, "idempotency_key");
    /* another key: another workflow */
    ASSERT(submit_diamond(&f, "k2", again, &replayed) != id);
    ASSERT(!replayed);
    fx_close(&f);
}

TEST(workflow_prune_takes_whole_workflows_only)
{
    struct fx f;
    fx_open(&f);
    int64_t ids[4];
    int64_t id = submit_diamond(&f, "kp", ids, NULL);
    run_ok(&f, ids[0]);
    run_ok(&f, ids[1]);
    run_ok(&f, ids[2]);
    manual_clock_advance(&f.mc, 100 * SEC);
    int deleted = 0;
    /* a, b and c ended long before the cutoff, but d is live: none goes */
    ASSERT_OK(store_prune(f.st, now_of(&f), 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 0);
    expect_wf(&f, id, WF_RUNNING, 0, 1, 3, 0, 0);
    run_ok(&f, ids[3]);
    /* d ended after the cutoff: still none */
    ASSERT_OK(store_prune(f.st, now_of(&f) - SEC, 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 0);
    manual_clock_advance(&f.mc, 10 * SEC);
    ASSERT_OK(store_prune(f.st, now_of(&f), 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 4);
    ASSERT_EQ(count_of(&f, "workflow_steps") + count_of(&f, "workflows"), 0);
    struct workflow w;
    ASSERT_EQ(store_workflow_get(f.st, id, &w, &f.err), JOBD_E_NOTFOUND);
    /* its key is free again */
    bool replayed = true;
    ASSERT(submit_diamond(&f, "kp", ids, &replayed) != id);
    ASSERT(!replayed);
    fx_close(&f);
}

/*
 * Retention per outcome (the scheduling plane's, store_prune_status): a
 * succeeded workflow goes by the cutoff of succeeded jobs, a failed one
 * whole by that of dead and cancelled jobs (its succeeded steps are kept
 * with it); a dead step of a running workflow is kept however old; a
 * workflow is taken whole even when a batch is smaller than it.
 */
TEST(workflow_retention_by_outcome)
{
    struct fx f;
    fx_open(&f);
    int64_t ok[4], bad[4], live[4];
    int64_t wok = submit_diamond(&f, NULL, ok, NULL);
    for (int i = 0; i < 4; i++)
        run_ok(&f, ok[i]);
    int64_t wbad = submit_diamond(&f, NULL, bad, NULL);
    int32_t a = claim_one(&f, bad[0]);
    ASSERT_OK(store_complete(f.st, bad[0], a, NULL, NULL, &f.err), &f.err);
    a = claim_one(&f, bad[1]);
    ASSERT_OK(store_fail(f.st, bad[1], a, "boom", false, 0, NULL, &f.err), &f.err);
    a = claim_one(&f, bad[2]);
    ASSERT_OK(store_complete(f.st, bad[2], a, NULL, NULL, &f.err), &f.err);
    expect_wf(&f, wbad, WF_FAILED, 0, 0, 2, 1, 1);
    int64_t wlive = submit_diamond(&f, NULL, live, NULL);
    a = claim_one(&f, live[0]);
    ASSERT_OK(store_fail(f.st, live[0], a, "boom", false, 0, NULL, &f.err), &f.err);
    struct workflow_change ch;
    ASSERT_OK(store_workflow_retry(f.st, wlive, &ch, &f.err), &f.err);
    a = claim_one(&f, live[0]); /* running again; its dead attempt is old */
    manual_clock_advance(&f.mc, 100 * SEC);
    int deleted = 0;
    /* succeeded jobs: only the succeeded workflow, all 4 in a batch of 2 */
    ASSERT_OK(store_prune_status(f.st, true, now_of(&f), 2, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 4);
    struct workflow w;
    ASSERT_EQ(store_workflow_get(f.st, wok, &w, &f.err), JOBD_E_NOTFOUND);
    expect_wf(&f, wbad, WF_FAILED, 0, 0, 2, 1, 1);
    ASSERT_OK(store_prune_status(f.st, true, now_of(&f), 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 0);
    /* dead and cancelled: the failed workflow whole, succeeded steps too */
    ASSERT_OK(store_prune_status(f.st, false, now_of(&f), 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 4);
    ASSERT_EQ(store_workflow_get(f.st, wbad, &w, &f.err), JOBD_E_NOTFOUND);
    /* the running one stays whole */
    ASSERT_OK(store_prune(f.st, now_of(&f), 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 0);
    expect_wf(&f, wlive, WF_RUNNING, 3, 0, 0, 0, 0);
    ASSERT_EQ(count_of(&f, "workflows"), 1);
    ASSERT_EQ(count_of(&f, "workflow_steps"), 4);
    (void)a;
    fx_close(&f);
}

TEST(workflow_list_newest_first_by_name_and_status)
{
    struct fx f;
    fx_open(&f);
    int64_t ids[4], w[3];
    w[0] = submit_diamond(&f, NULL, ids, NULL); /* will fail */
    int32_t a = claim_one(&f, ids[0]);
    ASSERT_OK(store_fail(f.st, ids[0], a, "boom", false, 0, NULL, &f.err), &f.err);
    w[1] = submit_diamond(&f, NULL, ids, NULL); /* running */
    struct workflow_step_spec s1[1] = {step("only", NULL, 0)};
    struct workflow_spec other = {.name = "other", .steps = s1, .n = 1};
    int64_t one;
    ASSERT_OK(store_workflow_submit(f.st, &other, &w[2], &one, NULL, &f.err), &f.err);

    struct workflow *v;
    size_t n;
    int64_t next;
    struct workflow_filter flt = {.status = -1, .limit = 2};
    ASSERT_OK(store_workflow_list(f.st, &flt, &v, &n, &next, &f.err), &f.err);
    ASSERT_EQ(n, 2);
    ASSERT_EQ(v[0].id, w[2]);
    ASSERT_EQ(v[1].id, w[1]);
    ASSERT_EQ(v[1].n_steps, 0);
    ASSERT_EQ(v[1].counts[JOB_WAITING], 3);
    ASSERT_EQ(next, w[1]);
    for (size_t i = 0; i < n; i++)
        workflow_fini(&v[i]);
    free(v);
    flt.before_id = next;
    ASSERT_OK(store_workflow_list(f.st, &flt, &v, &n, &next, &f.err), &f.err);
    ASSERT_EQ(n, 1);
    ASSERT_EQ(v[0].id, w[0]);
    ASSERT_EQ(v[0].status, WF_FAILED);
    ASSERT_EQ(next, 0);
    workflow_fini(&v[0]);
    free(v);
    struct workflow_filter by = {.status = WF_RUNNING, .name = "diamond"};
    ASSERT_OK(store_workflow_list(f.st, &by, &v, &n, &next, &f.err), &f.err);
    ASSERT_EQ(n, 1);
    ASSERT_EQ(v[0].id, w[1]);
    workflow_fini(&v[0]);
    free(v);
    fx_close(&f);
}

/*
 * A batch: a last step with on_parent_failure "run" on every other step
 * runs once all have ended, whatever their outcome; JOB_DEPS_MAX parents
 * check that a large submit writes every edge (and marks every parent).
 */
TEST(workflow_batch_last_step_runs)
{
    struct fx f;
    fx_open(&f);
    enum { N = JOB_DEPS_MAX };
    struct workflow_step_spec *s = calloc(N + 1, sizeof *s);
    char(*refs)[16] = calloc(N, sizeof *refs);
    const char **after = calloc(N, sizeof *after);
    int64_t *ids = calloc(N + 1, sizeof *ids);
    ASSERT(s && refs && after && ids);
    for (size_t i = 0; i < N; i++) {
        snprintf(refs[i], sizeof refs[i], "p%zu", i);
        after[N - 1 - i] = refs[i];
        s[i + 1] = step(refs[i], NULL, 0);
    }
    /* the last step comes first in the request, its parents after it */
    s[0] = step("last", after, N);
    s[0].job.run_on_parent_failure = true;
    struct workflow_spec w = {.name = "batch", .steps = s, .n = N + 1};
    int64_t id = 0;
    ASSERT_OK(store_workflow_submit(f.st, &w, &id, ids, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, ids[0]), JOB_WAITING);
    struct job last = getj(&f, ids[0]);
    ASSERT_EQ(last.n_depends_on, N);
    ASSERT(last.run_on_parent_failure);
    ASSERT(last.id > ids[N]); /* ids ascend parents first */
    job_fini(&last);
    /* The parents in claims of up to 50 (one claim per parent took most
     * of the case's two minutes over HTTP at load), every other one failed;
     * the last parent alone, so the step is seen waiting with one parent
     * left and pending right after it. A step released early would be
     * claimed here (the id check) or read pending at the first check. */
    size_t ended = 0;
    while (ended < N) {
        size_t want = ended + 1 < N ? N - 1 - ended : 1;
        struct job_list l = {0};
        claim(&f, want < 50 ? (int)want : 50, 60000, &l);
        ASSERT(l.n > 0);
        for (size_t k = 0; k < l.n; k++, ended++) {
            ASSERT(l.v[k].id != ids[0]);
            if (ended % 2 == 0)
                ASSERT_OK(store_complete(f.st, l.v[k].id, l.v[k].attempt, NULL, NULL, &f.err),
                          &f.err);
            else
                ASSERT_OK(
                    store_fail(f.st, l.v[k].id, l.v[k].attempt, "boom", false, 0, NULL, &f.err),
                    &f.err);
        }
        job_list_fini(&l);
        ASSERT_EQ(status_of(&f, ids[0]), ended < N ? JOB_WAITING : JOB_PENDING);
    }
    expect_wf(&f, id, WF_RUNNING, 0, 1, N / 2, N / 2, 0);
    free(s);
    free(refs);
    free(after);
    free(ids);
    fx_close(&f);
}

/*
 * Fan-out and fan-in at the size of docs/MODEL.md, Workflows: a root,
 * 10,000 steps after it (WORKFLOW_DEPS_MAX, more parents than a job's
 * depends_on takes) and a batch's last step after all of those. A submit
 * holds at most WORKFLOW_STEPS_MAX steps, so half the middle comes with
 * the submit and half is added at run time before the last step, each
 * set-wise. The last waits until every middle step has ended, completions
 * coming in batches as a worker reports them; under a remote store, whose
 * reports are one request each, all but the last 100 go to the database
 * store directly (db_complete_batch), so the server's report ends the last
 * parent.
 */
TEST(workflow_fan_out_fan_in)
{
    struct fx f;
    fx_open(&f);
    enum { N = WORKFLOW_DEPS_MAX, H = N / 2, LAST = H + 1 };
    struct workflow_step_spec *s = calloc(N + 2, sizeof *s);
    char(*refs)[16] = calloc(N, sizeof *refs);
    const char **after = calloc(N, sizeof *after);
    int64_t *ids = calloc(N + 2, sizeof *ids);
    ASSERT(s && refs && after && ids);
    static const char *const after_root[] = {"root"}, *const before_last[] = {"last"};
    s[0] = step("root", NULL, 0);
    for (size_t i = 0; i < N; i++) {
        snprintf(refs[i], sizeof refs[i], "m%zu", i);
        after[i] = refs[i];
    }
    /* submit: root, m0..m(H-1), last after those; then m(H)..m(N-1) before last */
    for (size_t i = 0; i < H; i++)
        s[i + 1] = step(refs[i], after_root, 1);
    s[LAST] = step("last", after, H);
    s[LAST].job.run_on_parent_failure = true;
    for (size_t i = H; i < N; i++)
        s[i + 2] = step(refs[i], after_root, 1);
    struct workflow_spec w = {.name = "fan", .steps = s, .n = H + 2};
    int64_t id = 0;
    ASSERT_OK(store_workflow_submit(f.st, &w, &id, ids, NULL, &f.err), &f.err);
    struct workflow_add add = {
        .steps = s + H + 2, .n = N - H, .before = before_last, .n_before = 1};
    ASSERT_OK(store_workflow_add_steps(f.st, id, &add, ids + H + 2, &f.err), &f.err);
    int64_t last_id = ids[LAST];
    expect_wf(&f, id, WF_RUNNING, N + 1, 1, 0, 0, 0);
    run_ok(&f, ids[0]);
    expect_wf(&f, id, WF_RUNNING, 1, N, 1, 0, 0);
    size_t done = 0;
    while (done < N) {
        struct job_list l = {0};
        size_t left = N - done, want = left > 100 ? (left - 100 < 1000 ? left - 100 : 1000) : 100;
        claim(&f, (int)want, 60000, &l);
        ASSERT(l.n > 0);
        struct completion *c = calloc(l.n, sizeof *c);
        int *outcome = calloc(l.n, sizeof *outcome);
        ASSERT(c && outcome);
        for (size_t i = 0; i < l.n; i++) {
            ASSERT(l.v[i].id != last_id);
            c[i] = (struct completion){.id = l.v[i].id, .attempt = l.v[i].attempt};
        }
        ASSERT_EQ(status_of(&f, last_id), JOB_WAITING);
        if (left > 100)
            ASSERT_OK(db_complete_batch(&f, c, l.n, outcome), &f.err);
        else
            ASSERT_OK(store_complete_batch(f.st, c, l.n, outcome, &f.err), &f.err);
        for (size_t i = 0; i < l.n; i++)
            ASSERT_EQ(outcome[i], JOBD_OK);
        done += l.n;
        free(c);
        free(outcome);
        job_list_fini(&l);
    }
    ASSERT_EQ(status_of(&f, last_id), JOB_PENDING);
    struct job last = getj(&f, last_id);
    ASSERT_EQ(last.n_depends_on, N);
    job_fini(&last);
    run_ok(&f, last_id);
    expect_wf(&f, id, WF_SUCCEEDED, 0, 0, N + 2, 0, 0);
    free(s);
    free(refs);
    free(after);
    free(ids);
    fx_close(&f);
}
