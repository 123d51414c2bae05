/*
 * sqlite/enqkeys.c — enqueues with a debounce or a unique window on SQLite
 * (docs/MODEL.md, Debounce and unique windows; table enqueue_keys, schema
 * version 20), and the retention of expired windows.
 *
 * Inside the enqueue's BEGIN IMMEDIATE transaction: the single writer lock
 * serialises every enqueue of a key, so looking the key up and then acting
 * on what it holds cannot race another enqueue. The pending holder is
 * replaced in place (debounce) or the holder inside its window answered
 * (unique); otherwise a new job is made and the key pointed at it.
 */
#include <stdio.h>
#include <string.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/sqlite/internal.h"

/* The key row's identity for a spec: a debounce key per queue and type, a unique key global. */
struct ek_key {
    const char *kind, *queue, *type, *key;
    const struct job_window *w;
    bool debounce;
};

static void
bind_key(sqlite3_stmt *stmt, const struct ek_key *k)
{
    sq_bind_text(stmt, 1, k->kind);
    sq_bind_text(stmt, 2, k->queue);
    sq_bind_text(stmt, 3, k->type);
    sq_bind_text(stmt, 4, k->key);
}

/* The key's row: *holder (0 = none) and *until (0 = none). */
static int
find_key(struct sqlite_store *s, const struct ek_key *k, int64_t *holder, int64_t *until,
         struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT job_id, coalesce(until, 0) FROM enqueue_keys"
                        " WHERE kind = ?1 AND queue = ?2 AND type = ?3 AND key = ?4",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    bind_key(stmt, k);
    *holder = *until = 0;
    if ((rc = sq_step_row(s, stmt, "look up the enqueue key", err)) <= 0)
        return rc;
    *holder = sqlite3_column_int64(stmt, 0);
    *until = sqlite3_column_int64(stmt, 1);
    sq_reset(stmt);
    return JOBD_OK;
}

/* Debounce: the pending holder replaced in place; *done false if it is not pending. */
static int
debounce_holder(struct sqlite_store *s, const struct job_spec *d, int64_t holder, int64_t now,
                const struct ek_key *k, struct job *out, bool *done, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "UPDATE jobs SET payload = ?2, priority = ?3, run_at = ?4"
                        " WHERE id = ?1 AND status = 'pending'",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, holder);
    sq_bind_text(stmt, 2, d->payload);
    sqlite3_bind_int(stmt, 3, d->priority);
    sqlite3_bind_int64(stmt, 4, now + k->w->for_ms * 1000);
    if ((rc = sq_step_done(s, stmt, "debounce a job", err)) != JOBD_OK)
        return rc;
    *done = sqlite3_changes(s->db) == 1;
    if (!*done || out == NULL)
        return JOBD_OK;
    job_fini(out);
    return sq_load_job(s, holder, out, err);
}

/* Unique: the holder as it is now; *done false when it was deleted. */
static int
unique_holder(struct sqlite_store *s, int64_t holder, struct job *out, bool *done,
              struct jobd_error *err)
{
    struct job j = {0};
    int rc = sq_load_job(s, holder, &j, err);
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

/* Points the key at job id, with a new window from now (none for a debounce). */
static int
point_key(struct sqlite_store *s, const struct ek_key *k, int64_t id, int64_t now,
          struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "INSERT INTO enqueue_keys (kind, queue, type, key, job_id, until)"
                        " VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
                        " ON CONFLICT (kind, queue, type, key)"
                        " DO UPDATE SET job_id = excluded.job_id, until = excluded.until",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    bind_key(stmt, k);
    sqlite3_bind_int64(stmt, 5, id);
    sq_bind_opt(stmt, 6, k->debounce ? 0 : now + k->w->for_ms * 1000);
    return sq_step_done(s, stmt, "record the enqueue key", err);
}

int
sq_enqueue_window(struct sqlite_store *s, const struct job_spec *sp, int64_t now,
                  const char *prefix, struct job *out, bool *replayed, struct jobd_error *err)
{
    struct job_spec d = job_spec_with_defaults(sp);
    bool deb = sp->debounce.key != NULL;
    struct ek_key k = {
        .kind = deb ? "debounce" : "unique",
        .queue = deb ? d.queue : "",
        .type = deb ? sp->type : "",
        .key = deb ? sp->debounce.key : sp->unique.key,
        .w = deb ? &sp->debounce : &sp->unique,
        .debounce = deb,
    };
    int64_t holder = 0, until = 0;
    bool done = false;
    int rc = find_key(s, &k, &holder, &until, err);
    if (rc == JOBD_OK && holder != 0 && deb)
        rc = debounce_holder(s, &d, holder, now, &k, out, &done, err);
    else if (rc == JOBD_OK && holder != 0 && until > now)
        rc = unique_holder(s, holder, out, &done, err);
    if (rc != JOBD_OK || done) {
        if (replayed != NULL)
            *replayed = done;
        return rc;
    }
    struct job_spec fresh = *sp;
    if (deb)
        fresh.run_at_us = now + k.w->for_ms * 1000;
    int64_t id = 0;
    if ((rc = sq_enqueue_one(s, &fresh, now, prefix, out, NULL, &id, err)) != JOBD_OK)
        return rc;
    return point_key(s, &k, id, now, err);
}

int
sq_enqueue_item(struct sqlite_store *s, const struct job_spec *sp, int64_t now, const char *prefix,
                struct job *out, bool *replayed, struct jobd_error *err)
{
    if (sp->debounce.key != NULL || sp->unique.key != NULL)
        return sq_enqueue_window(s, sp, now, prefix, out, replayed, err);
    return sq_enqueue_one(s, sp, now, prefix, out, replayed, NULL, err);
}

int
sq_op_keys_expire(struct store *st, int limit, int *deleted, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_stmt *stmt;
    rc = sq_prepare(s,
                    "DELETE FROM enqueue_keys WHERE rowid IN (SELECT rowid FROM enqueue_keys"
                    " WHERE until <= ?1 ORDER BY until LIMIT ?2)",
                    &stmt, err);
    if (rc == JOBD_OK) {
        sqlite3_bind_int64(stmt, 1, sq_now(s));
        sqlite3_bind_int(stmt, 2, limit);
        rc = sq_step_done(s, stmt, "expire unique windows", err);
    }
    int n = sqlite3_changes(s->db);
    if (rc == JOBD_OK && (rc = sq_commit(s, err)) == JOBD_OK) {
        *deleted = n;
        return JOBD_OK;
    }
    sq_rollback(s);
    return rc;
}
