/*
 * storepool.h — store connections for the HTTP threads. A struct store is
 * one connection used by one thread at a time (store.h), so each request
 * borrows one from this pool and gives it back; the pool grows to the
 * number of threads that ever ran at once, and never past its limit
 * (store_pool_limit: `jobd server --db-connections`), so a server states
 * how many database connections it may hold whatever the load: a borrower
 * that finds all of them in use waits for one to come back. A connection
 * that failed with JOBD_E_UNAVAILABLE is closed instead of returned, so
 * the next request reconnects. Thread-safe (one mutex).
 *
 * The pool also carries the server's notify URL (--notify-db): a direct
 * connection for LISTEN when the pool's URL goes through a transaction
 * pooler, which the long-poll thread opens on its own.
 */
#ifndef JOBD_API_STOREPOOL_H
#define JOBD_API_STOREPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "jobd.h"
#include "store/store.h"

struct store_pool;

/* url and clock are copied/borrowed (clock must outlive the pool; NULL = own). */
int store_pool_new(const char *url, const struct jobd_clock *clock, struct store_pool **out,
                   struct jobd_error *err);
/* Closes every idle connection and frees. All borrowed ones must be back. NULL-safe. */
void store_pool_free(struct store_pool *p);
/*
 * Borrows a connection (opening one if none is idle). *out is owned by the
 * pool; give it back with store_pool_put. JOBD_E_UNAVAILABLE if none can be
 * opened.
 */
int store_pool_get(struct store_pool *p, struct store **out, struct jobd_error *err);
/*
 * Bounds the connections open at once (borrowed and idle) to max (0: no
 * bound, the default); a borrower that finds max in use waits up to
 * wait_ms for one to come back, then gets JOBD_E_UNAVAILABLE naming the
 * limit. Call before the pool is shared.
 */
void store_pool_limit(struct store_pool *p, size_t max, int64_t wait_ms);
/* Connections open now (borrowed and idle), for tests and /metrics. */
size_t store_pool_open_count(struct store_pool *p);
/* Sets the notify URL (copied; NULL = none). JOBD_E_NOMEM. Before sharing. */
int store_pool_set_notify_url(struct store_pool *p, const char *url, struct jobd_error *err);
/* The notify URL, or NULL. */
const char *store_pool_notify_url(const struct store_pool *p);
/* Returns st; last_rc is the last result it gave (UNAVAILABLE, COMMIT_UNKNOWN -> closed). */
void store_pool_put(struct store_pool *p, struct store *st, int last_rc);
/* The URL the pool opens. */
const char *store_pool_url(const struct store_pool *p);

#endif
