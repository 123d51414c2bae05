/*
 * sqlite/groups.c — groups on SQLite (docs/DESIGN.md, Groups; docs/MODEL.md,
 * Groups): noting a grouped enqueue, and the fair claim of a grouped queue.
 *
 * A queue without group limits is claimed by tags (sqlite/groups_tag.c;
 * docs/DESIGN.md, Groups, "Tags on SQLite"); one with them as follows.
 * The claim runs inside the claim's write transaction (BEGIN IMMEDIATE), so
 * nothing changes under it: one SELECT picks the jobs as pg/groups.c's
 * statement does (the next groups after the connection's cursor, by name,
 * their heads by probes of jobs_group_claim, and the queue's first jobs in
 * plain claim order; the k-th job of every group before the (k+1)-th of
 * any at equal priority; within the group limits), then each picked job is
 * flipped to running and the claimed groups' window counts are kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/qlimits.h"
#include "store/sqlite/internal.h"
#include "util/clock.h"

int
sq_groups_noted(struct sqlite_store *s, const char *queue, const char *group,
                struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = JOBD_OK;
    bool marked = false;
    if (group != NULL) { /* a job of a group: the queue is grouped from now on */
        rc = sq_prepare(s,
                        "INSERT INTO queues (name, grouped) VALUES (?1, 1) "
                        "ON CONFLICT (name) DO UPDATE SET grouped = 1 WHERE grouped = 0",
                        &stmt, err);
        if (rc != JOBD_OK)
            return rc;
        sq_bind_text(stmt, 1, queue);
        if ((rc = sq_step_done(s, stmt, "mark a grouped queue", err)) != JOBD_OK)
            return rc;
        marked = sqlite3_changes(s->db) > 0;
    } else { /* a job without one: its group '' is noted if the queue is grouped */
        rc = sq_prepare(s, "SELECT 1 FROM queues WHERE name = ?1 AND grouped = 1", &stmt, err);
        if (rc != JOBD_OK)
            return rc;
        sq_bind_text(stmt, 1, queue);
        rc = sq_step_row(s, stmt, "read a queue", err);
        sq_reset(stmt);
        if (rc <= 0)
            return rc;
    }
    rc = sq_prepare(s,
                    "INSERT OR IGNORE INTO job_groups (queue, grp) "
                    "SELECT ?1, ?2 WHERE ?2 IS NOT NULL UNION SELECT ?1, '' WHERE ?3",
                    &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, queue);
    sq_bind_text(stmt, 2, group);
    sqlite3_bind_int(stmt, 3, marked || group == NULL);
    return sq_step_done(s, stmt, "note a group", err);
}

/* The claim's types as a JSON array (for json_each), or NULL for any; malloc'd. */
static char *
types_json(const struct claim_req *req, bool *oom)
{
    *oom = false;
    if (req->types == NULL || req->n_types == 0)
        return NULL;
    size_t cap = 3;
    for (size_t i = 0; i < req->n_types; i++)
        cap += 2 * strlen(req->types[i]) + 3;
    char *b = malloc(cap), *p = b;
    if (b == NULL) {
        *oom = true;
        return NULL;
    }
    *p++ = '[';
    for (size_t i = 0; i < req->n_types; i++) {
        if (i > 0)
            *p++ = ',';
        *p++ = '"';
        for (const char *c = req->types[i]; *c; c++) {
            if (*c == '"' || *c == '\\')
                *p++ = '\\';
            *p++ = *c;
        }
        *p++ = '"';
    }
    *p++ = ']';
    *p = '\0';
    return b;
}

#define SQ_GR_TYPES "(?5 IS NULL OR type IN (SELECT value FROM json_each(?5)))"
/*
 * ?1 queue, ?2 limit, ?3 now, ?4 group_max_running (NULL = none), ?5
 * types (JSON array, NULL = any), ?6 group rate limit (NULL = none), ?7 the
 * window's start, ?8 the cursor. Rows: the picked jobs' ids and groups (''
 * = none), by group, each with whether job_groups has the group's row;
 * then (id NULL) the next cursor. The parts are those of pg/groups.c.
 */
/* clang-format off */
static const char pick_sql[] =
    "WITH g AS (SELECT grp, row_number() OVER (ORDER BY ord, grp) AS pos FROM ("
    "   SELECT * FROM (SELECT grp, 0 AS ord FROM job_groups WHERE queue = ?1 AND grp > ?8"
    "                  ORDER BY grp LIMIT 4 * ?2)"
    "   UNION ALL"
    "   SELECT * FROM (SELECT grp, 1 AS ord FROM job_groups WHERE queue = ?1 AND grp <= ?8"
    "                  ORDER BY grp LIMIT 4 * ?2)) ORDER BY ord, grp LIMIT 4 * ?2),"
    " h AS (SELECT j.id, COALESCE(j.grp, '') AS grp, j.priority, j.run_at, g.pos FROM g, jobs j"
    "        WHERE j.id IN (SELECT id FROM jobs INDEXED BY jobs_group_claim"
    "               WHERE queue = ?1 AND grp IS NULLIF(g.grp, '') AND status = 'pending'"
    "                 AND tag IS NULL"
    "                 AND +run_at <= ?3 AND " SQ_GR_TYPES
    "               ORDER BY priority DESC, run_at, id"
    "               LIMIT (?2 + (SELECT count(*) FROM g) - 1) / max((SELECT count(*) FROM g), 1))"
    "        ORDER BY g.pos LIMIT ?2),"
" t AS (SELECT id, COALESCE(grp, '') AS grp, priority, run_at FROM jobs INDEXED BY jobs_claim_queue"
    "        WHERE queue = ?1 AND status = 'pending' AND +run_at <= ?3 AND " SQ_GR_TYPES
    "          AND id NOT IN (SELECT id FROM h)"
    "        ORDER BY priority DESC, run_at, id"
    "        LIMIT max(?2 - (SELECT count(*) FROM h), 1)),"
    " cand AS (SELECT * FROM h UNION ALL SELECT *, NULL FROM t),"
    " run AS (SELECT COALESCE(grp, '') AS grp, count(*) AS n FROM jobs INDEXED BY jobs_lease"
    "          WHERE ?4 IS NOT NULL AND status = 'running' AND queue = ?1 GROUP BY 1),"
    " z AS (SELECT c.*, COALESCE(min(c.pos) OVER (PARTITION BY c.grp), 4 * ?2 + 1) AS turn,"
    "   row_number() OVER (PARTITION BY c.grp ORDER BY c.priority DESC, c.run_at, c.id) AS rn,"
    "   min(CASE WHEN ?4 IS NULL THEN ?2"
    "            ELSE ?4 - COALESCE((SELECT r.n FROM run r WHERE r.grp = c.grp), 0) END,"
    "       CASE WHEN ?6 IS NULL THEN ?2 WHEN x.rate_window_us >= ?7 THEN ?6 - x.rate_count"
    "            ELSE ?6 END) AS allow"
    "   , x.grp IS NOT NULL AS known"
    "   FROM cand c LEFT JOIN job_groups x ON x.queue = ?1 AND x.grp = c.grp) "
    "SELECT * FROM (SELECT id, grp, 0 AS part, known FROM z WHERE rn <= allow"
    "               ORDER BY priority DESC, rn, turn, run_at, id LIMIT ?2) "
    "UNION ALL SELECT NULL, grp, 1, 1 FROM g"
    " WHERE pos = COALESCE((SELECT max(pos) FROM h), (SELECT max(pos) FROM g)) "
    "ORDER BY 3, 2";
/* clang-format on */

/* The picked jobs' ids and the groups to stamp, with how many each got and
 * whether job_groups has their row. */
struct pick {
    int64_t *ids;
    size_t n_ids;
    char **grps;
    int *got;
    bool *known;
    size_t n_grps;
};

static void
pick_fini(struct pick *p)
{
    for (size_t i = 0; i < p->n_grps; i++)
        free(p->grps[i]);
    free(p->ids);
    free(p->grps);
    free(p->got);
    free(p->known);
}

/* Adds one to group g's count (0 for a group only looked at). The rows come
 * by group (pick_sql's ORDER BY), so only the last group can be g: a search
 * of all of them was a string comparison per group per job (a claim of 900
 * jobs of 900 groups: 400,000). false on OOM. */
static bool
pick_group(struct pick *p, const char *g, int add, bool known, size_t cap)
{
    if (p->n_grps > 0 && strcmp(p->grps[p->n_grps - 1], g) == 0) {
        p->got[p->n_grps - 1] += add;
        return true;
    }
    if (p->n_grps == cap || (p->grps[p->n_grps] = strdup(g)) == NULL)
        return false;
    p->known[p->n_grps] = known;
    p->got[p->n_grps++] = add;
    return true;
}

/* Runs pick_sql into p (sized for limit jobs and 2 * limit groups), moving cursor on. */
static int
pick(struct sqlite_store *s, const char *q, int limit, int64_t now, const char *types,
     const struct qlimits_row *lim, int64_t window_us, char *cursor, struct pick *p,
     struct jobd_error *err)
{
    size_t cap = 2 * (size_t)limit + 1;
    p->ids = calloc((size_t)limit + 1, sizeof *p->ids);
    p->grps = calloc(cap, sizeof *p->grps);
    p->got = calloc(cap, sizeof *p->got);
    p->known = calloc(cap, sizeof *p->known);
    if (p->ids == NULL || p->grps == NULL || p->got == NULL || p->known == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, pick_sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, q);
    sqlite3_bind_int(stmt, 2, limit);
    sqlite3_bind_int64(stmt, 3, now);
    sq_bind_opt(stmt, 4, lim != NULL ? lim->group_max_running : 0);
    sq_bind_text(stmt, 5, types);
    sq_bind_opt(stmt, 6, lim != NULL ? lim->group_rate_limit : 0);
    sqlite3_bind_int64(stmt, 7, window_us);
    sq_bind_text(stmt, 8, cursor);
    while ((rc = sq_step_row(s, stmt, "pick grouped jobs", err)) == 1) {
        bool job = sqlite3_column_type(stmt, 0) != SQLITE_NULL;
        const char *g = (const char *)sqlite3_column_text(stmt, 1);
        if (!job && g != NULL) {
            snprintf(cursor, JOB_GROUP_MAX + 1, "%s", g);
            continue;
        }
        if (job && p->n_ids < (size_t)limit)
            p->ids[p->n_ids++] = sqlite3_column_int64(stmt, 0);
        if (job && !pick_group(p, g != NULL ? g : "", 1, sqlite3_column_int(stmt, 3) != 0, cap)) {
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
            break;
        }
    }
    sq_reset(stmt);
    return rc < 0 ? rc : JOBD_OK;
}

/* Flips the picked jobs to running, appending them to out: one statement,
 * the ids as one JSON array (json_each), as sqlite/cancels.c; a statement
 * per job cost the claim twice what picking them did. */
static int
start(struct sqlite_store *s, const struct claim_req *req, int64_t now, const struct pick *p,
      struct job_list *out, struct jobd_error *err)
{
    if (p->n_ids == 0)
        return JOBD_OK;
    char *arr = sq_ids_json(p->ids, p->n_ids);
    if (arr == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "UPDATE jobs SET status = 'running', attempt = attempt + 1,"
                        "  worker_id = ?2, lease_expires_at = ?3, started_at = ?4 "
                        "WHERE id IN (SELECT value FROM json_each(?1)) AND status = 'pending' "
                        "RETURNING " SQ_JOB_COLS,
                        &stmt, err);
    if (rc != JOBD_OK) {
        free(arr);
        return rc;
    }
    sq_bind_text(stmt, 1, arr);
    sq_bind_text(stmt, 2, req->worker_id);
    sqlite3_bind_int64(stmt, 3, now + req->lease_ms * 1000);
    sqlite3_bind_int64(stmt, 4, now);
    while ((rc = sq_step_row(s, stmt, "claim", err)) == 1) {
        struct job *j = job_list_push(out);
        if (j == NULL || sq_row_job(stmt, 0, j) != JOBD_OK) {
            if (j != NULL)
                out->n--;
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory claiming jobs");
            break;
        }
    }
    sq_reset(stmt);
    free(arr);
    return rc < 0 ? rc : JOBD_OK;
}

/* The claimed groups' rows (a group claimed by the plain order may have
 * none), with their counts in the group_rate window. Without a group rate
 * a row that is there is left alone: an upsert that sets nothing still
 * rewrites its row, one write per group claimed (a job each with many
 * groups). */
static int
count_starts(struct sqlite_store *s, const char *q, const struct qlimits_row *lim,
             int64_t window_us, const struct pick *p, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    bool rate = lim != NULL && lim->group_rate_limit > 0;
    int rc = sq_prepare(s,
                        rate ? "INSERT INTO job_groups (queue, grp, rate_window_us, rate_count)"
                               " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (queue, grp) DO UPDATE SET"
                               " rate_count = CASE WHEN NOT ?5 THEN rate_count"
                               "   WHEN rate_window_us >= excluded.rate_window_us THEN rate_count"
                               "   ELSE 0 END + excluded.rate_count,"
                               " rate_window_us = CASE WHEN NOT ?5 THEN rate_window_us"
                               "   ELSE max(rate_window_us, excluded.rate_window_us) END"
                             : "INSERT INTO job_groups (queue, grp, rate_window_us, rate_count)"
                               " VALUES (?1, ?2, ?3, ?4 + 0 * ?5) ON CONFLICT DO NOTHING",
                        &stmt, err);
    for (size_t i = 0; rc == JOBD_OK && i < p->n_grps; i++) {
        if (!rate && p->known[i])
            continue; /* nothing to write: the row is there */
        sq_bind_text(stmt, 1, q);
        sq_bind_text(stmt, 2, p->grps[i]);
        sqlite3_bind_int64(stmt, 3, rate ? window_us : 0);
        sqlite3_bind_int(stmt, 4, rate ? p->got[i] : 0);
        sqlite3_bind_int(stmt, 5, rate);
        rc = sq_step_done(s, stmt, "count a group's starts", err);
    }
    return rc;
}

/* The claim of a queue without group limits: its due jobs tagged, then
 * one walk in tag order (sqlite/groups_tag.c); every group claimed has
 * its job_groups row, noted when its job_group_tags row was. */
static int
claim_tagged(struct sqlite_store *s, const char *q, const struct claim_req *req, int n, int64_t now,
             const char *types, struct pick *p, struct job_list *out, struct jobd_error *err)
{
    if ((p->ids = calloc((size_t)n + 1, sizeof *p->ids)) == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    int rc = sq_groups_tag(s, q, now, err);
    if (rc == JOBD_OK)
        rc = sq_groups_walk(s, q, n, now, types, p->ids, &p->n_ids, err);
    return rc == JOBD_OK ? start(s, req, now, p, out, err) : rc;
}

int
sq_groups_claim(struct sqlite_store *s, const char *q, const struct claim_req *req, int n,
                int64_t now, const struct qlimits_row *lim, int64_t window_us, struct job_list *out,
                struct jobd_error *err)
{
    bool oom;
    char *types = types_json(req, &oom);
    if (oom)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    struct pick p = {0};
    char spare[JOB_GROUP_MAX + 1] = "";
    char *cursor = s->group_cursor != NULL ? s->group_cursor : spare;
    int rc;
    if (lim == NULL || (lim->group_max_running <= 0 && lim->group_rate_limit <= 0)) {
        rc = claim_tagged(s, q, req, n, now, types, &p, out, err);
    } else {
        /* probes of jobs_group_claim see untagged jobs only: tags a claim
         * gave before the queue had group limits go first (an empty probe
         * once they have) */
        rc = sq_groups_untag(s, q, err);
        if (rc == JOBD_OK)
            rc = pick(s, q, n, now, types, lim, window_us, cursor, &p, err);
        if (rc == JOBD_OK)
            rc = start(s, req, now, &p, out, err);
        if (rc == JOBD_OK)
            rc = count_starts(s, q, lim, window_us, &p, err);
    }
    /* Fewer than asked: the queue may be draining. Its groups with nothing
     * pending are forgotten, at most once per QLIMITS_REFRESH_MS a
     * connection (until then they cost each claim one probe). */
    int64_t t = clock_mono_now_us();
    if (rc == JOBD_OK && p.n_ids < (size_t)n &&
        t - s->groups_forgot_us >= (int64_t)QLIMITS_REFRESH_MS * 1000) {
        s->groups_forgot_us = t;
        rc = sq_groups_forget(s, q, lim != NULL ? lim->group_rate_per_ms : 0, now, err);
    }
    pick_fini(&p);
    free(types);
    return rc;
}

int
sq_groups_forget(struct sqlite_store *s, const char *q, int64_t rate_per_ms, int64_t now,
                 struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "DELETE FROM job_groups WHERE queue = ?1"
                        " AND rate_window_us + ?2 * 1000 <= ?3"
                        " AND NOT EXISTS (SELECT 1 FROM jobs j INDEXED BY jobs_group_claim"
                        "   WHERE j.queue = ?1 AND j.grp IS NULLIF(job_groups.grp, '')"
                        "     AND j.status = 'pending' AND j.tag IS NULL)"
                        /* one walk of the tagged jobs (forgetting is rare) */
                        " AND grp NOT IN (" SQ_GR_TAGGED_GROUPS("?1") ")",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, q);
    sqlite3_bind_int64(stmt, 2, rate_per_ms);
    sqlite3_bind_int64(stmt, 3, now);
    if ((rc = sq_step_done(s, stmt, "forget groups", err)) != JOBD_OK)
        return rc;
    rc = sq_prepare(s,
                    "DELETE FROM job_group_tags WHERE queue = ?1 AND NOT EXISTS (SELECT 1"
                    " FROM job_groups x WHERE x.queue = ?1 AND x.grp = job_group_tags.grp)",
                    &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, q);
    if ((rc = sq_step_done(s, stmt, "forget groups' tags", err)) != JOBD_OK)
        return rc;
    rc = sq_prepare(s,
                    "UPDATE queues SET grouped = 0 WHERE name = ?1 AND grouped = 1"
                    " AND NOT EXISTS (SELECT 1 FROM jobs INDEXED BY jobs_group_claim"
                    "   WHERE queue = ?1 AND grp > '' AND status = 'pending' AND tag IS NULL)"
                    " AND NOT EXISTS (SELECT 1 FROM jobs INDEXED BY jobs_fair_claim"
                    "   WHERE queue = ?1 AND status = 'pending' AND tag IS NOT NULL"
                    "     AND grp IS NOT NULL)",
                    &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, q);
    return sq_step_done(s, stmt, "unmark a grouped queue", err);
}
