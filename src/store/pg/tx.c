/*
 * pg/tx.c — transactions whose outcome the caller always learns.
 *
 * When the connection breaks after COMMIT was sent (a restart, a crash, a
 * network cut), the answer is lost but the commit may well have happened:
 * PostgreSQL writes the commit record first and answers after. Saying "not
 * written" then (503) lets a client without an idempotency key enqueue the
 * job twice. So every transaction takes its id (txid_current()) with its
 * first statement, in the same round trip (pg/conn.c, exec_first),
 * and a COMMIT that gets no answer is followed by a question on a new
 * connection: txid_status(id) says committed, aborted or still in
 * progress (PostgreSQL keeps that in its commit log; a transaction that
 * was running when the server crashed reads as aborted). In progress means
 * the old backend has not noticed its client is gone: it is terminated if
 * it still holds the transaction, and asked again. Only when nothing can
 * be learned within PG_OUTCOME_WAIT_MS is the answer JOBD_E_COMMIT_UNKNOWN
 * (docs/API.md, Errors).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/err.h"
#include "store/pg/internal.h"
#include "util/clock.h"

/* The status of transaction $1 (the 64-bit id txid_current() gave). */
PG_STMT(st_tx_status, "SELECT txid_status($1::bigint)");
/*
 * Ends backend $2 if it is still in transaction $1 (its 32-bit xid is the
 * low half of the 64-bit id): a pid that now belongs to another session, or
 * a backend that moved on, is left alone.
 */
PG_STMT(st_tx_kill, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE pid = $2::int AND backend_xid::text = ($1::bigint % 4294967296)::text");

int
pg_tx_begin(struct store_pg *s, struct jobd_error *err)
{
    if (s->tx != PG_TX_NONE)
        return jobd_error_set(err, JOBD_E_INTERNAL, "db", "a transaction is already open");
    s->tx = PG_TX_DEFERRED;
    s->tx_xid = 0;
    s->tx_pid = 0;
    return JOBD_OK;
}

void
pg_tx_rollback(struct store_pg *s)
{
    bool open = s->tx == PG_TX_OPEN;
    s->tx = PG_TX_NONE;
    if (open && PQstatus(s->conn) == CONNECTION_OK)
        PQclear(PQexec(s->conn, "ROLLBACK"));
}

int
pg_tx_end(struct store_pg *s, int rc, struct jobd_error *err)
{
    if (rc == JOBD_OK)
        return pg_tx_commit(s, err);
    pg_tx_rollback(s);
    return rc;
}

/*
 * PG_OUTCOME_WAIT_MS, or in test builds $JOBD_TEST_OUTCOME_WAIT_MS, so that
 * scenario_commit_outcome can reach the unknown case in a short blackout.
 */
static int64_t
outcome_wait_ms(void)
{
#ifdef JOBD_TEST_HOOKS
    const char *v = getenv("JOBD_TEST_OUTCOME_WAIT_MS");
    long ms = v != NULL ? strtol(v, NULL, 10) : 0;
    if (ms > 0 && ms <= 60000)
        return ms;
#endif
    return PG_OUTCOME_WAIT_MS;
}

static void
sleep_ms(int64_t ms)
{
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* One question on a fresh connection: 'c'ommitted, 'a'borted, 'p' in progress, 0 unknown. */
static char
ask_status(struct store_pg *s, const char *xid, const char *pid, bool *killed)
{
    struct jobd_error ignored = {0};
    if (pg_reconnect(s, &ignored) != JOBD_OK)
        return 'p'; /* not back yet: ask again */
    const char *v[2] = {xid, pid};
    PGresult *r = NULL;
    if (pg_exec(s, &st_tx_status, 1, v, &r, &ignored) != JOBD_OK)
        return ignored.code == JOBD_E_UNAVAILABLE ? 'p' : 0; /* 22023: an id from the future */
    char st = PQntuples(r) == 1 && !PQgetisnull(r, 0, 0) ? PQgetvalue(r, 0, 0)[0] : 0;
    PQclear(r);
    if (st == 'i' && !*killed && pid != NULL) {
        *killed = true;
        if (pg_exec(s, &st_tx_kill, 2, v, &r, &ignored) == JOBD_OK)
            PQclear(r);
    }
    return st == 'i' ? 'p' : st;
}

/* The connection broke after COMMIT was sent: learn how the transaction ended. */
static int
commit_outcome(struct store_pg *s, const char *why, struct jobd_error *err)
{
    if (s->tx_xid <= 0)
        return jobd_error_set(err, JOBD_E_COMMIT_UNKNOWN, "db",
                              "the connection to PostgreSQL broke at COMMIT (%s)", why);
    char xid[24], pid[24];
    pg_i64(xid, s->tx_xid);
    pg_i64(pid, s->tx_pid);
    int64_t deadline = clock_mono_now_us() + outcome_wait_ms() * 1000;
    int64_t pause_ms = 10;
    bool killed = false;
    for (;;) {
        char st = ask_status(s, xid, s->tx_pid > 0 ? pid : NULL, &killed);
        if (st == 'c')
            return JOBD_OK;
        if (st == 'a')
            return jobd_error_set(err, JOBD_E_UNAVAILABLE, "db",
                                  "PostgreSQL is unavailable: the connection broke at COMMIT "
                                  "(%s) and transaction %s did not commit",
                                  why, xid);
        if (st != 'p' || clock_mono_now_us() + pause_ms * 1000 > deadline)
            break;
        sleep_ms(pause_ms);
        pause_ms = pause_ms < 400 ? pause_ms * 2 : 500;
    }
    return jobd_error_set(err, JOBD_E_COMMIT_UNKNOWN, "db",
                          "the connection to PostgreSQL broke at COMMIT (%s) and whether "
                          "transaction %s committed could not be learned",
                          why, xid);
}

/* Whether a failed COMMIT's result means the connection broke (the server did not answer). */
static bool
answer_lost(const struct store_pg *s, const PGresult *r)
{
    const char *state = r != NULL ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    return r == NULL || PQstatus(s->conn) != CONNECTION_OK || state == NULL ||
           strncmp(state, "08", 2) == 0 || strncmp(state, "57P0", 4) == 0;
}

int
pg_tx_commit(struct store_pg *s, struct jobd_error *err)
{
    enum pg_tx_state tx = s->tx;
    s->tx = PG_TX_NONE;
    if (tx == PG_TX_DEFERRED)
        return JOBD_OK; /* nothing was sent: nothing to commit */
    if (tx != PG_TX_OPEN)
        return jobd_error_set(err, JOBD_E_INTERNAL, "db", "COMMIT without a transaction");
    PGresult *r = PQexec(s->conn, "COMMIT");
    if (r != NULL && PQresultStatus(r) == PGRES_COMMAND_OK) {
        bool rolled_back = strcmp(PQcmdStatus(r), "ROLLBACK") == 0;
        PQclear(r);
        if (rolled_back)
            return jobd_error_set(err, JOBD_E_STORE, "db", "COMMIT of a failed transaction");
        return JOBD_OK;
    }
    if (!answer_lost(s, r))
        return pg_result_error(s, r, "COMMIT", err); /* the server said no: not written */
    char why[160];
    const char *m = r != NULL ? PQresultErrorMessage(r) : PQerrorMessage(s->conn);
    snprintf(why, sizeof why, "%.*s", (int)strcspn(m != NULL ? m : "", "\n"), m != NULL ? m : "");
    PQclear(r);
    return commit_outcome(s, why, err);
}
