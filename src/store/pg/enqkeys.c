/*
 * pg/enqkeys.c — enqueues with a debounce or a unique window on PostgreSQL
 * (docs/MODEL.md, Debounce and unique windows; table jobd.enqueue_keys,
 * pg/schema_enqkeys.c), and the retention of expired windows.
 *
 * Exactly once under concurrent enqueues: the first statement of such an
 * enqueue inserts the key's row or, when it exists, locks it (INSERT ... ON
 * CONFLICT DO UPDATE), so every enqueue of one key waits for the one before
 * it to commit and then sees what it did. Holding that lock, each following
 * statement reads with a fresh snapshot (READ COMMITTED): the holder job is
 * replaced in place (debounce, while pending) or answered (unique, inside
 * its window), or a new job is made and the row pointed at it, all in the
 * enqueue's own transaction. No decision is taken on a snapshot older than
 * the lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/pg/internal.h"

/*
 * $1 kind, $2 queue, $3 type, $4 key, $5 now: the key's row, inserted
 * (job_id 0) or locked, with its job, whether its window is over, and now.
 */
/* clang-format off */
PG_STMT(ek_lock,
        "INSERT INTO jobd.enqueue_keys AS k (kind, queue, type, key, job_id)"
        " VALUES ($1::text, $2::text, $3::text, $4::text, 0)"
        " ON CONFLICT (kind, queue, type, key) DO UPDATE SET job_id = k.job_id"
        " RETURNING k.job_id, COALESCE(k.until <= " PG_NOW("$5") ", false),"
        " " PG_TS_US(PG_NOW("$5")));

/* $1..$4 the key, $5 its new job, $6 now, $7 the window (ms; NULL for a debounce). */
PG_STMT(ek_point,
        "UPDATE jobd.enqueue_keys SET job_id = $5::bigint,"
        " until = " PG_NOW("$6") " + " PG_MS("$7")
        " WHERE kind = $1::text AND queue = $2::text AND type = $3::text AND key = $4::text");

/*
 * $1 id, $2 payload, $3 priority, $4 delay (ms), $5 now: a debounce's
 * replacement. It notifies its queue as an insert does: a shorter `for`
 * than the last one makes the job due sooner than a sleeping worker knows.
 */
PG_STMT(ek_debounce,
        "WITH u AS (UPDATE jobd.jobs SET payload = $2::json, priority = $3::int,"
        " run_at = " PG_NOW("$5") " + " PG_MS("$4")
        " WHERE id = $1::bigint AND status = 'pending' RETURNING *),"
        " woken AS (SELECT pg_notify('jobd_jobs', queue) FROM u)"
        " SELECT " PG_JOB_COLS("") " FROM u WHERE (SELECT count(*) FROM woken) >= 0");

/* $1 now, $2 limit: expired windows; rows an enqueue holds are left to it. */
PG_STMT(ek_expire,
        "WITH x AS (DELETE FROM jobd.enqueue_keys WHERE ctid = ANY(ARRAY("
        "  SELECT ctid FROM jobd.enqueue_keys WHERE until <= " PG_NOW("$1")
        "  ORDER BY until LIMIT $2::int FOR UPDATE SKIP LOCKED)) RETURNING 1)"
        " SELECT count(*) FROM x");
/* clang-format on */

/* The key row's identity for spec (the first four parameters of the statements above). */
struct ek_key {
    const char *kind, *queue, *type, *key;
    const struct job_window *w;
    bool debounce;
};

static struct ek_key
key_of(const struct job_spec *sp, const struct job_spec *d)
{
    bool deb = sp->debounce.key != NULL;
    return (struct ek_key){
        .kind = deb ? "debounce" : "unique",
        .queue = deb ? d->queue : "",
        .type = deb ? sp->type : "",
        .key = deb ? sp->debounce.key : sp->unique.key,
        .w = deb ? &sp->debounce : &sp->unique,
        .debounce = deb,
    };
}

/* Locks k's row (ek_lock): *holder (0 = none), *expired, *now_us. */
static int
lock_key(struct store_pg *s, const struct ek_key *k, int64_t *holder, bool *expired,
         int64_t *now_us, struct jobd_error *err)
{
    char nowb[24];
    const char *vals[5] = {k->kind, k->queue, k->type, k->key, pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &ek_lock, 5, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    *holder = pg_get_i64(r, 0, 0);
    *expired = PQgetvalue(r, 0, 1)[0] == 't';
    *now_us = pg_get_i64(r, 0, 2);
    PQclear(r);
    return JOBD_OK;
}

/*
 * Debounce: replaces the pending holder in place; *done false when it is
 * not pending any more (claimed, ended, deleted).
 */
static int
debounce_holder(struct store_pg *s, const struct job_spec *d, int64_t holder,
                const struct ek_key *k, struct job *out, bool *done, struct jobd_error *err)
{
    char ib[24], pb[24], fb[24], nowb[24];
    const char *vals[5] = {pg_i64(ib, holder), d->payload, pg_i64(pb, d->priority),
                           pg_i64(fb, k->w->for_ms), pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &ek_debounce, 5, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    *done = PQntuples(r) == 1;
    if (*done && out != NULL) {
        job_fini(out);
        rc = pg_row_to_job(r, 0, 0, out);
    }
    PQclear(r);
    return rc;
}

/* Unique: the holder as it is now; *done false when it was deleted. */
static int
unique_holder(struct store_pg *s, int64_t holder, struct job *out, bool *done,
              struct jobd_error *err)
{
    struct job j = {0};
    int rc = pg_op_get(&s->base, holder, &j, err);
    *done = rc == JOBD_OK;
    if (rc == JOBD_E_NOTFOUND)
        return JOBD_OK; /* deleted: the key is free again */
    if (rc == JOBD_OK && out != NULL) {
        job_fini(out);
        job_move(out, &j);
    }
    job_fini(&j);
    return rc;
}

/* Points k's row at the new job id, with a new window from now. */
static int
point_key(struct store_pg *s, const struct ek_key *k, int64_t id, struct jobd_error *err)
{
    char ib[24], nowb[24], fb[24];
    const char *vals[7] = {k->kind,
                           k->queue,
                           k->type,
                           k->key,
                           pg_i64(ib, id),
                           pg_now_param(s, nowb),
                           k->debounce ? NULL : pg_i64(fb, k->w->for_ms)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &ek_point, 7, vals, &r, err);
    PQclear(r);
    return rc;
}

int
pg_enqueue_window(struct store_pg *s, const struct job_spec *sp, const char *prefix,
                  struct job *out, bool *replayed, struct jobd_error *err)
{
    struct job_spec d = job_spec_with_defaults(sp);
    struct ek_key k = key_of(sp, &d);
    int64_t holder = 0, now_us = 0;
    bool expired = false, done = false;
    int rc = lock_key(s, &k, &holder, &expired, &now_us, err);
    if (rc == JOBD_OK && holder != 0 && k.debounce)
        rc = debounce_holder(s, &d, holder, &k, out, &done, err);
    else if (rc == JOBD_OK && holder != 0 && !expired)
        rc = unique_holder(s, holder, out, &done, err);
    if (rc != JOBD_OK || done) {
        if (replayed != NULL)
            *replayed = done;
        return rc;
    }
    struct job_spec fresh = *sp;
    if (k.debounce)
        fresh.run_at_us = now_us + k.w->for_ms * 1000;
    char field[64];
    snprintf(field, sizeof field, "%sidempotency_key", prefix ? prefix : "");
    int64_t id = 0;
    if ((rc = pg_enqueue_one(s, &fresh, field, out, NULL, &id, err)) != JOBD_OK)
        return rc;
    return point_key(s, &k, id, err);
}

int
pg_enqueue_item(struct store_pg *s, const struct job_spec *sp, const char *prefix, struct job *out,
                bool *replayed, struct jobd_error *err)
{
    if (sp->debounce.key != NULL || sp->unique.key != NULL)
        return pg_enqueue_window(s, sp, prefix, out, replayed, err);
    char field[64];
    snprintf(field, sizeof field, "%sidempotency_key", prefix ? prefix : "");
    return pg_enqueue_one(s, sp, field, out, replayed, NULL, err);
}

static int
cmp_key(const void *a, const void *b)
{
    const struct ek_key *x = a, *y = b;
    int c = strcmp(x->kind, y->kind);
    if (c == 0)
        c = strcmp(x->queue, y->queue);
    if (c == 0)
        c = strcmp(x->type, y->type);
    return c != 0 ? c : strcmp(x->key, y->key);
}

int
pg_lock_batch_keys(struct store_pg *s, const struct job_spec *specs, size_t n,
                   struct jobd_error *err)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += specs[i].debounce.key != NULL || specs[i].unique.key != NULL;
    if (m < 2)
        return JOBD_OK; /* one key: its enqueue takes it, no order to keep */
    struct ek_key *v = malloc(m * sizeof *v);
    if (v == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, "jobs", "out of memory");
    m = 0;
    for (size_t i = 0; i < n; i++)
        if (specs[i].debounce.key != NULL || specs[i].unique.key != NULL) {
            struct job_spec d = job_spec_with_defaults(&specs[i]);
            v[m++] = key_of(&specs[i], &d); /* d.queue: the spec's, or the static default */
        }
    qsort(v, m, sizeof *v, cmp_key);
    int rc = JOBD_OK;
    for (size_t i = 0; i < m && rc == JOBD_OK; i++) {
        int64_t holder, now_us;
        bool expired;
        rc = lock_key(s, &v[i], &holder, &expired, &now_us, err);
    }
    free(v);
    return rc;
}

int
pg_op_keys_expire(struct store *st, int limit, int *deleted, struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    char nowb[24], lb[24];
    const char *vals[2] = {pg_now_param(s, nowb), pg_i64(lb, limit)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &ek_expire, 2, vals, &r, err);
    if (rc == JOBD_OK)
        *deleted = (int)pg_get_i64(r, 0, 0);
    PQclear(r);
    return rc;
}
