/*
 * schedule.h — the schedule model (docs/MODEL.md, "Schedules"): a named cron
 * template whose firings the scheduling plane materializes as ordinary jobs,
 * and the pure catch-up rule that decides which firings become jobs when the
 * plane looks at a due schedule.
 *
 * Strings inside struct schedule are heap-owned by the struct
 * (schedule_fini). Times are microseconds since the epoch; 0 means "none".
 * No I/O, no clock reads: "now" is always a parameter.
 */
#ifndef JOBD_CORE_SCHEDULE_H
#define JOBD_CORE_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cron.h"
#include "jobd.h"

enum schedule_catchup {
    SCHEDULE_CATCHUP_ONCE = 0, /* default: one job for all missed firings */
    SCHEDULE_CATCHUP_ALL = 1,  /* one job per missed firing, at most SCHEDULE_CATCHUP_MAX */
    SCHEDULE_CATCHUP_SKIP = 2, /* no job for missed firings */
};

#define SCHEDULE_CATCHUP_MAX 1000
/*
 * A firing more than this overdue when a scheduler first sees it counts as
 * missed (every scheduler was down, or the clock jumped forward); one at most
 * this late is merely late and always becomes a job, whatever the policy.
 * The plane wakes at each schedule's next_run_at, so its own tick makes a
 * firing late by milliseconds; a pass that comes later than this (a loaded
 * machine) passes a longer grace, the time since its previous pass
 * (src/sched/plane.c), since a running scheduler's delay is not an outage.
 */
#define SCHEDULE_GRACE_US (1000000LL)

/* What a client asks for. Pointers borrowed; NULL/0 take the defaults. */
struct schedule_spec {
    const char *name;
    const char *cron;
    const char *timezone; /* NULL = "UTC" */
    const char *type;
    const char *payload; /* canonical JSON text; NULL = "{}" */
    const char *queue;   /* NULL = "default" */
    int32_t priority;
    int32_t max_attempts; /* 0 = default */
    enum schedule_catchup catchup;
};

/* A schedule as stored. Zero-initialise; schedule_fini frees the strings. */
struct schedule {
    char *name;
    char *cron;
    char *timezone;
    char *type;
    char *payload;
    char *queue;
    int32_t priority;
    int32_t max_attempts;
    enum schedule_catchup catchup;
    bool paused;
    int64_t next_run_at_us;   /* the next firing not yet materialized */
    int64_t last_fired_at_us; /* scheduled_for of the last job made; 0 if none */
    int64_t created_at_us;
};

/* A growable array of schedules; schedule_list_fini frees them and the array. */
struct schedule_list {
    struct schedule *v;
    size_t n;
    size_t cap;
};

/* Frees the strings of s (not s itself) and zeroes it. NULL-safe. */
void schedule_fini(struct schedule *s);
/* Appends a zeroed schedule to l and returns it, or NULL on out-of-memory. */
struct schedule *schedule_list_push(struct schedule_list *l);
void schedule_list_fini(struct schedule_list *l);

/* "once", "all", "skip". */
const char *schedule_catchup_name(enum schedule_catchup c);
/* Parses a policy name; 0 or JOBD_E_INVALID with field "catchup". */
int schedule_catchup_parse(const char *name, enum schedule_catchup *out, struct jobd_error *err);

/*
 * Validates a spec: name (like a job type), cron (cron_parse; field
 * "cron.<field>"), timezone ("timezone"), type, queue, priority,
 * max_attempts, payload size, catchup. Returns 0 or JOBD_E_INVALID /
 * JOBD_E_TOOBIG with err naming the field. Thread-safe.
 */
int schedule_spec_validate(const struct schedule_spec *spec, struct jobd_error *err);

/*
 * The catch-up rule. A schedule whose next unmaterialized firing is
 * next_run_at_us (<= now_us) is looked at at now_us. Writes into
 * firings[0..*n) (cap >= SCHEDULE_CATCHUP_MAX) the scheduled_for instants
 * of the jobs to make, ascending, and into *new_next_us the first firing
 * strictly after now_us:
 *   - firings due at most grace_us before now_us always become jobs (a
 *     grace_us below SCHEDULE_GRACE_US counts as SCHEDULE_GRACE_US);
 *   - older (missed) ones: once -> one job, for the first missed firing;
 *     all -> one job each, the oldest first, SCHEDULE_CATCHUP_MAX in all;
 *     skip -> none.
 * z is the schedule's zone (used, so one thread at a time). Errors of
 * cron_next_in. Pure.
 */
int schedule_plan(const struct cron_expr *e, struct cron_zone *z, enum schedule_catchup catchup,
                  int64_t next_run_at_us, int64_t now_us, int64_t grace_us, int64_t *firings,
                  size_t cap, size_t *n, int64_t *new_next_us,
                  struct jobd_error *err) JOBD_MUST_USE;

/*
 * The first firing of (cron, tz) strictly after now_us, into *out. Errors of
 * cron_parse and cron_next. Thread-safe.
 */
int schedule_first_after(const char *cron, const char *tz, int64_t now_us, int64_t *out,
                         struct jobd_error *err) JOBD_MUST_USE;

/*
 * schedule_plan for a stored schedule: parses its cron, opens its zone and
 * applies its catch-up policy from its next_run_at_us. firings has room for
 * SCHEDULE_CATCHUP_MAX. Errors of cron_parse, cron_zone_open, schedule_plan.
 * Thread-safe (the zone is private to the call).
 */
int schedule_plan_stored(const struct schedule *sc, int64_t now_us, int64_t grace_us,
                         int64_t *firings, size_t *n, int64_t *new_next_us,
                         struct jobd_error *err) JOBD_MUST_USE;

#endif
