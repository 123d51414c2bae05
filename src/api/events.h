/*
 * events.h — the streams of GET /v1/events (docs/API.md, GET /v1/events;
 * docs/DESIGN.md, Events).
 *
 * One thread per server, with a store connection of its own (outside the
 * request pool), reads the store's event log (store/events.h) while any
 * client is connected — after each of the store's signals (the SQLite WAL
 * watch, PostgreSQL NOTIFY) and at least every EVENTS_POLL_MS — and appends
 * each event as Server-Sent Events text to the buffer of every client whose
 * filters it matches. libmicrohttpd pulls from that buffer (the response's
 * content callback); a connection with nothing to send is suspended and the
 * thread resumes it when it appends. A client whose buffer would pass
 * EVENTS_CLIENT_BUF_MAX (it does not read as fast as events come) is cut:
 * its buffer freed at once, its connection closed, counted in
 * jobd_event_clients_cut_total. A comment line goes to each client that had
 * nothing for EVENTS_KEEPALIVE_MS, so proxies and clients see it alive.
 * Thread-safe.
 */
#ifndef JOBD_API_EVENTS_H
#define JOBD_API_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/job.h"
#include "jobd.h"

struct events;
struct ev_client;
struct api_metrics;

#define EVENTS_POLL_MS 100
#define EVENTS_KEEPALIVE_MS 15000
#define EVENTS_CLIENT_BUF_MAX (256 * 1024)
/* Clients at once (each also holds a connection of --max-connections). */
#define EVENTS_CLIENTS_MAX 1000

/*
 * Starts the thread. url: the store it opens its own connection to
 * (copied). metrics may be NULL (borrowed).
 */
int events_start(const char *url, struct api_metrics *metrics, struct events **out,
                 struct jobd_error *err);
/* Ends every stream (their connections finish) and stops the thread. */
void events_stop(struct events *ev);
/* Frees (after events_stop; NULL-safe). No stream may remain. */
void events_free(struct events *ev);

/* What a client asked to see (all optional). */
struct ev_filter {
    char queue[JOB_QUEUE_MAX + 1]; /* "" = any */
    char type[JOB_NAME_MAX + 1];   /* "" = any */
    int64_t job;                   /* 0 = any */
    int64_t workflow;              /* 0 = any: the steps of this workflow only */
};

/*
 * A new client that has seen every event up to after (the head at its
 * start, or its Last-Event-ID). NULL when EVENTS_CLIENTS_MAX are connected
 * or out of memory. The client belongs to the caller until
 * events_client_free; it is fed from the moment it is made.
 */
struct ev_client *events_client_new(struct events *ev, const struct ev_filter *f, int64_t after);

/*
 * The HTTP layer's side. conn: the connection to suspend and resume (by
 * the two functions given) while the client has nothing to read; alive
 * (may be NULL) tells, of a suspended connection, whether its client is
 * still there (a stream that left while idle ends within a second). Set
 * once, before the first read.
 */
void events_client_attach(struct ev_client *c, void *conn, void (*suspend)(void *conn),
                          void (*resume)(void *conn), bool (*alive)(void *conn));
/*
 * Copies up to max bytes of the stream into buf: how many (> 0), or 0
 * after suspending the connection (nothing to send yet), or -1 at the end
 * of the stream (cut, or the server stopping).
 */
ssize_t events_client_read(struct ev_client *c, char *buf, size_t max);
/* Unregisters and frees the client (NULL-safe). */
void events_client_free(struct ev_client *c);

#endif
