/*
 * h_stats.c — GET /v1/stats?since=DUR&step=DUR&queue=Q: jobs enqueued,
 * succeeded, failed and dead per step, from the store's counters
 * (store/stats.h), so every server on one store answers the same.
 *
 * The answer is written as text directly rather than through jansson: the
 * longest series (7d in 10 s steps) has 60,480 points, and one object of
 * five members per point would cost 300,000 allocations a request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierr.h"
#include "api/handlers.h"
#include "core/duration.h"
#include "core/err.h"
#include "core/timefmt.h"
#include "store/stats.h"

/* The defaults of since and step. */
#define STATS_DEFAULT_SINCE_S 3600
#define STATS_DEFAULT_STEP_S 60

static const char *const stats_params[] = {"since", "step", "queue", NULL};

/* Reads duration parameter key (whole seconds) into *out_s, kept when absent. */
static int
duration_param(struct api_call *c, const char *key, int64_t *out_s, struct jobd_error *err)
{
    const char *v = api_query(c, key);
    if (v == NULL || *v == '\0')
        return JOBD_OK;
    int64_t ms = 0;
    int rc = duration_parse_ms(v, &ms, key, err);
    if (rc == JOBD_OK && ms % 1000 != 0)
        rc = jobd_error_set(err, JOBD_E_INVALID, key, "%s must be whole seconds", key);
    if (rc == JOBD_OK)
        *out_s = ms / 1000 > STATS_KEEP_S ? STATS_KEEP_S + 1 : ms / 1000;
    return rc;
}

/* Reads the query; false after answering 400 naming the parameter. */
static bool
stats_query(struct api_call *c, int64_t *since_s, int64_t *step_s, const char **queue)
{
    for (size_t i = 0; i < c->req->n_query; i++) {
        bool ok = false;
        for (size_t k = 0; stats_params[k] && !ok; k++)
            ok = strcmp(c->req->query[i].key, stats_params[k]) == 0;
        if (!ok) {
            api_error(c->resp, 400, "invalid_query", c->req->query[i].key,
                      "unknown query parameter '%.100s'", c->req->query[i].key);
            return false;
        }
    }
    struct jobd_error err = {0};
    *since_s = STATS_DEFAULT_SINCE_S;
    *step_s = STATS_DEFAULT_STEP_S;
    const char *q = api_query(c, "queue");
    *queue = q != NULL && *q ? q : NULL;
    int rc = duration_param(c, "since", since_s, &err);
    if (rc == JOBD_OK)
        rc = duration_param(c, "step", step_s, &err);
    if (rc == JOBD_OK && *queue != NULL)
        rc = job_validate_queue(*queue, "queue", &err);
    if (rc != JOBD_OK) {
        api_error(c->resp, 400, "invalid_query", err.field, "%s", err.msg);
        return false;
    }
    return true;
}

/* A growing text buffer (the series' size is known only roughly). */
struct textbuf {
    char *p;
    size_t len, cap;
    bool oom;
};

static void
text_add(struct textbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t ncap = (b->len + n + 1) * 2;
        char *np = realloc(b->p, ncap);
        if (np == NULL) {
            b->oom = true;
            return;
        }
        b->p = np;
        b->cap = ncap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

/* The answer's JSON text (malloc'd), or NULL when memory ran out. */
static char *
series_json(const struct stats_series *s)
{
    struct textbuf b = {0};
    char line[256], t[TIME_RFC3339_LEN];
    int n = snprintf(line, sizeof line, "{\"step_s\":%lld,\"series\":[", (long long)s->step_s);
    text_add(&b, line, (size_t)n);
    for (size_t i = 0; i < s->n; i++) {
        const struct stats_point *p = &s->points[i];
        time_format_rfc3339(p->t_s * 1000000, t, sizeof t);
        n = snprintf(line, sizeof line,
                     "%s{\"t\":\"%s\",\"enqueued\":%lld,\"succeeded\":%lld,\"failed\":%lld,"
                     "\"dead\":%lld}",
                     i ? "," : "", t, (long long)p->n[STATS_ENQUEUED],
                     (long long)p->n[STATS_SUCCEEDED], (long long)p->n[STATS_FAILED],
                     (long long)p->n[STATS_DEAD]);
        text_add(&b, line, (size_t)n);
    }
    text_add(&b, "]}", 2);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

void
h_stats(struct api_call *c)
{
    int64_t since_s, step_s;
    const char *queue;
    if (!stats_query(c, &since_s, &step_s, &queue))
        return;
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct stats_series s = {0};
    struct jobd_error err = {0};
    int rc = store_stats_series(st, since_s, step_s, queue, &s, &err);
    api_store_put(c, st, rc);
    if (rc == JOBD_E_INVALID) {
        api_error(c->resp, 400, "invalid_query", err.field, "%s", err.msg);
        return;
    }
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
        return;
    }
    char *text = series_json(&s);
    free(s.points);
    if (text == NULL)
        api_error(c->resp, 500, "internal", NULL, "out of memory");
    else
        api_json_take(c->resp, 200, text);
}
