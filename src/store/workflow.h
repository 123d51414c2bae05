/*
 * workflow.h — workflows in the store (docs/MODEL.md, Workflows): a
 * submit writes the workflow and every step's job in one transaction, the
 * steps' parents through the dependency path of store/deps.h; a read
 * gives the steps with their jobs' statuses, from which the workflow's
 * status and counts follow (computed here, not stored).
 *
 * Layout (both backends): workflows (id, name, idempotency_key unique,
 * created_at) and workflow_steps (job_id primary key, workflow, ref, ord:
 * the step's index in the request). A job's workflow and step (the job
 * object) are read from workflow_steps by store_deps_attach. The SQL is in
 * pg/workflow.c and sqlite/workflow.c; the remote store has none.
 */
#ifndef JOBD_STORE_WORKFLOW_H
#define JOBD_STORE_WORKFLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/workflow.h"
#include "store/store.h"

/* One step as read: strings and parents owned by the step. */
struct workflow_step {
    char *ref;
    int64_t job_id;
    char *type;
    int status;             /* enum job_status */
    int64_t finished_at_us; /* 0 while not terminal */
    int64_t *parents;       /* the parents' job ids, n_parents of them */
    size_t n_parents;
};

/* Computed from the steps: WF_RUNNING until every step is terminal. */
enum workflow_status { WF_RUNNING = 0, WF_SUCCEEDED = 1, WF_FAILED = 2 };
const char *workflow_status_name(int status);

/* A workflow as read; free with workflow_fini. */
struct workflow {
    int64_t id;
    char *name;
    int64_t created_at_us;
    int64_t finished_at_us;           /* the last step's end once all are terminal, else 0 */
    int status;                       /* enum workflow_status */
    int64_t counts[JOB_STATUS_COUNT]; /* steps by status (enum job_status) */
    struct workflow_step *steps;      /* in the order they were submitted */
    size_t n_steps;
    size_t *by_job; /* private to store_workflow_add_parent: steps sorted by job id */
};
void workflow_fini(struct workflow *w);

/*
 * Submits spec (checked by workflow_plan, each step's job by
 * job_spec_validate, errors naming "steps[i]."): the workflow and every
 * step's job, or nothing. *id the workflow, job_ids[i] (caller's array of
 * spec->n) the job of step i. An idempotency key already used by a
 * workflow of the same name answers that workflow (*replayed true, may be
 * NULL), with job_ids by ref (0 for a ref it does not have); one used by
 * another name is JOBD_E_CONFLICT naming idempotency_key. JOBD_E_INVALID
 * naming the field; JOBD_E_INVALID naming "db" on a backend without
 * workflows. A key whose workflow retention took is free again.
 */
JOBD_MUST_USE int store_workflow_submit(struct store *st, const struct workflow_spec *spec,
                                        int64_t *id, int64_t *job_ids, bool *replayed,
                                        struct jobd_error *err);

/*
 * Reads workflow id into *out (zeroed first; the caller's afterwards,
 * workflow_fini), with its status, counts and finished_at computed.
 * JOBD_E_NOTFOUND, also for one whose every step retention took (a step
 * goes only with its whole workflow: store_prune); JOBD_E_INVALID naming
 * "db" on a backend without workflows.
 */
JOBD_MUST_USE int store_workflow_get(struct store *st, int64_t id, struct workflow *out,
                                     struct jobd_error *err);

/* A page of GET /v1/workflows: at most this many workflows. */
#define WORKFLOW_PAGE_DEFAULT 50
#define WORKFLOW_PAGE_MAX 100

/* Which workflows a list returns. Pointers borrowed. */
struct workflow_filter {
    const char *name;  /* exact name; NULL = any */
    int status;        /* enum workflow_status, or -1 = any */
    int64_t before_id; /* cursor: only ids < before_id; 0 = from the newest */
    int limit;         /* 1..WORKFLOW_PAGE_MAX; 0 = WORKFLOW_PAGE_DEFAULT */
};

/*
 * One page of workflows, newest first: *out (n of them, malloc'd; free each
 * with workflow_fini, then the array) as store_workflow_get reads them but
 * without steps (n_steps 0). The page looks at limit workflows by id and
 * keeps those of the status asked for, so it may hold fewer; *next is the
 * cursor of the next page (before_id), 0 when there is none.
 */
JOBD_MUST_USE int store_workflow_list(struct store *st, const struct workflow_filter *f,
                                      struct workflow **out, size_t *n, int64_t *next,
                                      struct jobd_error *err);

/* Steps to add to a running workflow (POST /v1/workflows/{id}/steps). Borrowed. */
struct workflow_add {
    const struct workflow_step_spec *steps; /* after: refs of existing or new steps */
    size_t n;                               /* 1..WORKFLOW_STEPS_MAX */
    const char *const *before; /* refs of waiting steps that gain every new step as a parent */
    size_t n_before;
};

/*
 * Adds add's steps to workflow id, all or nothing: job_ids[i] (caller's
 * array of add->n) the job of step i. A new step's parents are existing
 * steps (counted at once if they ended, as an enqueue's parents are) and
 * new ones; each before step must still be waiting, and gains every new
 * step as a parent in the same transaction, under its row lock, so a last
 * old parent ending at the same time releases it exactly once.
 * JOBD_E_NOTFOUND (no workflow); JOBD_E_INVALID naming "steps[i].ref" (a
 * ref the workflow has, or twice), "steps[i].depends_on" (unknown ref, a
 * cycle), "before[k]" (unknown ref) or a step's field; JOBD_E_CONFLICT
 * naming "before[k]" for a step no longer waiting; JOBD_E_STATE naming
 * "status" when every step of the workflow has ended.
 */
JOBD_MUST_USE int store_workflow_add_steps(struct store *st, int64_t id,
                                           const struct workflow_add *add, int64_t *job_ids,
                                           struct jobd_error *err);

/* What a workflow cancel or retry changed (steps). */
struct workflow_change {
    int64_t cancelled; /* waiting or pending -> cancelled */
    int64_t requested; /* running: cancel requested */
    int64_t retried;   /* dead or cancelled -> pending or waiting */
};

/*
 * Cancels every step of workflow id that has not ended, in one
 * transaction, as store_cancel cancels one job: waiting and pending steps
 * are cancelled, running ones get a cancel request. *c (may be NULL) says
 * how many. JOBD_E_NOTFOUND.
 */
JOBD_MUST_USE int store_workflow_cancel(struct store *st, int64_t id, struct workflow_change *c,
                                        struct jobd_error *err);

/*
 * Retries every dead or cancelled step of workflow id, in one transaction,
 * parents before children: a step goes back to pending as store_retry puts
 * it (fresh attempts), or to waiting while one of its parents has not
 * ended; a step cancelled for its parent comes back with that parent
 * (docs/MODEL.md, Dependencies). *c (may be NULL) says how many.
 * JOBD_E_NOTFOUND.
 */
JOBD_MUST_USE int store_workflow_retry(struct store *st, int64_t id, struct workflow_change *c,
                                       struct jobd_error *err);

/*
 * Deletes workflow id with every step's job (its key, attempts, progress,
 * logs and edges) when every step has ended. JOBD_E_STATE naming "status"
 * otherwise (the message names a step), or naming "depends_on" when a
 * waiting job outside the workflow depends on a step; JOBD_E_NOTFOUND.
 */
JOBD_MUST_USE int store_workflow_delete(struct store *st, int64_t id, struct jobd_error *err);

/*
 * For backends (store/workflow_ops.c): the steps of add resolved against
 * workflow w (read inside the backend's transaction): plan.order/off/idx
 * as workflow_plan gives them among the new steps, ext_off/ext (job ids of
 * existing parents, step i's at ext[ext_off[i] .. ext_off[i+1])), and the
 * job ids of the before steps. Free with workflow_add_plan_fini.
 */
struct workflow_add_plan {
    struct workflow_plan plan;
    size_t *ext_off;
    int64_t *ext;
    int64_t *before_ids;
};
int workflow_add_resolve(const struct workflow *w, const struct workflow_add *add,
                         struct workflow_add_plan *out, struct jobd_error *err);
void workflow_add_plan_fini(struct workflow_add_plan *p);

/*
 * For backends: appends parent to the step whose job is child, once every
 * step is read (a look-up in an index built at the first call, which a
 * change of w->steps invalidates). JOBD_E_NOMEM.
 */
int store_workflow_add_parent(struct workflow *w, int64_t child, int64_t parent);

#endif
