/*
 * events.c — see events.h.
 *
 * The thread, while clients are connected: refreshes the store's "a
 * server listens" mark every EVENTS_LISTEN_MS (store_events_listen, which
 * also prunes), reads the head of the log, and serves the events up to the
 * horizon: the highest id below which no event can still appear. SQLite's
 * head is final. A PostgreSQL head is final once a later head's xmin
 * reaches its xmax (every transaction running when it was read has ended:
 * store/events.h), so heads wait in a short queue, and while one waits the
 * thread looks again after EVENTS_CONFIRM_MS instead of EVENTS_POLL_MS.
 * Each pass reads from the lowest cursor of the clients (a client resuming
 * with Last-Event-ID starts behind the others) up to the horizon, at most
 * EVENTS_READ_MAX rows at a time.
 */
#include "api/events.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/metrics.h"
#include "core/err.h"
#include "core/timefmt.h"
#include "store/events.h"
#include "store/store.h"
#include "util/clock.h"
#include "util/log.h"

#define EVENTS_CONFIRM_MS 10
#define EVENTS_LISTEN_MS 30000
#define EVENTS_READ_MAX 500
#define EVENTS_REOPEN_MS 1000
#define EVENTS_IDLE_CLOSE_MS 10000
#define EVENTS_HEADS_MAX 64
#define EVENTS_ALIVE_MS 1000 /* how often idle streams' clients are looked at */
#define EVENTS_GAP_MS 20     /* passes at most this often, however often the store signals */
/* A client holding over half its bound is fed no more until it reads; one
 * that read nothing for this long meanwhile is cut. */
#define EVENTS_STALL_MS 3000

struct ev_client {
    struct events *ev;
    struct ev_filter f;
    /* under ev->mu */
    int64_t cursor; /* every event up to this one was considered */
    char *buf;
    size_t off, len, cap; /* bytes [off, len) not yet read */
    int64_t last_mono_us; /* when something was last appended */
    int64_t read_mono_us; /* when its connection last took bytes */
    bool cut, ended, suspended, registered;
    void *conn;
    void (*suspend)(void *conn);
    void (*resume)(void *conn);
    bool (*alive)(void *conn);
    struct ev_client *prev, *next;
};

struct events {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    struct ev_client *head;
    size_t n;
    bool stopping;
    pthread_t thread;
    char *url;
    struct api_metrics *metrics;
    /* the thread's own */
    struct store *st;
    int64_t st_failed_us, idle_since_us, listened_us, alive_us;
    int64_t horizon;
    bool have_horizon;
    struct events_head heads[EVENTS_HEADS_MAX];
    size_t n_heads;
};

/* Over half its bound: fed no more until it reads (under ev->mu). */
static bool
full(const struct ev_client *c)
{
    return c->len - c->off > EVENTS_CLIENT_BUF_MAX / 2;
}

/* Cuts c: its buffer goes at once, its stream ends (under ev->mu). */
static void
cut(struct ev_client *c)
{
    c->cut = true;
    free(c->buf);
    c->buf = NULL;
    c->off = c->len = c->cap = 0;
    api_metrics_event_client_cut(c->ev->metrics);
    log_at(LOGL_INFO, "api", "an events client was cut: it reads too slowly",
           LF_INT("buffered_max", EVENTS_CLIENT_BUF_MAX));
}

/* Appends n bytes to c (under ev->mu); cuts c when over its bound. */
static void
append(struct ev_client *c, const char *s, size_t n)
{
    if (c->cut || c->ended)
        return;
    if (c->len - c->off + n > EVENTS_CLIENT_BUF_MAX) {
        cut(c);
        return;
    }
    if (c->off > 0 && c->off == c->len)
        c->off = c->len = 0;
    if (c->len + n > c->cap) {
        if (c->off > 0) {
            memmove(c->buf, c->buf + c->off, c->len - c->off);
            c->len -= c->off;
            c->off = 0;
        }
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < c->len + n)
            cap *= 2;
        char *b = realloc(c->buf, cap);
        if (b == NULL) {
            c->cut = true; /* out of memory: as if too slow */
            api_metrics_event_client_cut(c->ev->metrics);
            return;
        }
        c->buf = b;
        c->cap = cap;
    }
    memcpy(c->buf + c->len, s, n);
    c->len += n;
    c->last_mono_us = clock_mono_now_us();
}

/* Wakes c's connection if it sleeps and has something to do (under ev->mu). */
static void
wake(struct ev_client *c)
{
    if (c->suspended && (c->len > c->off || c->cut || c->ended)) {
        c->suspended = false;
        c->resume(c->conn);
    }
}

/* Appends s as a JSON string (names are checked on the way in; escaped anyway). */
static size_t
json_str(char *out, size_t cap, const char *s)
{
    size_t k = 0;
    if (k < cap)
        out[k++] = '"';
    for (; *s && k + 7 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            out[k++] = '\\';
            out[k++] = (char)ch;
        } else if (ch < 0x20) {
            k += (size_t)snprintf(out + k, cap - k, "\\u%04x", ch);
        } else {
            out[k++] = (char)ch;
        }
    }
    if (k < cap)
        out[k++] = '"';
    return k;
}

/* The SSE frame of e into out (NUL-terminated); its length. */
static size_t
frame(const struct store_event *e, char *out, size_t cap)
{
    char q[2 * JOB_QUEUE_MAX + 16], t[2 * JOB_NAME_MAX + 16], at[TIME_RFC3339_LEN];
    size_t qn = json_str(q, sizeof q - 1, e->queue);
    q[qn] = '\0';
    size_t tn = json_str(t, sizeof t - 1, e->type);
    t[tn] = '\0';
    char from[24], wf[24];
    if (e->workflow > 0)
        snprintf(wf, sizeof wf, "%" PRId64, e->workflow);
    else
        snprintf(wf, sizeof wf, "null");
    if (e->from[0] != '\0')
        snprintf(from, sizeof from, "\"%s\"", e->from);
    else
        snprintf(from, sizeof from, "null");
    int n = snprintf(out, cap,
                     "id: %" PRId64 "\ndata: {\"event\":%" PRId64 ",\"job\":%" PRId64
                     ",\"queue\":%s,\"type\":%s,\"from\":%s,\"to\":\"%s\",\"attempt\":%" PRId32
                     ",\"at\":\"%s\",\"workflow\":%s}\n\n",
                     e->id, e->id, e->job, q, t, from, e->to, e->attempt,
                     time_format_rfc3339(e->at_us, at, sizeof at), wf);
    return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}

static bool
matches(const struct ev_filter *f, const struct store_event *e)
{
    return (f->queue[0] == '\0' || strcmp(f->queue, e->queue) == 0) &&
           (f->type[0] == '\0' || strcmp(f->type, e->type) == 0) &&
           (f->job == 0 || f->job == e->job) && (f->workflow == 0 || f->workflow == e->workflow);
}

/* The thread's connection (NULL while it cannot be had). */
static struct store *
conn(struct events *ev)
{
    if (ev->st != NULL)
        return ev->st;
    if (ev->st_failed_us != 0 && clock_mono_now_us() - ev->st_failed_us < EVENTS_REOPEN_MS * 1000)
        return NULL;
    struct jobd_error err = {0};
    if (store_open(ev->url, &ev->st, &err) != JOBD_OK) {
        ev->st = NULL;
        ev->st_failed_us = clock_mono_now_us();
        log_at(LOGL_WARN, "api", "the events stream cannot reach the store",
               LF_STR("error", err.msg));
        return NULL;
    }
    (void)store_wait_ready(ev->st); /* sets up the WAL watch on SQLite */
    return ev->st;
}

static void
drop_conn(struct events *ev)
{
    store_close(ev->st);
    ev->st = NULL;
    ev->st_failed_us = clock_mono_now_us();
    ev->have_horizon = false;
    ev->n_heads = 0;
}

/* Takes a new head into the horizon (see the top). */
static void
advance(struct events *ev, const struct events_head *h)
{
    if (h->final) {
        ev->horizon = h->max_id > ev->horizon ? h->max_id : ev->horizon;
        ev->n_heads = 0;
        return;
    }
    /* This head confirms the waiting ones whose xmax it reached, itself too. */
    size_t k = 0;
    for (size_t i = 0; i < ev->n_heads; i++) {
        if (h->xmin >= ev->heads[i].xmax) {
            if (ev->heads[i].max_id > ev->horizon)
                ev->horizon = ev->heads[i].max_id;
        } else {
            ev->heads[k++] = ev->heads[i];
        }
    }
    ev->n_heads = k;
    if (h->xmin >= h->xmax) {
        if (h->max_id > ev->horizon)
            ev->horizon = h->max_id;
    } else if (h->max_id > ev->horizon) {
        if (ev->n_heads == EVENTS_HEADS_MAX)
            ev->n_heads--; /* the newest waiting one gives way: a later id covers it */
        ev->heads[ev->n_heads++] = *h;
    }
}

/* Hands out the events up to the horizon; false on a store error. */
static bool
serve(struct events *ev)
{
    struct store *st = conn(ev);
    if (st == NULL)
        return false;
    struct jobd_error err = {0};
    int64_t now = clock_mono_now_us();
    struct events_head h;
    int rc;
    if (ev->listened_us == 0 || now - ev->listened_us >= EVENTS_LISTEN_MS * 1000LL) {
        rc = store_events_listen(st, &h, &err);
        if (rc == JOBD_OK)
            ev->listened_us = now;
    } else {
        rc = store_events_head(st, &h, &err);
    }
    if (rc != JOBD_OK) {
        log_at(LOGL_WARN, "api", "the events stream cannot read the store",
               LF_STR("error", err.msg));
        drop_conn(ev);
        return false;
    }
    if (!ev->have_horizon) {
        /* Clients made before hold the head of their own listen. */
        ev->horizon = 0;
        ev->have_horizon = true;
    }
    advance(ev, &h);
    for (;;) {
        pthread_mutex_lock(&ev->mu);
        int64_t lo = ev->horizon;
        for (struct ev_client *c = ev->head; c != NULL; c = c->next)
            if (!c->cut && !c->ended && !full(c) && c->cursor < lo)
                lo = c->cursor;
        pthread_mutex_unlock(&ev->mu);
        if (lo >= ev->horizon)
            return true;
        struct store_event *v = NULL;
        size_t n = 0;
        rc = store_events_read(st, lo, ev->horizon, EVENTS_READ_MAX, &v, &n, &err);
        if (rc != JOBD_OK) {
            log_at(LOGL_WARN, "api", "the events stream cannot read the store",
                   LF_STR("error", err.msg));
            drop_conn(ev);
            return false;
        }
        int64_t upto = n < EVENTS_READ_MAX ? ev->horizon : v[n - 1].id;
        char buf[1024];
        pthread_mutex_lock(&ev->mu);
        for (struct ev_client *c = ev->head; c != NULL; c = c->next) {
            if (c->cut || c->ended || c->cursor < lo || full(c))
                continue; /* made since the read started, or full: a later turn */
            for (size_t i = 0; i < n; i++) {
                if (v[i].id <= c->cursor || !matches(&c->f, &v[i]))
                    continue;
                append(c, buf, frame(&v[i], buf, sizeof buf));
            }
            if (upto > c->cursor)
                c->cursor = upto;
            wake(c);
        }
        pthread_mutex_unlock(&ev->mu);
        free(v);
    }
}

/*
 * A comment to each client that had nothing for EVENTS_KEEPALIVE_MS; every
 * EVENTS_ALIVE_MS, the end of the streams of suspended connections whose
 * client has gone (libmicrohttpd does not watch a suspended connection).
 */
static void
keepalive(struct events *ev)
{
    int64_t now = clock_mono_now_us();
    bool check = now - ev->alive_us >= EVENTS_ALIVE_MS * 1000LL;
    if (check)
        ev->alive_us = now;
    pthread_mutex_lock(&ev->mu);
    for (struct ev_client *c = ev->head; c != NULL; c = c->next) {
        /* Suspended: its connection stays open until resumed, so its fd is ours to peek. */
        if (check && c->suspended && c->alive != NULL && !c->alive(c->conn))
            c->ended = true;
        if (!c->cut && full(c) && now - c->read_mono_us >= EVENTS_STALL_MS * 1000LL)
            cut(c);
        if (now - c->last_mono_us >= EVENTS_KEEPALIVE_MS * 1000LL) {
            static const char ka[] = ": keepalive\n\n";
            append(c, ka, sizeof ka - 1);
            c->last_mono_us = now;
        }
        wake(c);
    }
    pthread_mutex_unlock(&ev->mu);
}

/* Sleeps up to ms, or until the store signals a commit. */
static void
nap(struct events *ev, int ms)
{
    struct store *st = ev->st;
    if (st != NULL && store_wait_ready(st)) {
        struct jobd_error err = {0};
        if (store_wait(st, ms, &err) < 0)
            drop_conn(ev);
        return;
    }
    pthread_mutex_lock(&ev->mu);
    struct timespec ts = clock_deadline_in(CLOCK_MONOTONIC, (int64_t)ms * 1000);
    if (!ev->stopping)
        (void)pthread_cond_timedwait(&ev->cv, &ev->mu, &ts);
    pthread_mutex_unlock(&ev->mu);
}

static void
idle(struct events *ev)
{
    int64_t now = clock_mono_now_us();
    if (ev->idle_since_us == 0)
        ev->idle_since_us = now;
    if (ev->st != NULL && now - ev->idle_since_us >= EVENTS_IDLE_CLOSE_MS * 1000LL) {
        drop_conn(ev);
        ev->st_failed_us = 0;
    }
    ev->listened_us = 0;
    pthread_mutex_lock(&ev->mu);
    struct timespec ts = clock_deadline_in(CLOCK_MONOTONIC, 1000 * 1000);
    if (!ev->stopping && ev->n == 0)
        (void)pthread_cond_timedwait(&ev->cv, &ev->mu, &ts);
    pthread_mutex_unlock(&ev->mu);
}

static void *
events_main(void *arg)
{
    struct events *ev = arg;
    for (;;) {
        pthread_mutex_lock(&ev->mu);
        bool stopping = ev->stopping, any = ev->n > 0;
        pthread_mutex_unlock(&ev->mu);
        if (stopping)
            break;
        if (!any) {
            idle(ev);
            continue;
        }
        ev->idle_since_us = 0;
        int64_t t0 = clock_mono_now_us();
        bool ok = serve(ev);
        keepalive(ev);
        nap(ev, !ok ? EVENTS_REOPEN_MS : ev->n_heads > 0 ? EVENTS_CONFIRM_MS : EVENTS_POLL_MS);
        /* A busy store signals at every commit: a pass reads all since anyway. */
        int64_t left = EVENTS_GAP_MS * 1000LL - (clock_mono_now_us() - t0);
        if (left > 0) {
            pthread_mutex_lock(&ev->mu);
            struct timespec ts = clock_deadline_in(CLOCK_MONOTONIC, left);
            if (!ev->stopping)
                (void)pthread_cond_timedwait(&ev->cv, &ev->mu, &ts);
            pthread_mutex_unlock(&ev->mu);
        }
    }
    return NULL;
}

int
events_start(const char *url, struct api_metrics *metrics, struct events **out,
             struct jobd_error *err)
{
    *out = NULL;
    struct events *ev = calloc(1, sizeof *ev);
    if (ev == NULL || (ev->url = strdup(url)) == NULL) {
        free(ev);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    ev->metrics = metrics;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&ev->cv, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&ev->mu, NULL);
    if (pthread_create(&ev->thread, NULL, events_main, ev) != 0) {
        pthread_cond_destroy(&ev->cv);
        pthread_mutex_destroy(&ev->mu);
        free(ev->url);
        free(ev);
        return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "cannot start the events thread");
    }
    *out = ev;
    return JOBD_OK;
}

void
events_stop(struct events *ev)
{
    if (ev == NULL)
        return;
    pthread_mutex_lock(&ev->mu);
    bool was = ev->stopping;
    ev->stopping = true;
    for (struct ev_client *c = ev->head; c != NULL; c = c->next) {
        c->ended = true;
        wake(c);
    }
    pthread_cond_signal(&ev->cv);
    pthread_mutex_unlock(&ev->mu);
    if (!was)
        pthread_join(ev->thread, NULL);
}

void
events_free(struct events *ev)
{
    if (ev == NULL)
        return;
    events_stop(ev);
    store_close(ev->st);
    pthread_cond_destroy(&ev->cv);
    pthread_mutex_destroy(&ev->mu);
    free(ev->url);
    free(ev);
}

struct ev_client *
events_client_new(struct events *ev, const struct ev_filter *f, int64_t after)
{
    struct ev_client *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->ev = ev;
    c->f = *f;
    c->cursor = after;
    c->last_mono_us = c->read_mono_us = clock_mono_now_us();
    pthread_mutex_lock(&ev->mu);
    if (ev->stopping || ev->n >= EVENTS_CLIENTS_MAX) {
        pthread_mutex_unlock(&ev->mu);
        free(c);
        return NULL;
    }
    /* The stream's first bytes: the client knows it is connected. */
    static const char hello[] = ": connected\nretry: 1000\n\n";
    append(c, hello, sizeof hello - 1);
    c->next = ev->head;
    if (ev->head)
        ev->head->prev = c;
    ev->head = c;
    ev->n++;
    c->registered = true;
    pthread_cond_signal(&ev->cv);
    pthread_mutex_unlock(&ev->mu);
    api_metrics_event_clients(ev->metrics, 1);
    return c;
}

void
events_client_attach(struct ev_client *c, void *conn, void (*suspend)(void *conn),
                     void (*resume)(void *conn), bool (*alive)(void *conn))
{
    pthread_mutex_lock(&c->ev->mu);
    c->conn = conn;
    c->suspend = suspend;
    c->resume = resume;
    c->alive = alive;
    pthread_mutex_unlock(&c->ev->mu);
}

ssize_t
events_client_read(struct ev_client *c, char *buf, size_t max)
{
    pthread_mutex_lock(&c->ev->mu);
    ssize_t r;
    if (c->len > c->off) {
        size_t n = c->len - c->off < max ? c->len - c->off : max;
        memcpy(buf, c->buf + c->off, n);
        c->off += n;
        c->read_mono_us = clock_mono_now_us();
        r = (ssize_t)n;
    } else if (c->cut || c->ended) {
        r = -1;
    } else {
        /* Under the lock: the thread resumes only after this suspend. */
        c->suspend(c->conn);
        c->suspended = true;
        r = 0;
    }
    pthread_mutex_unlock(&c->ev->mu);
    return r;
}

void
events_client_free(struct ev_client *c)
{
    if (c == NULL)
        return;
    struct events *ev = c->ev;
    pthread_mutex_lock(&ev->mu);
    if (c->registered) {
        if (c->prev)
            c->prev->next = c->next;
        else
            ev->head = c->next;
        if (c->next)
            c->next->prev = c->prev;
        ev->n--;
    }
    pthread_mutex_unlock(&ev->mu);
    if (c->registered)
        api_metrics_event_clients(ev->metrics, -1);
    free(c->buf);
    free(c);
}
