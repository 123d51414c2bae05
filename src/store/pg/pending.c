/*
 * pg/pending.c — store_pending_queue_types on PostgreSQL: the distinct
 * (queue, type) pairs of pending jobs by a skip scan (a recursive query
 * that seeks the next pair after the last one) over the partial index
 * jobs_pending_queue_type, one index seek per pair whatever the backlog.
 * Its predicate is that of the per-type indexes of jobs (pg/schema.c,
 * versions 4 and 8 say why): neither a claim nor a completion adds an entry.
 */
#include <stdlib.h>

#include "core/err.h"
#include "store/operator_int.h"
#include "store/pg/internal.h"

#define PAIRS_MAX_S "1000" /* STORE_PENDING_PAIRS_MAX */
#define NOT_PENDING "('running', 'succeeded')"

PG_STMT(pending_pairs,
        "WITH RECURSIVE p AS ("
        "  (SELECT queue, type FROM jobd.jobs WHERE status NOT IN " NOT_PENDING
        "    ORDER BY queue, type LIMIT 1)"
        "  UNION ALL"
        "  SELECT n.queue, n.type FROM p CROSS JOIN LATERAL"
        "    (SELECT j.queue, j.type FROM jobd.jobs j"
        "      WHERE j.status NOT IN " NOT_PENDING " AND (j.queue, j.type) > (p.queue, p.type)"
        "      ORDER BY j.queue, j.type LIMIT 1) n"
        ") SELECT queue, type FROM p LIMIT " PAIRS_MAX_S);

int
pg_op_pending_queue_types(struct store *st, struct queue_type_list *out, struct jobd_error *err)
{
    _Static_assert(STORE_PENDING_PAIRS_MAX == 1000, "PAIRS_MAX_S follows it");
    PGresult *r = NULL;
    int rc = pg_exec((struct store_pg *)st, &pending_pairs, 0, NULL, &r, err);
    for (int i = 0; rc == JOBD_OK && i < PQntuples(r); i++)
        if (!queue_types_push(out, PQgetvalue(r, i, 0), PQgetvalue(r, i, 1)))
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    PQclear(r);
    return rc;
}
