/*
 * pg/txn.h — enqueue inside a caller's own PostgreSQL transaction.
 *
 * libjobd's jobd_enqueue_pg hands us the application's PGconn; we run one
 * parameterised call of the SQL function jobd.enqueue(...) (docs/MODEL.md,
 * "Inside your own transaction (PostgreSQL)") on it, without BEGIN/COMMIT, so
 * the job commits or rolls back with the caller's transaction. Lives in
 * src/store because only the store has SQL.
 */
#ifndef JOBD_STORE_PG_TXN_H
#define JOBD_STORE_PG_TXN_H

#include <stdint.h>

#include "core/job.h"
#include "jobd.h"

struct pg_conn;

/*
 * Calls jobd.enqueue on conn (borrowed) for spec (validated, payload
 * canonical or NULL for "{}"; timeout_ms, schedule and scheduled_for must be
 * unset) and stores the new job's id in *id_out: with a debounce or a
 * unique window (schema version 32) the id of the job that holds the key
 * when the function kept it (replaced in place, or inside its window). JOBD_E_UNAVAILABLE if conn
 * is not connected, JOBD_E_CONFLICT on a unique violation, JOBD_E_INVALID on
 * a data exception (SQLSTATE class 22, what jobd.enqueue raises for a bad
 * argument), JOBD_E_TOOBIG on program_limit_exceeded, JOBD_E_STORE
 * otherwise; the server's message is in err.
 */
int pg_txn_enqueue(struct pg_conn *conn, const struct job_spec *spec, int64_t *id_out,
                   struct jobd_error *err);

#endif
