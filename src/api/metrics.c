/*
 * metrics.c — see metrics.h. Histogram sums are kept in integer
 * microseconds so they can be atomic without a lock; buckets are cumulative
 * only when rendered (each observation bumps exactly one slot).
 *
 * The histograms carry a queue label, bounded (docs/OPERATIONS.md,
 * Monitoring): the first METRICS_QUEUES_MAX queues this process observes
 * get a series of their own, found by a lock-free scan of the names taken
 * so far (a name is written before the count that publishes it); later
 * ones share queue="*", not a valid queue name, so it never collides.
 */
#include "api/metrics.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/groups.h"

static const double buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                 2.5,   5,    10,    30,   60,  300,  900, 3600};
#define NBUCKETS (sizeof buckets / sizeof buckets[0])

struct histogram {
    _Atomic uint64_t slot[NBUCKETS + 1]; /* last = +Inf only */
    _Atomic uint64_t count;
    _Atomic int64_t sum_us;
};

/* A queue's histograms. */
struct qhist {
    char name[JOB_QUEUE_MAX + 1];
    struct histogram lateness;
    struct histogram duration;
};

struct api_metrics {
    _Atomic uint64_t enqueued;
    _Atomic uint64_t finished[OUTCOME_COUNT];
    _Atomic uint64_t reaped;
    _Atomic uint64_t fenced;
    _Atomic uint64_t commits;
    _Atomic int64_t waiting;
    _Atomic int64_t results_waiting;
    _Atomic uint64_t waits_refused;
    _Atomic int64_t event_clients;
    _Atomic uint64_t event_clients_cut;
    _Atomic int reload_failed;
    pthread_mutex_t qmu; /* serializes taking a new entry of q */
    _Atomic size_t nq;   /* entries of q in use (published after the name) */
    struct qhist q[METRICS_QUEUES_MAX];
    struct qhist other; /* queue="*": the queues past METRICS_QUEUES_MAX */
};

static const char *const outcome_names[OUTCOME_COUNT] = {
    "succeeded",
    "retried",
    "dead",
    "cancelled",
};

struct api_metrics *
api_metrics_new(void)
{
    struct api_metrics *m = calloc(1, sizeof *m);
    if (m != NULL) {
        pthread_mutex_init(&m->qmu, NULL);
        m->other.name[0] = '*';
    }
    return m;
}

void
api_metrics_free(struct api_metrics *m)
{
    if (m != NULL)
        pthread_mutex_destroy(&m->qmu);
    free(m);
}

static struct qhist *
find_queue(struct api_metrics *m, size_t n, const char *queue)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(m->q[i].name, queue) == 0)
            return &m->q[i];
    return NULL;
}

/* The histograms of queue: its own, or the shared "*" ones past the bound. */
static struct qhist *
queue_hist(struct api_metrics *m, const char *queue)
{
    if (queue == NULL || *queue == '\0' || strlen(queue) > JOB_QUEUE_MAX)
        return &m->other;
    struct qhist *h = find_queue(m, atomic_load(&m->nq), queue);
    if (h != NULL)
        return h;
    pthread_mutex_lock(&m->qmu);
    size_t n = atomic_load(&m->nq);
    h = find_queue(m, n, queue);
    if (h == NULL && n < METRICS_QUEUES_MAX) {
        h = &m->q[n];
        memcpy(h->name, queue, strlen(queue) + 1);
        atomic_store(&m->nq, n + 1); /* publishes the name */
    }
    pthread_mutex_unlock(&m->qmu);
    return h != NULL ? h : &m->other;
}

void
api_metrics_enqueued(struct api_metrics *m, uint64_t n)
{
    if (m)
        atomic_fetch_add(&m->enqueued, n);
}

void
api_metrics_finished(struct api_metrics *m, enum metrics_outcome o)
{
    if (m && (unsigned)o < OUTCOME_COUNT)
        atomic_fetch_add(&m->finished[o], 1);
}

void
api_metrics_ended(struct api_metrics *m, enum job_status status, uint64_t n)
{
    enum metrics_outcome o = status == JOB_SUCCEEDED   ? OUTCOME_SUCCEEDED
                             : status == JOB_PENDING   ? OUTCOME_RETRIED
                             : status == JOB_DEAD      ? OUTCOME_DEAD
                             : status == JOB_CANCELLED ? OUTCOME_CANCELLED
                                                       : OUTCOME_COUNT;
    if (m && o != OUTCOME_COUNT)
        atomic_fetch_add(&m->finished[o], n);
}

void
api_metrics_reaped(struct api_metrics *m, uint64_t n)
{
    if (m)
        atomic_fetch_add(&m->reaped, n);
}

void
api_metrics_fenced(struct api_metrics *m, uint64_t n)
{
    if (m)
        atomic_fetch_add(&m->fenced, n);
}

void
api_metrics_commit(struct api_metrics *m)
{
    if (m)
        atomic_fetch_add(&m->commits, 1);
}

void
api_metrics_waiting(struct api_metrics *m, int delta)
{
    if (m)
        atomic_fetch_add(&m->waiting, delta);
}

void
api_metrics_results_waiting(struct api_metrics *m, int64_t delta)
{
    if (m)
        atomic_fetch_add(&m->results_waiting, delta);
}

void
api_metrics_event_clients(struct api_metrics *m, int64_t delta)
{
    if (m)
        atomic_fetch_add(&m->event_clients, delta);
}

void
api_metrics_event_client_cut(struct api_metrics *m)
{
    if (m)
        atomic_fetch_add(&m->event_clients_cut, 1);
}

void
api_metrics_wait_refused(struct api_metrics *m)
{
    if (m)
        atomic_fetch_add(&m->waits_refused, 1);
}

void
api_metrics_reload_failed(struct api_metrics *m, bool failed)
{
    if (m)
        atomic_store(&m->reload_failed, failed ? 1 : 0);
}

static void
observe(struct histogram *h, double s)
{
    if (s < 0)
        s = 0;
    size_t i = 0;
    while (i < NBUCKETS && s > buckets[i])
        i++;
    atomic_fetch_add(&h->slot[i], 1);
    atomic_fetch_add(&h->count, 1);
    atomic_fetch_add(&h->sum_us, (int64_t)(s * 1e6));
}

void
api_metrics_lateness(struct api_metrics *m, const char *queue, double seconds)
{
    if (m)
        observe(&queue_hist(m, queue)->lateness, seconds);
}

void
api_metrics_duration(struct api_metrics *m, const char *queue, double seconds)
{
    if (m)
        observe(&queue_hist(m, queue)->duration, seconds);
}

void
api_metrics_claimed(struct api_metrics *m, const struct job *j)
{
    if (m && j->started_at_us && j->run_at_us)
        api_metrics_lateness(m, j->queue, (double)(j->started_at_us - j->run_at_us) / 1e6);
}

void
api_metrics_reported(struct api_metrics *m, const struct job *j)
{
    if (m == NULL)
        return;
    if (j->status == JOB_RUNNING)
        return;
    api_metrics_ended(m, j->status, 1);
    int64_t end = j->finished_at_us;
    if (j->status == JOB_PENDING)
        end = 0; /* a retried job has no finish time; its duration is unknown here */
    if (end && j->started_at_us)
        api_metrics_duration(m, j->queue, (double)(end - j->started_at_us) / 1e6);
}

/* A growing text buffer; on failure it drops everything and stays NULL. */
struct sbuf {
    char *s;
    size_t len, cap;
    int bad;
};

static void __attribute__((format(printf, 2, 3))) sb_printf(struct sbuf *b, const char *fmt, ...)
{
    if (b->bad)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->bad = 1;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (s == NULL) {
            b->bad = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

/* One queue's series of histogram name (h NULL: zeros). */
static void
render_series(struct sbuf *b, const char *name, const char *queue, const struct histogram *h)
{
    uint64_t cum = 0;
    for (size_t i = 0; i < NBUCKETS; i++) {
        cum += h ? atomic_load(&h->slot[i]) : 0;
        sb_printf(b, "%s_bucket{queue=\"%s\",le=\"%g\"} %llu\n", name, queue, buckets[i],
                  (unsigned long long)cum);
    }
    uint64_t count = h ? atomic_load(&h->count) : 0;
    sb_printf(b, "%s_bucket{queue=\"%s\",le=\"+Inf\"} %llu\n", name, queue,
              (unsigned long long)count);
    sb_printf(b, "%s_sum{queue=\"%s\"} %.6f\n", name, queue,
              h ? (double)atomic_load(&h->sum_us) / 1e6 : 0.0);
    sb_printf(b, "%s_count{queue=\"%s\"} %llu\n", name, queue, (unsigned long long)count);
}

/* Histogram name by queue; the shared "*" series always (zeros until used). */
static void
render_histogram(struct sbuf *b, const char *name, const char *help, const struct api_metrics *m,
                 bool lateness)
{
    sb_printf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    size_t n = m ? atomic_load(&m->nq) : 0;
    for (size_t i = 0; i < n; i++)
        render_series(b, name, m->q[i].name, lateness ? &m->q[i].lateness : &m->q[i].duration);
    render_series(b, name, "*", m ? (lateness ? &m->other.lateness : &m->other.duration) : NULL);
}

static unsigned long long
load(const _Atomic uint64_t *p)
{
    return (unsigned long long)atomic_load(p);
}

/* The requests parked now: long-poll claims, and waits for results. */
static void
render_waiting(struct sbuf *b, const struct api_metrics *m)
{
    sb_printf(b,
              "# HELP jobd_claims_waiting Claims parked in a long poll.\n"
              "# TYPE jobd_claims_waiting gauge\n"
              "jobd_claims_waiting %lld\n",
              m ? (long long)atomic_load(&m->waiting) : 0LL);
    sb_printf(b,
              "# HELP jobd_results_waiting Requests waiting for a job to end (?wait=).\n"
              "# TYPE jobd_results_waiting gauge\n"
              "jobd_results_waiting %lld\n"
              "# HELP jobd_waits_refused_total Waits refused because --max-waits were parked.\n"
              "# TYPE jobd_waits_refused_total counter\n"
              "jobd_waits_refused_total %llu\n",
              m ? (long long)atomic_load(&m->results_waiting) : 0LL,
              m ? load(&m->waits_refused) : 0ULL);
    sb_printf(b,
              "# HELP jobd_event_clients Clients of GET /v1/events connected now.\n"
              "# TYPE jobd_event_clients gauge\n"
              "jobd_event_clients %lld\n"
              "# HELP jobd_event_clients_cut_total Clients of GET /v1/events cut for not "
              "reading fast enough.\n"
              "# TYPE jobd_event_clients_cut_total counter\n"
              "jobd_event_clients_cut_total %llu\n",
              m ? (long long)atomic_load(&m->event_clients) : 0LL,
              m ? load(&m->event_clients_cut) : 0ULL);
}

char *
api_metrics_render(const struct api_metrics *m, const struct queue_stat *qs, size_t n,
                   const struct metrics_workers *w)
{
    struct sbuf b = {0};
    sb_printf(&b,
              "# HELP jobd_jobs_enqueued_total Jobs enqueued through this server.\n"
              "# TYPE jobd_jobs_enqueued_total counter\n"
              "jobd_jobs_enqueued_total %llu\n",
              m ? load(&m->enqueued) : 0ULL);
    sb_printf(&b, "# HELP jobd_jobs_finished_total Attempts reported to this server, by "
                  "outcome.\n# TYPE jobd_jobs_finished_total counter\n");
    for (int o = 0; o < OUTCOME_COUNT; o++)
        sb_printf(&b, "jobd_jobs_finished_total{outcome=\"%s\"} %llu\n", outcome_names[o],
                  m ? load(&m->finished[o]) : 0ULL);
    sb_printf(&b,
              "# HELP jobd_jobs_reaped_total Expired leases reaped by this process.\n"
              "# TYPE jobd_jobs_reaped_total counter\n"
              "jobd_jobs_reaped_total %llu\n",
              m ? load(&m->reaped) : 0ULL);
    sb_printf(&b,
              "# HELP jobd_reports_fenced_total Stale reports refused (fencing).\n"
              "# TYPE jobd_reports_fenced_total counter\n"
              "jobd_reports_fenced_total %llu\n",
              m ? load(&m->fenced) : 0ULL);
    sb_printf(&b,
              "# HELP jobd_enqueue_commits_total Transactions the group committer wrote.\n"
              "# TYPE jobd_enqueue_commits_total counter\n"
              "jobd_enqueue_commits_total %llu\n",
              m ? load(&m->commits) : 0ULL);
    render_waiting(&b, m);
    sb_printf(&b,
              "# HELP jobd_config_reload_failed 1 if the last reload (SIGHUP) failed, "
              "0 if it applied or none was asked.\n"
              "# TYPE jobd_config_reload_failed gauge\n"
              "jobd_config_reload_failed %d\n",
              m ? atomic_load(&m->reload_failed) : 0);
    sb_printf(&b, "# HELP jobd_queue_jobs Jobs in the store by queue and status.\n"
                  "# TYPE jobd_queue_jobs gauge\n");
    for (size_t i = 0; i < n; i++)
        for (int s = 0; s < JOB_STATUS_COUNT; s++)
            /* Queue names are [a-z0-9_-]: nothing to escape in a label value. */
            sb_printf(&b, "jobd_queue_jobs{queue=\"%s\",status=\"%s\"} %lld\n", qs[i].name,
                      job_status_name((enum job_status)s), (long long)qs[i].count[s]);
    sb_printf(&b, "# HELP jobd_queue_oldest_due_age_seconds How long the oldest due pending job "
                  "of a queue is past its run_at (0: none due).\n"
                  "# TYPE jobd_queue_oldest_due_age_seconds gauge\n");
    for (size_t i = 0; i < n; i++)
        sb_printf(&b, "jobd_queue_oldest_due_age_seconds{queue=\"%s\"} %.3f\n", qs[i].name,
                  qs[i].oldest_pending_age_s > 0 ? qs[i].oldest_pending_age_s : 0.0);
    if (w != NULL) {
        sb_printf(&b, "# HELP jobd_workers Workers in the store by state (GET /v1/workers).\n"
                      "# TYPE jobd_workers gauge\n");
        sb_printf(&b, "jobd_workers{state=\"active\"} %lld\n", (long long)w->active);
        sb_printf(&b, "jobd_workers{state=\"draining\"} %lld\n", (long long)w->draining);
        sb_printf(&b, "jobd_workers{state=\"gone\"} %lld\n", (long long)w->gone);
    }
    render_histogram(&b, "jobd_job_lateness_seconds",
                     "Seconds from a job's run_at to its start (claims through this server), "
                     "by queue.",
                     m, true);
    render_histogram(&b, "jobd_job_duration_seconds",
                     "Seconds from a job's start to its finish (reports through this server), "
                     "by queue.",
                     m, false);
    if (b.bad) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

char *
api_metrics_groups(char *text, const struct queue_group_count *v, size_t n)
{
    if (text == NULL)
        return NULL;
    struct sbuf b = {.s = text, .len = strlen(text), .cap = strlen(text) + 1};
    sb_printf(&b, "# HELP jobd_queue_groups Groups with due jobs, by queue (queues claimed "
                  "by group).\n# TYPE jobd_queue_groups gauge\n");
    for (size_t i = 0; i < n; i++)
        sb_printf(&b, "jobd_queue_groups{queue=\"%s\"} %lld\n", v[i].queue, (long long)v[i].groups);
    if (b.bad) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
