/*
 * test_api_keys.c — debounce and unique windows on enqueue (docs/API.md,
 * POST /v1/jobs, Debounce and unique windows) against a real `jobd server`
 * on SQLite and on PostgreSQL: the answers and their headers, the 400s
 * naming the field, batches, and 16 clients enqueueing one key at once
 * through POST /v1/jobs (the group committer) and POST /v1/jobs/batch:
 * one job, and every caller gets its id.
 */
#include <libpq-fe.h>
#include <pthread.h>
#include <sqlite3.h>

#include "apitest.h"

/* POSTs body to path; expects status and returns the parsed answer (new reference). */
static json_t *
post(const struct srv *s, const char *path, const char *body, long want, struct resp *r)
{
    long st = req(s, "POST", path, body, r);
    if (st != want)
        TEST_FAIL("POST %s %s: %ld, want %ld: %.300s", path, body, st, want, r->body);
    return resp_json(r);
}

static int64_t
id_of(json_t *j)
{
    return json_integer_value(json_object_get(j, "id"));
}

/* Expects 400 invalid_field naming field. */
static void
expect_field(const struct srv *s, const char *path, const char *body, const char *field)
{
    struct resp r;
    json_t *j = post(s, path, body, 400, &r);
    json_t *e = json_object_get(j, "error");
    ASSERT_STR_EQ(json_string_value(json_object_get(e, "code")), "invalid_field");
    if (json_string_value(json_object_get(e, "field")) == NULL ||
        strcmp(json_string_value(json_object_get(e, "field")), field) != 0)
        TEST_FAIL("%s: field %s, want %s (%s)", body,
                  json_string_value(json_object_get(e, "field")), field,
                  json_string_value(json_object_get(e, "message")));
    json_decref(j);
    resp_fini(&r);
}

BOTH(debounce_replaces_and_says_so)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    struct resp r;
    json_t *a = post(&s, "/v1/jobs",
                     "{\"type\":\"reindex\",\"payload\":{\"rev\":1},"
                     "\"debounce\":{\"key\":\"doc-42\",\"for\":\"1h\"}}",
                     201, &r);
    ASSERT(strstr(r.headers, "Debounced") == NULL);
    resp_fini(&r);
    json_t *b = post(&s, "/v1/jobs",
                     "{\"type\":\"reindex\",\"payload\":{\"rev\":2},\"priority\":4,"
                     "\"debounce\":{\"key\":\"doc-42\",\"for\":\"2h\"}}",
                     200, &r);
    ASSERT(strstr(r.headers, "Debounced: true") != NULL);
    ASSERT(strstr(r.headers, "Idempotent-Replayed") == NULL);
    resp_fini(&r);
    ASSERT_EQ(id_of(b), id_of(a));
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(b, "payload"), "rev")), 2);
    ASSERT_EQ(json_integer_value(json_object_get(b, "priority")), 4);
    /* run_at moved to now + 2h: later than the first answer's now + 1h */
    ASSERT(strcmp(json_string_value(json_object_get(b, "run_at")),
                  json_string_value(json_object_get(a, "run_at"))) > 0);
    ASSERT_STR_EQ(json_string_value(json_object_get(b, "status")), "pending");
    json_decref(a);
    json_decref(b);
    /* a batch: the second item replaces the job the first made */
    json_t *l =
        post(&s, "/v1/jobs/batch",
             "{\"jobs\":[{\"type\":\"reindex\",\"debounce\":{\"key\":\"d2\",\"for\":\"1m\"}},"
             "{\"type\":\"reindex\",\"payload\":7,"
             "\"debounce\":{\"key\":\"d2\",\"for\":\"1m\"}}]}",
             201, &r);
    resp_fini(&r);
    json_t *jobs = json_object_get(l, "jobs");
    ASSERT_EQ(id_of(json_array_get(jobs, 0)), id_of(json_array_get(jobs, 1)));
    ASSERT_EQ(json_integer_value(json_object_get(json_array_get(jobs, 1), "payload")), 7);
    json_decref(l);
    json_t *all = get_json(&s, "/v1/jobs?type=reindex");
    ASSERT_EQ(json_array_size(json_object_get(all, "jobs")), 2);
    json_decref(all);
    srv_stop(&s);
}

BOTH(unique_answers_the_windows_job)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    struct resp r;
    json_t *a = post(&s, "/v1/jobs",
                     "{\"type\":\"report\",\"payload\":{\"v\":1},"
                     "\"unique\":{\"key\":\"day-1\",\"for\":\"1d\"}}",
                     201, &r);
    resp_fini(&r);
    json_t *b = post(&s, "/v1/jobs",
                     "{\"type\":\"report\",\"payload\":{\"v\":2},"
                     "\"unique\":{\"key\":\"day-1\",\"for\":\"1d\"}}",
                     200, &r);
    ASSERT(strstr(r.headers, "Idempotent-Replayed: true") != NULL);
    resp_fini(&r);
    ASSERT_EQ(id_of(b), id_of(a));
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(b, "payload"), "v")), 1);
    /* cancelled: still the window's job */
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld/cancel", (long long)id_of(a));
    EXPECT(&s, "POST", path, NULL, 200, NULL);
    json_t *c =
        post(&s, "/v1/jobs", "{\"type\":\"report\",\"unique\":{\"key\":\"day-1\",\"for\":\"1d\"}}",
             200, &r);
    resp_fini(&r);
    ASSERT_EQ(id_of(c), id_of(a));
    ASSERT_STR_EQ(json_string_value(json_object_get(c, "status")), "cancelled");
    /* deleted: the key is free */
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)id_of(a));
    struct resp d;
    req(&s, "DELETE", path, NULL, &d);
    ASSERT(d.status == 200 || d.status == 204);
    resp_fini(&d);
    json_t *e =
        post(&s, "/v1/jobs", "{\"type\":\"report\",\"unique\":{\"key\":\"day-1\",\"for\":\"1d\"}}",
             201, &r);
    resp_fini(&r);
    ASSERT_NE(id_of(e), id_of(a));
    json_decref(a);
    json_decref(b);
    json_decref(c);
    json_decref(e);
    srv_stop(&s);
}

BOTH(window_fields_are_checked)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    const char *j = "/v1/jobs";
    expect_field(&s, j, "{\"type\":\"t\",\"debounce\":{\"for\":\"1s\"}}", "debounce.key");
    expect_field(&s, j, "{\"type\":\"t\",\"debounce\":{\"key\":\"k\"}}", "debounce.for");
    expect_field(&s, j, "{\"type\":\"t\",\"debounce\":{\"key\":\"k\",\"for\":\"5x\"}}",
                 "debounce.for");
    expect_field(&s, j, "{\"type\":\"t\",\"debounce\":{\"key\":\"k\",\"for\":\"0s\"}}",
                 "debounce.for");
    expect_field(&s, j, "{\"type\":\"t\",\"unique\":{\"key\":\"k\",\"for\":\"367d\"}}",
                 "unique.for");
    expect_field(&s, j, "{\"type\":\"t\",\"unique\":{\"key\":\"\",\"for\":\"1s\"}}", "unique.key");
    expect_field(&s, j, "{\"type\":\"t\",\"unique\":{\"key\":\"k\",\"for\":\"1s\",\"x\":1}}",
                 "unique.x");
    expect_field(&s, j, "{\"type\":\"t\",\"unique\":\"k\"}", "unique");
    expect_field(&s, j,
                 "{\"type\":\"t\",\"in\":\"1s\",\"debounce\":{\"key\":\"k\",\"for\":\"1s\"}}",
                 "debounce");
    expect_field(&s, j,
                 "{\"type\":\"t\",\"idempotency_key\":\"i\","
                 "\"unique\":{\"key\":\"k\",\"for\":\"1s\"}}",
                 "unique");
    expect_field(&s, j,
                 "{\"type\":\"t\",\"unique\":{\"key\":\"k\",\"for\":\"1s\"},"
                 "\"debounce\":{\"key\":\"k\",\"for\":\"1s\"}}",
                 "unique");
    expect_field(&s, "/v1/jobs/batch",
                 "{\"jobs\":[{\"type\":\"t\"},{\"type\":\"t\",\"depends_on\":[1],"
                 "\"debounce\":{\"key\":\"k\",\"for\":\"1s\"}}]}",
                 "jobs[1].debounce");
    json_t *all = get_json(&s, "/v1/jobs");
    ASSERT_EQ(json_array_size(json_object_get(all, "jobs")), 0);
    json_decref(all);
    srv_stop(&s);
}

/* ---- 16 clients enqueue one key at once ---- */

enum { CLIENTS = 16 };

struct client_arg {
    const struct srv *s;
    pthread_barrier_t *go;
    const char *kind; /* "debounce" or "unique" */
    bool batch;       /* through POST /v1/jobs/batch */
    long status;
    int64_t id;
};

static void *
client(void *p)
{
    struct client_arg *a = p;
    char body[160];
    snprintf(body, sizeof body, "%s{\"type\":\"race\",\"%s\":{\"key\":\"k\",\"for\":\"1h\"}}%s",
             a->batch ? "{\"jobs\":[" : "", a->kind, a->batch ? "]}" : "");
    struct resp r;
    pthread_barrier_wait(a->go);
    a->status = req(a->s, "POST", a->batch ? "/v1/jobs/batch" : "/v1/jobs", body, &r);
    if (a->status == 200 || a->status == 201) {
        json_t *j = resp_json(&r);
        a->id = a->batch ? id_of(json_array_get(json_object_get(j, "jobs"), 0)) : id_of(j);
        json_decref(j);
    } else {
        fprintf(stderr, "%s: %ld %s\n", body, a->status, r.body);
    }
    resp_fini(&r);
    return NULL;
}

static void
race(const char *backend, const char *kind)
{
    struct srv s;
    const char *extra[] = {"--threads", "16", NULL};
    srv_start(&s, backend, extra);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, CLIENTS);
    pthread_t th[CLIENTS];
    struct client_arg a[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        a[i] = (struct client_arg){.s = &s, .go = &go, .kind = kind, .batch = i % 2 == 1};
        ASSERT_EQ(pthread_create(&th[i], NULL, client, &a[i]), 0);
    }
    int created = 0;
    for (int i = 0; i < CLIENTS; i++) {
        pthread_join(th[i], NULL);
        ASSERT(a[i].status == 200 || a[i].status == 201);
        ASSERT(a[i].id > 0);
        ASSERT_EQ(a[i].id, a[0].id);
        /* a single enqueue says 201 only when it made the job (a batch always does) */
        created += !a[i].batch && a[i].status == 201;
    }
    pthread_barrier_destroy(&go);
    ASSERT(created <= 1);
    json_t *all = get_json(&s, "/v1/jobs?type=race");
    ASSERT_EQ(json_array_size(json_object_get(all, "jobs")), 1);
    json_decref(all);
    srv_stop(&s);
}

BOTH(unique_16_clients_at_once_make_one_job)
{
    race(backend, "unique");
}

BOTH(debounce_16_clients_at_once_make_one_job)
{
    race(backend, "debounce");
}

/* ---- jobd submit --debounce / --unique (docs/CLI.md, jobd submit) ---- */

static int64_t
cli_submit_id(const char *const *env, const char *const *args, const char *want_err)
{
    char out[16384], err[4096];
    if (cli_run(env, args, out, sizeof out) != 0)
        TEST_FAIL("jobd submit failed: %s", cli_last_err(err, sizeof err));
    cli_last_err(err, sizeof err);
    if (want_err != NULL && strstr(err, want_err) == NULL)
        TEST_FAIL("stderr lacks '%s': %s", want_err, err);
    if (want_err == NULL && (strstr(err, "holds") != NULL || strstr(err, "replayed") != NULL))
        TEST_FAIL("stderr says no job was made: %s", err);
    json_t *j = cli_parse_json(out);
    int64_t id = id_of(j);
    json_decref(j);
    return id;
}

BOTH(cli_submit_debounce_and_unique)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    char envs[128];
    snprintf(envs, sizeof envs, "JOBD_SERVER=%s", s.base);
    const char *env[] = {envs, NULL};
    const char *d1[] = {"submit", "reindex", "--payload", "1", "--debounce", "doc/42/1h", NULL};
    const char *d2[] = {"submit", "reindex", "--payload", "2", "--debounce", "doc/42/1h", NULL};
    int64_t a = cli_submit_id(env, d1, NULL);
    ASSERT_EQ(cli_submit_id(env, d2, "holds debounce key doc/42: replaced in place"), a);
    const char *u[] = {"submit", "report", "--unique", "day-1/1d", NULL};
    int64_t b = cli_submit_id(env, u, NULL);
    ASSERT_NE(b, a);
    ASSERT_EQ(cli_submit_id(env, u, "already exists for unique key day-1 (replayed)"), b);
    char out[4096];
    const char *bad[][8] = {
        {"submit", "t", "--debounce", "k", NULL},
        {"submit", "t", "--unique", "k/5x", NULL},
        {"submit", "t", "--unique", "/1s", NULL},
        {"submit", "t", "--unique", "k/1s", "--debounce", "k/1s", NULL},
        {"submit", "t", "--debounce", "k/1s", "--in", "1s", NULL}, /* the server's 400 */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ASSERT_EQ(cli_run(env, bad[i], out, sizeof out), 2);
    json_t *all = get_json(&s, "/v1/jobs");
    ASSERT_EQ(json_array_size(json_object_get(all, "jobs")), 2);
    json_decref(all);
    srv_stop(&s);
}

/* ---- the scheduling plane deletes ended windows (store_keys_expire) ---- */

/* Rows of enqueue_keys in s's database, read under the server. */
static long
key_rows(const struct srv *s)
{
    long n = -1;
    if (strncmp(s->db, "sqlite:", 7) == 0) {
        sqlite3 *db = NULL;
        sqlite3_stmt *st = NULL;
        if (sqlite3_open(s->db + 7, &db) == SQLITE_OK &&
            sqlite3_prepare_v2(db, "SELECT count(*) FROM enqueue_keys", -1, &st, NULL) ==
                SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        sqlite3_close(db);
    } else {
        PGconn *c = PQconnectdb(s->db);
        PGresult *r = PQexec(c, "SELECT count(*) FROM jobd.enqueue_keys");
        if (PQresultStatus(r) == PGRES_TUPLES_OK)
            n = atol(PQgetvalue(r, 0, 0));
        PQclear(r);
        PQfinish(c);
    }
    return n;
}

BOTH(ended_windows_are_deleted_by_the_plane)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    struct resp r;
    int64_t made = apitest_now_ms();
    json_t *a =
        post(&s, "/v1/jobs", "{\"type\":\"t\",\"unique\":{\"key\":\"k\",\"for\":\"1s\"}}", 201, &r);
    resp_fini(&r);
    json_decref(a);
    ASSERT_EQ(key_rows(&s), 1); /* open: no retention pass takes it */
    srv_stop(&s);
    while (apitest_now_ms() < made + 1100) /* until the window has ended */
        apitest_nap_ms(20);
    ASSERT_EQ(key_rows(&s), 1);
    srv_start_db(&s, NULL); /* its plane's first retention pass runs at start */
    int64_t deadline = apitest_now_ms() + 20000;
    while (key_rows(&s) != 0) {
        if (apitest_now_ms() > deadline)
            TEST_FAIL("the ended window's key is still there after 20 s");
        apitest_nap_ms(20);
    }
    srv_stop(&s);
}
