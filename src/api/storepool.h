/*
 * storepool.h — store connections for the HTTP threads. A struct store is
 * one connection used by one thread at a time (store.h), so each request
 * borrows one from this pool and gives it back; the pool grows to the
 * number of threads that ever ran at once and no further. A connection that
 * failed with JOBD_E_UNAVAILABLE is closed instead of returned, so the next
 * request reconnects. Thread-safe (one mutex).
 */
#ifndef JOBD_API_STOREPOOL_H
#define JOBD_API_STOREPOOL_H

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
/* Returns st; last_rc is the last result it gave (UNAVAILABLE -> closed). */
void store_pool_put(struct store_pool *p, struct store *st, int last_rc);
/* The URL the pool opens. */
const char *store_pool_url(const struct store_pool *p);

#endif
