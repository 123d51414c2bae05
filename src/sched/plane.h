/*
 * plane.h — the scheduling plane: a background thread in `jobd server` that
 * materializes due cron firings, reaps expired leases, archives succeeded
 * jobs out of the hot table and prunes old finished jobs. Every step is a conditional write in the store, so any
 * number of servers may run it against one PostgreSQL without a leader.
 */
#ifndef JOBD_SCHED_PLANE_H
#define JOBD_SCHED_PLANE_H

#include <stdint.h>

#include "jobd.h"
#include "util/clock.h"
#include "util/wakeup.h"

struct sched_plane;

struct sched_plane_config {
    const char *db_url;             /* borrowed for the call; the plane opens its own store */
    int64_t reap_interval_ms;       /* 0 = JOB_DEFAULT_REAP_MS (30s) */
    int64_t retention_ms;           /* finished jobs older than this are pruned; 0 = 7 days,
                                    < 0 = kept for ever */
    int64_t retention_succeeded_ms; /* the same for succeeded jobs; 0 = retention_ms */
    int64_t retention_dead_ms;      /* the same for dead and cancelled jobs; 0 = retention_ms */
    int64_t backoff_base_ms;        /* for reaped attempts; 0 = default */
    int64_t backoff_cap_ms;
    const struct jobd_clock *clock; /* NULL = the store's own */
    struct wakeup *wake;            /* signalled after materializing/reaping; may be NULL */
    /* Told how many leases each reap batch took back (e.g. for /metrics); called on the
     * plane's thread, so it must be thread-safe. May be NULL. */
    void (*on_reaped)(void *arg, int n);
    void *on_reaped_arg;
};

/*
 * Starts the plane's thread. On success *out is owned by the caller
 * (sched_plane_stop). JOBD_E_UNAVAILABLE if the store cannot be opened.
 */
int sched_plane_start(const struct sched_plane_config *cfg, struct sched_plane **out,
                      struct jobd_error *err);
/* Stops the thread (finishing the current step), closes its store, frees. NULL-safe. */
void sched_plane_stop(struct sched_plane *p);

#endif
