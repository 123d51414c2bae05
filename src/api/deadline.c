/*
 * deadline.c — see deadline.h. The connections are a doubly linked list
 * under one mutex; the watchdog walks it a few times a second, so a
 * deadline is kept to within DL_TICK_MS.
 */
#include "api/deadline.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "core/err.h"
#include "util/clock.h"

#define DL_TICK_MS 100

struct dl_conn {
    int fd;
    int64_t deadline_mono_us; /* 0: not receiving a request */
    struct dl_conn *prev, *next;
};

struct deadlines {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC; signalled to stop */
    struct dl_conn *head;
    int64_t timeout_us;
    bool stopping;
    pthread_t thread;
};

static void
sweep(struct deadlines *d)
{
    int64_t now = clock_mono_now_us();
    pthread_mutex_lock(&d->mu);
    for (struct dl_conn *c = d->head; c != NULL; c = c->next) {
        if (c->deadline_mono_us != 0 && now >= c->deadline_mono_us) {
            shutdown(c->fd, SHUT_RDWR);
            c->deadline_mono_us = 0;
        }
    }
    pthread_mutex_unlock(&d->mu);
}

static void *
watchdog(void *arg)
{
    struct deadlines *d = arg;
    pthread_mutex_lock(&d->mu);
    while (!d->stopping) {
        struct timespec ts = clock_deadline_in(CLOCK_MONOTONIC, DL_TICK_MS * 1000);
        pthread_cond_timedwait(&d->cv, &d->mu, &ts);
        if (d->stopping)
            break;
        pthread_mutex_unlock(&d->mu);
        sweep(d);
        pthread_mutex_lock(&d->mu);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

int
deadlines_start(int64_t timeout_ms, struct deadlines **out, struct jobd_error *err)
{
    *out = NULL;
    struct deadlines *d = calloc(1, sizeof *d);
    if (d == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    d->timeout_us = timeout_ms * 1000;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&d->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&d->mu, NULL);
    if (pthread_create(&d->thread, NULL, watchdog, d) != 0) {
        pthread_cond_destroy(&d->cv);
        pthread_mutex_destroy(&d->mu);
        free(d);
        return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "cannot start the request watchdog");
    }
    *out = d;
    return JOBD_OK;
}

void
deadlines_stop(struct deadlines *d)
{
    if (d == NULL)
        return;
    pthread_mutex_lock(&d->mu);
    d->stopping = true;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->thread, NULL);
    while (d->head != NULL) {
        struct dl_conn *c = d->head;
        d->head = c->next;
        free(c);
    }
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

struct dl_conn *
deadlines_add(struct deadlines *d, int fd)
{
    struct dl_conn *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->fd = fd;
    c->deadline_mono_us = clock_mono_now_us() + d->timeout_us;
    pthread_mutex_lock(&d->mu);
    c->next = d->head;
    if (d->head != NULL)
        d->head->prev = c;
    d->head = c;
    pthread_mutex_unlock(&d->mu);
    return c;
}

void
deadlines_remove(struct deadlines *d, struct dl_conn *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&d->mu);
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        d->head = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&d->mu);
    free(c);
}

void
deadlines_received(struct deadlines *d, struct dl_conn *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&d->mu);
    c->deadline_mono_us = 0;
    pthread_mutex_unlock(&d->mu);
}

void
deadlines_rearm(struct deadlines *d, struct dl_conn *c)
{
    if (c == NULL)
        return;
    int64_t at = clock_mono_now_us() + d->timeout_us;
    pthread_mutex_lock(&d->mu);
    c->deadline_mono_us = at;
    pthread_mutex_unlock(&d->mu);
}
