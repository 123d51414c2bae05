/*
 * rules.h — the rules of the job model that both stores apply (docs/MODEL.md,
 * "Transitions"), each written once here: the claim order, the defaults of an
 * enqueue, how many attempts count, and the words of a stale or refused
 * transition.
 *
 * The stores say the same rules in SQL where they must (a claim's ORDER BY,
 * PostgreSQL's reap backoff); each such place names the function here that
 * it mirrors, and the conformance suite holds the two to one behaviour.
 * Pure: no I/O, no allocation; thread-safe.
 */
#ifndef JOBD_CORE_RULES_H
#define JOBD_CORE_RULES_H

#include <stdbool.h>
#include <stdint.h>

#include "core/backoff.h"
#include "core/job.h"

/*
 * qsort comparator over struct job: the claim order, priority DESC, run_at
 * ASC, id ASC. SQL: ORDER BY priority DESC, run_at, id.
 */
int job_claim_order_cmp(const void *a, const void *b);

/*
 * spec with the enqueue defaults filled in: payload "{}", queue
 * JOB_DEFAULT_QUEUE, max_attempts JOB_DEFAULT_MAX_ATTEMPTS when 0 or less.
 * The other fields are copied (pointers stay borrowed from spec); run_at 0
 * stays 0 and means "now" by the store's clock.
 */
struct job_spec job_spec_with_defaults(const struct job_spec *spec);

/*
 * The attempts that count for a job: those since its last manual retry
 * (attempt - attempt_floor). A failure or reap leaves the job pending while
 * this is below max_attempts, and the reaper's backoff exponent is this
 * number, so a job retried by hand starts over from the base delay.
 * SQL: attempt - attempt_floor.
 */
static inline int32_t
job_attempts_counted(int32_t attempt, int32_t attempt_floor)
{
    return attempt - attempt_floor;
}

/*
 * Whether a failed or reaped attempt leaves the job pending for another
 * (docs/MODEL.md, "Transitions"): the attempts counted are still below
 * max_attempts. SQL (PostgreSQL's report, FATE):
 * attempt - attempt_floor < max_attempts.
 */
static inline bool
job_has_attempts_left(int32_t attempt, int32_t attempt_floor, int32_t max_attempts)
{
    return job_attempts_counted(attempt, attempt_floor) < max_attempts;
}

/*
 * The delay before a failed or reaped attempt is tried again: full jitter
 * (backoff_delay_ms) over the attempts counted, so after a manual retry the
 * backoff starts over from base_ms. One rule for the worker's failures and
 * the reaper's expired leases. SQL (PostgreSQL's reaper):
 * random() * LEAST(cap, base * 2^(attempt - attempt_floor)).
 */
static inline int64_t
job_retry_delay_ms(int32_t attempt, int32_t attempt_floor, int64_t base_ms, int64_t cap_ms,
                   backoff_rand_fn rnd, void *ctx)
{
    return backoff_delay_ms(job_attempts_counted(attempt, attempt_floor), base_ms, cap_ms, rnd,
                            ctx);
}

/*
 * Sets err to the stale-report error of docs/MODEL.md, "Fencing" (field
 * "attempt", JOBD_E_STALE): attempt of job id is not the live one, or the job
 * is not running. Returns JOBD_E_STALE.
 */
int job_error_stale(struct jobd_error *err, int64_t id, int32_t attempt);

/*
 * What a failure stores as last_error: the last JOB_ERROR_MAX bytes of error
 * (where a stack trace ends), starting on a UTF-8 character boundary. A
 * pointer into error; NULL for NULL.
 */
const char *job_error_tail(const char *error);

/* The operator actions whose refusal job_error_refused words. */
enum job_action {
    JOB_ACTION_CANCEL,
    JOB_ACTION_RETRY,
};

/* "cancel", "retry". */
const char *job_action_name(enum job_action a);

/*
 * Whether action is allowed from status: cancel from pending, running or waiting,
 * retry from dead or cancelled.
 */
bool job_action_allowed(enum job_action a, enum job_status status);

/*
 * Sets err to the refusal of action on job id in status (JOBD_E_STATE,
 * field "status"). Returns JOBD_E_STATE.
 */
int job_error_refused(struct jobd_error *err, enum job_action a, int64_t id,
                      enum job_status status);

#endif
