/*
 * backends.h — how store.c opens each backend, and nothing more.
 *
 * Each backend lives in a folder of its own (pg/, sqlite/, remote/) behind
 * a private header (internal.h); the front (store.c) reaches a backend only
 * through its open function, and from then on through the store's ops
 * table. Internal: callers use store_open().
 */
#ifndef JOBD_STORE_BACKENDS_H
#define JOBD_STORE_BACKENDS_H

#include "store/store.h"

/* PostgreSQL (libpq): connects to url (a libpq URI). See store_open for errors and ownership. */
int store_pg_open(const char *url, struct store **out, struct jobd_error *err);

/* SQLite (WAL mode): opens, creating if needed, the database file at path. See store_open. */
int store_sqlite_open(const char *path, struct store **out, struct jobd_error *err);

/*
 * The worker protocol over jobd's HTTP API (docs/WORKER.md, "Remote
 * workers"): opens a "remote store" on the API server at url (its base,
 * e.g. http://127.0.0.1:8080), with the bearer token from $JOBD_TOKEN if
 * set, and checks GET /healthz. JOBD_E_UNAVAILABLE if the server does not
 * answer. *out is owned by the caller (store_close). One thread at a time.
 */
JOBD_MUST_USE int remote_store_open(const char *url, struct store **out, struct jobd_error *err);

#endif
