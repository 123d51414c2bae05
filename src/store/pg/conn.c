/*
 * pg/conn.c — the PostgreSQL backend's connection plumbing: opening
 * (with a connect timeout, TCP user timeout and keepalives, so an address
 * that does not answer fails fast and a link that goes silent ends a call
 * in seconds; GSSAPI encryption off unless asked for),
 * lazy prepared statements (unnamed ones behind a transaction pooler, where
 * a named statement prepared on one server connection is missing on the
 * next: PgBouncer before 1.21 cannot track them), error classification (connection loss is
 * JOBD_E_UNAVAILABLE and triggers a PQreset on the next call, so a restarted
 * server is survivable; an idle connection the server closed meanwhile is
 * noticed before anything is sent on it and reconnected, so the first call
 * after a restart succeeds), row decoding and array-literal parameters.
 * The operations themselves are in pg/open.c and pg/sched.c.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/pg/internal.h"

const char *
pg_i64(char *buf, int64_t v)
{
    snprintf(buf, 24, "%lld", (long long)v);
    return buf;
}

const char *
pg_now_param(const struct store_pg *s, char *buf)
{
    if (s->base.clock == NULL)
        return NULL;
    return pg_i64(buf, clock_now_us(s->base.clock));
}

int64_t
pg_get_i64(const PGresult *r, int row, int col)
{
    if (PQgetisnull(r, row, col))
        return 0;
    return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

char *
pg_get_str(const PGresult *r, int row, int col, bool *oom)
{
    if (PQgetisnull(r, row, col))
        return NULL;
    char *s = strdup(PQgetvalue(r, row, col));
    if (s == NULL)
        *oom = true;
    return s;
}

int
pg_row_to_job(const PGresult *r, int row, int c, struct job *j)
{
    bool oom = false;
    memset(j, 0, sizeof *j);
    j->id = pg_get_i64(r, row, c + 0);
    j->queue = pg_get_str(r, row, c + 1, &oom);
    j->type = pg_get_str(r, row, c + 2, &oom);
    j->payload = pg_get_str(r, row, c + 3, &oom);
    enum job_status st = JOB_PENDING;
    if (job_status_parse(PQgetvalue(r, row, c + 4), &st) == JOBD_OK)
        j->status = st;
    j->priority = (int32_t)pg_get_i64(r, row, c + 5);
    j->run_at_us = pg_get_i64(r, row, c + 6);
    j->attempt = (int32_t)pg_get_i64(r, row, c + 7);
    j->max_attempts = (int32_t)pg_get_i64(r, row, c + 8);
    j->idempotency_key = pg_get_str(r, row, c + 9, &oom);
    j->schedule = pg_get_str(r, row, c + 10, &oom);
    j->scheduled_for_us = pg_get_i64(r, row, c + 11);
    j->worker_id = pg_get_str(r, row, c + 12, &oom);
    j->lease_expires_at_us = pg_get_i64(r, row, c + 13);
    j->timeout_ms = pg_get_i64(r, row, c + 14);
    j->cancel_requested = PQgetvalue(r, row, c + 15)[0] == 't';
    j->last_error = pg_get_str(r, row, c + 16, &oom);
    j->result = pg_get_str(r, row, c + 17, &oom);
    j->created_at_us = pg_get_i64(r, row, c + 18);
    j->started_at_us = pg_get_i64(r, row, c + 19);
    j->finished_at_us = pg_get_i64(r, row, c + 20);
    j->attempt_floor = (int32_t)pg_get_i64(r, row, c + 21);
    j->traceparent = pg_get_str(r, row, c + 22, &oom);
    j->group = pg_get_str(r, row, c + 23, &oom);
    if (oom) {
        job_fini(j);
        return JOBD_E_NOMEM;
    }
    return JOBD_OK;
}

/* Appends the rows of r to out. */
/* Decodes PG_RUN_COLS of row into out (zeroed; status running). JOBD_E_NOMEM. */
static int
pg_row_to_run(const PGresult *r, int row, struct job *j)
{
    bool oom = false;
    memset(j, 0, sizeof *j);
    j->id = pg_get_i64(r, row, 0);
    j->queue = pg_get_str(r, row, 1, &oom);
    j->type = pg_get_str(r, row, 2, &oom);
    j->payload = pg_get_str(r, row, 3, &oom);
    j->status = JOB_RUNNING;
    j->priority = (int32_t)pg_get_i64(r, row, 4);
    j->run_at_us = pg_get_i64(r, row, 5);
    j->attempt = (int32_t)pg_get_i64(r, row, 6);
    j->attempt_floor = (int32_t)pg_get_i64(r, row, 7);
    j->idempotency_key = pg_get_str(r, row, 8, &oom);
    j->scheduled_for_us = pg_get_i64(r, row, 9);
    j->timeout_ms = pg_get_i64(r, row, 10);
    j->started_at_us = pg_get_i64(r, row, 11);
    j->traceparent = pg_get_str(r, row, 12, &oom);
    j->group = pg_get_str(r, row, 13, &oom);
    if (oom) {
        job_fini(j);
        return JOBD_E_NOMEM;
    }
    return JOBD_OK;
}

int
pg_append_runs(const PGresult *r, struct job_list *out, struct jobd_error *err)
{
    for (int row = 0; row < PQntuples(r); row++) {
        struct job *j = job_list_push(out);
        if (j == NULL || pg_row_to_run(r, row, j) != JOBD_OK) {
            if (j != NULL)
                out->n--;
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        }
    }
    return JOBD_OK;
}

int
pg_append_rows(const PGresult *r, struct job_list *out, struct jobd_error *err)
{
    for (int row = 0; row < PQntuples(r); row++) {
        struct job *j = job_list_push(out);
        if (j == NULL || pg_row_to_job(r, row, 0, j) != JOBD_OK) {
            if (j != NULL)
                out->n--;
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        }
    }
    return JOBD_OK;
}

/* ---- array literals ---- */

static void
arr_put(struct pg_array *a, const char *s, size_t n)
{
    if (a->oom)
        return;
    if (a->n + n + 2 > a->cap) {
        size_t cap = a->cap ? a->cap : 256;
        while (cap < a->n + n + 2)
            cap *= 2;
        char *p = realloc(a->p, cap);
        if (p == NULL) {
            a->oom = true;
            return;
        }
        a->p = p;
        a->cap = cap;
    }
    memcpy(a->p + a->n, s, n);
    a->n += n;
    a->p[a->n] = '\0';
}

void
pg_array_begin(struct pg_array *a)
{
    memset(a, 0, sizeof *a);
    arr_put(a, "{", 1);
}

static void
arr_sep(struct pg_array *a)
{
    if (!a->oom && a->n > 1)
        arr_put(a, ",", 1);
}

void
pg_array_add_str(struct pg_array *a, const char *s)
{
    arr_sep(a);
    if (s == NULL) {
        arr_put(a, "NULL", 4);
        return;
    }
    arr_put(a, "\"", 1);
    const char *run = s;
    for (const char *p = s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            arr_put(a, run, (size_t)(p - run));
            arr_put(a, "\\", 1);
            run = p;
        }
    }
    arr_put(a, run, strlen(run));
    arr_put(a, "\"", 1);
}

void
pg_array_add_i64(struct pg_array *a, int64_t v, bool is_null)
{
    arr_sep(a);
    if (is_null) {
        arr_put(a, "NULL", 4);
        return;
    }
    char buf[24];
    pg_i64(buf, v);
    arr_put(a, buf, strlen(buf));
}

const char *
pg_array_end(struct pg_array *a)
{
    arr_put(a, "}", 1);
    return a->oom ? NULL : a->p;
}

void
pg_array_fini(struct pg_array *a)
{
    free(a->p);
    memset(a, 0, sizeof *a);
}

/* ---- connection ---- */

static void
quiet_notices(void *arg, const char *message)
{
    (void)arg;
    (void)message; /* "relation already exists, skipping" and the like are not for stderr */
}

/* Copies a libpq message into err, without its trailing newline. */
static int
set_pg_error(struct jobd_error *err, int code, const char *what, const char *msg)
{
    /* One line: libpq's messages carry newlines and tabs ("\n\tIs the server running"). */
    char m[240];
    size_t n = 0;
    for (const char *p = msg ? msg : ""; *p && n + 1 < sizeof m; p++) {
        bool ws = *p == '\n' || *p == '\t' || *p == '\r' || *p == ' ';
        if (!ws)
            m[n++] = *p;
        else if (n > 0 && m[n - 1] != ' ')
            m[n++] = ' ';
    }
    while (n > 0 && m[n - 1] == ' ')
        n--;
    m[n] = '\0';
    return jobd_error_set(err, code, "db", "%s: %s", what, m);
}

static void
forget_session(struct store_pg *s)
{
    s->n_prepared = 0;
    s->listening = false;
    s->listening_ends = false;
    s->walk_set = false;
}

/*
 * Whether an idle connection was closed by the server. One that idled
 * (in the HTTP pool, in a worker between polls) through a PostgreSQL
 * restart still says CONNECTION_OK, but the server sent it a termination
 * (57P01, or 57P02 after a crash) and EOF, so its socket is readable:
 * reading that input marks it bad before anything is sent on it, and the
 * caller reconnects and sends its statement once, on the new connection.
 * This is the one retry that can never apply a statement twice (nothing
 * was sent); a statement that fails after it was sent is not resent. Only
 * outside a transaction (inside one the server has nothing to say until
 * asked); notifications read on the way stay queued for PQnotifies.
 */
static bool
closed_by_server(struct store_pg *s)
{
    if (PQtransactionStatus(s->conn) != PQTRANS_IDLE)
        return false;
    /* The termination message and the EOF may take two reads. */
    for (int i = 0; i < 4; i++) {
        struct pollfd pfd = {.fd = PQsocket(s->conn), .events = POLLIN};
        if (pfd.fd < 0 || poll(&pfd, 1, 0) <= 0)
            return false;
        if (PQconsumeInput(s->conn) == 0 || PQstatus(s->conn) != CONNECTION_OK)
            return true;
    }
    return false;
}

int
pg_ensure_conn(struct store_pg *s, struct jobd_error *err)
{
    if (PQstatus(s->conn) == CONNECTION_OK && !closed_by_server(s))
        return JOBD_OK;
    if (s->tx == PG_TX_OPEN) /* a new connection would run the rest outside the transaction */
        return set_pg_error(err, JOBD_E_UNAVAILABLE, "PostgreSQL is unavailable",
                            "the connection broke inside a transaction");
    return pg_reconnect(s, err);
}

int
pg_reconnect(struct store_pg *s, struct jobd_error *err)
{
    forget_session(s);
    PQreset(s->conn);
    if (PQstatus(s->conn) == CONNECTION_OK)
        return JOBD_OK;
    return set_pg_error(err, JOBD_E_UNAVAILABLE, "PostgreSQL is unavailable",
                        PQerrorMessage(s->conn));
}

int
pg_result_error(struct store_pg *s, PGresult *r, const char *what, struct jobd_error *err)
{
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    const char *msg = r ? PQresultErrorMessage(r) : PQerrorMessage(s->conn);
    if (msg == NULL || *msg == '\0')
        msg = PQerrorMessage(s->conn);
    int code = JOBD_E_STORE;
    if (PQstatus(s->conn) != CONNECTION_OK || state == NULL || strncmp(state, "08", 2) == 0 ||
        strcmp(state, "57P01") == 0 || strcmp(state, "57P02") == 0 || strcmp(state, "57P03") == 0)
        code = JOBD_E_UNAVAILABLE;
    else if (strcmp(state, "23505") == 0)
        code = JOBD_E_CONFLICT;
    if (code == JOBD_E_UNAVAILABLE)
        what = "PostgreSQL is unavailable"; /* pg_ensure_conn resets on the next call */
    code = set_pg_error(err, code, what, msg);
    PQclear(r);
    return code;
}

static bool
result_ok(const PGresult *r)
{
    ExecStatusType t = PQresultStatus(r);
    return t == PGRES_TUPLES_OK || t == PGRES_COMMAND_OK;
}

static int
prepare(struct store_pg *s, const struct pg_stmt *stmt, int n, struct jobd_error *err)
{
    for (size_t i = 0; i < s->n_prepared; i++)
        if (s->prepared[i] == stmt)
            return JOBD_OK;
    if (s->n_prepared == PG_MAX_PREPARED)
        return jobd_error_set(err, JOBD_E_INTERNAL, "db", "too many prepared statements");
    PGresult *r = PQprepare(s->conn, stmt->name, stmt->sql, n, NULL);
    if (r == NULL || !result_ok(r)) {
        /* 42P05: this session already has it (we lost count, not the server). */
        const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
        if (state == NULL || strcmp(state, "42P05") != 0)
            return pg_result_error(s, r, stmt->name, err);
    }
    PQclear(r);
    s->prepared[s->n_prepared++] = stmt;
    return JOBD_OK;
}

/* ---- the first statement of a transaction (pg_tx_begin) ---- */

PG_STMT(st_tx_begin, "BEGIN");
PG_STMT(st_tx_xid, "SELECT txid_current()");

/* Queues stmt in the pipeline: prepared by name, or (unnamed) parsed with the values. */
static bool
send_stmt(PGconn *c, const struct pg_stmt *stmt, bool unnamed, int n, const char *const *values)
{
    if (unnamed)
        return PQsendQueryParams(c, stmt->sql, n, NULL, values, NULL, NULL, 0) == 1;
    return PQsendQueryPrepared(c, stmt->name, n, values, NULL, NULL, 0) == 1;
}

/* The first result of each of the n queries of a pipeline, then its sync. */
static void
pipeline_results(PGconn *c, PGresult **res, int n)
{
    for (int q = 0; q < n; q++) {
        PGresult *r;
        while ((r = PQgetResult(c)) != NULL) {
            if (res[q] == NULL)
                res[q] = r;
            else
                PQclear(r);
        }
    }
    PGresult *sync = PQgetResult(c); /* PGRES_PIPELINE_SYNC; NULL if the connection broke */
    PQclear(sync);
}

/*
 * BEGIN, txid_current() and stmt in one pipeline and one round trip: the
 * transaction's id is known before anything could commit, and taking it
 * adds no round trip to the transaction (docs/API.md, Errors). On success
 * *out is stmt's result and s->tx_xid is set.
 */
static int
exec_first(struct store_pg *s, const struct pg_stmt *stmt, bool unnamed, int n,
           const char *const *values, PGresult **out, struct jobd_error *err)
{
    PGconn *c = s->conn;
    s->tx = PG_TX_OPEN;
    s->tx_xid = 0;
    s->tx_pid = PQbackendPID(c);
    PGresult *res[3] = {NULL, NULL, NULL};
    if (PQenterPipelineMode(c) != 1)
        return pg_result_error(s, NULL, "pipeline", err);
    if (send_stmt(c, &st_tx_begin, s->pooled, 0, NULL) &&
        send_stmt(c, &st_tx_xid, s->pooled, 0, NULL) && send_stmt(c, stmt, unnamed, n, values) &&
        PQpipelineSync(c) == 1)
        pipeline_results(c, res, 3);
    (void)PQexitPipelineMode(c); /* fails only on a broken connection, which is reset anyway */
    int rc = JOBD_OK;
    for (int q = 0; q < 3 && rc == JOBD_OK; q++) {
        if (res[q] == NULL || !result_ok(res[q])) {
            rc = pg_result_error(s, res[q], q < 2 ? "BEGIN" : stmt->name, err);
            res[q] = NULL;
        }
    }
    if (rc == JOBD_OK && (PQntuples(res[1]) != 1 || (s->tx_xid = pg_get_i64(res[1], 0, 0)) <= 0))
        rc = jobd_error_set(err, JOBD_E_STORE, "db", "txid_current() gave no transaction id");
    PQclear(res[0]);
    PQclear(res[1]);
    if (rc == JOBD_OK)
        *out = res[2];
    else
        PQclear(res[2]);
    return rc;
}

/*
 * Whether r failed because PostgreSQL aborted its transaction to break a
 * deadlock (40P01) or a serialization failure (40001), outside any
 * transaction of ours: the statement then wrote nothing, and running it
 * again is the remedy PostgreSQL expects. Deadlocks are not all avoidable
 * here: a parent's end settles its waiting children under their row locks
 * in the order of the statement's rows (pg/schema_deps.c), so two batches
 * of completions or reaps whose children cross lock them in opposite
 * orders (test: deps_concurrent_batches_with_crossed_children).
 */
static bool
retry_after_abort(struct store_pg *s, const PGresult *r)
{
    const char *state = r != NULL ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    return state != NULL && (strcmp(state, "40P01") == 0 || strcmp(state, "40001") == 0) &&
           s->tx == PG_TX_NONE && PQtransactionStatus(s->conn) == PQTRANS_IDLE;
}

/* Times a statement aborted for a deadlock is run again before its error is returned. */
#define PG_ABORT_RETRIES 5

/* pg_exec, or with replan pg_exec_replan. */
static int
exec_stmt(struct store_pg *s, const struct pg_stmt *stmt, bool replan, int n,
          const char *const *values, PGresult **out, struct jobd_error *err)
{
    *out = NULL;
    int rc = pg_ensure_conn(s, err);
    bool unnamed = s->pooled || replan;
    bool first = s->tx == PG_TX_DEFERRED;
    if (rc == JOBD_OK && !unnamed)
        rc = prepare(s, stmt, n, err);
    if (rc == JOBD_OK && first && !s->pooled)
        rc = prepare(s, &st_tx_begin, 0, err);
    if (rc == JOBD_OK && first && !s->pooled)
        rc = prepare(s, &st_tx_xid, 0, err);
    if (rc != JOBD_OK)
        return rc;
    if (first)
        return exec_first(s, stmt, unnamed, n, values, out, err);
    for (int tries = 0;; tries++) {
        PGresult *r = unnamed ? PQexecParams(s->conn, stmt->sql, n, NULL, values, NULL, NULL, 0)
                              : PQexecPrepared(s->conn, stmt->name, n, values, NULL, NULL, 0);
        if (r != NULL && result_ok(r)) {
            *out = r;
            return JOBD_OK;
        }
        if (tries == PG_ABORT_RETRIES || !retry_after_abort(s, r))
            return pg_result_error(s, r, stmt->name, err);
        PQclear(r);
    }
}

int
pg_exec(struct store_pg *s, const struct pg_stmt *stmt, int n, const char *const *values,
        PGresult **out, struct jobd_error *err)
{
    return exec_stmt(s, stmt, false, n, values, out, err);
}

int
pg_exec_replan(struct store_pg *s, const struct pg_stmt *stmt, int n, const char *const *values,
               PGresult **out, struct jobd_error *err)
{
    return exec_stmt(s, stmt, true, n, values, out, err);
}

int
pg_exec_simple(struct store_pg *s, const char *sql, struct jobd_error *err)
{
    int rc = pg_ensure_conn(s, err);
    if (rc != JOBD_OK)
        return rc;
    if (s->tx == PG_TX_DEFERRED) { /* BEGIN and the id first (pg_tx_begin) */
        PGresult *x = NULL;
        if ((rc = exec_stmt(s, &st_tx_xid, false, 0, NULL, &x, err)) != JOBD_OK)
            return rc;
        PQclear(x);
    }
    PGresult *r = PQexec(s->conn, sql);
    if (r == NULL || !result_ok(r))
        return pg_result_error(s, r, sql, err);
    PQclear(r);
    return JOBD_OK;
}

/*
 * Defaults added to every connection URL that does not set them, so that a
 * peer that went silent (a partition that drops packets, a host that
 * vanished) ends a call in seconds instead of hanging it for the kernel's
 * minutes (15 min of retransmissions, 2 h before the first keepalive):
 *   connect_timeout=5      a connect that gets no answer fails in 5 s;
 *   tcp_user_timeout=5000  data sent and not acknowledged for 5 s drops the
 *                          connection (a request into a dead link);
 *   keepalives=1, keepalives_idle=5, keepalives_interval=2,
 *   keepalives_count=3     an idle or waiting connection whose peer stops
 *                          answering probes is dropped after 5 + 3 x 2 =
 *                          11 s (a long query is fine: the server's kernel
 *                          answers the probes while it runs).
 * A dropped connection is JOBD_E_UNAVAILABLE and the next call reconnects.
 * These bound what the kernel can see; a peer whose kernel still answers
 * but whose server does not (a stalled proxy) is the worker's lease
 * watchdog's to handle (src/worker/fence.h). tcp_user_timeout needs a
 * libpq >= 12: an older one does not know it and does not get it.
 */
static const struct {
    const char *key, *value;
} conn_defaults[] = {
    {"connect_timeout", "5"}, {"tcp_user_timeout", "5000"}, {"keepalives", "1"},
    {"keepalives_idle", "5"}, {"keepalives_interval", "2"}, {"keepalives_count", "3"},
};

/* Whether opts (PQconninfoParse: only what the URL sets has a value) has
 * key: *known if this libpq knows the option at all (tcp_user_timeout needs
 * libpq >= 12), and the return value whether the URL sets it. */
static bool
url_sets(const PQconninfoOption *opts, const char *key, bool *known)
{
    *known = false;
    for (const PQconninfoOption *o = opts; o->keyword != NULL; o++)
        if (strcmp(o->keyword, key) == 0) {
            *known = true;
            return o->val != NULL;
        }
    return false;
}

/*
 * gssencmode=disable, unless the URL, PGGSSENCMODE or a service file (the
 * URL's service=, or PGSERVICE) may set it. libpq's default, prefer, starts
 * Kerberos at every connect to learn whether this process holds a ticket
 * (its configuration, the credential cache, the GSSAPI mechanisms): pages
 * every PostgreSQL worker kept resident where nobody uses Kerberos. And it
 * buys no protection: prefer encrypts only where a ticket and a server that
 * offers GSSAPI encryption happen to meet, and goes on unencrypted whenever
 * that fails, as sslmode=prefer does. A site that relies on it sets
 * gssencmode=require in the URL or the environment (or hostgssenc in
 * pg_hba.conf, which then refuses an unencrypted connection with a clear
 * error). GSSAPI authentication is not affected.
 */
static bool
gss_off_by_default(const PQconninfoOption *opts)
{
    bool known = false, service_known = false;
    if (url_sets(opts, "gssencmode", &known) || !known || url_sets(opts, "service", &service_known))
        return false;
    static const char *const env[] = {"PGGSSENCMODE", "PGSERVICE"};
    for (size_t i = 0; i < sizeof env / sizeof env[0]; i++) {
        const char *v = getenv(env[i]);
        if (v != NULL && *v != '\0')
            return false;
    }
    return true;
}

#define POOLER_KEY "pooler="

/*
 * Copies url without jobd's pooler=transaction parameter into a new
 * string (*out, caller frees), setting *pooled when it was there. Any other
 * pooler value is JOBD_E_INVALID: a typo must not silently mean "direct".
 */
static int
strip_pooler(const char *url, char **out, bool *pooled, struct jobd_error *err)
{
    *pooled = false;
    *out = strdup(url);
    if (*out == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, "db", "out of memory");
    char *q = strchr(*out, '?');
    if (q == NULL)
        return JOBD_OK;
    char *w = q + 1, *r = q + 1;
    while (*r) {
        size_t len = strcspn(r, "&");
        if (strncmp(r, POOLER_KEY, strlen(POOLER_KEY)) == 0) {
            const char *v = r + strlen(POOLER_KEY);
            if (len - strlen(POOLER_KEY) != strlen("transaction") ||
                strncmp(v, "transaction", len - strlen(POOLER_KEY)) != 0) {
                free(*out);
                *out = NULL;
                return jobd_error_set(err, JOBD_E_INVALID, "db",
                                      "invalid PostgreSQL URL: pooler must be 'transaction'");
            }
            *pooled = true;
        } else {
            if (w != q + 1)
                *w++ = '&';
            memmove(w, r, len);
            w += len;
        }
        r += len + (r[len] == '&');
    }
    *w = '\0';
    if (w == q + 1)
        *q = '\0'; /* nothing left after '?' */
    return JOBD_OK;
}

/*
 * Connects to url. conn_defaults fill what the URL does not set, so a
 * host that drops packets fails in seconds rather than minutes; the
 * message names host and port but never the password.
 */
static int
connect_url(const char *url, PGconn **out, struct jobd_error *err)
{
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(url, &perr);
    if (opts == NULL) {
        int rc = perr ? set_pg_error(err, JOBD_E_INVALID, "invalid PostgreSQL URL", perr)
                      : jobd_error_set(err, JOBD_E_NOMEM, "db", "out of memory");
        PQfreemem(perr);
        return rc;
    }
    size_t n = strlen(url) + 256;
    char *u = malloc(n);
    if (u == NULL) {
        PQconninfoFree(opts);
        return jobd_error_set(err, JOBD_E_NOMEM, "db", "out of memory");
    }
    bool known = false;
    size_t len = (size_t)snprintf(u, n, "%s%s%s", url, strchr(url, '?') ? "&" : "?",
                                  url_sets(opts, "application_name", &known)
                                      ? "fallback_application_name=jobd"
                                      : "application_name=jobd");
    for (size_t i = 0; i < sizeof conn_defaults / sizeof conn_defaults[0]; i++)
        if (!url_sets(opts, conn_defaults[i].key, &known) && known)
            len += (size_t)snprintf(u + len, n - len, "&%s=%s", conn_defaults[i].key,
                                    conn_defaults[i].value);
    if (gss_off_by_default(opts))
        len += (size_t)snprintf(u + len, n - len, "&gssencmode=disable");
    PQconninfoFree(opts);
    PGconn *c = PQconnectdb(u);
    free(u);
    if (c == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, "db", "out of memory");
    if (PQstatus(c) != CONNECTION_OK) {
        char what[200];
        const char *host = PQhost(c), *port = PQport(c);
        snprintf(what, sizeof what, "cannot connect to PostgreSQL at %s%s%s",
                 host && *host ? host : "(default host)", port && *port ? ":" : "",
                 port ? port : "");
        int rc = set_pg_error(err, JOBD_E_UNAVAILABLE, what, PQerrorMessage(c));
        PQfinish(c);
        return rc;
    }
    PQsetNoticeProcessor(c, quiet_notices, NULL);
    *out = c;
    return JOBD_OK;
}

int
pg_connect(const char *url_in, PGconn **out, bool *pooled, struct jobd_error *err)
{
    *out = NULL;
    char *url = NULL;
    int src = strip_pooler(url_in, &url, pooled, err);
    if (src != JOBD_OK)
        return src;
    int rc = connect_url(url, out, err);
    free(url);
    return rc;
}
