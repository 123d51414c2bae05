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

#endif
