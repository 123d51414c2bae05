/*
 * bulk_dry.c — `jobd jobs retry|cancel|delete --dry-run [filters]`: which
 * jobs the bulk action would match, changing nothing.
 *
 * It reads GET /v1/jobs with the same filters, newest first and up to the
 * same limit as POST /v1/jobs/bulk (docs/API.md), so it lists what the action
 * would take; GET /v1/jobs has no ids filter, so with --ids each job is read
 * with GET /v1/jobs/{id} and the other filters are applied here. Whether a
 * matched job would change or be skipped is told from its status now: a
 * preview, since jobs move on between the dry run and the action.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/http.h"
#include "core/err.h"
#include "core/job.h"
#include "core/json.h"
#include "core/timefmt.h"

/* The filter's string fields, as the keys of GET /v1/jobs's query too. */
static const char *const str_keys[] = {"status",   "queue",         "type",          "key",
                                       "schedule", "created_after", "created_before"};
#define N_STR_KEYS (sizeof str_keys / sizeof str_keys[0])

struct dry {
    const char *cmd;    /* "jobs retry": names the command in errors */
    const char *action; /* retry, cancel or delete */
    json_t *ids;        /* the matched ids, newest first */
    long change;        /* of those, the jobs whose status allows the action */
    long limit;
};

/* True if a job with status st takes the action (docs/API.md, bulk). */
static bool
allows(const char *action, const char *st)
{
    if (st == NULL)
        return false;
    if (strcmp(action, "retry") == 0)
        return strcmp(st, "dead") == 0 || strcmp(st, "cancelled") == 0;
    if (strcmp(action, "cancel") == 0)
        return strcmp(st, "pending") == 0 || strcmp(st, "running") == 0;
    return strcmp(st, "running") != 0; /* delete */
}

static void
add_job(struct dry *d, const json_t *j)
{
    json_array_append_new(d->ids, json_integer(json_integer_value(json_object_get(j, "id"))));
    if (allows(d->action, json_string_value(json_object_get(j, "status"))))
        d->change++;
}

/* created_at of job j against the bound text (after: inclusive, else exclusive). */
static bool
time_ok(const json_t *j, const char *bound, bool after)
{
    int64_t b, c;
    struct jobd_error err = {0};
    const char *at = json_string_value(json_object_get(j, "created_at"));
    if (at == NULL || time_parse_rfc3339(bound, &b, "created", &err) != JOBD_OK ||
        time_parse_rfc3339(at, &c, "created_at", &err) != JOBD_OK)
        return false;
    return after ? c >= b : c < b;
}

/* True if job j passes every filter but ids (the --ids path). */
static bool
job_matches(const json_t *j, const json_t *filter)
{
    static const char *const field[] = {"status", "queue", "type", "idempotency_key", "schedule"};
    for (size_t k = 0; k < 5; k++) {
        const char *want = json_string_value(json_object_get(filter, str_keys[k]));
        const char *have = json_string_value(json_object_get(j, field[k]));
        if (want != NULL && (have == NULL || strcmp(want, have) != 0))
            return false;
    }
    const char *after = json_string_value(json_object_get(filter, "created_after"));
    const char *before = json_string_value(json_object_get(filter, "created_before"));
    return (after == NULL || time_ok(j, after, true)) &&
           (before == NULL || time_ok(j, before, false));
}

/* GETs path; the parsed 200 answer, or NULL with *rc (404 -> CLI_OK, *gone). */
static json_t *
get_json(const struct dry *d, const char *server, const char *path, int *rc, bool *gone)
{
    struct cli_http_resp r;
    if ((*rc = cli_http(d->cmd, server, "GET", path, NULL, &r)) != CLI_OK)
        return NULL;
    /* (json_is_object evaluates its argument twice: parse first.) */
    json_t *o = r.status == 200 ? json_loadb(r.body, r.len, 0, NULL) : NULL;
    if (r.status == 404 && gone != NULL)
        *gone = true;
    else if (r.status != 200)
        *rc = cli_http_fail(d->cmd, &r);
    else if (!json_is_object(o)) {
        fprintf(stderr, "jobd %s: the server's answer to GET %s is not a JSON object\n", d->cmd,
                path);
        *rc = CLI_FAILED;
    }
    free(r.body);
    if (*rc != CLI_OK || (gone != NULL && *gone)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static int
cmp_desc(const void *a, const void *b)
{
    json_int_t x = *(const json_int_t *)a, y = *(const json_int_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* --ids: each job by its id, newest first, the other filters applied here. */
static int
match_ids(struct dry *d, const char *server, const json_t *filter)
{
    const json_t *ids = json_object_get(filter, "ids");
    size_t n = json_array_size(ids);
    json_int_t *v = calloc(n + 1, sizeof *v);
    if (v == NULL)
        return cli_error(d->cmd, JOBD_E_NOMEM, NULL);
    for (size_t i = 0; i < n; i++)
        v[i] = json_integer_value(json_array_get(ids, i));
    qsort(v, n, sizeof *v, cmp_desc);
    int rc = CLI_OK;
    for (size_t i = 0; rc == CLI_OK && i < n && (long)json_array_size(d->ids) < d->limit; i++) {
        if (i > 0 && v[i] == v[i - 1])
            continue;
        char path[64];
        snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)v[i]);
        bool gone = false;
        json_t *j = get_json(d, server, path, &rc, &gone);
        if (j != NULL && job_matches(j, filter))
            add_job(d, j);
        json_decref(j);
    }
    free(v);
    return rc;
}

/* "/v1/jobs?FILTERS&limit=N[&after=C]"; malloc'd, NULL on out-of-memory. */
static char *
list_path(const json_t *filter, long want, const char *after)
{
    size_t cap = 64 + (after ? strlen(after) : 0);
    for (size_t k = 0; k < N_STR_KEYS; k++) {
        const char *v = json_string_value(json_object_get(filter, str_keys[k]));
        cap += v ? 3 * strlen(v) + 20 : 0;
    }
    char *p = malloc(cap);
    if (p == NULL)
        return NULL;
    size_t used = (size_t)snprintf(p, cap, "/v1/jobs?limit=%ld", want);
    for (size_t k = 0; k < N_STR_KEYS; k++) {
        const char *v = json_string_value(json_object_get(filter, str_keys[k]));
        char *e = v ? cli_http_escape(v) : NULL;
        if (v != NULL && e == NULL) {
            free(p);
            return NULL;
        }
        if (e != NULL)
            used += (size_t)snprintf(p + used, cap - used, "&%s=%s", str_keys[k], e);
        free(e);
    }
    if (after != NULL)
        snprintf(p + used, cap - used, "&after=%s", after);
    return p;
}

/* Without --ids: GET /v1/jobs with the filters, page after page, up to the limit. */
static int
match_list(struct dry *d, const char *server, const json_t *filter)
{
    char *after = NULL;
    int rc = CLI_OK;
    for (bool first = true; rc == CLI_OK && (first || after != NULL); first = false) {
        long left = d->limit - (long)json_array_size(d->ids);
        char *path = list_path(filter, left < JOB_PAGE_MAX ? left : JOB_PAGE_MAX, after);
        free(after);
        after = NULL;
        if (path == NULL)
            return cli_error(d->cmd, JOBD_E_NOMEM, NULL);
        json_t *o = get_json(d, server, path, &rc, NULL);
        free(path);
        size_t i;
        const json_t *j;
        json_array_foreach(json_object_get(o, "jobs"), i, j)
            if ((long)json_array_size(d->ids) < d->limit)
                add_job(d, j);
        const char *next = json_string_value(json_object_get(o, "next"));
        if (next != NULL && (long)json_array_size(d->ids) < d->limit &&
            (after = strdup(next)) == NULL)
            rc = cli_error(d->cmd, JOBD_E_NOMEM, NULL);
        json_decref(o);
    }
    free(after);
    return rc;
}

/* The outcome: text on a terminal, one JSON object when piped. */
static void
print_dry(const struct dry *d)
{
    long n = (long)json_array_size(d->ids);
    if (!isatty(1)) {
        json_t *o = json_object();
        json_object_set_new(o, "dry_run", json_true());
        json_object_set_new(o, "action", json_string(d->action));
        json_object_set_new(o, "matched", json_integer(n));
        json_object_set_new(o, "would_change", json_integer(d->change));
        json_object_set_new(o, "would_skip", json_integer(n - d->change));
        json_object_set(o, "ids", d->ids);
        char *t = o ? json_print(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        if (t != NULL)
            puts(t);
        free(t);
        json_decref(o);
        return;
    }
    printf("dry run: %s would match %ld job%s (%ld would change, %ld would be skipped); "
           "nothing was changed\n",
           d->action, n, n == 1 ? "" : "s", d->change, n - d->change);
    size_t i;
    const json_t *id;
    json_array_foreach(d->ids, i, id)
        printf("%s%lld", i == 0 ? "ids: " : ", ", (long long)json_integer_value(id));
    if (n > 0)
        putchar('\n');
}

int
cli_jobs_bulk_dry(const char *action, const char *server, const json_t *filter, long limit)
{
    char cmd[32];
    snprintf(cmd, sizeof cmd, "jobs %s", action);
    struct dry d = {cmd, action, json_array(), 0, limit};
    if (d.ids == NULL)
        return cli_error(cmd, JOBD_E_NOMEM, NULL);
    server = cli_server_url(server);
    int rc = json_object_get(filter, "ids") != NULL ? match_ids(&d, server, filter)
                                                    : match_list(&d, server, filter);
    if (rc == CLI_OK)
        print_dry(&d);
    json_decref(d.ids);
    return rc;
}
