/*
 * test_api_events.c — GET /v1/events (docs/API.md, GET /v1/events) through real
 * `jobd server` processes on both stores: a job's changes arrive in order
 * with increasing ids; Last-Event-ID resumes with exactly the missed
 * events, and an id the log cannot serve (before recording started, over
 * an hour old, never given) is 410 gone; filters narrow the stream and bad
 * ones are 400 naming the parameter; a client that never reads is cut and
 * counted while another keeps receiving; on PostgreSQL a client of one
 * server sees another server's changes, and an event whose transaction
 * commits after a later-numbered one is not skipped; a job with
 * depends_on is recorded waiting, released or cancelled from waiting, and
 * put back to waiting by its parent's retry.
 */
#define _GNU_SOURCE /* memmem */
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <string.h>

#include "apitest.h"
#include "rawhttp.h"
#include "ssetest.h" /* the stream's raw client */

/* Claims one job of type over HTTP; its id, and the token into tok. */
static int64_t
claim(const struct srv *s, const char *type, char *tok, size_t len)
{
    char body[256];
    snprintf(body, sizeof body, "{\"worker_id\":\"w1\",\"types\":[\"%s\"],\"limit\":1}", type);
    struct resp r;
    ASSERT_EQ(req(s, "POST", "/v1/claim", body, &r), 200);
    json_t *v = resp_json(&r);
    json_t *j = json_array_get(json_object_get(v, "jobs"), 0);
    ASSERT(j != NULL);
    int64_t id = json_integer_value(json_object_get(j, "id"));
    snprintf(tok, len, "%s", json_string_value(json_object_get(j, "lease_token")));
    json_decref(v);
    resp_fini(&r);
    return id;
}

static void
complete(const struct srv *s, int64_t id, const char *tok)
{
    char path[64], body[256];
    snprintf(path, sizeof path, "/v1/jobs/%lld/complete", (long long)id);
    snprintf(body, sizeof body, "{\"attempt\":1,\"lease_token\":\"%s\"}", tok);
    EXPECT(s, "POST", path, body, 200, NULL);
}

BOTH(a_job_changes_arrive_in_order)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    struct sse all, only_b, by_job;
    ASSERT_EQ(sse_open(&all, &s, NULL, -1, 0), 200);
    ASSERT_EQ(sse_open(&only_b, &s, "type=ev.b", -1, 0), 200);
    int64_t id = create_job(&s, "{\"type\":\"ev.a\",\"queue\":\"q1\"}");
    char q[64];
    snprintf(q, sizeof q, "job=%lld", (long long)id);
    ASSERT_EQ(sse_open(&by_job, &s, q, -1, 0), 200);
    char tok[128];
    ASSERT_EQ(claim(&s, "ev.a", tok, sizeof tok), id);
    complete(&s, id, tok);
    int64_t other = create_job(&s, "{\"type\":\"ev.b\"}");
    json_t *v = sse_await(&all, 4);
    long long e1 = check_event(v, 0, id, NULL, "pending");
    long long e2 = check_event(v, 1, id, "pending", "running");
    long long e3 = check_event(v, 2, id, "running", "succeeded");
    long long e4 = check_event(v, 3, other, NULL, "pending");
    ASSERT(e1 < e2 && e2 < e3 && e3 < e4);
    json_t *e = json_array_get(v, 1);
    ASSERT_STR_EQ(json_string_value(json_object_get(e, "queue")), "q1");
    ASSERT_STR_EQ(json_string_value(json_object_get(e, "type")), "ev.a");
    ASSERT_EQ(json_integer_value(json_object_get(e, "attempt")), 1);
    json_decref(v);
    /* ?type=ev.b: only the other job; ?job=: from its start, only that job. */
    v = sse_await(&only_b, 1);
    check_event(v, 0, other, NULL, "pending");
    json_decref(v);
    v = sse_await(&by_job, 2);
    check_event(v, 0, id, "pending", "running");
    check_event(v, 1, id, "running", "succeeded");
    sse_pump(&by_job, 300);
    json_decref(v);
    v = sse_events(&by_job);
    ASSERT_EQ(json_array_size(v), 2);
    json_decref(v);
    sse_pump(&only_b, 0);
    v = sse_events(&only_b);
    ASSERT_EQ(json_array_size(v), 1);
    json_decref(v);
    srv_await_metric(&s, "jobd_event_clients", 3);
    sse_close(&all);
    sse_close(&only_b);
    sse_close(&by_job);
    /* Clients that left while idle are noticed (no event needed to find out). */
    int64_t deadline = apitest_now_ms() + PROMPT_MS;
    while (srv_metric(&s, "jobd_event_clients") != 0) {
        if (apitest_now_ms() > deadline)
            TEST_FAIL("jobd_event_clients stayed %g after its clients left",
                      srv_metric(&s, "jobd_event_clients"));
        apitest_nap_ms(50);
    }
    srv_stop(&s);
}

BOTH(last_event_id_resumes_or_is_gone)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    struct sse a;
    ASSERT_EQ(sse_open(&a, &s, NULL, -1, 0), 200);
    int64_t j1 = create_job(&s, "{\"type\":\"ev.r\"}");
    json_t *v = sse_await(&a, 1);
    long long seen = check_event(v, 0, j1, NULL, "pending");
    json_decref(v);
    sse_close(&a);
    /* Missed while away: a cancel of j1, a new job. */
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld/cancel", (long long)j1);
    EXPECT(&s, "POST", path, NULL, 200, NULL);
    int64_t j2 = create_job(&s, "{\"type\":\"ev.r\"}");
    ASSERT_EQ(sse_open(&a, &s, NULL, seen, 0), 200);
    v = sse_await(&a, 2);
    ASSERT(check_event(v, 0, j1, "pending", "cancelled") > seen);
    long long last = check_event(v, 1, j2, NULL, "pending");
    sse_pump(&a, 300);
    json_decref(v);
    v = sse_events(&a);
    ASSERT_EQ(json_array_size(v), 2); /* exactly the missed ones */
    json_decref(v);
    /* Then live. */
    snprintf(path, sizeof path, "/v1/jobs/%lld/retry", (long long)j1);
    EXPECT(&s, "POST", path, NULL, 200, NULL);
    v = sse_await(&a, 3);
    ASSERT(check_event(v, 2, j1, "cancelled", "pending") > last);
    json_decref(v);
    sse_close(&a);
    /* Before recording started (0), never given, not a number. */
    struct sse g;
    ASSERT_EQ(sse_open(&g, &s, NULL, 0, 0), 410);
    ASSERT(strstr(g.body, "\"gone\"") != NULL && strstr(g.body, "Last-Event-ID") != NULL);
    sse_close(&g);
    ASSERT_EQ(sse_open(&g, &s, NULL, last + 1000, 0), 410);
    sse_close(&g);
    struct resp r;
    const char *bad[] = {"Last-Event-ID: soon", NULL};
    http_req(&s, "GET", "/v1/events", NULL, 0, bad, &r);
    ASSERT_EQ(r.status, 400);
    ASSERT(strstr(r.body, "Last-Event-ID") != NULL);
    resp_fini(&r);
    /* Over an hour old: every event after `seen` is, now. */
    store_sql(&s, "UPDATE jobd.events SET at = at - interval '2 hours'",
              "UPDATE events SET at = at - 7200000000");
    ASSERT_EQ(sse_open(&g, &s, NULL, seen, 0), 410);
    sse_close(&g);
    srv_stop(&s);
}

/* A log pruned to nothing hands out no id twice: recording starts again above
 * the highest id ever given (SQLite's rowids: the prune keeps the newest row,
 * docs/DESIGN.md, Events), and that old id is gone (410). */
BOTH(ids_grow_past_a_log_pruned_empty)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    struct sse a;
    ASSERT_EQ(sse_open(&a, &s, NULL, -1, 0), 200);
    int64_t j1 = create_job(&s, "{\"type\":\"ev.p\"}");
    int64_t j2 = create_job(&s, "{\"type\":\"ev.p\"}");
    json_t *v = sse_await(&a, 2);
    check_event(v, 0, j1, NULL, "pending");
    long long last = check_event(v, 1, j2, NULL, "pending");
    json_decref(v);
    sse_close(&a);
    /* Nobody listened for two hours, and every event is that old; a server
     * started afresh listens (and prunes) at its first client. */
    srv_stop(&s);
    store_sql(&s,
              "UPDATE jobd.events SET at = at - interval '2 hours';"
              " UPDATE jobd.event_log SET listened_at = listened_at - interval '2 hours'",
              "UPDATE events SET at = at - 7200000000;"
              " UPDATE event_log SET listened_at = listened_at - 7200000000");
    srv_start_db(&s, NULL);
    struct sse b;
    ASSERT_EQ(sse_open(&b, &s, NULL, -1, 0), 200); /* recording starts again; the prune runs */
    int64_t j3 = create_job(&s, "{\"type\":\"ev.p\"}");
    v = sse_await(&b, 1);
    ASSERT(check_event(v, 0, j3, NULL, "pending") > last);
    json_decref(v);
    sse_close(&b);
    struct sse g;
    ASSERT_EQ(sse_open(&g, &s, NULL, last, 0), 410);
    sse_close(&g);
    srv_stop(&s);
}

BOTH(bad_filters_are_400_naming_them)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    EXPECT(&s, "GET", "/v1/events?queue=Bad%20Q", NULL, 400, "invalid_field");
    EXPECT(&s, "GET", "/v1/events?type=a%20b", NULL, 400, "invalid_field");
    EXPECT(&s, "GET", "/v1/events?job=x", NULL, 400, "invalid_query");
    EXPECT(&s, "GET", "/v1/events?job=0", NULL, 400, "invalid_query");
    EXPECT(&s, "GET", "/v1/events?workflow=x", NULL, 400, "invalid_query");
    EXPECT(&s, "GET", "/v1/events?workflow=0", NULL, 400, "invalid_query");
    EXPECT(&s, "GET", "/v1/events?status=pending", NULL, 400, "invalid_query");
    const char *want[][2] = {{"queue=Bad%20Q", "queue"},
                             {"type=a%20b", "type"},
                             {"job=x", "job"},
                             {"workflow=-2", "workflow"},
                             {"status=pending", "status"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "/v1/events?%s", want[i][0]);
        struct resp r;
        ASSERT_EQ(req(&s, "GET", path, NULL, &r), 400);
        json_t *j = resp_json(&r);
        ASSERT_STR_EQ(json_string_value(json_object_get(json_object_get(j, "error"), "field")),
                      want[i][1]);
        json_decref(j);
        resp_fini(&r);
    }
    srv_stop(&s);
}

/* A batch of n jobs of type. */
static void
enqueue_batch(const struct srv *s, const char *type, int n)
{
    size_t cap = (size_t)n * 64 + 32, k = 0;
    char *b = malloc(cap);
    ASSERT(b != NULL);
    k += (size_t)snprintf(b + k, cap - k, "{\"jobs\":[");
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf(b + k, cap - k, "%s{\"type\":\"%s\"}", i ? "," : "", type);
    snprintf(b + k, cap - k, "]}");
    struct resp r;
    ASSERT_EQ(req(s, "POST", "/v1/jobs/batch", b, &r), 201);
    resp_fini(&r);
    free(b);
}

/* How many events arrived in s's body from *at on (their data lines),
 * moving *at past the whole lines counted: no JSON parsed, so counting a
 * stream of tens of thousands as it grows costs nothing much. */
static size_t
count_new_events(const struct sse *s, size_t *at)
{
    if (s->body == NULL)
        return 0;
    size_t n = 0;
    const char *p = s->body + *at, *eol;
    while ((eol = strchr(p, '\n')) != NULL) {
        if (strncmp(p, "data: ", 6) == 0)
            n++;
        p = eol + 1;
    }
    *at = (size_t)(p - s->body);
    return n;
}

/* Reads a stream on a thread of its own until stop, so that it reads while
 * the test waits for a batch (one took 8-14 s under load: a client that
 * reads nothing for 3 s while it holds over half its bound is cut), and
 * counts the events it got. */
struct pump {
    struct sse *s;
    atomic_bool stop;
    atomic_size_t events;
    size_t at; /* the pump's own: where counting goes on */
};

static void *
pump_main(void *arg)
{
    struct pump *p = arg;
    while (!atomic_load(&p->stop)) {
        sse_pump(p->s, 50);
        atomic_fetch_add(&p->events, count_new_events(p->s, &p->at));
    }
    return NULL;
}

BOTH(a_client_that_never_reads_is_cut)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    struct sse slow, fine;
    sse_open(&slow, &s, NULL, -1, 4096); /* a small window, never read */
    ASSERT_EQ(sse_open(&fine, &s, NULL, -1, 0), 200);
    srv_await_metric(&s, "jobd_event_clients", 2);
    ASSERT_EQ(srv_metric(&s, "jobd_event_clients_cut_total"), 0);
    int sent = 0;
    int64_t deadline = apitest_now_ms() + 120000;
    struct pump pump = {.s = &fine};
    pthread_t reader;
    ASSERT_EQ(pthread_create(&reader, NULL, pump_main, &pump), 0);
    /* The next batch only once the reading client has all the events so far:
     * the server has served every one by then, so the one that never reads
     * holds its share of them too, unless it is full and waits to be cut.
     * More events then would only be work for both ends meanwhile. A batch
     * (200 events, ~35 KB) is well under half a client's bound, so the
     * reading client, which has all before the next, is never over it and
     * cannot be cut itself when its thread does not run for 3 s (a batch of
     * 1000 was over it, and at load 35 the reading client was cut too). */
    while (srv_metric(&s, "jobd_event_clients_cut_total") < 1) {
        if (apitest_now_ms() > deadline)
            TEST_FAIL("the client that never reads was not cut after %d events", sent);
        if (sent < 40000 && atomic_load(&pump.events) >= (size_t)sent) {
            enqueue_batch(&s, "ev.flood", 200);
            sent += 200;
        } else {
            apitest_nap_ms(50);
        }
    }
    atomic_store(&pump.stop, true);
    pthread_join(reader, NULL); /* fine is this thread's again */
    /* The other client got every one. */
    int64_t t0 = apitest_now_ms();
    size_t n = atomic_load(&pump.events);
    while (n < (size_t)sent) {
        if (apitest_now_ms() - t0 > 60000)
            TEST_FAIL("the reading client got %zu of %d events (its stream %s; %lld clients cut)",
                      n, sent, fine.closed ? "ended" : "open",
                      (long long)srv_metric(&s, "jobd_event_clients_cut_total"));
        sse_pump(&fine, 100);
        n += count_new_events(&fine, &pump.at);
    }
    json_t *v = sse_events(&fine); /* each one parsed and its id checked, once */
    ASSERT_EQ(json_array_size(v), sent);
    json_decref(v);
    fprintf(stderr, "cut after %d events\n", sent);
    /* The cut one holds nothing: it leaves the count once its connection goes. */
    srv_await_metric(&s, "jobd_event_clients_cut_total", 1);
    sse_close(&slow);
    sse_close(&fine);
    srv_stop(&s);
}

TEST(pg_another_servers_changes_arrive)
{
    if (!apitest_backend_ok("pg"))
        return;
    struct srv a, b;
    srv_start(&a, "pg", NULL);
    memset(&b, 0, sizeof b);
    snprintf(b.db, sizeof b.db, "%s", a.db);
    srv_start_db(&b, NULL);
    struct sse at_b;
    ASSERT_EQ(sse_open(&at_b, &b, NULL, -1, 0), 200);
    int64_t id = create_job(&a, "{\"type\":\"ev.x\"}");
    json_t *v = sse_await(&at_b, 1);
    check_event(v, 0, id, NULL, "pending");
    json_decref(v);
    sse_close(&at_b);
    srv_stop(&b);
    srv_stop(&a);
}

/*
 * Event ids come from a sequence: a transaction that took a smaller id may
 * commit after one that took a larger. The stream holds the larger back
 * until the smaller's transaction ends, then sends both in order.
 */
TEST(pg_an_event_committed_late_is_not_skipped)
{
    if (!apitest_backend_ok("pg"))
        return;
    struct srv s;
    srv_start(&s, "pg", NULL);
    struct sse c;
    ASSERT_EQ(sse_open(&c, &s, NULL, -1, 0), 200);
    PGconn *tx = PQconnectdb(s.db);
    ASSERT_EQ(PQstatus(tx), CONNECTION_OK);
    PGresult *r = PQexec(tx, "BEGIN");
    PQclear(r);
    r = PQexec(tx, "SELECT jobd.enqueue('ev.late')");
    ASSERT_EQ(PQresultStatus(r), PGRES_TUPLES_OK);
    int64_t late = atoll(PQgetvalue(r, 0, 0));
    PQclear(r);
    int64_t early = create_job(&s, "{\"type\":\"ev.early\"}");
    /* Committed, but a smaller id is still open: nothing yet. */
    sse_pump(&c, 1500);
    json_t *v = sse_events(&c);
    ASSERT_EQ(json_array_size(v), 0);
    json_decref(v);
    r = PQexec(tx, "COMMIT");
    PQclear(r);
    PQfinish(tx);
    v = sse_await(&c, 2);
    long long e1 = check_event(v, 0, late, NULL, "pending");
    long long e2 = check_event(v, 1, early, NULL, "pending");
    ASSERT(e1 < e2);
    json_decref(v);
    sse_close(&c);
    srv_stop(&s);
}

/*
 * A child with depends_on is created `waiting`, released `waiting` →
 * `pending` by its parent's success, and then runs; a waiting job
 * cancelled by the user is `waiting` → `cancelled` (docs/API.md,
 * GET /v1/events).
 */
BOTH(a_waiting_child_is_recorded_waiting)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    struct sse all;
    ASSERT_EQ(sse_open(&all, &s, NULL, -1, 0), 200);
    int64_t parent = create_job(&s, "{\"type\":\"ev.parent\"}");
    char body[128];
    snprintf(body, sizeof body, "{\"type\":\"ev.child\",\"depends_on\":[%lld]}", (long long)parent);
    int64_t child = create_job(&s, body);
    int64_t other = create_job(&s, body);
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld/cancel", (long long)other);
    EXPECT(&s, "POST", path, NULL, 200, NULL);
    char tok[128];
    ASSERT_EQ(claim(&s, "ev.parent", tok, sizeof tok), parent);
    complete(&s, parent, tok);
    ASSERT_EQ(claim(&s, "ev.child", tok, sizeof tok), child);
    complete(&s, child, tok);
    /* parent 3, child 4, other 2 */
    json_t *v = sse_exactly(&all, 9);
    json_t *c = events_of(v, child);
    ASSERT_EQ(json_array_size(c), 4);
    long long e1 = check_event(c, 0, child, NULL, "waiting");
    long long e2 = check_event(c, 1, child, "waiting", "pending");
    long long e3 = check_event(c, 2, child, "pending", "running");
    long long e4 = check_event(c, 3, child, "running", "succeeded");
    ASSERT(e1 < e2 && e2 < e3 && e3 < e4);
    json_decref(c);
    c = events_of(v, other);
    ASSERT_EQ(json_array_size(c), 2);
    check_event(c, 0, other, NULL, "waiting");
    check_event(c, 1, other, "waiting", "cancelled");
    json_decref(c);
    c = events_of(v, parent);
    ASSERT_EQ(json_array_size(c), 3);
    check_event(c, 0, parent, NULL, "pending");
    json_decref(c);
    json_decref(v);
    /* A child of a parent that succeeded already waits for nothing. */
    int64_t late = create_job(&s, body);
    v = sse_exactly(&all, 11);
    c = events_of(v, late);
    ASSERT_EQ(json_array_size(c), 2);
    check_event(c, 0, late, NULL, "waiting");
    check_event(c, 1, late, "waiting", "pending");
    json_decref(c);
    json_decref(v);
    sse_close(&all);
    srv_stop(&s);
}

/*
 * The first event recorded after recording starts is a waiting child's
 * creation: it too says `waiting`, once. Its id is the log's since_id,
 * the first one a reader is served, so the triggers must count it as in
 * the log (an off-by-one once recorded it `pending`, then `waiting` again).
 */
BOTH(the_first_event_recorded_can_be_a_waiting_childs)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    int64_t parent = create_job(&s, "{\"type\":\"ev.fparent\"}");
    struct sse all;
    ASSERT_EQ(sse_open(&all, &s, NULL, -1, 0), 200);
    char body[128];
    snprintf(body, sizeof body, "{\"type\":\"ev.fchild\",\"depends_on\":[%lld]}",
             (long long)parent);
    int64_t child = create_job(&s, body);
    json_t *v = sse_exactly(&all, 1);
    json_t *c = events_of(v, child);
    ASSERT_EQ(json_array_size(c), 1);
    check_event(c, 0, child, NULL, "waiting");
    json_decref(c);
    json_decref(v);
    sse_close(&all);
    srv_stop(&s);
}

/*
 * A child of a parent that goes dead is cancelled for it, `waiting` →
 * `cancelled`; a retry of the parent puts it back, `cancelled` → `waiting`.
 */
BOTH(a_child_cancelled_for_its_dead_parent)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    struct sse all;
    ASSERT_EQ(sse_open(&all, &s, NULL, -1, 0), 200);
    int64_t parent = create_job(&s, "{\"type\":\"ev.dparent\",\"max_attempts\":1}");
    char body[160];
    snprintf(body, sizeof body, "{\"type\":\"ev.dchild\",\"depends_on\":[%lld]}",
             (long long)parent);
    int64_t child = create_job(&s, body);
    char tok[128], path[64];
    ASSERT_EQ(claim(&s, "ev.dparent", tok, sizeof tok), parent);
    snprintf(path, sizeof path, "/v1/jobs/%lld/fail", (long long)parent);
    snprintf(body, sizeof body, "{\"attempt\":1,\"error\":\"boom\",\"lease_token\":\"%s\"}", tok);
    EXPECT(&s, "POST", path, body, 200, NULL);
    /* parent: created, running, dead; child: created, cancelled */
    json_t *v = sse_exactly(&all, 5);
    json_t *c = events_of(v, parent);
    ASSERT_EQ(json_array_size(c), 3);
    check_event(c, 2, parent, "running", "dead");
    json_decref(c);
    c = events_of(v, child);
    ASSERT_EQ(json_array_size(c), 2);
    long long e1 = check_event(c, 0, child, NULL, "waiting");
    long long e2 = check_event(c, 1, child, "waiting", "cancelled");
    ASSERT(e1 < e2);
    json_decref(c);
    json_decref(v);
    snprintf(path, sizeof path, "/v1/jobs/%lld/retry", (long long)parent);
    EXPECT(&s, "POST", path, NULL, 200, NULL);
    v = sse_exactly(&all, 7);
    c = events_of(v, child);
    ASSERT_EQ(json_array_size(c), 3);
    ASSERT(check_event(c, 2, child, "cancelled", "waiting") > e2);
    json_decref(c);
    c = events_of(v, parent);
    check_event(c, 3, parent, "dead", "pending");
    json_decref(c);
    json_decref(v);
    sse_close(&all);
    srv_stop(&s);
}

/*
 * Each event of a workflow's step names the workflow, and ?workflow=W
 * follows W's steps only (docs/API.md, GET /v1/events); a job of no
 * workflow says null.
 */
BOTH(a_workflows_steps_carry_it_and_filter_by_it)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    struct sse all, wf;
    ASSERT_EQ(sse_open(&all, &s, NULL, -1, 0), 200);
    struct resp r;
    ASSERT_EQ(req(&s, "POST", "/v1/workflows",
                  "{\"name\":\"ev.wf\",\"steps\":[{\"ref\":\"a\",\"type\":\"ev.wa\"},"
                  "{\"ref\":\"b\",\"type\":\"ev.wb\",\"depends_on\":[\"a\"]}]}",
                  &r),
              201);
    json_t *j = resp_json(&r);
    int64_t w = json_integer_value(json_object_get(j, "id"));
    int64_t a = json_integer_value(json_object_get(json_object_get(j, "jobs"), "a"));
    int64_t b = json_integer_value(json_object_get(json_object_get(j, "jobs"), "b"));
    json_decref(j);
    resp_fini(&r);
    char q[64];
    snprintf(q, sizeof q, "workflow=%lld", (long long)w);
    ASSERT_EQ(sse_open(&wf, &s, q, -1, 0), 200);
    int64_t plain = create_job(&s, "{\"type\":\"ev.plain\"}");
    char tok[128];
    ASSERT_EQ(claim(&s, "ev.wa", tok, sizeof tok), a);
    complete(&s, a, tok);
    /* a: running, succeeded; b: waiting -> pending; plain: created */
    json_t *v = sse_exactly(&wf, 3);
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
        int64_t job = json_integer_value(json_object_get(e, "job"));
        ASSERT(job == a || job == b);
        ASSERT_EQ(json_integer_value(json_object_get(e, "workflow")), w);
    }
    json_t *c = events_of(v, b);
    ASSERT_EQ(json_array_size(c), 1);
    check_event(c, 0, b, "waiting", "pending");
    json_decref(c);
    json_decref(v);
    /* the stream of everything: the steps' creations too, and the plain job without a workflow */
    v = sse_exactly(&all, 6);
    c = events_of(v, plain);
    ASSERT_EQ(json_array_size(c), 1);
    ASSERT(json_is_null(json_object_get(json_array_get(c, 0), "workflow")));
    json_decref(c);
    c = events_of(v, a);
    ASSERT_EQ(json_array_size(c), 3);
    ASSERT_EQ(json_integer_value(json_object_get(json_array_get(c, 0), "workflow")), w);
    json_decref(c);
    json_decref(v);
    sse_close(&wf);
    sse_close(&all);
    srv_stop(&s);
}
