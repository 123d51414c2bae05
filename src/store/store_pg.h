/*
 * store_pg.h — the PostgreSQL backend (libpq). Internal; use store_open().
 */
#ifndef JOBD_STORE_PG_H
#define JOBD_STORE_PG_H

#include "store/store.h"

/* Connects to url (a libpq URI). See store_open for errors and ownership. */
int store_pg_open(const char *url, struct store **out, struct jobd_error *err);

#endif
