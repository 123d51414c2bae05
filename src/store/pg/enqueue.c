/*
 * pg/enqueue.c — enqueue and enqueue_batch on PostgreSQL.
 *
 * A single job is one INSERT that claims its idempotency key in the same
 * statement; a batch is one INSERT over arrays (one parameter per column),
 * so n jobs cost one round trip. Keyed batches run in a transaction
 * because items whose key was taken are resolved one by one after the
 * insert. Split from pg/open.c by concern; the conventions are in
 * pg/internal.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/stats_int.h"
#include "store/pg/internal.h"

/* ---- enqueue ---- */

PG_STMT(st_next_ids, "SELECT nextval('jobd.job_id_seq') FROM generate_series(1, $1::int)");

/*
 * A batch as one statement over arrays: $1 ids (preallocated, ascending in
 * batch order) ... $10 scheduled_for, $11 now, $12 keys, $13 traceparents. Keys are claimed in
 * batch order, so of two items with one key the first wins; an item whose
 * key was taken is left out (its id is missing from the result) and the
 * caller resolves it inside the same transaction.
 */
/* clang-format off */
PG_STMT(st_enqueue_many,
     "WITH t AS (SELECT * FROM unnest($1::bigint[], $2::text[], $3::json[], $4::text[],"
     "                                $5::int[], $6::bigint[], $7::int[], $8::bigint[],"
     "                                $9::text[], $10::bigint[], $12::text[], $13::text[],"
     "                                $14::text[])"
     "           AS t(id, type, payload, queue, priority, run_at, max_attempts, timeout_ms,"
     "                schedule, sched, key, tp, grp)),"
     " k AS (INSERT INTO jobd.job_keys (idempotency_key, job_id)"
     "       SELECT key, id FROM t WHERE key IS NOT NULL ORDER BY id"
     "       ON CONFLICT (idempotency_key) DO NOTHING RETURNING job_id), "
     "ins AS (INSERT INTO jobd.jobs (id, queue, type, payload, status, priority, run_at, attempt,"
     "                       attempt_floor, max_attempts, idempotency_key, schedule,"
     "                       scheduled_for, timeout_ms, created_at, traceparent, grp) "
     "SELECT t.id, t.queue, t.type, t.payload, 'pending', t.priority,"
     "       COALESCE(" PG_US_TS("t.run_at") ", " PG_NOW("$11") "), 0, 0, t.max_attempts,"
     "       t.key, t.schedule, " PG_US_TS("t.sched") ", t.timeout_ms, " PG_NOW("$11") ", t.tp,"
     "       t.grp "
     "FROM t WHERE t.key IS NULL OR t.id IN (SELECT job_id FROM k) RETURNING *), "
     PG_STATS_ENQUEUED(PG_NOW("$11"), "ins") PG_GROUPS_NOTED("ins")
     "SELECT " PG_JOB_COLS("") " FROM ins");
/* clang-format on */

/*
 * The same without keys, in one round trip: ids come from nextval in batch
 * order (the rows are sorted by ordinality before the projection that calls
 * it), so the k-th smallest returned id is item k. $1 and $12 (ids, keys)
 * are passed as NULL to keep one parameter layout. It sends its own
 * NOTIFY (woken) and sets jobd.notified for its transaction, so the
 * jobs_notify trigger does not run for it (schema version 15): the
 * trigger's PL/pgSQL call and its query over the transition table were a
 * cost of every group commit. It returns only each row's id and
 * created_at: every other column is what the caller sent (or its
 * default), so job_from_spec builds the job from the spec. The 23
 * columns of PG_JOB_COLS, six of them times through numeric, cost
 * PostgreSQL's output and libpq's parsing for every job of every group
 * commit (POST /v1/jobs), and told the caller nothing it did not know.
 */
/* clang-format off */
PG_STMT(st_enqueue_many_nokey,
     "WITH t AS (SELECT * FROM unnest($2::text[], $3::json[], $4::text[],"
     "                                $5::int[], $6::bigint[], $7::int[], $8::bigint[],"
     "                                $9::text[], $10::bigint[], $13::text[], $14::text[])"
     "           WITH ORDINALITY"
     "           AS t(type, payload, queue, priority, run_at, max_attempts, timeout_ms,"
     "                schedule, sched, tp, grp, ord)), "
     "ins AS (INSERT INTO jobd.jobs (id, queue, type, payload, status, priority, run_at, attempt,"
     "                       attempt_floor, max_attempts, idempotency_key, schedule,"
     "                       scheduled_for, timeout_ms, created_at, traceparent, grp) "
     "SELECT nextval('jobd.job_id_seq'), t.queue, t.type, t.payload, 'pending', t.priority,"
     "       COALESCE(" PG_US_TS("t.run_at") ", " PG_NOW("$11") "), 0, 0, t.max_attempts,"
     "       NULL, t.schedule, " PG_US_TS("t.sched") ", t.timeout_ms, " PG_NOW("$11") ", t.tp,"
     "       t.grp "
     "FROM (SELECT * FROM t ORDER BY ord) t "
     "WHERE $1::bigint[] IS NULL AND $12::text[] IS NULL"
     "  AND (SELECT set_config('jobd.notified', 'on', true)) = 'on' "
     "RETURNING id, queue, created_at, grp), "
     PG_STATS_ENQUEUED(PG_NOW("$11"), "ins") PG_GROUPS_NOTED("ins") ", "
     "woken AS (SELECT pg_notify('jobd_jobs', q.queue) FROM (SELECT DISTINCT queue FROM ins) q) "
     "SELECT id, " PG_TS_US("created_at") " FROM ins WHERE (SELECT count(*) FROM woken) >= 0");
/* clang-format on */

/*
 * Undoes what a batch's outcome did not keep: jobs decoded from a
 * transaction that then did not commit are not the caller's.
 */
static void
drop_outs(struct job *out, bool *replayed, size_t n)
{
    for (size_t i = 0; out != NULL && i < n; i++)
        job_fini(&out[i]);
    for (size_t i = 0; replayed != NULL && i < n; i++)
        replayed[i] = false;
}

/*
 * In a transaction of its own (pg_tx_begin), so that a COMMIT whose answer
 * is lost is followed by learning its outcome (pg/tx.c).
 */
int
pg_op_enqueue(struct store *st, const struct job_spec *spec, struct job *out, bool *replayed,
              struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    int rc = pg_tx_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = pg_tx_end(s, pg_enqueue_item(s, spec, NULL, out, replayed, err), err);
    if (rc != JOBD_OK)
        drop_outs(out, replayed, 1);
    return rc;
}

static int
cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Fills the array parameters of st_enqueue_many ($1..$10, $12..$14) for specs. */
#define BATCH_ARRAYS 13
static int
batch_arrays(const struct job_spec *specs, size_t n, const int64_t *ids, struct pg_array *a,
             const char **vals)
{
    for (size_t i = 0; i < n; i++) {
        const struct job_spec *sp = &specs[i];
        struct job_spec d = job_spec_with_defaults(sp);
        pg_array_add_i64(&a[0], ids[i], false);
        pg_array_add_str(&a[1], sp->type);
        pg_array_add_str(&a[2], d.payload);
        pg_array_add_str(&a[3], d.queue);
        pg_array_add_i64(&a[4], sp->priority, false);
        pg_array_add_i64(&a[5], sp->run_at_us, sp->run_at_us <= 0);
        pg_array_add_i64(&a[6], d.max_attempts, false);
        pg_array_add_i64(&a[7], sp->timeout_ms, sp->timeout_ms <= 0);
        pg_array_add_str(&a[8], sp->schedule);
        pg_array_add_i64(&a[9], sp->scheduled_for_us, sp->scheduled_for_us <= 0);
        pg_array_add_str(&a[10], sp->idempotency_key);
        pg_array_add_str(&a[11], sp->traceparent);
        pg_array_add_str(&a[12], sp->group);
    }
    for (int k = 0; k < BATCH_ARRAYS; k++) {
        const char *v = pg_array_end(&a[k]);
        if (v == NULL)
            return JOBD_E_NOMEM;
        vals[k < 10 ? k : k + 1] = v; /* $11 is "now" */
    }
    return JOBD_OK;
}

/* Allocates n job ids from the sequence into ids, ascending. */
static int
alloc_ids(struct store_pg *s, size_t n, int64_t *ids, struct jobd_error *err)
{
    char nb[24];
    const char *v1[1] = {pg_i64(nb, (int64_t)n)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_next_ids, 1, v1, &r, err);
    if (rc != JOBD_OK)
        return rc;
    if ((size_t)PQntuples(r) != n) {
        PQclear(r);
        return jobd_error_set(err, JOBD_E_INTERNAL, "jobs", "could not allocate job ids");
    }
    for (size_t i = 0; i < n; i++)
        ids[i] = pg_get_i64(r, (int)i, 0);
    PQclear(r);
    qsort(ids, n, sizeof *ids, cmp_i64);
    return JOBD_OK;
}

/*
 * The items the batch insert left out (got[i] false) had their key taken:
 * each is resolved by enqueue_one (replay, conflict, or a fresh insert).
 */
static int
resolve_taken(struct store_pg *s, const struct job_spec *specs, size_t n, const bool *got,
              struct job *out, bool *replayed, struct jobd_error *err)
{
    int rc = JOBD_OK;
    for (size_t i = 0; i < n && rc == JOBD_OK; i++) {
        if (got[i])
            continue;
        if (specs[i].idempotency_key == NULL)
            return jobd_error_set(err, JOBD_E_INTERNAL, "jobs", "jobs[%zu] was not inserted", i);
        char field[48];
        snprintf(field, sizeof field, "jobs[%zu].idempotency_key", i);
        rc = pg_enqueue_one(s, &specs[i], field, out ? &out[i] : NULL,
                            replayed ? &replayed[i] : NULL, NULL, err);
    }
    return rc;
}

/*
 * n jobs, some with idempotency keys, in one INSERT over arrays, all or
 * nothing. Ids are allocated first so result rows map back to items. The
 * insert and the lookups of taken keys (enqueue_one: replay, conflict, or a
 * fresh insert if the holder was pruned meanwhile) share one transaction.
 */
static int
enqueue_batch_keyed(struct store_pg *s, const struct job_spec *specs, size_t n, struct job *out,
                    bool *replayed, struct jobd_error *err)
{
    if (n > PG_BATCH_MAX)
        return jobd_error_set(err, JOBD_E_TOOBIG, "jobs", "a batch holds at most %d jobs",
                              PG_BATCH_MAX);
    int64_t *ids = malloc(n * sizeof *ids);
    bool *got = calloc(n, sizeof *got);
    struct pg_array a[BATCH_ARRAYS];
    for (int k = 0; k < BATCH_ARRAYS; k++)
        pg_array_begin(&a[k]);
    PGresult *r = NULL;
    bool in_tx = false;
    int rc = JOBD_OK;
    char nowb[24];
    const char *vals[14];
    if (ids == NULL || got == NULL) {
        rc = jobd_error_set(err, JOBD_E_NOMEM, "jobs", "out of memory");
        goto out;
    }
    if ((rc = pg_tx_begin(s, err)) != JOBD_OK)
        goto out;
    in_tx = true;
    if ((rc = alloc_ids(s, n, ids, err)) != JOBD_OK)
        goto out;
    if (batch_arrays(specs, n, ids, a, vals) != JOBD_OK) {
        rc = jobd_error_set(err, JOBD_E_NOMEM, "jobs", "out of memory");
        goto out;
    }
    vals[10] = pg_now_param(s, nowb);
    if ((rc = pg_exec(s, &st_enqueue_many, 14, vals, &r, err)) != JOBD_OK)
        goto out;
    for (int row = 0; row < PQntuples(r) && rc == JOBD_OK; row++) {
        int64_t id = pg_get_i64(r, row, 0);
        const int64_t *hit = bsearch(&id, ids, n, sizeof *ids, cmp_i64);
        if (hit == NULL) {
            rc = jobd_error_set(err, JOBD_E_INTERNAL, "jobs", "batch insert returned id %lld",
                                (long long)id);
            break;
        }
        got[hit - ids] = true;
        if (out != NULL && pg_row_to_job(r, row, 0, &out[hit - ids]) != JOBD_OK)
            rc = jobd_error_set(err, JOBD_E_NOMEM, "jobs", "out of memory");
    }
    if (rc == JOBD_OK)
        rc = resolve_taken(s, specs, n, got, out, replayed, err);
out:
    if (in_tx)
        rc = pg_tx_end(s, rc, err);
    if (rc != JOBD_OK)
        drop_outs(out, replayed, n);
    PQclear(r);
    for (int k = 0; k < BATCH_ARRAYS; k++)
        pg_array_fini(&a[k]);
    free(ids);
    free(got);
    return rc;
}

struct id_row {
    int64_t id;
    int row;
};

/* A copy of s, or NULL for NULL; *oom set when the copy fails. */
static char *
dup_or_null(const char *s, bool *oom)
{
    if (s == NULL)
        return NULL;
    char *c = strdup(s);
    if (c == NULL)
        *oom = true;
    return c;
}

/*
 * The job st_enqueue_many_nokey stored for sp (batch_arrays' columns, with
 * job_spec_with_defaults), given the id and created_at it returned: pending,
 * run_at = the spec's or created_at, never claimed. JOBD_E_NOMEM.
 */
static int
job_from_spec(const struct job_spec *sp, int64_t id, int64_t created_at_us, struct job *j)
{
    struct job_spec d = job_spec_with_defaults(sp);
    bool oom = false;
    memset(j, 0, sizeof *j);
    j->id = id;
    j->queue = dup_or_null(d.queue, &oom);
    j->type = dup_or_null(sp->type, &oom);
    j->payload = dup_or_null(d.payload, &oom);
    j->status = JOB_PENDING;
    j->priority = sp->priority;
    j->run_at_us = sp->run_at_us > 0 ? sp->run_at_us : created_at_us;
    j->max_attempts = d.max_attempts;
    j->schedule = dup_or_null(sp->schedule, &oom);
    j->scheduled_for_us = sp->scheduled_for_us > 0 ? sp->scheduled_for_us : 0;
    j->timeout_ms = sp->timeout_ms > 0 ? sp->timeout_ms : 0;
    j->created_at_us = created_at_us;
    j->traceparent = dup_or_null(sp->traceparent, &oom);
    j->group = dup_or_null(sp->group, &oom);
    if (oom) {
        job_fini(j);
        return JOBD_E_NOMEM;
    }
    return JOBD_OK;
}

static int
cmp_id_row(const void *a, const void *b)
{
    const struct id_row *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/*
 * A batch without keys: one statement (st_enqueue_many_nokey), in the
 * caller's transaction. ids, if not NULL, gets item i's id at ids[i].
 */
static int
batch_nokey_in_tx(struct store_pg *s, const struct job_spec *specs, size_t n, struct job *out,
                  bool *replayed, int64_t *ids, struct jobd_error *err)
{
    if (n > PG_BATCH_MAX)
        return jobd_error_set(err, JOBD_E_TOOBIG, "jobs", "a batch holds at most %d jobs",
                              PG_BATCH_MAX);
    struct pg_array a[BATCH_ARRAYS];
    for (int k = 0; k < BATCH_ARRAYS; k++)
        pg_array_begin(&a[k]);
    int64_t *zeros = calloc(n, sizeof *zeros);
    struct id_row *rows = NULL;
    PGresult *r = NULL;
    char nowb[24];
    const char *vals[14];
    int rc = JOBD_OK;
    if (zeros == NULL || batch_arrays(specs, n, zeros, a, vals) != JOBD_OK) {
        rc = jobd_error_set(err, JOBD_E_NOMEM, "jobs", "out of memory");
        goto out;
    }
    vals[0] = NULL;
    vals[11] = NULL;
    vals[10] = pg_now_param(s, nowb);
    if ((rc = pg_exec(s, &st_enqueue_many_nokey, 14, vals, &r, err)) != JOBD_OK)
        goto out;
    if ((size_t)PQntuples(r) != n) {
        rc = jobd_error_set(err, JOBD_E_INTERNAL, "jobs", "batch insert returned %d of %zu rows",
                            PQntuples(r), n);
        goto out;
    }
    if (out != NULL || ids != NULL) {
        if ((rows = malloc(n * sizeof *rows)) == NULL) {
            rc = jobd_error_set(err, JOBD_E_NOMEM, "jobs", "out of memory");
            goto out;
        }
        for (size_t i = 0; i < n; i++)
            rows[i] = (struct id_row){pg_get_i64(r, (int)i, 0), (int)i};
        qsort(rows, n, sizeof *rows, cmp_id_row);
        for (size_t i = 0; ids != NULL && i < n; i++)
            ids[i] = rows[i].id;
        for (size_t i = 0; out != NULL && i < n && rc == JOBD_OK; i++)
            if (job_from_spec(&specs[i], rows[i].id, pg_get_i64(r, rows[i].row, 1), &out[i]) !=
                JOBD_OK)
                rc = jobd_error_set(err, JOBD_E_NOMEM, "jobs", "out of memory");
    }
out:
    if (rc != JOBD_OK)
        for (size_t i = 0; out != NULL && i < n; i++)
            job_fini(&out[i]);
    for (size_t i = 0; replayed != NULL && i < n; i++)
        replayed[i] = false;
    PQclear(r);
    for (int k = 0; k < BATCH_ARRAYS; k++)
        pg_array_fini(&a[k]);
    free(zeros);
    free(rows);
    return rc;
}

/*
 * The statement in a transaction of its own (pg_tx_begin): BEGIN goes out
 * with it, COMMIT after, so the caller learns a lost COMMIT's outcome.
 */
static int
enqueue_batch_nokey(struct store_pg *s, const struct job_spec *specs, size_t n, struct job *out,
                    bool *replayed, struct jobd_error *err)
{
    int rc = pg_tx_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = pg_tx_end(s, batch_nokey_in_tx(s, specs, n, out, replayed, NULL, err), err);
    if (rc != JOBD_OK)
        drop_outs(out, replayed, n);
    return rc;
}

/*
 * A batch in which some job has a debounce or a unique window, or has
 * parents and some job has an idempotency key: one enqueue per job (each
 * waits for its parents or settles; each takes its key, pg/enqkeys.c), in
 * one transaction, all or nothing. Other batches with parents take
 * enqueue_batch_deps_set.
 */
static int
enqueue_batch_deps(struct store_pg *s, const struct job_spec *specs, size_t n, struct job *out,
                   bool *replayed, struct jobd_error *err)
{
    int rc = pg_tx_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = pg_lock_batch_keys(s, specs, n, err);
    for (size_t i = 0; i < n && rc == JOBD_OK; i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "jobs[%zu].", i);
        rc = pg_enqueue_item(s, &specs[i], prefix, out ? &out[i] : NULL,
                             replayed ? &replayed[i] : NULL, err);
    }
    rc = pg_tx_end(s, rc, err);
    if (rc != JOBD_OK)
        drop_outs(out, replayed, n);
    return rc;
}

/*
 * $1 the batch's jobs that have parents, $2/$3/$4 its edges (child, parent,
 * run on failure), $5 now: jobd.deps_attach_set (schema version 35) gives
 * them their parents and lets them wait or settle. '{}', or {child, parent}
 * for the first child naming a job that does not exist.
 */
PG_STMT(st_deps_attach_set,
        "SELECT jobd.deps_attach_set($1::bigint[], $2::bigint[], $3::bigint[], $4::boolean[], "
        "COALESCE(" PG_US_TS("$5") ", now()))::text");

/* $1 ids: those jobs as they are now, in whichever table holds them. */
PG_STMT(st_get_many, "SELECT " PG_JOB_COLS("") " FROM jobd.all_jobs WHERE id = ANY($1::bigint[])");

/* Reads again the jobs of out that have parents (waiting, or settled at once). */
static int
reread_children(struct store_pg *s, const struct job_spec *specs, size_t n, const int64_t *ids,
                const char *kids, struct job *out, struct jobd_error *err)
{
    const char *vals[1] = {kids};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_get_many, 1, vals, &r, err);
    for (int row = 0; rc == JOBD_OK && row < PQntuples(r); row++) {
        int64_t id = pg_get_i64(r, row, 0);
        const int64_t *hit = bsearch(&id, ids, n, sizeof *ids, cmp_i64);
        if (hit == NULL || specs[hit - ids].n_depends_on == 0)
            continue;
        job_fini(&out[hit - ids]);
        if (pg_row_to_job(r, row, 0, &out[hit - ids]) != JOBD_OK)
            rc = jobd_error_set(err, JOBD_E_NOMEM, "jobs", "out of memory");
    }
    PQclear(r);
    return rc;
}

/*
 * A batch in which some jobs have parents but none has a key, a debounce
 * or a unique window: the plain batch insert (st_enqueue_many_nokey), then
 * every edge at once (jobd.deps_attach_set), in the caller's transaction.
 * The same outcome as one pg_enqueue_item per job, with a fixed number of
 * statements: that path cost three round trips and ~0.5 ms of statements
 * a job (docs/BENCHMARKS.md, Dependencies).
 */
static int
batch_deps_set_in_tx(struct store_pg *s, const struct job_spec *specs, size_t n, struct job *out,
                     bool *replayed, struct jobd_error *err)
{
    int64_t *ids = malloc(n * sizeof *ids);
    if (ids == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, "jobs", "out of memory");
    int rc = batch_nokey_in_tx(s, specs, n, out, replayed, ids, err);
    struct pg_array a[4];
    for (int k = 0; k < 4; k++)
        pg_array_begin(&a[k]);
    PGresult *r = NULL;
    if (rc != JOBD_OK)
        goto out;
    for (size_t i = 0; i < n; i++) {
        if (specs[i].n_depends_on == 0)
            continue;
        pg_array_add_i64(&a[0], ids[i], false);
        for (size_t k = 0; k < specs[i].n_depends_on; k++) {
            pg_array_add_i64(&a[1], ids[i], false);
            pg_array_add_i64(&a[2], specs[i].depends_on[k], false);
            pg_array_add_str(&a[3], specs[i].run_on_parent_failure ? "true" : "false");
        }
    }
    char nowb[24];
    const char *vals[5] = {pg_array_end(&a[0]), pg_array_end(&a[1]), pg_array_end(&a[2]),
                           pg_array_end(&a[3]), pg_now_param(s, nowb)};
    if (vals[0] == NULL || vals[1] == NULL || vals[2] == NULL || vals[3] == NULL) {
        rc = jobd_error_set(err, JOBD_E_NOMEM, "jobs", "out of memory");
        goto out;
    }
    if ((rc = pg_exec(s, &st_deps_attach_set, 5, vals, &r, err)) != JOBD_OK)
        goto out;
    long long child = 0, parent = 0;
    if (sscanf(PQgetvalue(r, 0, 0), "{%lld,%lld}", &child, &parent) == 2) {
        const int64_t *hit = bsearch(&(int64_t){child}, ids, n, sizeof *ids, cmp_i64);
        char f[48] = "depends_on";
        if (hit != NULL)
            snprintf(f, sizeof f, "jobs[%zu].depends_on", (size_t)(hit - ids));
        rc = jobd_error_set(err, JOBD_E_INVALID, f, "depends_on: no job with id %lld", parent);
        goto out;
    }
    if (out != NULL)
        rc = reread_children(s, specs, n, ids, vals[0], out, err);
out:
    PQclear(r);
    for (int k = 0; k < 4; k++)
        pg_array_fini(&a[k]);
    free(ids);
    return rc;
}

/* batch_deps_set_in_tx in a transaction of its own (pg_tx_begin). */
static int
enqueue_batch_deps_set(struct store_pg *s, const struct job_spec *specs, size_t n, struct job *out,
                       bool *replayed, struct jobd_error *err)
{
    if (n > PG_BATCH_MAX)
        return jobd_error_set(err, JOBD_E_TOOBIG, "jobs", "a batch holds at most %d jobs",
                              PG_BATCH_MAX);
    int rc = pg_tx_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = pg_tx_end(s, batch_deps_set_in_tx(s, specs, n, out, replayed, err), err);
    if (rc != JOBD_OK)
        drop_outs(out, replayed, n);
    return rc;
}

int
pg_op_enqueue_batch(struct store *st, const struct job_spec *specs, size_t n, struct job *out,
                    bool *replayed, struct jobd_error *err)
{
    bool keyed = false, deps = false, windows = false;
    for (size_t i = 0; i < n; i++) {
        keyed = keyed || specs[i].idempotency_key != NULL;
        deps = deps || specs[i].n_depends_on > 0;
        windows = windows || specs[i].debounce.key != NULL || specs[i].unique.key != NULL;
    }
    /* one job with parents costs the same either way: the older path */
    if (deps && !keyed && !windows && n > 1)
        return enqueue_batch_deps_set(pg_of(st), specs, n, out, replayed, err);
    if (deps || windows)
        return enqueue_batch_deps(pg_of(st), specs, n, out, replayed, err);
    if (!keyed)
        return enqueue_batch_nokey(pg_of(st), specs, n, out, replayed, err);
    return enqueue_batch_keyed(pg_of(st), specs, n, out, replayed, err);
}
