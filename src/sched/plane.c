/*
 * plane.c — the scheduling plane's thread (see plane.h): materializes due
 * cron firings, reaps expired leases, archives succeeded jobs out of the hot
 * table (store_archive; on PostgreSQL completions move them at once, and the
 * plane makes the archive's day partitions ahead: store_archive_days),
 * vacuums that table under churn (store_vacuum_hot),
 * prunes old finished jobs.
 *
 * Every step is one conditional write (or one transaction) in the store, so
 * the thread keeps no state that matters: it may be killed at any instant,
 * and several servers may run it against one PostgreSQL. It owns its own
 * store connection. Time to sleep is measured on the monotonic clock; "now"
 * for cutoffs comes from the configured clock (the store's own otherwise).
 *
 * Clock jumps: a forward jump needs nothing here (what fell due meanwhile is
 * late, and the catch-up rule treats firings over a second overdue as missed).
 * A backward jump would leave due jobs and next firings waiting for the clock
 * to pass them again, so each pass compares the store's "now" with the
 * monotonic clock and, when the store's clock fell back by more than
 * PLANE_JUMP_MIN_US, has the store re-evaluate due times
 * (store_clock_went_back). The one state kept for that is the last offset
 * between the two clocks; losing it (a restart) loses nothing but the jobs
 * part, since the schedule part runs again when the plane starts.
 *
 * Late passes: a forward jump of the wall clock is told from a pass that is
 * merely late (a loaded machine, a slow store call) by the monotonic clock.
 * The plane remembers when its last materializer pass started, and a firing
 * that fell due since then is late, not missed (materialize_grace), so a
 * running scheduler never drops or merges firings because it was slow;
 * only an outage (a restart, or a gap over PLANE_LATE_MAX_US) counts.
 */
#include "sched/plane.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/err.h"
#include "core/job.h"
#include "core/schedule.h"
#include "store/operator.h"
#include "store/stats.h"
#include "store/store.h"
#include "util/log.h"

#define PLANE_TICK_MS 1000          /* materializer cadence when nothing is sooner */
#define PLANE_MATERIALIZE_LIMIT 100 /* schedules per materializer call */
#define PLANE_REAP_BATCH 500
#define PLANE_REAP_LINES 20 /* leases logged one by one per reap step; the rest summed */
#define PLANE_PRUNE_BATCH 500
#define PLANE_MAX_BATCHES 20 /* per step and tick, so one step cannot starve others */
#define PLANE_PRUNE_EVERY_MS 60000
/*
 * Succeeded jobs stay in the hot table at least this long before the archive
 * pass moves them: a burst of completions is not followed at once by moves
 * competing with its claims, and each pass moves full batches.
 */
#define PLANE_ARCHIVE_AFTER_MS 10000
#define PLANE_ARCHIVE_BATCH 2000
#define PLANE_ARCHIVE_BUDGET_US 250000LL /* per pass, so the other steps stay on time */
/*
 * The hot table is vacuumed by the plane once this many rows were archived
 * since its last vacuum, at most every PLANE_VACUUM_GAP_MS, and never
 * sooner than PLANE_VACUUM_SHARE times the last vacuum's own duration after
 * it ends (so vacuuming takes at most a third of the plane's time: it delays
 * the other steps while it runs, so a cron firing that falls due during a
 * vacuum is made when it ends, and an expired lease is reaped then).
 * The count is cumulative: a quiet installation gets a cheap vacuum now and
 * then, a busy one every 3 s.
 *
 * Why 4 s and five times, not 10 s and ten (until 2026-12-07): a B-tree
 * keeps every page it split, so the hot table's indexes settle at the most
 * dead entries they ever held between two vacuums. At 8,700 jobs/s each
 * job leaves two dead row versions, 170 k in 10 s, and a vacuum that took
 * 2 s pushed the next one 20 s away: the soaks' indexes grew in steps after
 * each such gap (docs/BENCHMARKS.md, Soak). A vacuum's cost is a pass over
 * the indexes' pages, so smaller peaks make each pass cheaper too. Twice its
 * duration, not five times (until 2026-12-08): the vacuums of that soak took
 * 0.5-2.2 s, and five times a slow one still left 11 s between two; and
 * 3 s, not 4 (the same day): at 8,700 jobs/s the dead row versions still
 * peaked at 100-120 k between two vacuums, and each new peak is a step up
 * of the indexes that stays.
 */
#define PLANE_VACUUM_AFTER_ROWS 20000
/*
 * The finished-jobs archive's partitions (PostgreSQL: one a UTC day) are
 * made for today and this many days ahead, when the plane starts and then
 * every PLANE_ARCHIVE_DAYS_EVERY_MS (an hour: a failed try, say a lock
 * timeout, is tried again well within the day made ahead). One day, not a
 * week: a read by id probes every leaf and plans over all of them
 * (docs/DESIGN.md, Table layout, round three), and an end whose day has no
 * partition still lands in the default one.
 */
#define PLANE_ARCHIVE_DAYS_AHEAD 1
#define PLANE_ARCHIVE_DAYS_EVERY_MS (3600LL * 1000)
#define PLANE_VACUUM_GAP_MS 3000
#define PLANE_VACUUM_SHARE 2
#define PLANE_DEFAULT_RETENTION_MS (7LL * 24 * 3600 * 1000)
#define PLANE_JUMP_MIN_US 1000000LL      /* a step back of the clock larger than this is a jump */
#define PLANE_CLOCK_READ_MAX_US 250000LL /* a slower read of the store's now is not trusted */
/*
 * A materializer pass that comes at most this long after the previous one
 * is a running scheduler being slow (a loaded machine, a slow store call),
 * not an outage: what fell due in between is late, not missed. A longer gap
 * (a process stopped for minutes, a store down) counts as an outage.
 */
#define PLANE_LATE_MAX_US 60000000LL

struct sched_plane {
    pthread_t thread;
    struct store *st;
    const struct jobd_clock *clock; /* borrowed; NULL = real time for cutoffs */
    struct wakeup *wake;            /* borrowed; may be NULL */
    int64_t reap_interval_ms;
    int64_t keep_succeeded_ms; /* < 0 = keep for ever */
    int64_t keep_dead_ms;      /* dead and cancelled; < 0 = keep for ever */
    struct backoff_policy bp;
    pthread_mutex_t mu;
    pthread_cond_t cv;                   /* CLOCK_MONOTONIC; signalled by stop */
    bool stop;                           /* guarded by mu */
    int last_error;                      /* the code last reported, so a streak logs once */
    void (*on_reaped)(void *arg, int n); /* see sched_plane_config; may be NULL */
    void *on_reaped_arg;
    bool have_offset;              /* clock_offset_us is known */
    int64_t clock_offset_us;       /* the store's now minus the monotonic clock, last pass */
    int64_t clock_now_us;          /* the store's now, last pass */
    int64_t look_mono_us;          /* start of the last good materializer pass; 0 none */
    int64_t archived_since_vacuum; /* rows that left the hot table since the last vacuum */
    int64_t churn_seen;            /* store_hot_churn's counter at the last look; -1: none */
    int64_t next_days_mono_us;     /* when to make the archive's partitions ahead again */
    int64_t next_vacuum_mono_us;   /* no vacuum of the hot table before this */
};

static int64_t
now_us(const struct sched_plane *p)
{
    return p->clock != NULL ? clock_now_us(p->clock) : clock_real_now_us();
}

/* Reports a failing step once per streak; a success ends the streak. */
static void
note(struct sched_plane *p, const char *step, int rc, const struct jobd_error *err)
{
    if (rc == JOBD_OK || rc == p->last_error)
        return;
    p->last_error = rc;
    log_at(LOGL_ERROR, "plane", "step failed", LF_STR("step", step),
           LF_STR("error", err->msg[0] ? err->msg : jobd_strerror(rc)));
}

/*
 * Has the store re-evaluate due times after its clock went back by back_us
 * (0 at start); false if that failed (it is retried on the next pass).
 */
static bool
clock_went_back(struct sched_plane *p, int64_t back_us, bool *progress)
{
    struct jobd_error err = {0};
    int jobs = 0, schedules = 0;
    int rc = store_clock_went_back(p->st, back_us, &jobs, &schedules, &err);
    note(p, "clock", rc, &err);
    if (rc != JOBD_OK)
        return false;
    if (back_us > 0 || schedules > 0)
        log_at(LOGL_WARN, "plane", "the clock went back; due times re-evaluated",
               LF_DBL("back_s", (double)back_us / 1e6), LF_INT("jobs_due_now", jobs),
               LF_INT("schedules_moved_back", schedules));
    if (jobs > 0 || schedules > 0)
        *progress = true;
    return true;
}

/*
 * Compares the store's now with the monotonic clock. The clock went back
 * when its now is more than PLANE_JUMP_MIN_US before the last pass's (a
 * clock that stands still, like a test's manual one, is no jump); by how
 * much is told by the drop of the offset between the two clocks. The first
 * pass re-evaluates schedules unconditionally: the clock may have gone back
 * while no plane was running.
 */
static void
step_clock(struct sched_plane *p, bool *progress)
{
    struct jobd_error err = {0};
    int64_t now, mono0 = clock_mono_now_us();
    int rc = store_now(p->st, &now, &err);
    note(p, "clock", rc, &err);
    if (rc != JOBD_OK || clock_mono_now_us() - mono0 > PLANE_CLOCK_READ_MAX_US)
        return;
    int64_t offset = now - mono0;
    bool jumped = p->have_offset && now < p->clock_now_us - PLANE_JUMP_MIN_US;
    if ((!p->have_offset || jumped) &&
        !clock_went_back(p, jumped ? p->clock_offset_us - offset : 0, progress))
        return;
    p->clock_offset_us = offset;
    p->clock_now_us = now;
    p->have_offset = true;
}

/*
 * How overdue a firing may be at this pass and still be late, not missed
 * (schedule_plan). The previous pass looked at every schedule, so whatever
 * fell due since then is late however long this pass took to come, unless
 * the gap is an outage (PLANE_LATE_MAX_US). The first pass after a start
 * gets 0, the plain rule: the time before it was an outage.
 */
static int64_t
materialize_grace(const struct sched_plane *p, int64_t mono)
{
    int64_t since = mono - p->look_mono_us;
    if (p->look_mono_us == 0 || since > PLANE_LATE_MAX_US)
        return 0;
    return since;
}

/*
 * The grace of a pass's later materializer call (a full batch, a capped
 * catch-up, or a schedule due again because the call before it took long:
 * a loaded machine, a process stopped mid-call): the pass's own cutoff, so
 * what fell due while the earlier calls ran is late, not missed. With the
 * pass's grace alone the later call measured it from its own, later now
 * (skip dropped and once merged firings of a running scheduler).
 */
static int64_t
later_call_grace(int64_t grace, int64_t pass_mono)
{
    return (grace > SCHEDULE_GRACE_US ? grace : SCHEDULE_GRACE_US) +
           (clock_mono_now_us() - pass_mono);
}

/* Materializes due firings; returns the soonest next_run_at (0 = none or unknown). */
static int64_t
step_materialize(struct sched_plane *p, bool *progress)
{
    int64_t soonest = 0, mono = clock_mono_now_us();
    int64_t grace = materialize_grace(p, mono);
    for (int i = 0; i < PLANE_MAX_BATCHES; i++) {
        struct jobd_error err = {0};
        int made = 0;
        int rc = store_schedule_materialize(p->st, PLANE_MATERIALIZE_LIMIT,
                                            i == 0 ? grace : later_call_grace(grace, mono), &made,
                                            &soonest, &err);
        note(p, "materializer", rc, &err);
        if (rc != JOBD_OK)
            return 0;
        if (made == 0)
            break;
        *progress = true;
        /* Done unless a schedule is still due (a full batch, or a capped catch-up). */
        if (soonest == 0 || soonest > now_us(p))
            break;
    }
    p->look_mono_us = mono;
    return soonest;
}

/* One info line per lease reaped (docs/LOGGING.md, Access log). */
static void
log_reaped(const struct reaped_job *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        log_at(LOGL_INFO, "plane", "lease expired; reaped", LF_INT("job", r[i].id),
               LF_INT("attempt", r[i].attempt), LF_STR("type", r[i].type),
               LF_STR("queue", r[i].queue), LF_STR("worker", r[i].worker_id),
               LF_STR("now", job_status_name(r[i].now)), LF_TRACE(r[i].traceparent));
}

static void
step_reap(struct sched_plane *p, bool *progress)
{
    struct reaped_job lines[PLANE_REAP_LINES];
    size_t logged = 0;
    int64_t total = 0;
    for (int i = 0; i < PLANE_MAX_BATCHES; i++) {
        struct jobd_error err = {0};
        int reaped = 0;
        size_t room = PLANE_REAP_LINES - logged;
        int rc = store_reap_jobs(p->st, PLANE_REAP_BATCH, &p->bp, lines, room, &reaped, &err);
        note(p, "reaper", rc, &err);
        if (rc != JOBD_OK)
            break;
        if (reaped > 0) {
            *progress = true;
            size_t k = (size_t)reaped < room ? (size_t)reaped : room;
            log_reaped(lines, k);
            logged += k;
            total += reaped;
            if (p->on_reaped != NULL)
                p->on_reaped(p->on_reaped_arg, reaped);
        }
        if (reaped < PLANE_REAP_BATCH)
            break;
    }
    if (total > (int64_t)logged)
        log_at(LOGL_INFO, "plane", "more leases reaped", LF_INT("count", total - (int64_t)logged));
}

/*
 * Moves succeeded jobs to the finished table, full batches until the budget
 * is spent. Returns true if the budget ran out with rows still to move: the
 * caller then runs the next pass at once instead of a second later. With a
 * fixed cadence the pass could move only so many rows a second (a budget's
 * worth of batches), and once batches slowed (a bigger jobs_done, a
 * checkpoint, a busy machine) succeeded rows piled up in the hot table
 * without bound, every index of jobd.jobs growing with them.
 */
/*
 * Where completions move the row at once (PostgreSQL since schema version
 * 38) the archive pass moves nothing; the rows that left the hot table are
 * counted by the store instead (store_hot_churn), for step_vacuum. Once an
 * hour the archive's partitions are made a day ahead (store_archive_days).
 */
static void
step_churn(struct sched_plane *p)
{
    struct jobd_error err = {0};
    int64_t rows = -1;
    int rc = store_hot_churn(p->st, &rows, &err);
    note(p, "hot table churn", rc, &err);
    if (rc == JOBD_OK && rows >= 0) {
        if (p->churn_seen >= 0 && rows > p->churn_seen)
            p->archived_since_vacuum += rows - p->churn_seen;
        p->churn_seen = rows;
    }
    int64_t mono = clock_mono_now_us();
    if (mono < p->next_days_mono_us)
        return;
    err = (struct jobd_error){0};
    int made = 0;
    rc = store_archive_days(p->st, now_us(p), PLANE_ARCHIVE_DAYS_AHEAD, &made, &err);
    note(p, "archive partitions", rc, &err);
    p->next_days_mono_us = rc == JOBD_OK ? mono + PLANE_ARCHIVE_DAYS_EVERY_MS * 1000 : mono;
    if (made > 0)
        log_at(LOGL_INFO, "plane", "made the archive's partitions ahead", LF_INT("days", made));
}

static bool
step_archive(struct sched_plane *p)
{
    step_churn(p);
    int64_t cutoff = now_us(p) - PLANE_ARCHIVE_AFTER_MS * 1000LL;
    int64_t until = clock_mono_now_us() + PLANE_ARCHIVE_BUDGET_US;
    do {
        struct jobd_error err = {0};
        int moved = 0;
        int rc = store_archive(p->st, cutoff, PLANE_ARCHIVE_BATCH, &moved, &err);
        note(p, "archive", rc, &err);
        p->archived_since_vacuum += moved;
        if (rc != JOBD_OK || moved < PLANE_ARCHIVE_BATCH)
            return false;
    } while (clock_mono_now_us() < until);
    return true;
}

/*
 * Vacuums the hot table once enough rows went through it (see
 * PLANE_VACUUM_AFTER_ROWS and store_vacuum_hot for why autovacuum alone
 * falls behind there).
 */
static void
step_vacuum(struct sched_plane *p)
{
    int64_t start = clock_mono_now_us();
    if (p->archived_since_vacuum < PLANE_VACUUM_AFTER_ROWS || start < p->next_vacuum_mono_us)
        return;
    struct jobd_error err = {0};
    bool vacuumed = false;
    int rc = store_vacuum_hot(p->st, &vacuumed, &err);
    note(p, "vacuum", rc, &err);
    int64_t end = clock_mono_now_us();
    int64_t gap = (end - start) * PLANE_VACUUM_SHARE;
    if (gap < PLANE_VACUUM_GAP_MS * 1000LL)
        gap = PLANE_VACUUM_GAP_MS * 1000LL;
    p->next_vacuum_mono_us = end + gap;
    if (rc == JOBD_OK)
        p->archived_since_vacuum = 0;
    if (vacuumed)
        log_at(LOGL_DEBUG, "plane", "vacuumed the hot table",
               LF_DBL("seconds", (double)(end - start) / 1e6));
}

/*
 * Small batches, each its own statement, so retention never holds long
 * locks; succeeded jobs and dead or cancelled ones each by their own time.
 */
static void
prune_outcome(struct sched_plane *p, bool succeeded, int64_t keep_ms)
{
    if (keep_ms < 0)
        return; /* off: kept for ever */
    int64_t cutoff = now_us(p) - keep_ms * 1000;
    for (int i = 0; i < PLANE_MAX_BATCHES; i++) {
        struct jobd_error err = {0};
        int deleted = 0;
        int rc = store_prune_status(p->st, succeeded, cutoff, PLANE_PRUNE_BATCH, &deleted, &err);
        note(p, "retention", rc, &err);
        if (rc != JOBD_OK || deleted < PLANE_PRUNE_BATCH)
            return;
    }
}

static void
step_prune(struct sched_plane *p)
{
    prune_outcome(p, true, p->keep_succeeded_ms);
    prune_outcome(p, false, p->keep_dead_ms);
    struct jobd_error err = {0}; /* statistics: a few rows a bucket, one statement */
    int deleted = 0;
    int rc = store_stats_prune(p->st, now_us(p) / 1000000 - STATS_KEEP_S, &deleted, &err);
    note(p, "statistics retention", rc, &err);
    /* unique windows that ended (store_keys_expire): a batch a tick, as the
     * next enqueue of a key also takes its ended window over */
    err = (struct jobd_error){0};
    rc = store_keys_expire(p->st, PLANE_PRUNE_BATCH, &deleted, &err);
    note(p, "unique window retention", rc, &err);
}

/* Sleeps until the monotonic deadline or stop; returns true if stopping. */
static bool
sleep_until(struct sched_plane *p, int64_t deadline_mono_us)
{
    struct timespec ts = {.tv_sec = deadline_mono_us / 1000000,
                          .tv_nsec = (long)(deadline_mono_us % 1000000) * 1000};
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        int rc = pthread_cond_timedwait(&p->cv, &p->mu, &ts);
        if (rc == ETIMEDOUT)
            break;
    }
    bool stop = p->stop;
    pthread_mutex_unlock(&p->mu);
    return stop;
}

/*
 * The loop. Each pass: materialize (every pass, at most a second apart, or
 * at the soonest next_run_at), reap every reap_interval, archive every
 * second (at once again while it is behind) and vacuum after it when enough
 * went through, prune every minute.
 * A late pass is harmless: the materializer catches up by the schedule's
 * policy and the reaper takes whatever expired meanwhile. When the store is
 * down every step fails fast and the pass simply repeats a second later.
 */
static void *
plane_main(void *arg)
{
    struct sched_plane *p = arg;
    int64_t next_reap = clock_mono_now_us();
    int64_t next_prune = next_reap, next_archive = next_reap;
    for (;;) {
        bool progress = false;
        step_clock(p, &progress);
        int64_t soonest = step_materialize(p, &progress);
        int64_t mono = clock_mono_now_us();
        if (mono >= next_reap) {
            step_reap(p, &progress);
            next_reap = mono + p->reap_interval_ms * 1000;
        }
        if (mono >= next_archive) {
            bool behind = step_archive(p);
            next_archive = behind ? clock_mono_now_us() : mono + PLANE_TICK_MS * 1000LL;
            step_vacuum(p);
        }
        if (mono >= next_prune) {
            step_prune(p);
            next_prune = mono + PLANE_PRUNE_EVERY_MS * 1000LL;
        }
        if (progress && p->wake != NULL)
            wakeup_signal(p->wake);

        mono = clock_mono_now_us();
        int64_t deadline = mono + PLANE_TICK_MS * 1000LL;
        if (soonest > 0) {
            /* Only trust the wall-clock distance with the real clock; a manual one may jump. */
            int64_t until = soonest - now_us(p);
            if (p->clock == NULL && until >= 0 && mono + until < deadline)
                deadline = mono + until;
        }
        if (next_reap < deadline)
            deadline = next_reap;
        if (next_archive < deadline)
            deadline = next_archive;
        if (sleep_until(p, deadline))
            return NULL;
    }
}

int
sched_plane_start(const struct sched_plane_config *cfg, struct sched_plane **out,
                  struct jobd_error *err)
{
    *out = NULL;
    struct sched_plane *p = calloc(1, sizeof *p);
    if (p == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    p->churn_seen = -1;
    p->clock = cfg->clock;
    p->wake = cfg->wake;
    p->on_reaped = cfg->on_reaped;
    p->on_reaped_arg = cfg->on_reaped_arg;
    p->reap_interval_ms = cfg->reap_interval_ms > 0 ? cfg->reap_interval_ms : JOB_DEFAULT_REAP_MS;
    int64_t keep = cfg->retention_ms != 0 ? cfg->retention_ms : PLANE_DEFAULT_RETENTION_MS;
    p->keep_succeeded_ms = cfg->retention_succeeded_ms != 0 ? cfg->retention_succeeded_ms : keep;
    p->keep_dead_ms = cfg->retention_dead_ms != 0 ? cfg->retention_dead_ms : keep;
    p->bp.base_ms = cfg->backoff_base_ms;
    p->bp.cap_ms = cfg->backoff_cap_ms;

    int rc = store_open(cfg->db_url, &p->st, err);
    if (rc != JOBD_OK) {
        free(p);
        return rc;
    }
    if (cfg->clock != NULL)
        store_set_clock(p->st, cfg->clock);

    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        pthread_condattr_destroy(&ca);
        goto fail_store;
    }
    if (pthread_cond_init(&p->cv, &ca) != 0) {
        pthread_condattr_destroy(&ca);
        goto fail_mutex;
    }
    pthread_condattr_destroy(&ca);
    if (pthread_create(&p->thread, NULL, plane_main, p) != 0)
        goto fail_cond;
    *out = p;
    return JOBD_OK;

fail_cond:
    pthread_cond_destroy(&p->cv);
fail_mutex:
    pthread_mutex_destroy(&p->mu);
fail_store:
    store_close(p->st);
    free(p);
    return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "cannot start the scheduling plane thread");
}

void
sched_plane_stop(struct sched_plane *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    store_close(p->st);
    free(p);
}
