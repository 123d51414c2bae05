/*
 * pg/ends.c — what a waiting request needs on PostgreSQL (store_job_states,
 * store_wait_ends; docs/API.md, Waiting for a result).
 *
 * Ends of jobs are announced on their own channel, jobd_done, not on
 * jobd_jobs: a server's waits thread must not wake for every enqueue, and
 * the workers' listeners must not wake for every completion. Each
 * transaction that ends jobs sends one NOTIFY (the payload is empty, so
 * PostgreSQL folds the repeats of one transaction): a completion from its
 * own statement (pg/report.c, PG_ENDED_WAKE), every other end from the
 * statement trigger on jobs_done (schema version 18). Which jobs ended is
 * not in the payload: the listener asks for the states of every job it
 * waits for in one query, which stays one query however many jobs ended.
 *
 * A NOTIFY is not free: PostgreSQL serializes the commits of the
 * transactions that send one (measured: about 40 % fewer completions in
 * the SQL ceiling at 8 clients; docs/API.md, Waiting for a result). So it is sent only while a connection listens
 * for ends: each one that does has a row in jobd.result_listeners (by
 * backend pid) from its LISTEN until it closes; rows of backends that are
 * gone (a server killed) are swept by the next LISTEN. A transaction that
 * looked at the table just before a listener's row was committed, and
 * commits after, sends nothing: the caller looks once more a little after
 * it started to listen (api/jobwait.c).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>

#include "core/err.h"
#include "store/pg/internal.h"
#include "util/errtext.h"

/* $1 ids: the status of those that exist, wherever they live. */
PG_STMT(st_job_states, "SELECT id, status::text FROM jobd.all_jobs WHERE id = ANY($1::bigint[])");

int
pg_op_job_states(struct store *st, const int64_t *ids, size_t n, int *status,
                 struct jobd_error *err)
{
    struct pg_array a;
    pg_array_begin(&a);
    for (size_t i = 0; i < n; i++) {
        pg_array_add_i64(&a, ids[i], false);
        status[i] = -1;
    }
    const char *vals[1] = {pg_array_end(&a)};
    if (a.oom) {
        pg_array_fini(&a);
        return jobd_error_set(err, JOBD_E_NOMEM, "db", "out of memory");
    }
    PGresult *r = NULL;
    int rc = pg_exec(pg_of(st), &st_job_states, 1, vals, &r, err);
    pg_array_fini(&a);
    if (rc != JOBD_OK)
        return rc;
    /* Rows come in any order; ids are ascending and each once (store.h). */
    for (int row = 0; row < PQntuples(r); row++) {
        size_t i = store_ids_find(ids, n, pg_get_i64(r, row, 0));
        enum job_status s;
        if (i != SIZE_MAX && job_status_parse(PQgetvalue(r, row, 1), &s) == JOBD_OK)
            status[i] = (int)s;
    }
    PQclear(r);
    return JOBD_OK;
}

int
pg_op_wait_ends(struct store *st, int timeout_ms, struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    if (s->pooled) {
        /* No session to LISTEN on (store_wait_ready said so): nap, as store.h allows. */
        int ms = timeout_ms < 50 ? timeout_ms : 50;
        if (ms > 0)
            poll(NULL, 0, ms);
        return 1;
    }
    if (!s->listening_ends) {
        int rc = pg_exec_simple(s,
                                "DELETE FROM jobd.result_listeners l WHERE NOT EXISTS "
                                "(SELECT 1 FROM pg_stat_activity a WHERE a.pid = l.pid)",
                                err);
        if (rc == JOBD_OK)
            rc = pg_exec_simple(s,
                                "INSERT INTO jobd.result_listeners (pid) "
                                "VALUES (pg_backend_pid()) ON CONFLICT DO NOTHING",
                                err);
        if (rc == JOBD_OK)
            rc = pg_exec_simple(s, "LISTEN jobd_done", err);
        if (rc != JOBD_OK)
            return rc;
        s->listening_ends = true;
        /* Ends before the LISTEN were not heard (a new or reset session): look now. */
        return 1;
    }
    int64_t deadline = clock_mono_now_us() + (int64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000;
    for (;;) {
        if (PQconsumeInput(s->conn) == 0) {
            s->listening_ends = false;
            return jobd_error_set(err, JOBD_E_UNAVAILABLE, "db", "PostgreSQL is unavailable: %s",
                                  PQerrorMessage(s->conn));
        }
        int got = 0;
        PGnotify *nt;
        while ((nt = PQnotifies(s->conn)) != NULL) {
            PQfreemem(nt);
            got++;
        }
        if (got > 0)
            return 1;
        int64_t left_us = deadline - clock_mono_now_us();
        if (left_us <= 0)
            return 0;
        struct pollfd pfd = {.fd = PQsocket(s->conn), .events = POLLIN};
        int pr = poll(&pfd, 1, (int)((left_us + 999) / 1000));
        if (pr < 0 && errno != EINTR)
            return jobd_error_set(err, JOBD_E_IO, "db", "poll: %s", errno_text(errno));
    }
}

void
pg_ends_forget(struct store_pg *s)
{
    if (!s->listening_ends || PQstatus(s->conn) != CONNECTION_OK)
        return;
    (void)pg_exec_simple(s, "DELETE FROM jobd.result_listeners WHERE pid = pg_backend_pid()", NULL);
    s->listening_ends = false;
}
