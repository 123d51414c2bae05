/*
 * pg/txn.c — one call of jobd.enqueue(...) on the application's own
 * connection, so the job is part of the caller's transaction.
 *
 * Every value travels as a parameter. run_at 0 means "now" as the function's
 * default does (the transaction's now()); otherwise the epoch microseconds
 * are added to 'epoch' as an interval, which is exact (no float seconds).
 * We never BEGIN, COMMIT or ROLLBACK: the transaction belongs to the caller.
 */
#include "store/pg/txn.h"

#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

/* Without a traceparent the call names 7 arguments, as before schema
 * version 22 (pg/schema.c), so it works on older schemas too; parents are
 * named arguments of version 27 (pg/schema_enqueue_deps.c), passed only
 * when there are some. */
#define ENQUEUE_ARGS                                                                               \
    "SELECT jobd.enqueue($1::text, $2::jsonb, $3::text, "                                          \
    "CASE WHEN $4::bigint = 0 THEN now() "                                                         \
    "ELSE timestamptz 'epoch' + $4::bigint * interval '1 microsecond' END, "                       \
    "$5::int, $6::int, $7::text"
static const char enqueue_sql[] = ENQUEUE_ARGS ")";
static const char enqueue_traced_sql[] = ENQUEUE_ARGS ", $8::text)";
static const char enqueue_deps_sql[] = ENQUEUE_ARGS ", $8::text, depends_on => $9::bigint[], "
                                                    "on_parent_failure => $10::text)";
/* With a group: schema version 31 (pg/schema_enqueue_group.c). */
static const char enqueue_group_sql[] = ENQUEUE_ARGS ", $8::text, depends_on => $9::bigint[], "
                                                     "on_parent_failure => $10::text, "
                                                     "\"group\" => $11::text)";
/* With a debounce or a unique window: schema version 32
 * (pg/schema_enqueue_keys.c); a window's for travels in milliseconds. */
#define MS_INTERVAL(p) "(" p "::bigint * interval '1 millisecond')"
static const char enqueue_window_sql[] =
    ENQUEUE_ARGS ", $8::text, depends_on => $9::bigint[], on_parent_failure => $10::text, "
                 "\"group\" => $11::text, debounce_key => $12::text, "
                 "debounce_for => " MS_INTERVAL("$13") ", unique_key => $14::text, "
                                                       "unique_for => " MS_INTERVAL("$15") ")";

/* "{1,2,3}": the parents as an array literal, malloc'd; NULL on OOM. */
static char *
parents_literal(const struct job_spec *spec)
{
    size_t cap = 3 + spec->n_depends_on * 21, k = 0;
    char *b = malloc(cap);
    if (b == NULL)
        return NULL;
    b[k++] = '{';
    for (size_t i = 0; i < spec->n_depends_on; i++)
        k += (size_t)snprintf(b + k, cap - k, "%s%" PRId64, i > 0 ? "," : "", spec->depends_on[i]);
    snprintf(b + k, cap - k, "}");
    return b;
}

/* The server's message without its trailing newline. */
static void
server_message(const PGresult *res, const PGconn *conn, char *buf, size_t len)
{
    const char *m = res != NULL ? PQresultErrorMessage(res) : "";
    if (m == NULL || *m == '\0')
        m = PQerrorMessage(conn);
    snprintf(buf, len, "%s", m != NULL ? m : "");
    size_t n = strlen(buf);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
}

/* The job id in jobd.enqueue's answer res (borrowed) into *id_out, or the error
 * its SQLSTATE means (pg_txn_enqueue, pg/txn.h). */
static int
answer_id(PGconn *conn, const PGresult *res, int64_t *id_out, struct jobd_error *err)
{
    int rc = JOBD_OK;
    char msg[200];
    if (res == NULL) {
        server_message(NULL, conn, msg, sizeof msg);
        rc =
            jobd_error_set(err, PQstatus(conn) == CONNECTION_OK ? JOBD_E_NOMEM : JOBD_E_UNAVAILABLE,
                           NULL, "jobd.enqueue failed: %s", msg);
    } else if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
        server_message(res, conn, msg, sizeof msg);
        if (state != NULL && strcmp(state, "23505") == 0)
            rc = jobd_error_set(err, JOBD_E_CONFLICT, "idempotency_key",
                                "jobd.enqueue: the idempotency key is already used: %s", msg);
        else if (PQstatus(conn) != CONNECTION_OK || (state != NULL && strncmp(state, "08", 2) == 0))
            rc = jobd_error_set(err, JOBD_E_UNAVAILABLE, NULL, "jobd.enqueue: %s", msg);
        else if (state != NULL && strcmp(state, "23503") == 0) /* foreign_key_violation */
            rc = jobd_error_set(err, JOBD_E_INVALID, "depends_on", "%s", msg);
        else if (state != NULL && strcmp(state, "54000") == 0) /* program_limit_exceeded */
            rc = jobd_error_set(err, JOBD_E_TOOBIG, NULL, "%s", msg);
        else if (state != NULL && strncmp(state, "22", 2) == 0) /* data exception */
            rc = jobd_error_set(err, JOBD_E_INVALID, NULL, "%s", msg);
        else
            rc = jobd_error_set(err, JOBD_E_STORE, NULL, "jobd.enqueue failed (SQLSTATE %s): %s",
                                state != NULL ? state : "?", msg);
    } else if (PQntuples(res) != 1 || PQnfields(res) != 1 || PQgetisnull(res, 0, 0)) {
        rc = jobd_error_set(err, JOBD_E_STORE, NULL, "jobd.enqueue returned no job id");
    } else {
        char *end = NULL;
        errno = 0;
        long long id = strtoll(PQgetvalue(res, 0, 0), &end, 10);
        if (errno != 0 || end == NULL || *end != '\0' || id <= 0)
            rc = jobd_error_set(err, JOBD_E_STORE, NULL,
                                "jobd.enqueue returned '%s', not a "
                                "job id",
                                PQgetvalue(res, 0, 0));
        else if (id_out != NULL)
            *id_out = (int64_t)id;
    }
    return rc;
}

int
pg_txn_enqueue(struct pg_conn *conn, const struct job_spec *spec, int64_t *id_out,
               struct jobd_error *err)
{
    if (conn == NULL || PQstatus(conn) != CONNECTION_OK)
        return jobd_error_set(err, JOBD_E_UNAVAILABLE, "conn",
                              "the PostgreSQL connection is not open");
    char run_at[24], priority[16], max_attempts[16];
    snprintf(run_at, sizeof run_at, "%" PRId64, spec->run_at_us);
    snprintf(priority, sizeof priority, "%" PRId32, spec->priority);
    snprintf(max_attempts, sizeof max_attempts, "%" PRId32,
             spec->max_attempts > 0 ? spec->max_attempts : JOB_DEFAULT_MAX_ATTEMPTS);
    char *parents = spec->n_depends_on > 0 ? parents_literal(spec) : NULL;
    if (spec->n_depends_on > 0 && parents == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    char debounce_ms[24], unique_ms[24];
    snprintf(debounce_ms, sizeof debounce_ms, "%" PRId64, spec->debounce.for_ms);
    snprintf(unique_ms, sizeof unique_ms, "%" PRId64, spec->unique.for_ms);
    bool window = spec->debounce.key != NULL || spec->unique.key != NULL;
    const char *params[15] = {
        spec->type,
        spec->payload != NULL ? spec->payload : "{}",
        spec->queue != NULL ? spec->queue : JOB_DEFAULT_QUEUE,
        run_at,
        priority,
        max_attempts,
        spec->idempotency_key, /* NULL -> SQL NULL */
        spec->traceparent,
        parents,
        spec->run_on_parent_failure ? "run" : "cancel",
        spec->group,
        spec->debounce.key,
        spec->debounce.key != NULL ? debounce_ms : NULL,
        spec->unique.key,
        spec->unique.key != NULL ? unique_ms : NULL,
    };
    bool traced = spec->traceparent != NULL;
    const char *sql = window                ? enqueue_window_sql
                      : spec->group != NULL ? enqueue_group_sql
                      : parents != NULL     ? enqueue_deps_sql
                      : traced              ? enqueue_traced_sql
                                            : enqueue_sql;
    int nparams = window ? 15 : spec->group != NULL ? 11 : parents != NULL ? 10 : traced ? 8 : 7;
    PGresult *res = PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL, 0);
    free(parents);
    int rc = answer_id(conn, res, id_out, err);
    PQclear(res);
    return rc;
}
