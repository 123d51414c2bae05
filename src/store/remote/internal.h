/*
 * remote/internal.h — the worker protocol over jobd's HTTP API, as a store backend.
 *
 * `jobd worker --server URL` runs the same worker loop as with --db, but its
 * claims, heartbeats and reports go to an API server (docs/API.md, "Remote
 * workers": POST /v1/claim, /v1/jobs/{id}/heartbeat|complete|fail) instead of
 * to the database: a host with no database credentials can still be a worker.
 * Only the worker's operations are implemented (open, close, migrate as a
 * no-op, ping, claim, heartbeat, complete, complete_batch, fail, release,
 * next_run_at, wait) and the worker's presence (announce, seen, withdraw:
 * remote/presence.c, on a thread and connection of their own so they never
 * hold up the worker's loop); store.c answers the others with JOBD_E_INVALID.
 * Opened by store_open for http:// and https:// URLs.
 */
#ifndef JOBD_STORE_REMOTE_H
#define JOBD_STORE_REMOTE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "store/backends.h"
#include "util/httpc.h"

/* ---- for the files of the remote backend ---- */

/*
 * One HTTP connection to an API server (remote/conn.c): jobd's HTTP client
 * (util/httpc.h: keep-alive; http.base is the server's URL), used by one
 * thread at a time. remote_conn_init: not yet asked anything; each request
 * takes at most timeout_ms (a long poll sets its own: httpc_timeout).
 * JOBD_E_NOMEM, or JOBD_E_UNAVAILABLE without libcurl. remote_conn_fini
 * frees what init made (also after a failed init).
 */
struct remote_conn {
    struct httpc http; /* http.curl is NULL before init and after fini */
};
JOBD_MUST_USE int remote_conn_init(struct remote_conn *c, const char *url, long timeout_ms,
                                   struct jobd_error *err);
void remote_conn_fini(struct remote_conn *c);
/*
 * One call: POSTs body (stolen; NULL = GET) to path and parses a 2xx answer
 * into *resp (may be NULL; the caller's). HTTP statuses map to store errors
 * (404 JOBD_E_NOTFOUND, 409 JOBD_E_STALE, 503 JOBD_E_UNAVAILABLE, ...).
 * An interrupted call (httpc_interruptible on c->http) answers JOBD_OK with
 * no *resp.
 */
int remote_conn_call(struct remote_conn *c, const char *path, json_t *body, json_t **resp,
                     struct jobd_error *err);

/*
 * The job object of an answer (docs/API.md, The job object) into *out
 * (remote/job.c; the caller job_fini's it): JOBD_E_STORE when o is no job,
 * JOBD_E_NOMEM.
 */
int remote_job_of(json_t *o, struct job *out, struct jobd_error *err);
/* A time member of o (RFC 3339) in microseconds: 0 when absent, null or unreadable. */
int64_t remote_time_of(json_t *o, const char *key);

/* The remote store (remote/open.c); its presence thread is remote/presence.c's. */
struct remote_store {
    struct store base;
    struct remote_conn conn;
    struct remote_presence *presence; /* NULL until the worker announces itself */
    bool no_cancels;                  /* the server has no GET /v1/cancels (remote_wait) */
};

/*
 * The lease tokens of claims (remote/lease.c), kept process-wide by server
 * URL and job: put when a claim hands one out (a NULL or over-long token is
 * not kept), get (false: none for that attempt) for a heartbeat or report,
 * drop once the attempt is reported. Thread-safe.
 */
#define REMOTE_LEASE_TOKEN_MAX 128
void remote_lease_put(const char *url, int64_t id, int32_t attempt, const char *token);
bool remote_lease_get(const char *url, int64_t id, int32_t attempt,
                      char token[REMOTE_LEASE_TOKEN_MAX + 1]);
void remote_lease_drop(const char *url, int64_t id, int32_t attempt);
/* Copies into ids (the caller's, max of them) the jobs held under url; how many. */
size_t remote_lease_held(const char *url, int64_t *ids, size_t max);

/*
 * Worker presence off the worker's loop (remote/presence.c): the store's
 * presence thread, created at the first announce, stopped by store_close.
 */
struct remote_presence;
/* Stops the presence thread (an unfinished request is abandoned) and frees it. NULL-safe. */
void remote_presence_stop(struct remote_presence *p);
/* The operator operations a remote store has: worker presence. */
struct store_operator_ops;
extern const struct store_operator_ops remote_operator_ops;

#endif
