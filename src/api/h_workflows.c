/*
 * h_workflows.c — the workflow routes (docs/API.md, Workflows): submit a
 * workflow (its steps are jobs with parents among them, written all or
 * nothing by store/workflow.h) and read one with its steps. Everything is
 * checked before the store is touched; the store's checks (refs, cycles)
 * name the step.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierr.h"
#include "api/handlers.h"
#include "api/metrics.h"
#include "core/err.h"
#include "store/workflow.h"

static const char *const workflow_fields[] = {"name", "idempotency_key", "steps", NULL};
static const char *const step_fields[] = {
    "ref",          "type",    "payload",   "queue",      "priority",          "run_at", "in",
    "max_attempts", "timeout", "timeout_s", "depends_on", "on_parent_failure", NULL,
};

/* What the parsed steps own beyond the request's json. */
struct parsed {
    struct workflow_step_spec *steps;
    struct spec_owned *owned;
    json_t **copies; /* each step without depends_on, as jobjson_spec reads it */
    size_t n;
};

static void
parsed_fini(struct parsed *p)
{
    for (size_t i = 0; i < p->n; i++) {
        if (p->steps)
            free((void *)p->steps[i].after);
        if (p->owned)
            jobjson_spec_fini(&p->owned[i]);
        if (p->copies)
            json_decref(p->copies[i]);
    }
    free(p->steps);
    free(p->owned);
    free(p->copies);
}

/* Step i of arr into p (the refs of its parents as borrowed strings). */
static int
parse_step(struct api_call *c, json_t *item, size_t i, struct parsed *p, bool *unknown,
           struct jobd_error *err)
{
    char prefix[40];
    snprintf(prefix, sizeof prefix, "steps[%zu].", i);
    if (!json_is_object(item))
        return jobd_error_set(err, JOBD_E_INVALID, prefix, "steps[%zu] must be an object", i);
    int rc = jobjson_check_fields(item, step_fields, prefix, err);
    if (rc != JOBD_OK) {
        *unknown = true;
        return rc;
    }
    struct workflow_step_spec *s = &p->steps[i];
    if ((rc = jobjson_get_str(item, "ref", prefix, true, &s->ref, err)) != JOBD_OK)
        return rc;
    const char **after = NULL;
    size_t n_after = 0;
    rc = jobjson_get_str_array(item, "depends_on", prefix, false, &after, &n_after, err);
    if (rc != JOBD_OK)
        return rc;
    s->after = after;
    s->n_after = n_after;
    if ((p->copies[i] = json_copy(item)) == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    json_object_del(p->copies[i], "depends_on");
    return jobjson_spec(p->copies[i], prefix, NULL, NULL, api_now_us(c), &s->job, &p->owned[i],
                        err);
}

/*
 * {"id": W, "jobs": {ref: job id}}: the n steps' refs and the jobs the
 * store gave them (a replay leaves out a ref its workflow does not have).
 */
static json_t *
submitted_json(int64_t id, const struct workflow_step_spec *steps, const int64_t *ids, size_t n)
{
    json_t *jobs = json_object();
    json_t *o = jobs ? json_pack("{s:I,s:o}", "id", (json_int_t)id, "jobs", jobs) : NULL;
    for (size_t i = 0; o && i < n; i++)
        if (ids[i] != 0 && json_object_set_new(jobs, steps[i].ref, json_integer(ids[i])) != 0) {
            json_decref(o);
            o = NULL;
        }
    return o;
}

/*
 * The steps of arr into p, and *ids (calloc'd, one per step) for the
 * store's answer; false after answering 400 (or 500).
 */
static bool
parse_steps(struct api_call *c, json_t *arr, struct parsed *p, int64_t **ids)
{
    struct jobd_error err = {0};
    if (!json_is_array(arr) || json_array_size(arr) == 0) {
        api_error(c->resp, 400, "invalid_field", "steps",
                  "steps must be a non-empty array of step objects");
        return false;
    }
    size_t n = json_array_size(arr);
    if (n > WORKFLOW_STEPS_MAX) {
        api_error(c->resp, 400, "invalid_field", "steps",
                  "a workflow holds at most %d steps, not %zu", WORKFLOW_STEPS_MAX, n);
        return false;
    }
    p->n = n;
    p->steps = calloc(n, sizeof *p->steps);
    p->owned = calloc(n, sizeof *p->owned);
    p->copies = calloc(n, sizeof *p->copies);
    *ids = calloc(n, sizeof **ids);
    if (!p->steps || !p->owned || !p->copies || !*ids) {
        api_error(c->resp, 500, "internal", NULL, "out of memory");
        return false;
    }
    bool unknown = false;
    for (size_t i = 0; i < n; i++) {
        int rc = parse_step(c, json_array_get(arr, i), i, p, &unknown, &err);
        if (rc != JOBD_OK) {
            if (unknown)
                api_error(c->resp, 400, "unknown_field", err.field, "%s", err.msg);
            else
                api_error_from(c->resp, rc, &err);
            return false;
        }
    }
    return true;
}

void
h_workflow_submit(struct api_call *c)
{
    json_t *o = api_body_object(c, workflow_fields);
    if (o == NULL)
        return;
    struct parsed p = {0};
    struct jobd_error err = {0};
    int64_t *ids = NULL;
    struct workflow_spec spec = {0};
    if (jobjson_get_str(o, "name", NULL, true, &spec.name, &err) != JOBD_OK ||
        jobjson_get_str(o, "idempotency_key", NULL, false, &spec.idempotency_key, &err) !=
            JOBD_OK) {
        api_error_from(c->resp, JOBD_E_INVALID, &err);
        goto out;
    }
    if (!parse_steps(c, json_object_get(o, "steps"), &p, &ids))
        goto out;
    spec.steps = p.steps;
    spec.n = p.n;
    struct store *st;
    if (!api_store_get(c, &st))
        goto out;
    int64_t id = 0;
    bool replayed = false;
    int rc = store_workflow_submit(st, &spec, &id, ids, &replayed, &err);
    api_store_put(c, st, rc);
    if (rc == JOBD_E_CONFLICT)
        api_error(c->resp, 409, "idempotency_conflict",
                  err.field[0] ? err.field : "idempotency_key", "%s", err.msg);
    else if (rc != JOBD_OK)
        api_error_from(c->resp, rc, &err);
    else {
        if (!replayed) {
            api_metrics_enqueued(c->ctx->metrics, p.n);
            if (c->ctx->wake)
                wakeup_signal(c->ctx->wake);
        }
        api_json_take(c->resp, replayed ? 200 : 201,
                      jobjson_dump_take(submitted_json(id, p.steps, ids, p.n)));
    }
out:
    parsed_fini(&p);
    free(ids);
    json_decref(o);
}

static const char *const add_fields[] = {"steps", "before", NULL};

/* The answer of POST /v1/workflows/{id}/steps for the store's rc. */
static void
reply_added(struct api_call *c, int rc, const struct jobd_error *err, const struct parsed *p,
            const int64_t *ids)
{
    if (rc == JOBD_E_NOTFOUND) {
        api_error(c->resp, 404, "not_found", "id", "no workflow with id %" PRId64, c->id);
    } else if (rc == JOBD_E_CONFLICT) {
        api_error(c->resp, 409, "step_not_waiting", err->field, "%s", err->msg);
    } else if (rc == JOBD_E_STATE) {
        api_error(c->resp, 409, "workflow_finished", "status", "%s", err->msg);
    } else if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, err);
    } else {
        api_metrics_enqueued(c->ctx->metrics, p->n);
        if (c->ctx->wake)
            wakeup_signal(c->ctx->wake);
        json_t *o = submitted_json(c->id, p->steps, ids, p->n);
        json_t *jobs = o ? json_incref(json_object_get(o, "jobs")) : NULL;
        json_decref(o);
        o = jobs ? json_pack("{s:o}", "jobs", jobs) : NULL;
        api_json_take(c->resp, 201, jobjson_dump_take(o));
    }
}

void
h_workflow_add_steps(struct api_call *c)
{
    json_t *o = api_body_object(c, add_fields);
    if (o == NULL)
        return;
    struct parsed p = {0};
    struct jobd_error err = {0};
    int64_t *ids = NULL;
    const char **before = NULL;
    size_t n_before = 0;
    if (jobjson_get_str_array(o, "before", NULL, false, &before, &n_before, &err) != JOBD_OK) {
        api_error_from(c->resp, JOBD_E_INVALID, &err);
        goto out;
    }
    if (!parse_steps(c, json_object_get(o, "steps"), &p, &ids))
        goto out;
    struct workflow_add add = {.steps = p.steps, .n = p.n, .before = before, .n_before = n_before};
    struct store *st;
    if (!api_store_get(c, &st))
        goto out;
    int rc = store_workflow_add_steps(st, c->id, &add, ids, &err);
    api_store_put(c, st, rc);
    reply_added(c, rc, &err, &p, ids);
out:
    free((void *)before);
    parsed_fini(&p);
    free(ids);
    json_decref(o);
}

/* A step's job id and place, sorted by id to name parents by their refs. */
struct by_job {
    int64_t job;
    size_t i;
};

static int
cmp_job(const void *a, const void *b)
{
    int64_t x = ((const struct by_job *)a)->job, y = ((const struct by_job *)b)->job;
    return (x > y) - (x < y);
}

static json_t *
counts_json(const struct workflow *w)
{
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "waiting", (json_int_t)w->counts[JOB_WAITING],
                     "pending", (json_int_t)w->counts[JOB_PENDING], "running",
                     (json_int_t)w->counts[JOB_RUNNING], "succeeded",
                     (json_int_t)w->counts[JOB_SUCCEEDED], "dead", (json_int_t)w->counts[JOB_DEAD],
                     "cancelled", (json_int_t)w->counts[JOB_CANCELLED]);
}

/* The steps of w as docs/API.md, Workflows shows them (parents by ref). */
static json_t *
steps_json(const struct workflow *w)
{
    struct by_job *idx = malloc((w->n_steps ? w->n_steps : 1) * sizeof *idx);
    json_t *arr = json_array();
    if (idx == NULL || arr == NULL)
        goto fail;
    for (size_t i = 0; i < w->n_steps; i++)
        idx[i] = (struct by_job){w->steps[i].job_id, i};
    qsort(idx, w->n_steps, sizeof *idx, cmp_job);
    for (size_t i = 0; i < w->n_steps; i++) {
        const struct workflow_step *s = &w->steps[i];
        json_t *deps = json_array();
        json_t *o = deps
                        ? json_pack("{s:s,s:I,s:s,s:s,s:o}", "ref", s->ref, "job_id",
                                    (json_int_t)s->job_id, "type", s->type, "status",
                                    job_status_name((enum job_status)s->status), "depends_on", deps)
                        : NULL;
        if (o == NULL || json_array_append_new(arr, o) != 0)
            goto fail;
        for (size_t k = 0; k < s->n_parents; k++) {
            struct by_job key = {s->parents[k], 0};
            const struct by_job *hit = bsearch(&key, idx, w->n_steps, sizeof *idx, cmp_job);
            if (hit != NULL && json_array_append_new(deps, json_string(w->steps[hit->i].ref)) != 0)
                goto fail;
        }
    }
    free(idx);
    return arr;
fail:
    free(idx);
    json_decref(arr);
    return NULL;
}

void
api_reply_workflow(struct api_call *c, int rc, const struct workflow *wp,
                   const struct jobd_error *err)
{
    const struct workflow w = *wp;
    if (rc == JOBD_E_NOTFOUND) {
        api_error(c->resp, 404, "not_found", "id", "no workflow with id %" PRId64, c->id);
    } else if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, err);
    } else {
        json_t *o = json_object();
        if (o != NULL &&
            (json_object_set_new(o, "id", json_integer(w.id)) != 0 ||
             json_object_set_new(o, "name", json_string(w.name)) != 0 ||
             json_object_set_new(o, "status", json_string(workflow_status_name(w.status))) != 0 ||
             json_object_set_new(o, "created_at", jobjson_time(w.created_at_us)) != 0 ||
             json_object_set_new(o, "finished_at", jobjson_time(w.finished_at_us)) != 0 ||
             json_object_set_new(o, "counts", counts_json(&w)) != 0 ||
             json_object_set_new(o, "steps", steps_json(&w)) != 0)) {
            json_decref(o);
            o = NULL;
        }
        api_json_take(c->resp, 200, jobjson_dump_take(o));
    }
}

void
h_workflow_get(struct api_call *c)
{
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct workflow w = {0};
    struct jobd_error err = {0};
    int rc = store_workflow_get(st, c->id, &w, &err);
    api_store_put(c, st, rc);
    api_reply_workflow(c, rc, &w, &err);
    workflow_fini(&w);
}

static const char *const list_params[] = {"status", "name", "limit", "after", NULL};

/* Reads the query of GET /v1/workflows into f; false after answering 400. */
static bool
list_filter(struct api_call *c, struct workflow_filter *f)
{
    for (size_t i = 0; i < c->req->n_query; i++) {
        bool ok = false;
        for (size_t k = 0; list_params[k] && !ok; k++)
            ok = strcmp(c->req->query[i].key, list_params[k]) == 0;
        if (!ok) {
            api_error(c->resp, 400, "invalid_query", c->req->query[i].key,
                      "unknown query parameter '%.100s'", c->req->query[i].key);
            return false;
        }
    }
    f->status = -1;
    const char *v;
    if ((v = api_query(c, "status")) != NULL && *v) {
        for (int s = WF_RUNNING; s <= WF_FAILED && f->status < 0; s++)
            if (strcmp(v, workflow_status_name(s)) == 0)
                f->status = s;
        if (f->status < 0) {
            api_error(c->resp, 400, "invalid_query", "status",
                      "status must be running, succeeded or failed");
            return false;
        }
    }
    if ((v = api_query(c, "name")) != NULL && *v)
        f->name = v;
    f->limit = WORKFLOW_PAGE_DEFAULT;
    if ((v = api_query(c, "limit")) != NULL && *v) {
        char *end;
        long n = strtol(v, &end, 10);
        if (*end != '\0' || n < 1 || n > WORKFLOW_PAGE_MAX) {
            api_error(c->resp, 400, "invalid_query", "limit",
                      "limit must be an integer between 1 and %d", WORKFLOW_PAGE_MAX);
            return false;
        }
        f->limit = (int)n;
    }
    if ((v = api_query(c, "after")) != NULL && *v) {
        char *end;
        long long n = strtoll(v, &end, 10);
        if (*end != '\0' || n < 1 || v[0] == '-' || v[0] == '+') {
            api_error(c->resp, 400, "invalid_query", "after",
                      "after must be a cursor from a previous page's \"next\"");
            return false;
        }
        f->before_id = n;
    }
    return true;
}

/* A workflow without its steps, as GET /v1/workflows lists it. */
static json_t *
summary_json(const struct workflow *w)
{
    json_t *o = json_object();
    if (o != NULL &&
        (json_object_set_new(o, "id", json_integer(w->id)) != 0 ||
         json_object_set_new(o, "name", json_string(w->name)) != 0 ||
         json_object_set_new(o, "status", json_string(workflow_status_name(w->status))) != 0 ||
         json_object_set_new(o, "created_at", jobjson_time(w->created_at_us)) != 0 ||
         json_object_set_new(o, "finished_at", jobjson_time(w->finished_at_us)) != 0 ||
         json_object_set_new(o, "counts", counts_json(w)) != 0)) {
        json_decref(o);
        o = NULL;
    }
    return o;
}

void
h_workflow_list(struct api_call *c)
{
    struct workflow_filter f = {0};
    if (!list_filter(c, &f))
        return;
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct workflow *v = NULL;
    size_t n = 0;
    int64_t next = 0;
    struct jobd_error err = {0};
    int rc = store_workflow_list(st, &f, &v, &n, &next, &err);
    api_store_put(c, st, rc);
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
        return;
    }
    json_t *arr = json_array();
    char cursor[24];
    snprintf(cursor, sizeof cursor, "%" PRId64, next);
    json_t *o = arr ? json_pack("{s:o, s:o}", "workflows", arr, "next",
                                next ? json_string(cursor) : json_null())
                    : NULL;
    for (size_t i = 0; i < n; i++) {
        if (o != NULL && json_array_append_new(arr, summary_json(&v[i])) != 0) {
            json_decref(o);
            o = NULL;
        }
        workflow_fini(&v[i]);
    }
    free(v);
    api_json_take(c->resp, 200, jobjson_dump_take(o));
}
