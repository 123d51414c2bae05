/*
 * window.c — the rules of an enqueue's debounce and unique window
 * (docs/MODEL.md, Debounce and unique windows; docs/API.md, POST /v1/jobs):
 * each key as an idempotency key, each `for` from 1ms to 366d, and the
 * combinations that are refused because no single meaning fits them:
 *
 *   debounce + run_at/in   debounce sets run_at itself (now + for);
 *   debounce + depends_on  a waiting job is not pending, so it could never
 *                          be replaced: the burst would make one job each;
 *   debounce or unique + idempotency_key, debounce + unique
 *                          two rules deciding whether a request makes a job.
 *
 * Errors name the field ("debounce.key", "jobs[3].unique.for"). Pure.
 */
#include <stdio.h>

#include "core/err.h"
#include "core/job.h"

static int
check_window(const struct job_window *w, const char *prefix, const char *name,
             struct jobd_error *err)
{
    char f[128];
    if (w->key == NULL) {
        if (w->for_ms == 0)
            return JOBD_OK;
        snprintf(f, sizeof f, "%s%s.key", prefix ? prefix : "", name);
        return jobd_error_set(err, JOBD_E_INVALID, f, "%s is required", f);
    }
    snprintf(f, sizeof f, "%s%s.key", prefix ? prefix : "", name);
    int rc = job_validate_key(w->key, f, err);
    if (rc != JOBD_OK)
        return rc;
    snprintf(f, sizeof f, "%s%s.for", prefix ? prefix : "", name);
    if (w->for_ms < 1)
        return jobd_error_set(err, JOBD_E_INVALID, f, "%s must be a duration of at least 1ms", f);
    if (w->for_ms > JOB_WINDOW_MAX_MS)
        return jobd_error_set(err, JOBD_E_INVALID, f, "%s must be at most 366d", f);
    return JOBD_OK;
}

/* A refused combination, naming the window (prefix + name). */
static int
refuse(const char *prefix, const char *name, const char *why, struct jobd_error *err)
{
    char f[128];
    snprintf(f, sizeof f, "%s%s", prefix ? prefix : "", name);
    return jobd_error_set(err, JOBD_E_INVALID, f, "%s %s", f, why);
}

int
job_spec_validate_windows(const struct job_spec *spec, const char *prefix, struct jobd_error *err)
{
    int rc;
    if ((rc = check_window(&spec->debounce, prefix, "debounce", err)) != JOBD_OK ||
        (rc = check_window(&spec->unique, prefix, "unique", err)) != JOBD_OK)
        return rc;
    bool debounce = spec->debounce.key != NULL, unique = spec->unique.key != NULL;
    if (debounce && unique)
        return refuse(prefix, "unique", "cannot be combined with debounce: give one of them", err);
    if (debounce && spec->run_at_us != 0)
        return refuse(prefix, "debounce",
                      "sets run_at itself (now + for): give neither run_at nor in with it", err);
    if (debounce && spec->n_depends_on > 0)
        return refuse(prefix, "debounce",
                      "cannot be combined with depends_on: a waiting job is never replaced", err);
    if ((debounce || unique) && spec->idempotency_key != NULL)
        return refuse(prefix, debounce ? "debounce" : "unique",
                      "cannot be combined with an idempotency key: give one of them", err);
    return JOBD_OK;
}
