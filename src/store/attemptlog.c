/*
 * attemptlog.c — the backend-independent half of store/attemptlog.h: the
 * bounds of a log, checked once for every backend, and what a missing log
 * is missing. The SQL is in pg/attemptlog.c and sqlite/attemptlog.c;
 * remote/open.c sends the route.
 */
#include "store/attemptlog.h"

#include <inttypes.h>
#include <string.h>

#include "core/err.h"
#include "core/utf8.h"

int
store_attempt_logs_put(struct store *st, const struct attempt_log *v, size_t n, int *outcome,
                       struct jobd_error *err)
{
    if (st->ops->attempt_logs_put == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, NULL, "the %s store keeps no attempt logs",
                              st->ops->name);
    for (size_t i = 0; i < n; i++) {
        size_t len = v[i].text != NULL ? strlen(v[i].text) : 0;
        if (v[i].text == NULL || len > ATTEMPT_LOG_MAX)
            return jobd_error_set(err, v[i].text == NULL ? JOBD_E_INVALID : JOBD_E_TOOBIG, "text",
                                  "an attempt's log must be at most %d bytes", ATTEMPT_LOG_MAX);
        if (!utf8_valid(v[i].text, len))
            return jobd_error_set(err, JOBD_E_INVALID, "text",
                                  "an attempt's log must be UTF-8 text");
        outcome[i] = JOBD_OK;
    }
    if (n == 0)
        return JOBD_OK;
    return st->ops->attempt_logs_put(st, v, n, outcome, err);
}

int
store_attempt_log_sizes(struct store *st, int64_t id, struct attempt_log_size **out, size_t *n,
                        struct jobd_error *err)
{
    *out = NULL;
    *n = 0;
    if (st->ops->attempt_log_sizes == NULL)
        return JOBD_OK;
    return st->ops->attempt_log_sizes(st, id, out, n, err);
}

int
store_attempt_log_get(struct store *st, int64_t id, int32_t attempt, char **text,
                      struct jobd_error *err)
{
    *text = NULL;
    int rc = st->ops->attempt_log_get != NULL ? st->ops->attempt_log_get(st, id, attempt, text, err)
                                              : JOBD_E_NOTFOUND;
    if (rc != JOBD_E_NOTFOUND)
        return rc;
    /* Say what is missing: the job, the attempt, or only its log. */
    struct job j = {0};
    rc = store_get(st, id, &j, err);
    int32_t had = j.attempt;
    job_fini(&j);
    if (rc == JOBD_E_NOTFOUND)
        return jobd_error_set(err, JOBD_E_NOTFOUND, "id", "no job with id %" PRId64, id);
    if (rc != JOBD_OK)
        return rc;
    if (attempt < 1 || attempt > had)
        return jobd_error_set(err, JOBD_E_NOTFOUND, "attempt",
                              "job %" PRId64 " has no attempt %" PRId32 " (it has had %" PRId32 ")",
                              id, attempt, had);
    return jobd_error_set(err, JOBD_E_NOTFOUND, "log",
                          "attempt %" PRId32 " of job %" PRId64 " kept no log", attempt, id);
}
