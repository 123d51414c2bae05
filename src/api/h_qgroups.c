/*
 * h_qgroups.c — GET /v1/queues/{name}/groups?limit=N (docs/API.md; docs/MODEL.md,
 * Groups): the queue's groups with pending or running jobs, busiest first,
 * {"groups": [{"group", "pending", "running"}, ...]}; group null for the
 * jobs without one.
 */
#include <errno.h>
#include <stdlib.h>

#include "api/apierr.h"
#include "api/handlers.h"
#include "api/jobjson.h"
#include "core/err.h"
#include "store/groups.h"

/* The page size when ?limit= is left out. */
#define QGROUPS_DEFAULT_LIMIT 100

/* ?limit= (default QGROUPS_DEFAULT_LIMIT); false after answering 400. */
static bool
parse_limit(struct api_call *c, int *limit)
{
    const char *v = api_query(c, "limit");
    *limit = QGROUPS_DEFAULT_LIMIT;
    if (v == NULL)
        return true;
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || errno != 0 || n < 1 || n > STORE_QUEUE_GROUPS_MAX) {
        api_error(c->resp, 400, "invalid_query", "limit", "limit must be an integer 1 to %d",
                  STORE_QUEUE_GROUPS_MAX);
        return false;
    }
    *limit = (int)n;
    return true;
}

void
h_queue_groups(struct api_call *c)
{
    struct jobd_error err = {0};
    int limit;
    if (!api_queue_name_ok(c) || !parse_limit(c, &limit))
        return;
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct queue_group *v = NULL;
    size_t n = 0;
    int rc = store_queue_groups(st, c->name, limit, &v, &n, &err);
    api_store_put(c, st, rc);
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
        return;
    }
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < n; i++) {
        json_t *g =
            json_pack("{s:o,s:I,s:I}", "group", v[i].group ? json_string(v[i].group) : json_null(),
                      "pending", (json_int_t)v[i].pending, "running", (json_int_t)v[i].running);
        if (g == NULL || json_array_append_new(a, g) != 0) {
            json_decref(a);
            a = NULL;
        }
    }
    queue_groups_free(v, n);
    json_t *o = a != NULL ? json_pack("{s:o}", "groups", a) : NULL;
    if (o == NULL) {
        api_error(c->resp, 500, "internal", NULL, "out of memory");
        return;
    }
    api_json_take(c->resp, 200, jobjson_dump_take(o));
}
