/*
 * test_api_events_rows.c — GET /v1/events (docs/API.md, GET /v1/events) for
 * the changes of a batch: a batch of claims, or of successes, is written as
 * one row of the log per queue and type (docs/DESIGN.md, Events), and the
 * stream still gives each job's event with an id of its own, increasing;
 * a Last-Event-ID inside such a row resumes with exactly the rest of it and
 * what follows; job= and type= pick their jobs out of it. Both stores,
 * through a real `jobd server`, the batches made on the store as a worker
 * makes them.
 */
#define _GNU_SOURCE /* memmem */
#include <libpq-fe.h>
#include <sqlite3.h>
#include <string.h>

#include "apitest.h"
#include "ssetest.h" /* the stream's raw client */
#include "store/store.h"

/* One number the store answers to sql (sqlite_sql on SQLite). */
static long long
store_num(const struct srv *s, const char *pg_sql, const char *sqlite_sql)
{
    long long n = -1;
    if (strncmp(s->db, "sqlite:", 7) == 0) {
        sqlite3 *db = NULL;
        sqlite3_stmt *st = NULL;
        ASSERT_EQ(sqlite3_open(s->db + 7, &db), SQLITE_OK);
        sqlite3_busy_timeout(db, 5000);
        ASSERT_EQ(sqlite3_prepare_v2(db, sqlite_sql, -1, &st, NULL), SQLITE_OK);
        ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
        n = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        sqlite3_close(db);
    } else {
        PGconn *c = PQconnectdb(s->db);
        ASSERT_EQ(PQstatus(c), CONNECTION_OK);
        PGresult *r = PQexec(c, pg_sql);
        ASSERT_EQ(PQresultStatus(r), PGRES_TUPLES_OK);
        n = atoll(PQgetvalue(r, 0, 0));
        PQclear(r);
        PQfinish(c);
    }
    return n;
}

/* The rows of the log that say `to`. */
static long long
rows_to(const struct srv *s, const char *to)
{
    char pg[128], sq[128];
    snprintf(pg, sizeof pg, "SELECT count(*) FROM jobd.events WHERE to_st = '%s'", to);
    snprintf(sq, sizeof sq, "SELECT count(*) FROM events WHERE to_st = '%s'", to);
    return store_num(s, pg, sq);
}

/* Checks that the ids of v increase. */
static void
ids_increase(json_t *v)
{
    long long prev = 0;
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
        long long id = json_integer_value(json_object_get(e, "event"));
        ASSERT(id > prev);
        prev = id;
    }
}

/* Claims the 7 jobs of s in one batch and completes them in one, on the
 * store itself, as a worker does. */
static void
claim_and_complete_7(const struct srv *s)
{
    struct store *st = NULL;
    struct jobd_error e = {0};
    ASSERT_EQ(store_open(s->db, &st, &e), JOBD_OK);
    struct job_list l = {0};
    struct claim_req cr = {.worker_id = "w-rows", .limit = 10, .lease_ms = 600000};
    ASSERT_EQ(store_claim(st, &cr, &l, &e), JOBD_OK);
    ASSERT_EQ(l.n, 7);
    struct completion c[7];
    int outcome[7];
    for (size_t i = 0; i < 7; i++)
        c[i] = (struct completion){.id = l.v[i].id, .attempt = l.v[i].attempt};
    ASSERT_EQ(store_complete_batch(st, c, 7, outcome, &e), JOBD_OK);
    for (size_t i = 0; i < 7; i++)
        ASSERT_EQ(outcome[i], JOBD_OK);
    job_list_fini(&l);
    store_close(st);
}

/* A client resuming after event k of v gets exactly the rest of v. */
static void
resumes_from(const struct srv *s, json_t *v, size_t k)
{
    long long after = json_integer_value(json_object_get(json_array_get(v, k), "event"));
    size_t rest = json_array_size(v) - k - 1;
    struct sse back;
    ASSERT_EQ(sse_open(&back, s, NULL, after, 0), 200);
    json_t *w = sse_exactly(&back, rest);
    for (size_t i = 0; i < rest; i++)
        ASSERT_EQ(json_integer_value(json_object_get(json_array_get(w, i), "event")),
                  json_integer_value(json_object_get(json_array_get(v, k + 1 + i), "event")));
    json_decref(w);
    sse_close(&back);
}

/*
 * Seven jobs of two types, claimed in one batch and completed in one batch
 * on the store: two rows for the claims and two for the successes, and
 * every job's three events on the stream.
 */
BOTH(a_batch_is_a_row_a_type_and_an_event_a_job)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    struct sse all;
    ASSERT_EQ(sse_open(&all, &s, NULL, -1, 0), 200);
    struct resp r;
    ASSERT_EQ(req(&s, "POST", "/v1/jobs/batch",
                  "{\"jobs\":[{\"type\":\"ev.ra\",\"queue\":\"qr\"},{\"type\":\"ev.rb\",\"queue\":"
                  "\"qr\"},{\"type\":\"ev.ra\",\"queue\":\"qr\"},{\"type\":\"ev.rb\",\"queue\":"
                  "\"qr\"},{\"type\":\"ev.ra\",\"queue\":\"qr\"},{\"type\":\"ev.rb\",\"queue\":"
                  "\"qr\"},{\"type\":\"ev.ra\",\"queue\":\"qr\"}]}",
                  &r),
              201);
    resp_fini(&r);
    json_t *v = sse_exactly(&all, 7);
    int64_t ids[7];
    for (size_t i = 0; i < 7; i++)
        ids[i] = json_integer_value(json_object_get(json_array_get(v, i), "job"));
    json_decref(v);
    /* job= an ev.rb job inside its rows; type=ev.rb. */
    struct sse one, rb;
    char q[64];
    snprintf(q, sizeof q, "job=%lld", (long long)ids[3]);
    ASSERT_EQ(sse_open(&one, &s, q, -1, 0), 200);
    ASSERT_EQ(sse_open(&rb, &s, "type=ev.rb", -1, 0), 200);
    srv_await_metric(&s, "jobd_event_clients", 3);

    claim_and_complete_7(&s);
    v = sse_exactly(&all, 21);
    ids_increase(v);
    for (size_t i = 0; i < 7; i++) {
        json_t *mine = events_of(v, ids[i]);
        ASSERT_EQ(json_array_size(mine), 3);
        check_event(mine, 0, ids[i], NULL, "pending");
        check_event(mine, 1, ids[i], "pending", "running");
        check_event(mine, 2, ids[i], "running", "succeeded");
        for (size_t k = 1; k < 3; k++) {
            json_t *ev = json_array_get(mine, k);
            ASSERT_EQ(json_integer_value(json_object_get(ev, "attempt")), 1);
            ASSERT_STR_EQ(json_string_value(json_object_get(ev, "queue")), "qr");
            ASSERT_STR_EQ(json_string_value(json_object_get(ev, "type")),
                          i % 2 ? "ev.rb" : "ev.ra");
        }
        json_decref(mine);
    }
    /* One row per type for each batch. */
    ASSERT_EQ(rows_to(&s, "running"), 2);
    ASSERT_EQ(rows_to(&s, "succeeded"), 2);
    ASSERT_EQ(store_num(&s, "SELECT 0", "SELECT told FROM event_log"), 0);

    json_t *w = sse_exactly(&one, 2);
    check_event(w, 0, ids[3], "pending", "running");
    check_event(w, 1, ids[3], "running", "succeeded");
    json_decref(w);
    w = sse_exactly(&rb, 6);
    ids_increase(w);
    size_t i;
    json_t *ev;
    json_array_foreach(w, i, ev)
        ASSERT_STR_EQ(json_string_value(json_object_get(ev, "type")), "ev.rb");
    json_decref(w);

    /* Resumed inside the claims' first row: exactly the rest, same ids. */
    resumes_from(&s, v, 8);
    json_decref(v);
    sse_close(&one);
    sse_close(&rb);
    sse_close(&all);
    srv_stop(&s);
}
