/*
 * store_sqlite.h — the SQLite backend (WAL mode). Internal; use store_open().
 */
#ifndef JOBD_STORE_SQLITE_H
#define JOBD_STORE_SQLITE_H

#include "store/store.h"

/* Opens (creating if needed) the database file at path. See store_open. */
int store_sqlite_open(const char *path, struct store **out, struct jobd_error *err);

#endif
