/*
 * attemptlog.h — the kept tail of an exec attempt's stderr (docs/API.md,
 * GET /v1/jobs/{id}/attempts/{attempt}/log; docs/WORKER.md, Attempt logs).
 *
 * A table of its own on both backends (job_attempt_logs: job_id, attempt,
 * text, at), one row per attempt, deleted and pruned with its job: a job
 * moves between jobs and jobs_done, and the claim's and the reports'
 * statements stay as they are. A worker writes each attempt's log once,
 * just before that attempt's report, several in one call when several
 * ended in one turn of its loop: never one write per line.
 */
#ifndef JOBD_STORE_ATTEMPTLOG_H
#define JOBD_STORE_ATTEMPTLOG_H

#include "store/store.h"

/* The most bytes of one attempt's log (the handler key log_bytes's ceiling). */
#define ATTEMPT_LOG_MAX (1024 * 1024)

/* One attempt's log. Pointers borrowed for the call. */
struct attempt_log {
    int64_t id;
    int32_t attempt;
    const char *text; /* UTF-8, at most ATTEMPT_LOG_MAX bytes */
};

/*
 * Keeps each of the n logs (replacing one the attempt had), one
 * statement each (each log stands alone: one refused leaves the others
 * kept). A log is kept only for an attempt the job has had (1 ..
 * its attempt): outcome[i] is JOBD_OK, or JOBD_E_NOTFOUND for a job gone or an
 * attempt it never had (nothing written for it). The attempt need not be
 * running: a store worker writes the log of an attempt whose lease it lost.
 * JOBD_E_TOOBIG (naming "text") for a log too long, JOBD_E_INVALID for one
 * not UTF-8, before anything is written; JOBD_E_INVALID too on a backend
 * without logs.
 */
JOBD_MUST_USE int store_attempt_logs_put(struct store *st, const struct attempt_log *v, size_t n,
                                         int *outcome, struct jobd_error *err);

/*
 * The log of attempt of job id into *text (malloc'd, the caller's).
 * JOBD_E_NOTFOUND naming what is missing: "id" (no such job), "attempt"
 * (the job never had it) or "log" (the attempt kept none).
 */
JOBD_MUST_USE int store_attempt_log_get(struct store *st, int64_t id, int32_t attempt, char **text,
                                        struct jobd_error *err);

/* The size of one kept log. */
struct attempt_log_size {
    int32_t attempt;
    int64_t bytes;
};

/*
 * The attempts of job id that kept a log, with the size of each, in
 * attempt order, into *out (malloc'd, the caller's; NULL when none) and *n:
 * one query, so a listing of attempts says which have a log without
 * reading them. A backend without logs answers none.
 */
JOBD_MUST_USE int store_attempt_log_sizes(struct store *st, int64_t id,
                                          struct attempt_log_size **out, size_t *n,
                                          struct jobd_error *err);

#endif
