/*
 * schedule.c — schedule structs, validation and the catch-up rule.
 *
 * The catch-up rule is a pure function of (expression, zone, next firing,
 * now, policy) so that every scheduler process, racing or not, would make
 * the same jobs, and so that it is tested without a store or a clock. The
 * store runs it inside the transaction that claims the schedule row.
 */
#include "core/schedule.h"

#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/job.h"

void
schedule_fini(struct schedule *s)
{
    if (s == NULL)
        return;
    free(s->name);
    free(s->cron);
    free(s->timezone);
    free(s->type);
    free(s->payload);
    free(s->queue);
    memset(s, 0, sizeof *s);
}

struct schedule *
schedule_list_push(struct schedule_list *l)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        struct schedule *v = realloc(l->v, cap * sizeof *v);
        if (v == NULL)
            return NULL;
        l->v = v;
        l->cap = cap;
    }
    struct schedule *s = &l->v[l->n++];
    memset(s, 0, sizeof *s);
    return s;
}

void
schedule_list_fini(struct schedule_list *l)
{
    if (l == NULL)
        return;
    for (size_t i = 0; i < l->n; i++)
        schedule_fini(&l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static const char *const catchup_names[] = {"once", "all", "skip"};

const char *
schedule_catchup_name(enum schedule_catchup c)
{
    if ((unsigned)c < sizeof catchup_names / sizeof catchup_names[0])
        return catchup_names[c];
    return "?";
}

int
schedule_catchup_parse(const char *name, enum schedule_catchup *out, struct jobd_error *err)
{
    for (size_t i = 0; name != NULL && i < sizeof catchup_names / sizeof catchup_names[0]; i++) {
        if (strcmp(name, catchup_names[i]) == 0) {
            *out = (enum schedule_catchup)i;
            return 0;
        }
    }
    return jobd_error_set(err, JOBD_E_INVALID, "catchup",
                          "catchup must be \"once\", \"all\" or \"skip\"");
}

int
schedule_spec_validate(const struct schedule_spec *spec, struct jobd_error *err)
{
    int rc;
    if (spec->name == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "name", "name is required");
    if ((rc = job_validate_type(spec->name, "name", err)) != 0)
        return rc;
    if (spec->cron == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "cron", "cron is required");
    struct cron_expr e;
    if ((rc = cron_parse(spec->cron, &e, err)) != 0)
        return rc;
    if ((rc = cron_zone_check(spec->timezone, err)) != 0)
        return rc;
    if (spec->type == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "type", "type is required");
    if ((rc = job_validate_type(spec->type, "type", err)) != 0)
        return rc;
    if (spec->queue != NULL && (rc = job_validate_queue(spec->queue, "queue", err)) != 0)
        return rc;
    if (spec->priority < JOB_PRIORITY_MIN || spec->priority > JOB_PRIORITY_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "priority", "priority must be between %d and %d",
                              JOB_PRIORITY_MIN, JOB_PRIORITY_MAX);
    if (spec->max_attempts < 0 || spec->max_attempts > JOB_MAX_ATTEMPTS_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "max_attempts",
                              "max_attempts must be between 1 and %d", JOB_MAX_ATTEMPTS_MAX);
    if (spec->payload != NULL && strlen(spec->payload) > JOB_PAYLOAD_MAX)
        return jobd_error_set(err, JOBD_E_TOOBIG, "payload", "payload is larger than %d bytes",
                              JOB_PAYLOAD_MAX);
    if ((unsigned)spec->catchup > SCHEDULE_CATCHUP_SKIP)
        return jobd_error_set(err, JOBD_E_INVALID, "catchup",
                              "catchup must be \"once\", \"all\" or \"skip\"");
    return 0;
}

int
schedule_plan(const struct cron_expr *e, struct cron_zone *z, enum schedule_catchup catchup,
              int64_t next_run_at_us, int64_t now_us, int64_t grace_us, int64_t *firings,
              size_t cap, size_t *n, int64_t *new_next_us, struct jobd_error *err)
{
    *n = 0;
    if (next_run_at_us > now_us) {
        *new_next_us = next_run_at_us;
        return 0;
    }
    if (cap > SCHEDULE_CATCHUP_MAX)
        cap = SCHEDULE_CATCHUP_MAX;
    if (grace_us < SCHEDULE_GRACE_US)
        grace_us = SCHEDULE_GRACE_US;
    int64_t missed_before = now_us - grace_us; /* f < this: missed */
    int64_t f = next_run_at_us;
    int rc;

    if (f < missed_before) {
        if (catchup == SCHEDULE_CATCHUP_ALL) {
            /* Oldest first; the on-time loop below continues the same chain. */
            while (f < missed_before && *n < cap) {
                firings[(*n)++] = f;
                if ((rc = cron_next_in(e, z, f, &f, err)) != 0)
                    return rc;
            }
        } else {
            /* once: one job stands for them all; skip: none. */
            if (catchup == SCHEDULE_CATCHUP_ONCE && cap > 0)
                firings[(*n)++] = f;
            if ((rc = cron_next_in(e, z, missed_before - 1, &f, err)) != 0)
                return rc;
        }
    }
    while (f <= now_us && *n < cap) {
        firings[(*n)++] = f;
        if ((rc = cron_next_in(e, z, f, &f, err)) != 0)
            return rc;
    }
    if (f <= now_us) /* the cap cut the catch-up short: continue from now */
        return cron_next_in(e, z, now_us, new_next_us, err);
    *new_next_us = f;
    return 0;
}

int
schedule_plan_stored(const struct schedule *sc, int64_t now_us, int64_t grace_us, int64_t *firings,
                     size_t *n, int64_t *new_next_us, struct jobd_error *err)
{
    struct cron_expr e;
    struct cron_zone *z = NULL;
    int rc = cron_parse(sc->cron, &e, err);
    if (rc == JOBD_OK)
        rc = cron_zone_open(sc->timezone, &z, err);
    if (rc == JOBD_OK)
        rc = schedule_plan(&e, z, sc->catchup, sc->next_run_at_us, now_us, grace_us, firings,
                           SCHEDULE_CATCHUP_MAX, n, new_next_us, err);
    cron_zone_free(z);
    return rc;
}

int
schedule_first_after(const char *cron, const char *tz, int64_t now_us, int64_t *out,
                     struct jobd_error *err)
{
    struct cron_expr e;
    int rc = cron_parse(cron, &e, err);
    if (rc == JOBD_OK)
        rc = cron_next(&e, tz, now_us, out, err);
    return rc;
}
