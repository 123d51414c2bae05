/*
 * sqlite/claim.c — claim on SQLite: the queues with limits first
 * (sqlite/qlimits.c), then the due jobs (sqlite/read.c), in one
 * transaction. Apart from sqlite/read.c so that reading and the limits do
 * not call each other (docs/DESIGN.md, Source layout).
 */
#include <stdbool.h>
#include <stdlib.h>

#include "core/err.h"
#include "core/job.h"
#include "core/rules.h"
#include "store/qlimits.h"
#include "store/sqlite/internal.h"

/* The event rows of the jobs claimed, out->v[first..] (sqlite/events_rows.c). */
static int
tell(struct sqlite_store *s, const struct job_list *out, size_t first, struct jobd_error *err)
{
    struct sq_tell t = {0};
    for (size_t i = first; i < out->n; i++)
        sq_tell_add(&t, out->v[i].id, out->v[i].attempt, out->v[i].queue, out->v[i].type);
    return sq_events_tell(s, false, &t, err);
}

int
sq_op_claim(struct store *st, const struct claim_req *req, struct job_list *out,
            struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_claim_check(req, err);
    if (rc != JOBD_OK)
        return rc;
    bool limited = false;
    if ((rc = sq_qlimits_covers(s, req, &limited, err)) != JOBD_OK)
        return rc;
    int64_t now = sq_now(s);
    /*
     * Idle workers poll often; a read (which never waits for the writer in
     * WAL mode) spares them the write lock when nothing is due. A job that
     * becomes due right after this check is claimed at the next poll.
     */
    rc = sq_any_due(s, req, now, limited ? "paused = 1" : QLIMITS_HELD_SQ, err);
    if (rc == 0 && !limited && qlimits_cache_recheck(&s->qlim)) {
        /* Nothing: a queue may have become grouped since the list was read. */
        qlimits_cache_invalidate(&s->qlim);
        if ((rc = sq_qlimits_covers(s, req, &limited, err)) != JOBD_OK)
            return rc;
        rc = limited ? sq_any_due(s, req, now, "paused = 1", err) : 0;
    }
    if (rc <= 0)
        return rc;
    /*
     * The statement picks the due jobs in claim order through the partial
     * index and flips them to running in one step; RETURNING does not keep
     * that order, so the result is sorted afterwards by the same key. The
     * limited queues go first (qlimits.h), in the same transaction.
     */
    if ((rc = sq_begin_relaxed(s, err)) != JOBD_OK)
        return rc;
    now = sq_now(s);
    size_t first = out->n;
    int left = req->limit;
    bool told = false; /* the claims' events are this batch's to write */
    rc = sq_events_hold(s, &told, err);
    if (rc == JOBD_OK && limited)
        rc = sq_qlimits_claim(s, req, out, &left, err);
    if (rc == JOBD_OK && left > 0)
        rc = sq_claim_due(s, req, left, now, QLIMITS_HELD_SQ, out, err);
    if (rc == JOBD_OK && told)
        rc = tell(s, out, first, err);
    if (rc == 0)
        rc = sq_commit(s, err);
    else
        sq_rollback(s);
    if (rc != JOBD_OK) {
        /* Rolled back: none of them is claimed. */
        while (out->n > first)
            job_fini(&out->v[--out->n]);
        if (req->held_until_us != NULL)
            *req->held_until_us = 0;
        return rc;
    }
    if (out->n > first)
        qsort(out->v + first, out->n - first, sizeof *out->v, job_claim_order_cmp);
    return JOBD_OK;
}
