/*
 * remote.h — the worker protocol over jobd's HTTP API, as a store backend.
 *
 * `jobd worker --server URL` runs the same worker loop as with --db, but its
 * claims, heartbeats and reports go to an API server (docs/API.md, "Remote
 * workers": POST /v1/claim, /v1/jobs/{id}/heartbeat|complete|fail) instead of
 * to the database: a host with no database credentials can still be a worker.
 * Only the worker's operations are implemented (open, close, migrate as a
 * no-op, ping, claim, heartbeat, complete, complete_batch, fail, release,
 * next_run_at, wait) and the worker's presence (announce, seen, withdraw:
 * remote_presence.c, on a thread and connection of their own so they never
 * hold up the worker's loop); store.c answers the others with JOBD_E_INVALID.
 * Opened by store_open for http:// and https:// URLs.
 */
#ifndef JOBD_STORE_REMOTE_H
#define JOBD_STORE_REMOTE_H

#include <stdatomic.h>
#include <stdbool.h>

#include <jansson.h>

#include "store/store.h"

/*
 * Opens a "remote store" on the API server at url (its base, e.g.
 * http://127.0.0.1:8080), with the bearer token from $JOBD_TOKEN if set,
 * and checks GET /healthz. JOBD_E_UNAVAILABLE if the server does not
 * answer. *out is owned by the caller (store_close). One thread at a time.
 */
JOBD_MUST_USE int remote_store_open(const char *url, struct store **out, struct jobd_error *err);

/* ---- for the files of the remote backend (remote_presence.c) ---- */

/*
 * A second remote store on url for a helper thread: asks nothing on open
 * (no /healthz), each request takes at most timeout_ms, and a true
 * *interrupt (borrowed; must outlive the store) aborts the request under
 * way. JOBD_E_NOMEM. *out is the caller's (store_close).
 */
JOBD_MUST_USE int remote_store_open_side(const char *url, long timeout_ms,
                                         const atomic_bool *interrupt, struct store **out,
                                         struct jobd_error *err);
/*
 * One call to the API server: POSTs body (stolen; NULL = GET) to path and
 * parses a 2xx answer into *resp (may be NULL; the caller's). HTTP statuses
 * map to store errors (404 JOBD_E_NOTFOUND, 503 JOBD_E_UNAVAILABLE, ...).
 * An interrupted call answers JOBD_OK with no *resp.
 */
int remote_call(struct store *st, const char *path, json_t *body, json_t **resp,
                struct jobd_error *err);
/*
 * The lease tokens of claims (remote_lease.c), kept process-wide by server
 * URL and job: put when a claim hands one out (a NULL or over-long token is
 * not kept), get (false: none for that attempt) for a heartbeat or report,
 * drop once the attempt is reported. Thread-safe.
 */
#define REMOTE_LEASE_TOKEN_MAX 128
void remote_lease_put(const char *url, int64_t id, int32_t attempt, const char *token);
bool remote_lease_get(const char *url, int64_t id, int32_t attempt,
                      char token[REMOTE_LEASE_TOKEN_MAX + 1]);
void remote_lease_drop(const char *url, int64_t id, int32_t attempt);

/* The server's base URL of a remote store (borrowed). */
const char *remote_url(const struct store *st);

/*
 * Worker presence off the worker's loop (remote_presence.c): the store's
 * presence thread, created at the first announce, stopped by store_close.
 */
struct remote_presence;
struct remote_presence **remote_presence_slot(struct store *st);
/* Stops the presence thread (an unfinished request is abandoned) and frees it. NULL-safe. */
void remote_presence_stop(struct remote_presence *p);
/* The operator operations a remote store has: worker presence. */
struct store_operator_ops;
extern const struct store_operator_ops remote_operator_ops;


#endif
