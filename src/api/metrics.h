/*
 * metrics.h — the counters and histograms behind GET /metrics, and their
 * Prometheus text exposition (hand-written: it is a few lines of format).
 *
 * Counters are process-local (they restart at 0, as Prometheus expects of
 * counters); jobd_queue_jobs gauges come from the store at scrape time, so
 * they are right whichever process changed the jobs. All updates are
 * lock-free atomics; safe from any thread.
 */
#ifndef JOBD_API_METRICS_H
#define JOBD_API_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/job.h"
#include "store/store.h"

struct api_metrics;

enum metrics_outcome {
    OUTCOME_SUCCEEDED = 0,
    OUTCOME_RETRIED = 1,
    OUTCOME_DEAD = 2,
    OUTCOME_CANCELLED = 3,
};
#define OUTCOME_COUNT 4

/* NULL on out-of-memory. Free with api_metrics_free (NULL-safe). */
struct api_metrics *api_metrics_new(void);
void api_metrics_free(struct api_metrics *m);

/* Each is a no-op for m == NULL. */
void api_metrics_enqueued(struct api_metrics *m, uint64_t n);
void api_metrics_finished(struct api_metrics *m, enum metrics_outcome o);
/* n jobs a report left in status: succeeded, pending (retried), dead, cancelled. */
void api_metrics_ended(struct api_metrics *m, enum job_status status, uint64_t n);
void api_metrics_reaped(struct api_metrics *m, uint64_t n);
void api_metrics_fenced(struct api_metrics *m, uint64_t n);
/* One group-commit transaction written (jobd_enqueue_commits_total). */
void api_metrics_commit(struct api_metrics *m);
/* Claims parked in a long poll right now (jobd_claims_waiting), +1 / -1. */
void api_metrics_waiting(struct api_metrics *m, int delta);
/* Requests waiting for a result (api/jobwait.h) parked now: += delta. */
void api_metrics_results_waiting(struct api_metrics *m, int64_t delta);
/* Clients of GET /v1/events connected now (jobd_event_clients): += delta. */
void api_metrics_event_clients(struct api_metrics *m, int64_t delta);
/* One cut for reading too slowly (jobd_event_clients_cut_total; api/events.h). */
void api_metrics_event_client_cut(struct api_metrics *m);
/* A wait refused because --max-waits were parked (429 too_many_waits). */
void api_metrics_wait_refused(struct api_metrics *m);
/* The last SIGHUP reload failed (1) or applied (0): jobd_config_reload_failed. */
void api_metrics_reload_failed(struct api_metrics *m, bool failed);
/* Observations for queue (NULL or "": counted under queue="*"). */
void api_metrics_lateness(struct api_metrics *m, const char *queue, double seconds);
void api_metrics_duration(struct api_metrics *m, const char *queue, double seconds);
/* A claimed job: observes its lateness (started_at - run_at). */
void api_metrics_claimed(struct api_metrics *m, const struct job *j);
/* A job a report ended or sent back for retry: counts its outcome by the
 * status it has now and observes its run duration. */
void api_metrics_reported(struct api_metrics *m, const struct job *j);

/* Queues with histogram series of their own; later ones share queue="*". */
#define METRICS_QUEUES_MAX 64

/* The workers of the store by state (jobd_workers). */
struct metrics_workers {
    int64_t active, draining, gone;
};

/*
 * Renders the exposition text, with jobd_queue_jobs and
 * jobd_queue_oldest_due_age_seconds from qs (n entries, may be 0) and
 * jobd_workers from w (NULL: left out, the store did not answer). Returns
 * a malloc'd NUL-terminated string (caller frees) or NULL on out-of-memory.
 * m may be NULL (all counters 0).
 */
char *api_metrics_render(const struct api_metrics *m, const struct queue_stat *qs, size_t n,
                         const struct metrics_workers *w);
/*
 * Appends jobd_queue_groups{queue} (docs/MODEL.md, Groups: how many groups
 * of each grouped queue have due jobs; no label per group) from v[0..n) to
 * text (taken: freed or returned grown). NULL on out-of-memory.
 */
struct queue_group_count;
char *api_metrics_groups(char *text, const struct queue_group_count *v, size_t n);

#endif
