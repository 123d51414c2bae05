/*
 * paging.c — the query of the lists kept by name (GET /v1/schedules by name,
 * GET /v1/workers by id): ?limit= (1..JOB_PAGE_MAX, default
 * JOB_PAGE_DEFAULT), ?after= (the "next" of the previous page: the last name
 * it listed) and, for schedules, ?full=1. A page is bounded, so one request
 * never builds an answer the size of the whole table (docs/API.md, Paging
 * of schedules and workers).
 */
#include <stdlib.h>
#include <string.h>

#include "api/apierr.h"
#include "api/handlers.h"
#include "core/job.h"

/* A cursor is a name or a worker id: 1 to 128 bytes (JOB_NAME_MAX, JOB_WORKER_ID_MAX). */
#define PAGE_CURSOR_MAX 128

static bool
known_param(const char *key, bool with_full)
{
    return strcmp(key, "limit") == 0 || strcmp(key, "after") == 0 ||
           (with_full && strcmp(key, "full") == 0);
}

static bool
parse_full(struct api_call *c, bool *full)
{
    const char *v = api_query(c, "full");
    if (v == NULL || *v == '\0' || strcmp(v, "0") == 0 || strcmp(v, "false") == 0)
        return true;
    if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0)
        return (*full = true);
    api_error(c->resp, 400, "invalid_query", "full", "full must be 1 or 0");
    return false;
}

bool
api_page_query(struct api_call *c, bool with_full, struct name_page *pg, int *limit)
{
    for (size_t i = 0; i < c->req->n_query; i++)
        if (!known_param(c->req->query[i].key, with_full)) {
            api_error(c->resp, 400, "invalid_query", c->req->query[i].key,
                      "unknown query parameter '%.100s'", c->req->query[i].key);
            return false;
        }
    *pg = (struct name_page){0};
    *limit = JOB_PAGE_DEFAULT;
    const char *v = api_query(c, "limit");
    if (v != NULL && *v) {
        char *end;
        long n = strtol(v, &end, 10);
        if (*end != '\0' || n < 1 || n > JOB_PAGE_MAX) {
            api_error(c->resp, 400, "invalid_query", "limit",
                      "limit must be an integer between 1 and %d", JOB_PAGE_MAX);
            return false;
        }
        *limit = (int)n;
    }
    if ((v = api_query(c, "after")) != NULL && *v) {
        if (strlen(v) > PAGE_CURSOR_MAX) {
            api_error(c->resp, 400, "invalid_query", "after",
                      "after must be a cursor from a previous page's \"next\"");
            return false;
        }
        pg->after = v;
    }
    pg->limit = *limit + 1; /* one more than asked: whether a next page exists */
    return !with_full || parse_full(c, &pg->payload);
}

json_t *
api_page_next(size_t n, int limit, const char *last)
{
    return n > (size_t)limit && last != NULL ? json_string(last) : json_null();
}
