/*
 * operator_int.h — the backends' halves of store/operator.h: the functions
 * each backend implements (attempts_pg.c, attempts_sqlite.c, ...) and the
 * vtables operator.c assembles from them for store_pg.c and store_sqlite.c.
 * Contracts as in operator.h. Not for use outside src/store.
 */
#ifndef JOBD_STORE_OPERATOR_INT_H
#define JOBD_STORE_OPERATOR_INT_H

#include "store/operator.h"

extern const struct store_operator_ops pg_operator_ops;
extern const struct store_operator_ops sqlite_operator_ops;

int pg_op_attempts(struct store *st, int64_t id, struct attempt_list *out,
                   struct jobd_error *err);
int sq_op_attempts(struct store *st, int64_t id, struct attempt_list *out,
                   struct jobd_error *err);

/*
 * SQLite: records how attempt `attempt` of job id (still in jobs, as the
 * attempt left it) ended, inside the caller's write transaction. outcome is
 * an attempt_outcome_name other than running/succeeded; error may be NULL.
 */
struct sqlite_store;
int sq_history_add(struct sqlite_store *s, int64_t id, int32_t attempt, const char *outcome,
                   const char *error, int64_t now, struct jobd_error *err);

#endif
