/*
 * pg/workers.c — worker presence (store/operator.h) on PostgreSQL. "Now"
 * and the gone test come from the database (or the store's clock), the one
 * clock every server shares, so every server shows the same states.
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/operator_int.h"
#include "store/pg/internal.h"

/* clang-format off */
/* $1 id .. $8 heartbeat_ms, $9 now: forgets workers gone for over an hour,
 * then inserts this one; what a known one keeps is the ON CONFLICT below. */
#define WK_INSERT                                                                                  \
    "WITH old AS (DELETE FROM jobd.workers WHERE id <> $1::text AND last_seen_at < " PG_NOW("$9") \
    " - 3 * heartbeat_ms * interval '1 millisecond' - interval '1 hour') "                        \
    "INSERT INTO jobd.workers (id, hostname, pid, version, queues, types, concurrency,"            \
    "                          heartbeat_ms, started_at, last_seen_at, draining) "                 \
    "VALUES ($1::text, $2::text, $3::bigint, $4::text, $5::text, $6::text, $7::int,"              \
    "        $8::bigint, " PG_NOW("$9") ", " PG_NOW("$9") ", false) "

/* An announce: a known worker is replaced. */
static const struct pg_stmt wk_announce = {
    "wk_announce",
    WK_INSERT
    "ON CONFLICT (id) DO UPDATE SET hostname = EXCLUDED.hostname, pid = EXCLUDED.pid,"
    "  version = EXCLUDED.version, queues = EXCLUDED.queues, types = EXCLUDED.types,"
    "  concurrency = EXCLUDED.concurrency, heartbeat_ms = EXCLUDED.heartbeat_ms,"
    "  started_at = EXCLUDED.started_at, last_seen_at = EXCLUDED.last_seen_at,"
    "  draining = false"};

/* keep_existing: a known worker is only seen now. */
static const struct pg_stmt wk_touch = {
    "wk_touch", WK_INSERT "ON CONFLICT (id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at"};
/* clang-format on */

static const struct pg_stmt wk_seen = {
    "wk_seen", "UPDATE jobd.workers SET last_seen_at = " PG_NOW("$3") ", draining = $2::boolean"
                                                                      " WHERE id = $1::text"};

static const struct pg_stmt wk_withdraw = {"wk_withdraw",
                                           "DELETE FROM jobd.workers WHERE id = $1::text"};

/* clang-format off */
static const struct pg_stmt wk_list = {
    "wk_list",
    "SELECT id, hostname, pid, version, queues, types, concurrency, heartbeat_ms,"
    "       " PG_TS_US("started_at") ", " PG_TS_US("last_seen_at") ", draining,"
    "       last_seen_at < " PG_NOW("$1") " - 3 * heartbeat_ms * interval '1 millisecond'"
    "  FROM jobd.workers WHERE last_seen_at >= " PG_NOW("$1")
    "       - 3 * heartbeat_ms * interval '1 millisecond' - interval '1 hour'"
    "   AND ($2::text IS NULL OR id COLLATE \"C\" > $2::text)"
    " ORDER BY id COLLATE \"C\" LIMIT $3::int"};
/* clang-format on */

/* "lease_expires_at IS NOT NULL" (every running job has a lease) lets the
 * planner walk jobs_lease, the running jobs only, instead of every job.
 * $1..$2: the first and the last worker id listed. */
static const struct pg_stmt wk_running = {
    "wk_running", "SELECT worker_id, id FROM jobd.jobs"
                  " WHERE status = 'running' AND lease_expires_at IS NOT NULL"
                  " AND worker_id IS NOT NULL"
                  " AND worker_id COLLATE \"C\" BETWEEN $1::text AND $2::text"
                  " ORDER BY worker_id COLLATE \"C\", id"};

/* Capped announces take this lock first (see pg/sched.c, st_sched_cap_lock). */
static const struct pg_stmt wk_cap_lock = {
    "wk_cap_lock", "SELECT pg_advisory_xact_lock(hashtext('jobd.workers.cap'))"};
/* $1 id: the rows kept, and whether id is one of them. */
static const struct pg_stmt wk_cap_count = {
    "wk_cap_count", "SELECT count(*), coalesce(bool_or(id = $1::text), false) FROM jobd.workers"};
/* clang-format off */
/* $1 now, $2 how many: forgets the gone workers seen longest ago. */
static const struct pg_stmt wk_cap_evict = {
    "wk_cap_evict",
    "DELETE FROM jobd.workers WHERE id IN (SELECT id FROM jobd.workers WHERE last_seen_at < "
    PG_NOW("$1") " - 3 * heartbeat_ms * interval '1 millisecond'"
    " ORDER BY last_seen_at LIMIT $2::bigint)"};
/* clang-format on */

/* Rows kept and whether id is one: into *n and *known. */
static int
cap_count(struct store_pg *s, const char *id, int64_t *n, bool *known, struct jobd_error *err)
{
    PGresult *r = NULL;
    int rc = pg_exec(s, &wk_cap_count, 1, &id, &r, err);
    if (rc == JOBD_OK) {
        *n = pg_get_i64(r, 0, 0);
        *known = PQgetvalue(r, 0, 1)[0] == 't';
    }
    PQclear(r);
    return rc;
}

/* Inside the open transaction: as make_room of sqlite/workers.c. */
static int
make_room(struct store_pg *s, const char *id, const char *now, int64_t max, struct jobd_error *err)
{
    PGresult *r = NULL;
    int rc = pg_exec(s, &wk_cap_lock, 0, NULL, &r, err);
    PQclear(r);
    int64_t n = 0;
    bool known = false;
    if (rc != JOBD_OK || (rc = cap_count(s, id, &n, &known, err)) != JOBD_OK)
        return rc;
    if (known || n < max)
        return JOBD_OK;
    char b[24];
    const char *v[2] = {now, pg_i64(b, n - max + 1)};
    r = NULL;
    rc = pg_exec(s, &wk_cap_evict, 2, v, &r, err);
    PQclear(r);
    if (rc != JOBD_OK || (rc = cap_count(s, id, &n, &known, err)) != JOBD_OK)
        return rc;
    if (n < max)
        return JOBD_OK;
    return jobd_error_set(err, JOBD_E_CONFLICT, "max_workers",
                          "this server keeps at most %lld live workers (--max-workers)",
                          (long long)max);
}

int
pg_op_worker_announce(struct store *st, const struct worker_info *w, int64_t max_workers,
                      struct jobd_error *err)
{
    struct store_pg *s = (struct store_pg *)st;
    char b[4][24], nowb[24];
    const char *vals[9] = {w->id,
                           w->hostname ? w->hostname : "",
                           pg_i64(b[0], w->pid),
                           w->version ? w->version : "",
                           w->queues ? w->queues : "[]",
                           w->types ? w->types : "[]",
                           pg_i64(b[1], w->concurrency),
                           pg_i64(b[2], w->heartbeat_ms),
                           pg_now_param(s, nowb)};
    const struct pg_stmt *stmt = w->keep_existing ? &wk_touch : &wk_announce;
    PGresult *r = NULL;
    if (max_workers == 0) {
        int rc = pg_exec(s, stmt, 9, vals, &r, err);
        PQclear(r);
        return rc;
    }
    int rc = pg_exec_simple(s, "BEGIN", err);
    if (rc != JOBD_OK)
        return rc;
    rc = make_room(s, w->id, vals[8], max_workers, err);
    if (rc == JOBD_OK)
        rc = pg_exec(s, stmt, 9, vals, &r, err);
    PQclear(r);
    if (rc == JOBD_OK)
        rc = pg_exec_simple(s, "COMMIT", err);
    if (rc != JOBD_OK)
        (void)pg_exec_simple(s, "ROLLBACK", NULL);
    return rc;
}

int
pg_op_worker_seen(struct store *st, const char *id, bool draining, struct jobd_error *err)
{
    struct store_pg *s = (struct store_pg *)st;
    char nowb[24];
    const char *vals[3] = {id, draining ? "true" : "false", pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &wk_seen, 3, vals, &r, err);
    if (rc == JOBD_OK && strcmp(PQcmdTuples(r), "0") == 0)
        rc = jobd_error_set(err, JOBD_E_NOTFOUND, "id", "no worker '%s'", id);
    PQclear(r);
    return rc;
}

int
pg_op_worker_withdraw(struct store *st, const char *id, struct jobd_error *err)
{
    PGresult *r = NULL;
    int rc = pg_exec((struct store_pg *)st, &wk_withdraw, 1, &id, &r, err);
    PQclear(r);
    return rc;
}

/* Adds the running jobs of r (worker_id, id; in byte order, as out) to out's workers. */
static bool
add_running(const PGresult *r, struct worker_list *out)
{
    size_t k = 0;
    for (int i = 0; i < PQntuples(r); i++) {
        const char *wid = PQgetvalue(r, i, 0);
        while (k < out->n && strcmp(out->v[k].id, wid) < 0)
            k++;
        if (k < out->n && strcmp(out->v[k].id, wid) == 0 &&
            !worker_info_add_running(&out->v[k], pg_get_i64(r, i, 1)))
            return false;
    }
    return true;
}

int
pg_op_worker_list(struct store *st, const struct name_page *pg, struct worker_list *out,
                  struct jobd_error *err)
{
    struct store_pg *s = (struct store_pg *)st;
    char nowb[24], lim[24];
    const char *v[3] = {pg_now_param(s, nowb), pg->after,
                        pg->limit > 0 ? pg_i64(lim, pg->limit) : NULL};
    PGresult *r = NULL;
    int rc = pg_exec(s, &wk_list, 3, v, &r, err);
    if (rc != JOBD_OK)
        return rc;
    bool oom = false;
    for (int i = 0; i < PQntuples(r) && !oom; i++) {
        struct worker_info *w = worker_list_push(out);
        if (w == NULL) {
            oom = true;
            break;
        }
        w->id = pg_get_str(r, i, 0, &oom);
        w->hostname = pg_get_str(r, i, 1, &oom);
        w->pid = pg_get_i64(r, i, 2);
        w->version = pg_get_str(r, i, 3, &oom);
        w->queues = pg_get_str(r, i, 4, &oom);
        w->types = pg_get_str(r, i, 5, &oom);
        w->concurrency = (int32_t)pg_get_i64(r, i, 6);
        w->heartbeat_ms = pg_get_i64(r, i, 7);
        w->started_at_us = pg_get_i64(r, i, 8);
        w->last_seen_at_us = pg_get_i64(r, i, 9);
        w->draining = PQgetvalue(r, i, 10)[0] == 't';
        w->gone = PQgetvalue(r, i, 11)[0] == 't';
    }
    PQclear(r);
    r = NULL;
    /* The running jobs of the listed workers only: those between the first and the last. */
    if (!oom && out->n == 0)
        return rc;
    const char *range[2] = {oom ? NULL : out->v[0].id, oom ? NULL : out->v[out->n - 1].id};
    if (!oom && (rc = pg_exec(s, &wk_running, 2, range, &r, err)) == JOBD_OK)
        oom = !add_running(r, out);
    PQclear(r);
    if (oom)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory listing workers");
    return rc;
}
