/*
 * workflow.h — a workflow as submitted (docs/MODEL.md, Workflows): named
 * steps whose parents are other steps, checked and put in an order in
 * which every step comes after its parents. No I/O: the store writes it
 * (store/workflow.h).
 */
#ifndef JOBD_CORE_WORKFLOW_H
#define JOBD_CORE_WORKFLOW_H

#include <stddef.h>
#include <stdint.h>

#include "core/job.h"
#include "jobd.h"

/* At most this many steps in one workflow (docs/API.md, Workflows). */
#define WORKFLOW_STEPS_MAX 10000
/* A step's parents: as many as a workflow has steps, more than a job's
 * depends_on takes (JOB_DEPS_MAX), so that a batch's last step can wait
 * for all the others (docs/MODEL.md, Workflows). */
#define WORKFLOW_DEPS_MAX WORKFLOW_STEPS_MAX
/* A step's ref and a workflow's name: 1..this many bytes. */
#define WORKFLOW_NAME_MAX 200

/* One step. Pointers borrowed; job.depends_on is ignored (after says). */
struct workflow_step_spec {
    const char *ref;
    struct job_spec job;
    const char *const *after; /* the refs of its parents, n_after of them */
    size_t n_after;
};

/* A workflow to submit. Pointers borrowed. */
struct workflow_spec {
    const char *name;
    const char *idempotency_key; /* NULL = none */
    const struct workflow_step_spec *steps;
    size_t n;
};

/*
 * The order to enqueue spec's steps in and their parents as step indexes:
 * order[k] is a step index, every step after its parents; the parents of
 * step i are idx[off[i] .. off[i+1]) (without repeats). All three malloc'd,
 * the caller frees (workflow_plan_fini).
 */
struct workflow_plan {
    size_t *order;
    size_t *off;
    size_t *idx;
};

/*
 * Checks spec (name, refs, at most WORKFLOW_STEPS_MAX steps, parents among
 * the refs, no cycle) and plans it. JOBD_E_INVALID naming the field
 * ("steps[3].depends_on", "steps[2].ref", "name", "steps"), JOBD_E_NOMEM.
 * Each step's job is not validated here (job_spec_validate).
 */
JOBD_MUST_USE int workflow_plan(const struct workflow_spec *spec, struct workflow_plan *out,
                                struct jobd_error *err);
void workflow_plan_fini(struct workflow_plan *p);

#endif
