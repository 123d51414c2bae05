/*
 * sqlite/groups_tag.c — the fair claim of a grouped queue without group
 * limits on SQLite, by tags (docs/DESIGN.md, Groups, "Tags on SQLite").
 *
 * Why tags here and probes on PostgreSQL: SQLite writes every page a
 * transaction changes to the WAL whole, and a claim that takes the head of
 * each of 1,000 groups deleted one entry from each group's stretch of
 * jobs_group_claim, an index in group order: hundreds of leaf pages a
 * claim where plain jobs' claim changes a few. A tag puts the k-th due job
 * of every group at about the same place of jobs_fair_claim (queue,
 * priority DESC, tag, id), so the claim is one ordered walk whose deletes
 * are neighbours, as a plain claim's are. The claim tags what it finds
 * untagged and due, set-wise, before it walks: the jobs of an enqueue, a
 * retry, a release or a debounce, whatever path made them pending (a
 * change of place untags a pending job: schema.c, migration 26). Tagging
 * at the claim rather than at the enqueue keeps it to one place and
 * tags a delayed job when it is due, against the backlog of then.
 */
#include <stdlib.h>

#include "core/err.h"
#include "store/sqlite/internal.h"

/* The untagged due jobs of queue ?1 at ?2, with their group ('' = none). */
#define SQ_TAG_DUE                                                                                 \
    "u AS (SELECT id, grp AS g, priority, run_at FROM jobs INDEXED BY jobs_untagged"               \
    "       WHERE queue = ?1 AND status = 'pending' AND tag IS NULL AND grp IS NOT NULL"           \
    "         AND run_at <= ?2"                                                                    \
    "      UNION ALL"                                                                              \
    "      SELECT id, '', priority, run_at FROM jobs INDEXED BY jobs_group_claim"                  \
    "       WHERE queue = ?1 AND grp IS NULL AND status = 'pending' AND tag IS NULL"               \
    "         AND +run_at <= ?2)"

/*
 * First each (group, priority)'s last tag: its n new jobs take the tags
 * after its last one, or from V, the band's head tag (the tag the claim
 * order is at in that priority), so that a group new or back takes its
 * turn at once and not before the others' next job; with nothing tagged
 * in the band, from after every last tag there (each group starts even).
 * Then the jobs themselves, from those last tags (the k-th of the n:
 * last - n + k), in claim order. Both read the same untagged due jobs in
 * the same transaction. Tags are per priority because the walk is
 * (priority DESC, tag): a group's backlog at one priority must not push
 * its jobs at another behind the other groups' (docs/MODEL.md, Groups:
 * "at equal priority").
 */
/* clang-format off */
static const char last_sql[] =
    "WITH " SQ_TAG_DUE ","
    " gp AS (SELECT g, priority, count(*) AS n FROM u GROUP BY g, priority),"
    " v AS (SELECT p.priority, COALESCE("
    "   (SELECT tag FROM jobs INDEXED BY jobs_fair_claim WHERE queue = ?1"
    "     AND priority = p.priority AND status = 'pending' AND tag IS NOT NULL"
    "     ORDER BY tag, id LIMIT 1),"
    "   (SELECT max(last_tag) + 1 FROM job_group_tags WHERE queue = ?1"
    "     AND priority = p.priority), 0) AS v"
    "   FROM (SELECT DISTINCT priority FROM gp) p) "
    "INSERT INTO job_group_tags (queue, grp, priority, last_tag) SELECT * FROM ("
    " SELECT ?1, gp.g, gp.priority, max(COALESCE(x.last_tag + 1, 0), v.v) + gp.n - 1"
    " FROM gp JOIN v ON v.priority = gp.priority LEFT JOIN job_group_tags x"
    "   ON x.queue = ?1 AND x.grp = gp.g AND x.priority = gp.priority) WHERE 1 "
    "ON CONFLICT (queue, grp, priority) DO UPDATE SET last_tag = excluded.last_tag";
static const char tag_sql[] =
    "WITH " SQ_TAG_DUE ","
    " r AS (SELECT u.id, x.last_tag - count(*) OVER w"
    "   + row_number() OVER (w ORDER BY u.run_at, u.id) AS t"
    "   FROM u JOIN job_group_tags x ON x.queue = ?1 AND x.grp = u.g AND x.priority = u.priority"
    "   WINDOW w AS (PARTITION BY u.g, u.priority)) "
    "UPDATE jobs SET tag = r.t FROM r WHERE jobs.id = r.id";
/* clang-format on */

int
sq_groups_tag(struct sqlite_store *s, const char *q, int64_t now, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, last_sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, q);
    sqlite3_bind_int64(stmt, 2, now);
    if ((rc = sq_step_done(s, stmt, "note groups' last tags", err)) != JOBD_OK)
        return rc;
    if (sqlite3_changes(s->db) == 0)
        return JOBD_OK; /* nothing untagged is due: the usual claim */
    if ((rc = sq_prepare(s, tag_sql, &stmt, err)) != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, q);
    sqlite3_bind_int64(stmt, 2, now);
    return sq_step_done(s, stmt, "tag due jobs", err);
}

int
sq_groups_walk(struct sqlite_store *s, const char *q, int n, int64_t now, const char *types,
               int64_t *ids, size_t *n_ids, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT id FROM jobs INDEXED BY jobs_fair_claim"
                        " WHERE queue = ?1 AND status = 'pending' AND tag IS NOT NULL"
                        "   AND +run_at <= ?3"
                        "   AND (?4 IS NULL OR type IN (SELECT value FROM json_each(?4)))"
                        " ORDER BY priority DESC, tag, id LIMIT ?2",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, q);
    sqlite3_bind_int(stmt, 2, n);
    sqlite3_bind_int64(stmt, 3, now);
    sq_bind_text(stmt, 4, types);
    *n_ids = 0;
    while ((rc = sq_step_row(s, stmt, "walk tagged jobs", err)) == 1)
        if (*n_ids < (size_t)n)
            ids[(*n_ids)++] = sqlite3_column_int64(stmt, 0);
    sq_reset(stmt);
    return rc < 0 ? rc : JOBD_OK;
}

int
sq_groups_untag(struct sqlite_store *s, const char *q, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "UPDATE jobs SET tag = NULL WHERE id IN (SELECT id FROM jobs"
                        " INDEXED BY jobs_fair_claim WHERE queue = ?1 AND status = 'pending'"
                        " AND tag IS NOT NULL)",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, q);
    return sq_step_done(s, stmt, "untag a limited queue", err);
}
