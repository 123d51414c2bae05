/*
 * handlers.h — internal to src/api: the route table and what each route
 * handler receives. router.c matches a request to a route, checks auth and
 * hands the handler a struct api_call; the handlers (h_jobs.c, h_worker.c,
 * h_misc.c) only validate, call the store and fill the response.
 */
#ifndef JOBD_API_HANDLERS_H
#define JOBD_API_HANDLERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api.h"
#include "api/auth.h"
#include "api/jobjson.h"
#include "core/job.h"
#include "store/store.h"

/* Body limits (docs/API.md, "Conventions"). */
#define API_BODY_MAX (1024 * 1024)
#define API_BATCH_BODY_MAX (16 * 1024 * 1024)
#define API_BATCH_JOBS_MAX JOB_BATCH_MAX

struct api_call {
    struct api_ctx *ctx;
    const struct api_request *req;
    struct api_response *resp;
    int64_t id;                  /* the {id} of the path, if any */
    int32_t attempt;             /* the {attempt} of the path, if any */
    char name[JOB_NAME_MAX + 2]; /* the {name} of the path (truncated = too long) */
    bool name_too_long;
    enum api_role role; /* the caller's (admin when no tokens are configured) */
    /* A token limited to queues (queues=a,b in the tokens file): claims and
     * reports only there (h_worker.c); NULL = any queue. Borrowed. */
    const char *const *queues;
    size_t n_queues;
};

typedef void (*api_handler_fn)(struct api_call *c);

struct api_route {
    const char *method;
    const char *pattern; /* "/v1/jobs/{id}/cancel" */
    api_handler_fn fn;
    size_t body_limit;
    bool public_route;  /* no token needed */
    enum api_role need; /* least role allowed; API_ROLE_NONE (unset) means
                                      read for GET, write for anything else */
};

/* The route table (router.c), in documentation order. */
extern const struct api_route api_routes[];
extern const size_t api_n_routes;

/* Handlers. */
void h_job_create(struct api_call *c);
void h_job_batch(struct api_call *c);
void h_job_get(struct api_call *c);
/* Workflows (h_workflows.c; docs/API.md, Workflows). */
void h_workflow_submit(struct api_call *c);
void h_workflow_get(struct api_call *c);
void h_workflow_list(struct api_call *c);
void h_workflow_add_steps(struct api_call *c);
/* h_workflow_ops.c */
void h_workflow_cancel(struct api_call *c);
void h_workflow_retry(struct api_call *c);
void h_workflow_delete(struct api_call *c);
struct workflow;
/*
 * Answers workflow *w as GET /v1/workflows/{id} does (200), or the error of
 * rc (404 for JOBD_E_NOTFOUND, naming c->id). w and err borrowed.
 */
void api_reply_workflow(struct api_call *c, int rc, const struct workflow *w,
                        const struct jobd_error *err);
void h_job_list(struct api_call *c);
void h_job_cancel(struct api_call *c);
void h_job_retry(struct api_call *c);
void h_job_attempts(struct api_call *c);
void h_job_delete(struct api_call *c);
void h_job_bulk(struct api_call *c);
void h_worker_list(struct api_call *c);
void h_stats(struct api_call *c);
void h_worker_announce(struct api_call *c);
void h_worker_presence(struct api_call *c);
void h_worker_withdraw(struct api_call *c);
void h_claim(struct api_call *c);
void h_heartbeat(struct api_call *c);
void h_progress(struct api_call *c); /* h_worker.c: docs/API.md, The job object */
void h_complete(struct api_call *c);
void h_fail(struct api_call *c);
void h_release(struct api_call *c);
/* h_attemptlog.c: docs/API.md, GET /v1/jobs/{id}/attempts/{attempt}/log */
void h_attempt_log_get(struct api_call *c);
void h_attempt_log_put(struct api_call *c);
/* h_events.c: docs/API.md, GET /v1/events */
void h_events(struct api_call *c);
/*
 * h_worker.c: true when the report body o carries the lease token of
 * attempt of job c->id (docs/API.md, Remote workers); otherwise the answer
 * (409 stale_attempt, 403, 404 or the store's error) is set and nothing
 * may change.
 */
bool api_report_fenced(struct api_call *c, struct store *st, int64_t attempt, json_t *o);
void h_cancels(struct api_call *c); /* h_cancels.c: docs/API.md, Hearing of a cancel */
void h_queue_list(struct api_call *c);
void h_queue_pause(struct api_call *c);
void h_queue_resume(struct api_call *c);
void h_queue_limits(struct api_call *c);
void h_queue_groups(struct api_call *c); /* h_qgroups.c */
void h_sched_create(struct api_call *c);
void h_sched_put(struct api_call *c);
void h_sched_list(struct api_call *c);
void h_sched_get(struct api_call *c);
void h_sched_delete(struct api_call *c);
void h_sched_pause(struct api_call *c);
void h_sched_resume(struct api_call *c);
void h_sched_trigger(struct api_call *c);
void h_sched_next(struct api_call *c);
void h_whoami(struct api_call *c);
void h_healthz(struct api_call *c);
void h_metrics(struct api_call *c);

/* ---- helpers shared by handlers (router.c) ---- */

/* The {name} of a /v1/schedules/{name}… path checked as a schedule name;
 * false after answering 400 invalid_field (h_sched.c). */
bool api_sched_path_name(struct api_call *c);
/* Answers 404 not_found for the schedule name (borrowed) (h_sched.c). */
void api_sched_not_found(struct api_call *c, const char *name);

/*
 * The schedule object of docs/API.md, "Schedules" (h_sched.c). New reference
 * or NULL.
 */
struct schedule;
json_t *jobjson_schedule(const struct schedule *s);

/*
 * The queue routes' name ({name} of /v1/queues/{name}, h_misc.c): true if
 * c->name is a valid queue name, else answers 400 invalid_field naming
 * "name" (too long, or the characters of job_validate_queue) and returns false.
 */
bool api_queue_name_ok(struct api_call *c);
/*
 * Answers 200 with the queue object of c->name (a valid name) from qs (n
 * of them, borrowed), or, for a queue not listed there (one without jobs),
 * zero counts and the given paused.
 */
void api_reply_queue(struct api_call *c, const struct queue_stat *qs, size_t n, bool paused);

/* Borrows a store connection; on failure answers 503 and returns false. */
bool api_store_get(struct api_call *c, struct store **st);
/*
 * Sets "unhandled_types" on every queue object of the array queues (GET
 * /v1/queues): the types of its pending jobs that no active worker claims
 * from it (unhandled.c). Reads the store st; JOBD_OK or the store's error.
 */
int api_queues_add_unhandled(struct store *st, json_t *queues, struct jobd_error *err);
/* Gives it back; rc is the last result (UNAVAILABLE closes it). */
void api_store_put(struct api_call *c, struct store *st, int rc);
/* Parses the body as an object with only the allowed fields; on failure
 * answers 400 (malformed_json / unknown_field) and returns NULL. */
json_t *api_body_object(struct api_call *c, const char *const *allowed);
/* Answers status with the job object. */
void api_reply_job(struct api_call *c, int status, const struct job *j);
/* Now, from the context's clock. */
int64_t api_now_us(const struct api_call *c);
/* True if the caller's role is at least need; else answers 403 forbidden
 * and returns false. For handlers whose need depends on the body. */
bool api_require_role(struct api_call *c, enum api_role need, const char *what);
/*
 * Parses created_after / created_before (RFC 3339, either may be NULL) into
 * f (h_bulk.c). JOBD_E_INVALID naming the field.
 */
int api_parse_created(const char *after, const char *before, struct job_filter *f,
                      struct jobd_error *err);
/* A query parameter or NULL. */
const char *api_query(const struct api_call *c, const char *key);
/*
 * Reads ?limit= and ?after= of a list kept by name (paging.c), and ?full=
 * when with_full; refuses any other parameter. *limit is the page size asked
 * for; pg (pointers borrowed from the request) asks the store for one row
 * more, to learn whether a next page exists. False after answering 400.
 */
bool api_page_query(struct api_call *c, bool with_full, struct name_page *pg, int *limit);
/* The "next" of a page: last (the name of row limit - 1) when the store
 * returned n > limit rows, else JSON null. A new reference. */
json_t *api_page_next(size_t n, int limit, const char *last);

#endif
