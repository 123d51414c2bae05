/*
 * remote.h — the worker protocol over jobd's HTTP API, as a store backend.
 *
 * `jobd worker --server URL` runs the same worker loop as with --db, but its
 * claims, heartbeats and reports go to an API server (CONTRACT.md §4:
 * POST /v1/claim, /v1/jobs/{id}/heartbeat|complete|fail) instead of to the
 * database: a host with no database credentials can still be a worker.
 * Only the worker's operations are implemented (open, close, migrate as a
 * no-op, ping, claim, heartbeat, complete, complete_batch, fail,
 * release, next_run_at, wait); store.c answers the others with JOBD_E_INVALID.
 * Opened by store_open for http:// and https:// URLs.
 */
#ifndef JOBD_STORE_REMOTE_H
#define JOBD_STORE_REMOTE_H

#include <stdbool.h>

#include "store/store.h"

/*
 * Opens a "remote store" on the API server at url (its base, e.g.
 * http://127.0.0.1:8080), with the bearer token from $JOBD_TOKEN if set,
 * and checks GET /healthz. JOBD_E_UNAVAILABLE if the server does not
 * answer. *out is owned by the caller (store_close). One thread at a time.
 */
JOBD_MUST_USE int remote_store_open(const char *url, struct store **out, struct jobd_error *err);


#endif
