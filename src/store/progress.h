/*
 * progress.h — a running attempt's progress (docs/API.md, "The job object"): a
 * report fenced and lease-extending like a heartbeat, and the reading that
 * adds it to jobs.
 *
 * Kept apart from the job row, in a table of its own keyed by job id
 * (job_progress: job_id, attempt, percent, message, data, at) on both
 * backends: a job moves between jobs and jobs_done, and the claim's and the
 * reports' statements stay as they are. The row remembers the attempt that
 * wrote it, and a reader shows it only while that attempt is the job's, so
 * the next claim "clears" it without writing anything.
 */
#ifndef JOBD_STORE_PROGRESS_H
#define JOBD_STORE_PROGRESS_H

#include "store/store.h"

/* One progress report. Pointers borrowed for the call. */
struct progress_report {
    bool has_percent;
    double percent;      /* 0..100 when has_percent */
    const char *message; /* NULL or UTF-8 text of at most JOB_PROGRESS_MESSAGE_MAX bytes */
    const char *data;    /* NULL or canonical JSON of at most JOB_PROGRESS_DATA_MAX bytes */
};

/*
 * Records p as the progress of attempt `attempt` of job id (replacing what
 * that job had) and, as store_heartbeat does, extends the lease to now +
 * lease_ms (0: JOB_DEFAULT_LEASE_MS), never shortening it (a worker's
 * longer lease stays), and tells whether a cancel was requested; one
 * transaction. JOBD_E_STALE if the job is not running with
 * that attempt (nothing is written). JOBD_E_INVALID (naming "percent",
 * "message" or "data") for a report out of its bounds; JOBD_E_INVALID too
 * on a backend without progress.
 */
JOBD_MUST_USE int store_progress(struct store *st, int64_t id, int32_t attempt,
                                 const struct progress_report *p, int64_t lease_ms,
                                 int64_t *lease_expires_at_us, bool *cancel_requested,
                                 struct jobd_error *err);

/*
 * Sets v[i].progress (freeing what it held) for each of the n jobs: the
 * stored progress when the job's attempt (v[i].attempt) is the one that
 * reported it, else NULL. One query for the lot. A backend without
 * progress leaves every one NULL and answers JOBD_OK. On error some may
 * be set; the jobs stay valid for job_fini.
 */
JOBD_MUST_USE int store_progress_attach(struct store *st, struct job *v, size_t n,
                                        struct jobd_error *err);

#endif
