/*
 * operator_int.h — the backends' halves of store/operator.h: the functions
 * each backend implements (pg/attempts.c, sqlite/attempts.c, ...) and the
 * vtables operator.c assembles from them for pg/open.c and sqlite/open.c.
 * Contracts as in operator.h. Not for use outside src/store.
 */
#ifndef JOBD_STORE_OPERATOR_INT_H
#define JOBD_STORE_OPERATOR_INT_H

#include "store/operator.h"

/*
 * The WHERE clause of a struct job_filter (status, queue, type, schedule,
 * created_after, created_before, key), shared by the job list and the bulk
 * actions so both select exactly the same jobs.
 *
 * PostgreSQL: over the columns of jobd.all_jobs, parameters $1..$7 in that
 * order (pg_filter_params). The key goes through job_keys (its primary key)
 * so a lookup by key is one probe, not a scan of every job.
 */
#define PG_FILTER_WHERE                                                                            \
    "($1::text IS NULL OR status = $1::text) AND ($2::text IS NULL OR queue = $2::text)"           \
    " AND ($3::text IS NULL OR type = $3::text)"                                                   \
    " AND ($4::text IS NULL OR schedule = $4::text)"                                               \
    " AND ($5::bigint IS NULL OR created_at >= " PG_US_TS(                                         \
        "$5") ")"                                                                                  \
              " AND ($6::bigint IS NULL OR created_at < " PG_US_TS(                                \
                  "$6") ")"                                                                        \
                        " AND ($7::text IS NULL OR (idempotency_key = $7::text AND id = (SELECT "  \
                        "job_id"                                                                   \
                        "      FROM jobd.job_keys WHERE idempotency_key = $7::text)))"
#define PG_FILTER_NPARAMS 7
/* SQLite: the same over jobs or jobs_done, parameters ?1..?7 (sq_filter_bind). */
#define SQ_FILTER_WHERE                                                                            \
    " (?1 IS NULL OR status = ?1) AND (?2 IS NULL OR queue = ?2)"                                  \
    " AND (?3 IS NULL OR type = ?3) AND (?4 IS NULL OR schedule = ?4)"                             \
    " AND (?5 IS NULL OR created_at >= ?5) AND (?6 IS NULL OR created_at < ?6)"                    \
    " AND (?7 IS NULL OR idempotency_key = ?7)"

/* Fills vals[0..6] for PG_FILTER_WHERE; buf holds the numbers' text. */
void pg_filter_params(const struct job_filter *f, char buf[2][24], const char **vals);
/* Binds ?1..?7 of SQ_FILTER_WHERE on stmt. */
struct sqlite3_stmt;
void sq_filter_bind(struct sqlite3_stmt *stmt, const struct job_filter *f);

int pg_op_attempts(struct store *st, int64_t id, struct attempt_list *out, struct jobd_error *err);
int sq_op_attempts(struct store *st, int64_t id, struct attempt_list *out, struct jobd_error *err);
int pg_op_bulk_batch(struct store *st, const struct bulk_req *r, int n, int64_t *cursor,
                     struct bulk_counts *c, struct jobd_error *err);
int sq_op_bulk_batch(struct store *st, const struct bulk_req *r, int n, int64_t *cursor,
                     struct bulk_counts *c, struct jobd_error *err);
int pg_op_worker_announce(struct store *st, const struct worker_info *w, int64_t max_workers,
                          struct jobd_error *err);
int pg_op_worker_seen(struct store *st, const char *id, bool draining, struct jobd_error *err);
int pg_op_worker_withdraw(struct store *st, const char *id, struct jobd_error *err);
int pg_op_worker_list(struct store *st, const struct name_page *pg, struct worker_list *out,
                      struct jobd_error *err);
int sq_op_worker_announce(struct store *st, const struct worker_info *w, int64_t max_workers,
                          struct jobd_error *err);
int sq_op_worker_seen(struct store *st, const char *id, bool draining, struct jobd_error *err);
int sq_op_worker_withdraw(struct store *st, const char *id, struct jobd_error *err);
int sq_op_worker_list(struct store *st, const struct name_page *pg, struct worker_list *out,
                      struct jobd_error *err);
int pg_op_prune_status(struct store *st, bool succeeded, int64_t cutoff_us, int limit, int *deleted,
                       struct jobd_error *err);
int pg_op_hot_churn(struct store *st, int64_t *rows, struct jobd_error *err);
int pg_op_archive_days(struct store *st, int64_t now_us, int days_ahead, int *made,
                       struct jobd_error *err);
int pg_op_vacuum_hot(struct store *st, struct jobd_error *err);
int sq_op_prune_status(struct store *st, bool succeeded, int64_t cutoff_us, int limit, int *deleted,
                       struct jobd_error *err);
int pg_op_counts_refresh(struct store *st, int64_t max_age_ms, bool *recounted,
                         struct jobd_error *err);
int pg_op_queue_limits(struct store *st, const char *queue, const struct queue_limits_change *c,
                       struct jobd_error *err);
int sq_op_queue_limits(struct store *st, const char *queue, const struct queue_limits_change *c,
                       struct jobd_error *err);
/* store/groups.h (pg/groups.c, sqlite/groups.c) */
int pg_op_queue_groups(struct store *st, const char *queue, int limit, struct queue_group **out,
                       size_t *n, struct jobd_error *err);
int sq_op_queue_groups(struct store *st, const char *queue, int limit, struct queue_group **out,
                       size_t *n, struct jobd_error *err);
int pg_op_queue_group_counts(struct store *st, struct queue_group_count **out, size_t *n,
                             struct jobd_error *err);
int sq_op_queue_group_counts(struct store *st, struct queue_group_count **out, size_t *n,
                             struct jobd_error *err);
int pg_op_pending_queue_types(struct store *st, struct queue_type_list *out,
                              struct jobd_error *err);
int sq_op_pending_queue_types(struct store *st, struct queue_type_list *out,
                              struct jobd_error *err);
int pg_op_lease_set(struct store *st, const struct lease_token_ref *v, size_t n,
                    struct jobd_error *err);
int pg_op_lease_check(struct store *st, int64_t id, int32_t attempt, const char *hash, char **queue,
                      struct jobd_error *err);
int sq_op_lease_set(struct store *st, const struct lease_token_ref *v, size_t n,
                    struct jobd_error *err);
int sq_op_lease_check(struct store *st, int64_t id, int32_t attempt, const char *hash, char **queue,
                      struct jobd_error *err);
int pg_op_lease_replayed(struct store *st, int64_t id, int32_t attempt, enum lease_report kind,
                         const char *hash, char **queue, struct jobd_error *err);
int sq_op_lease_replayed(struct store *st, int64_t id, int32_t attempt, enum lease_report kind,
                         const char *hash, char **queue, struct jobd_error *err);

/*
 * SQLite: records how attempt `attempt` of job id (still in jobs, as the
 * attempt left it) ended, inside the caller's write transaction. outcome is
 * an attempt_outcome_name other than running/succeeded; error may be NULL.
 */
struct sqlite_store;
int sq_history_add(struct sqlite_store *s, int64_t id, int32_t attempt, const char *outcome,
                   const char *error, int64_t now, struct jobd_error *err);

#endif
