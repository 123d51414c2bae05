/*
 * pg/qlimits.c — queue limits on PostgreSQL (qlimits.h): setting them, the
 * connection's cache of limited queues, and the limited claim path.
 *
 * Claimers of one limited queue are serialized by its jobd.queues row,
 * locked FOR UPDATE in a short transaction of their own; every statement
 * after the lock takes a fresh snapshot (READ COMMITTED), so it counts the
 * running jobs and the window's claims that the previous holder committed.
 * "Now" is read after the lock too (clock_timestamp(), or the store's
 * clock), and the claim stamps started_at with that same instant: now() is
 * the transaction's start, before the wait, and would put a start into the
 * window before the one that counted it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/operator_int.h"
#include "store/qlimits.h"
#include "store/pg/internal.h"
#include "util/clock.h"

/*
 * $1 name, $2 set max_running, $3 max_running, $4 set rate, $5 limit,
 * $6 per_ms, $7 set group_max_running, $8 group_max_running, $9 set
 * group_rate, $10 its limit, $11 its per_ms.
 */
/* clang-format off */
#define QL_KEEP(col, set) " " col " = CASE WHEN " set "::boolean THEN EXCLUDED." col   \
                          " ELSE jobd.queues." col " END"
static const struct pg_stmt st_ql_set = {
    "st_ql_set", "INSERT INTO jobd.queues (name, max_running, rate_limit, rate_per_ms,"
                 "  group_max_running, group_rate_limit, group_rate_per_ms)"
                 " VALUES ($1::text, $3::int, $5::int, $6::bigint, $8::int, $10::int,"
                 "  $11::bigint) "
                 "ON CONFLICT (name) DO UPDATE SET"
                 QL_KEEP("max_running", "$2") "," QL_KEEP("rate_limit", "$4") ","
                 QL_KEEP("rate_per_ms", "$4") "," QL_KEEP("group_max_running", "$7") ","
                 QL_KEEP("group_rate_limit", "$9") "," QL_KEEP("group_rate_per_ms", "$9")};
/* clang-format on */

/* The limited path's queues and what each is (QLIMITS_KIND_*). */
static const struct pg_stmt st_ql_names = {
    "st_ql_names",
    "SELECT name, (CASE WHEN max_running IS NOT NULL OR rate_limit IS NOT NULL THEN 1 ELSE 0 END)"
    " + (CASE WHEN grouped OR group_max_running IS NOT NULL OR group_rate_limit IS NOT NULL"
    "    THEN 2 ELSE 0 END)"
    " + (CASE WHEN group_max_running IS NOT NULL OR group_rate_limit IS NOT NULL THEN 4 ELSE 0 END)"
    /* one group, not counting '' while no job without a group is pending (the
     * row a queue gets when it becomes grouped, docs/DESIGN.md, Groups) */
    " + (CASE WHEN (SELECT count(*) FROM (SELECT 1 FROM jobd.job_groups g"
    "               WHERE g.queue = queues.name AND (g.grp <> ''"
    "                 OR EXISTS (SELECT 1 FROM jobd.jobs j WHERE j.queue = queues.name"
    "                   AND COALESCE(j.grp, '') = ''"
    "                   AND j.status NOT IN ('running', 'succeeded'))) LIMIT 2) x) = 1"
    "   THEN 8 ELSE 0 END)"
    " FROM jobd.queues WHERE " QLIMITS_PATH_WHERE};

static const struct pg_stmt st_ql_all = {
    "st_ql_all", "SELECT name, max_running, rate_limit, rate_per_ms, group_max_running,"
                 " group_rate_limit, group_rate_per_ms FROM jobd.queues"
                 " WHERE max_running IS NOT NULL OR rate_limit IS NOT NULL"
                 "    OR group_max_running IS NOT NULL OR group_rate_limit IS NOT NULL"};

/* $1 name: the row, locked. */
static const struct pg_stmt st_ql_read = {
    "st_ql_read", "SELECT paused, max_running, rate_limit, rate_per_ms, rate_window_us, rate_count,"
                  " grouped, group_max_running, group_rate_limit, group_rate_per_ms"
                  " FROM jobd.queues WHERE name = $1::text FOR UPDATE"};

/* "Now" as the statements below take it; identifiers keep the SQL readable. */
#define QL_NOW2 PG_TS_US("COALESCE(" PG_US_TS("$2") ", clock_timestamp())")
#define QL_NOW3 PG_NOW("$3")
#define QL_NOW5 PG_NOW("$5")
#define QL_LEASE PG_MS("$3")
#define QL_COLS PG_JOB_COLS("j.")

/* $1 name, $2 now (NULL = the server's clock, read now, after the lock). */
static const struct pg_stmt st_ql_running = {
    "st_ql_running",
    "SELECT count(*), " QL_NOW2 " FROM jobd.jobs"
    " WHERE queue = $1::text AND status = 'running' AND lease_expires_at IS NOT NULL"};

/* $1 worker, $2 limit, $3 lease_ms, $4 types (NULL = any), $5 now, $6 queue. */
static const struct pg_stmt st_ql_claim = {
    "st_ql_claim",
    "WITH due AS MATERIALIZED ("
    "  SELECT id FROM jobd.jobs"
    "   WHERE queue = $6::text AND status = 'pending' AND run_at <= " QL_NOW5
    "     AND ($4::text[] IS NULL OR type = ANY($4::text[]))"
    "   ORDER BY priority DESC, run_at, id LIMIT $2::int FOR UPDATE SKIP LOCKED) " PG_CLAIM_EVENTS(
        "UPDATE jobd.jobs j SET status = 'running', attempt = j.attempt + 1,"
        "       worker_id = $1::text, lease_expires_at = " QL_NOW5 " + " QL_LEASE ","
        "       started_at = " QL_NOW5 " WHERE j.id = ANY(ARRAY(SELECT id FROM due)) ",
        QL_COLS)};

/* $1 queue, $2 types, $3 now. */
static const struct pg_stmt st_ql_due = {
    "st_ql_due",
    "SELECT 1 FROM jobd.jobs WHERE queue = $1::text AND status = 'pending'"
    "  AND run_at <= " QL_NOW3 " AND ($2::text[] IS NULL OR type = ANY($2::text[]))"
    "  AND NOT EXISTS (SELECT 1 FROM jobd.queues WHERE name = $1::text AND paused) LIMIT 1"};

/* $1 name, $2 window_us, $3 count. */
static const struct pg_stmt st_ql_count = {
    "st_ql_count", "UPDATE jobd.queues SET rate_window_us = $2::bigint, rate_count = $3::int"
                   " WHERE name = $1::text"};

int
pg_op_queue_limits(struct store *st, const char *queue, const struct queue_limits_change *c,
                   struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    char b[6][24];
    bool gr = c->set_group_rate && c->group_rate_limit > 0;
    const char *vals[11] = {
        queue,
        c->set_max_running ? "true" : "false",
        c->set_max_running && c->max_running > 0 ? pg_i64(b[0], c->max_running) : NULL,
        c->set_rate ? "true" : "false",
        c->set_rate && c->rate_limit > 0 ? pg_i64(b[1], c->rate_limit) : NULL,
        c->set_rate && c->rate_limit > 0 ? pg_i64(b[2], c->rate_per_ms) : NULL,
        c->set_group_max_running ? "true" : "false",
        c->set_group_max_running && c->group_max_running > 0 ? pg_i64(b[3], c->group_max_running)
                                                             : NULL,
        c->set_group_rate ? "true" : "false",
        gr ? pg_i64(b[4], c->group_rate_limit) : NULL,
        gr ? pg_i64(b[5], c->group_rate_per_ms) : NULL,
    };
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_ql_set, 11, vals, &r, err);
    PQclear(r);
    qlimits_cache_invalidate(&s->qlim);
    return rc;
}

/* Re-reads the limited queues' names into the connection's cache. */
static int
refresh(struct store_pg *s, struct jobd_error *err)
{
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_ql_names, 0, NULL, &r, err);
    if (rc != JOBD_OK)
        return rc;
    int rows = PQntuples(r);
    char **names = calloc(rows > 0 ? (size_t)rows : 1, sizeof *names);
    unsigned char *kinds = calloc(rows > 0 ? (size_t)rows : 1, 1);
    bool oom = names == NULL || kinds == NULL;
    for (int i = 0; !oom && i < rows; i++) {
        names[i] = pg_get_str(r, i, 0, &oom);
        kinds[i] = (unsigned char)pg_get_i64(r, i, 1);
    }
    PQclear(r);
    if (oom) {
        for (int i = 0; names != NULL && i < rows; i++)
            free(names[i]);
        free(names);
        free(kinds);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    qlimits_cache_set(&s->qlim, names, kinds, (size_t)rows);
    return JOBD_OK;
}

/* The backend of qlimits_claim_queue: b is the struct store_pg; types the req's text[]. */
struct pg_ql {
    struct store_pg *s;
    const char *types;
    char nowb[24];
    const char *now; /* the store clock's now, or NULL */
    char *cursor;    /* the queue's round-robin cursor (qlimits_cursor) */
};

/*
 * After a claim of grouped queue q that got fewer than it asked for (the
 * queue may be draining): its groups with nothing pending are forgotten,
 * at most once per QLIMITS_REFRESH_MS a connection (until then they cost
 * each claim one probe).
 */
static int
maybe_forget(struct store_pg *s, const char *q, int64_t rate_per_ms, const char *now,
             struct jobd_error *err)
{
    int64_t t = clock_mono_now_us();
    if (t - s->groups_forgot_us < (int64_t)QLIMITS_REFRESH_MS * 1000)
        return JOBD_OK;
    s->groups_forgot_us = t;
    return pg_groups_forget(s, q, rate_per_ms, now, err);
}

static int
ql_read(void *b, const char *q, struct qlimits_row *row, int64_t *now_us, bool *found,
        struct jobd_error *err)
{
    struct pg_ql *p = b;
    const char *vals[2] = {q, p->now};
    PGresult *r = NULL;
    int rc = pg_exec(p->s, &st_ql_read, 1, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    *found = PQntuples(r) == 1;
    if (*found) {
        row->paused = PQgetvalue(r, 0, 0)[0] == 't';
        row->max_running = (int32_t)pg_get_i64(r, 0, 1);
        row->rate_limit = (int32_t)pg_get_i64(r, 0, 2);
        row->rate_per_ms = pg_get_i64(r, 0, 3);
        row->window_us = pg_get_i64(r, 0, 4);
        row->rate_count = (int32_t)pg_get_i64(r, 0, 5);
        row->grouped = PQgetvalue(r, 0, 6)[0] == 't';
        row->group_max_running = (int32_t)pg_get_i64(r, 0, 7);
        row->group_rate_limit = (int32_t)pg_get_i64(r, 0, 8);
        row->group_rate_per_ms = pg_get_i64(r, 0, 9);
    }
    PQclear(r);
    if (rc != JOBD_OK || !*found)
        return rc;
    /* The running count and "now" come from one statement after the lock. */
    if ((rc = pg_exec(p->s, &st_ql_running, 2, vals, &r, err)) != JOBD_OK)
        return rc;
    row->running = pg_get_i64(r, 0, 0);
    *now_us = pg_get_i64(r, 0, 1);
    PQclear(r);
    return JOBD_OK;
}

static int
ql_claim(void *b, const char *q, const struct claim_req *req, int n, int64_t now_us,
         const struct qlimits_row *row, int64_t group_window_us, struct job_list *out,
         struct jobd_error *err)
{
    struct pg_ql *p = b;
    char lb[24], leb[24], nb[24];
    if (row->grouped || row->group_max_running > 0 || row->group_rate_limit > 0) {
        size_t before = out->n;
        int rc = pg_groups_claim(p->s, q, req, p->types, n, pg_i64(nb, now_us), row,
                                 group_window_us, p->cursor, out, err);
        if (rc == JOBD_OK && (int)(out->n - before) < n)
            rc = maybe_forget(p->s, q, row->group_rate_per_ms, nb, err);
        return rc;
    }
    const char *vals[6] = {
        req->worker_id, pg_i64(lb, n), pg_i64(leb, req->lease_ms), p->types, pg_i64(nb, now_us), q,
    };
    PGresult *r = NULL;
    int rc = pg_exec(p->s, &st_ql_claim, 6, vals, &r, err);
    if (rc == JOBD_OK)
        rc = pg_append_rows(r, out, err);
    PQclear(r);
    return rc;
}

/* 1 if a job of q (of the claim's types) is due at now (text; NULL = now()), 0 if not. */
static int
probe(struct pg_ql *p, const char *q, const char *now, struct jobd_error *err)
{
    const char *vals[3] = {q, p->types, now};
    PGresult *r = NULL;
    int rc = pg_exec(p->s, &st_ql_due, 3, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    int due = PQntuples(r) > 0;
    PQclear(r);
    return due;
}

static int
ql_any_due(void *b, const char *q, const struct claim_req *req, int64_t now_us,
           struct jobd_error *err)
{
    (void)req;
    char nb[24];
    return probe(b, q, pg_i64(nb, now_us), err);
}

static int
ql_count(void *b, const char *q, int64_t window_us, int32_t n, struct jobd_error *err)
{
    struct pg_ql *p = b;
    char wb[24], cb[24];
    const char *vals[3] = {q, pg_i64(wb, window_us), pg_i64(cb, n)};
    PGresult *r = NULL;
    int rc = pg_exec(p->s, &st_ql_count, 3, vals, &r, err);
    PQclear(r);
    return rc;
}

static const struct qlimits_backend pg_ql_backend = {
    .read = ql_read,
    .claim = ql_claim,
    .any_due = ql_any_due,
    .count = ql_count,
};

/* One limited queue's claim in a transaction of its own (the row lock's span). */
static int
claim_one_queue(struct pg_ql *p, const char *q, const struct claim_req *req, int wanted,
                struct job_list *out, int64_t *held, struct jobd_error *err)
{
    size_t before = out->n;
    int rc = pg_tx_begin(p->s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = qlimits_claim_queue(&pg_ql_backend, p, q, req, wanted, out, held, err);
    rc = pg_tx_end(p->s, rc, err);
    if (rc != JOBD_OK) {
        while (out->n > before) /* rolled back: none of them is claimed */
            job_fini(&out->v[--out->n]);
    }
    return rc;
}

static int
claim_grouped(struct pg_ql *p, const char *q, const struct claim_req *req, int wanted,
              struct job_list *out, struct jobd_error *err)
{
    size_t before = out->n;
    int rc = pg_groups_claim(p->s, q, req, p->types, wanted, p->now, NULL, 0, p->cursor, out, err);
    if (rc != JOBD_OK || (int)(out->n - before) >= wanted)
        return rc;
    return maybe_forget(p->s, q, 0, p->now, err);
}

int
pg_qlimits_claim(struct store_pg *s, const struct claim_req *req, const char *types,
                 struct job_list *out, int *left, struct jobd_error *err)
{
    int rc = JOBD_OK;
    if (qlimits_cache_stale(&s->qlim) && (rc = refresh(s, err)) != JOBD_OK)
        return rc;
    struct pg_ql p = {.s = s, .types = types};
    p.now = pg_now_param(s, p.nowb);
    int64_t held = 0;
    for (size_t i = 0; rc == JOBD_OK && *left > 0 && i < s->qlim.n; i++) {
        const char *q = s->qlim.names[i];
        if (!qlimits_req_covers(req, q))
            continue;
        size_t before = out->n;
        char spare[JOB_GROUP_MAX + 1] = "";
        p.cursor = qlimits_cursor(&s->qlim, i);
        if (p.cursor == NULL)
            p.cursor = spare;
        /* A grouped queue without limits: the fair claim alone, no lock, no
         * look first (its statement costs a probe a group when nothing is
         * due); with a single group, whose turn it always is, its plain
         * claim order. A limited one is looked at without the lock first: with
         * nothing due it costs the claimers of other queues one read, not a
         * locked transaction that would queue them up behind each other. */
        int due = 1;
        if (s->qlim.kinds[i] == (QLIMITS_KIND_GROUPED | QLIMITS_KIND_ONE_GROUP)) {
            rc = pg_groups_claim_one(s, q, req, types, *left, p.now, out, err);
            if (rc == JOBD_OK && (int)(out->n - before) < *left)
                rc = maybe_forget(s, q, 0, p.now, err);
        } else if (s->qlim.kinds[i] == QLIMITS_KIND_GROUPED)
            rc = claim_grouped(&p, q, req, *left, out, err);
        else if ((due = probe(&p, q, p.now, err)) == 1)
            rc = claim_one_queue(&p, q, req, *left, out, &held, err);
        else
            rc = due;
        *left -= (int)(out->n - before);
    }
    if (req->held_until_us != NULL)
        *req->held_until_us = held;
    return rc;
}

int
pg_qlimits_fill(struct store_pg *s, struct queue_stat *v, size_t n, struct jobd_error *err)
{
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_ql_all, 0, NULL, &r, err);
    if (rc != JOBD_OK)
        return rc;
    for (int row = 0; row < PQntuples(r); row++)
        for (size_t i = 0; i < n; i++)
            if (strcmp(v[i].name, PQgetvalue(r, row, 0)) == 0) {
                v[i].max_running = (int32_t)pg_get_i64(r, row, 1);
                v[i].rate_limit = (int32_t)pg_get_i64(r, row, 2);
                v[i].rate_per_ms = pg_get_i64(r, row, 3);
                v[i].group_max_running = (int32_t)pg_get_i64(r, row, 4);
                v[i].group_rate_limit = (int32_t)pg_get_i64(r, row, 5);
                v[i].group_rate_per_ms = pg_get_i64(r, row, 6);
            }
    PQclear(r);
    return JOBD_OK;
}
