/*
 * conformance_wf.h — the helpers of the workflow conformance cases
 * (conformance_workflows.c, conformance_workflow_ops.c): a step, a
 * diamond a -> (b, c) -> d submitted, a workflow's status and counts
 * expected, a table's rows counted.
 */
#ifndef JOBD_TESTS_CONFORMANCE_WF_H
#define JOBD_TESTS_CONFORMANCE_WF_H

#include <stdio.h>

#include "conformance.h"
#include "store/workflow.h"

/* A step of type "t" named ref whose parents are the refs of after. */
static inline struct workflow_step_spec
step(const char *ref, const char *const *after, size_t n)
{
    return (struct workflow_step_spec){
        .ref = ref, .job = {.type = "t"}, .after = after, .n_after = n};
}

static inline long
count_of(struct fx *f, const char *table)
{
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s%s", is_pg() ? "jobd." : "", table);
    return raw_count(f, sql);
}

static inline void
run_ok(struct fx *f, int64_t id)
{
    int32_t a = claim_one(f, id);
    ASSERT_OK(store_complete(f->st, id, a, NULL, NULL, &f->err), &f->err);
}

/* a -> (b, c) -> d */
static const char *const after_a[] = {"a"};
static const char *const after_bc[] = {"b", "c"};

static inline int64_t
submit_diamond(struct fx *f, const char *key, int64_t ids[4], bool *replayed)
{
    struct workflow_step_spec s[4] = {step("a", NULL, 0), step("b", after_a, 1),
                                      step("c", after_a, 1), step("d", after_bc, 2)};
    struct workflow_spec w = {.name = "diamond", .idempotency_key = key, .steps = s, .n = 4};
    int64_t id = 0;
    ASSERT_OK(store_workflow_submit(f->st, &w, &id, ids, replayed, &f->err), &f->err);
    ASSERT(id > 0);
    return id;
}

static inline void
expect_wf(struct fx *f, int64_t id, int status, int64_t waiting, int64_t pending, int64_t ok,
          int64_t dead, int64_t cancelled)
{
    struct workflow w;
    ASSERT_OK(store_workflow_get(f->st, id, &w, &f->err), &f->err);
    ASSERT_EQ(w.status, status);
    ASSERT_EQ(w.counts[JOB_WAITING], waiting);
    ASSERT_EQ(w.counts[JOB_PENDING], pending);
    ASSERT_EQ(w.counts[JOB_SUCCEEDED], ok);
    ASSERT_EQ(w.counts[JOB_DEAD], dead);
    ASSERT_EQ(w.counts[JOB_CANCELLED], cancelled);
    ASSERT_EQ(w.finished_at_us != 0, status != WF_RUNNING);
    workflow_fini(&w);
}

#endif
