/*
 * pg/clockjump.c — store_now and store_clock_went_back on the PostgreSQL
 * backend (see store.h, "clock jumps").
 *
 * Without a store clock "now" is the database server's now(), so the clock
 * that matters is the database host's, and the plane asks for it (one
 * SELECT per pass) to notice when it goes back. Several servers may notice
 * the same jump and each run the re-evaluation: the jobs part of a second
 * run only touches jobs due within the same back_us of its own now, and the
 * schedule part is idempotent (schedule rows are locked, and a
 * compare-and-set guards next_run_at).
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/schedule.h"
#include "store/pg/internal.h"

#define STMT(n, s) static const struct pg_stmt n = {#n, s}

/* $1 now (NULL = the server's). */
STMT(st_clock_now, "SELECT " PG_TS_US(PG_NOW("$1")));

/* $1 now, $2 back (microseconds): jobs due by the old clock become due now.
 * A scan of jobs: no index leads with run_at over every type (migration
 * 16 dropped jobs_next_run, which each enqueue paid for), and this runs
 * only when the clock went back. */
STMT(st_clock_jobs_due, "UPDATE jobd.jobs SET run_at = " PG_NOW(
                            "$1") " "
                                  "WHERE status = 'pending' AND run_at > " PG_NOW(
                                      "$1") " "
                                            "  AND run_at <= " PG_NOW(
                                                "$1") " + $2::bigint * interval '1 microsecond'");

/* $1 now, $2 back: leases keep the length they were given. */
STMT(st_clock_leases, "UPDATE jobd.jobs SET lease_expires_at = GREATEST(" PG_NOW(
                          "$1") ","
                                "  lease_expires_at - $2::bigint * interval '1 microsecond') "
                                "WHERE status = 'running' AND lease_expires_at > " PG_NOW("$1"));

/* $1 now: the unpaused schedules, locked, and now. */
STMT(st_clock_schedules, "SELECT name, cron, timezone, " PG_TS_US("next_run_at") ", " PG_TS_US(
                             PG_NOW("$1")) " "
                                           "FROM jobd.schedules WHERE NOT paused FOR UPDATE");

/* $1 name, $2 old next_run_at, $3 new next_run_at (microseconds). */
STMT(st_clock_schedule_back, "UPDATE jobd.schedules SET next_run_at = " PG_US_TS(
                                 "$3") " "
                                       "WHERE name = $1::text AND next_run_at = " PG_US_TS("$2"));

/* The rows a statement changed (PQcmdTuples: "" for a statement that counts
 * none, which reads as 0). */
static int
cmd_tuples(PGresult *r)
{
    long n = strtol(PQcmdTuples(r), NULL, 10);
    return n > 0 && n <= INT32_MAX ? (int)n : 0;
}

static struct store_pg *
pgs(struct store *st)
{
    return (struct store_pg *)st;
}

int
pg_op_now(struct store *st, int64_t *now_us, struct jobd_error *err)
{
    struct store_pg *s = pgs(st);
    char nowb[24];
    const char *v[1] = {pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_clock_now, 1, v, &r, err);
    if (rc != JOBD_OK)
        return rc;
    *now_us = pg_get_i64(r, 0, 0);
    PQclear(r);
    return JOBD_OK;
}

/* Runs one of the jobs statements; *n += the rows it changed. */
static int
jobs_stmt(struct store_pg *s, const struct pg_stmt *stmt, int64_t back_us, int *n,
          struct jobd_error *err)
{
    char nowb[24], backb[24];
    const char *v[2] = {pg_now_param(s, nowb), pg_i64(backb, back_us)};
    PGresult *r = NULL;
    int rc = pg_exec(s, stmt, 2, v, &r, err);
    if (rc != JOBD_OK)
        return rc;
    if (n != NULL)
        *n += cmd_tuples(r);
    PQclear(r);
    return JOBD_OK;
}

/* Moves next_run_at back to the first firing after now where it lies beyond it. */
static int
schedules_went_back(struct store_pg *s, int *changed, struct jobd_error *err)
{
    char nowb[24];
    const char *v[1] = {pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_clock_schedules, 1, v, &r, err);
    if (rc != JOBD_OK)
        return rc;
    for (int i = 0; i < PQntuples(r) && rc == JOBD_OK; i++) {
        int64_t next = pg_get_i64(r, i, 3), now = pg_get_i64(r, i, 4), first;
        /* A zone gone from the tz data must not block the others. */
        if (schedule_first_after(PQgetvalue(r, i, 1), PQgetvalue(r, i, 2), now, &first, NULL) !=
                JOBD_OK ||
            first >= next)
            continue;
        char oldb[24], newb[24];
        const char *u[3] = {PQgetvalue(r, i, 0), pg_i64(oldb, next), pg_i64(newb, first)};
        PGresult *ur = NULL;
        if ((rc = pg_exec(s, &st_clock_schedule_back, 3, u, &ur, err)) == JOBD_OK) {
            *changed += cmd_tuples(ur);
            PQclear(ur);
        }
    }
    PQclear(r);
    return rc;
}

int
pg_op_clock_went_back(struct store *st, int64_t back_us, int *jobs, int *schedules,
                      struct jobd_error *err)
{
    struct store_pg *s = pgs(st);
    int rc = pg_tx_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    if (back_us > 0) {
        rc = jobs_stmt(s, &st_clock_jobs_due, back_us, jobs, err);
        if (rc == JOBD_OK)
            rc = jobs_stmt(s, &st_clock_leases, back_us, NULL, err);
    }
    if (rc == JOBD_OK)
        rc = schedules_went_back(s, schedules, err);
    return pg_tx_end(s, rc, err);
}
