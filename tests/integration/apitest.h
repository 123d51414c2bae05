/*
 * apitest.h — helpers for tests that drive a real `jobd server` process
 * (env JOBD_BIN) over real HTTP on a loopback port chosen by the kernel
 * (--listen 127.0.0.1:0; the port is read from the server's first log
 * line). Each test gets its own store: a SQLite file in its temp dir, or a
 * fresh PostgreSQL database through JOBD_TEST_PG_URL. Nothing sleeps for
 * time to pass: waits poll a condition with a deadline.
 */
#ifndef JOBD_TESTS_APITEST_H
#define JOBD_TESTS_APITEST_H

#include <curl/curl.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <libpq-fe.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "test.h"

#include "pgtemplate.h"
#include "pgtest.h"

struct srv {
    pid_t pid;
    int port;
    char base[64];
    char log[600];
    char db[700];
};

struct resp {
    long status;
    char *body;
    size_t len;
    char headers[8192];
    size_t hlen;
};

static inline int64_t
apitest_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void
apitest_nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* True if the backend can run here; else the test skips (TEST_NEED_PG). */
static inline bool
apitest_backend_ok(const char *backend)
{
    if (strcmp(backend, "pg") == 0)
        TEST_NEED_PG();
    return true;
}

/* Picks the store URL for backend into s->db: on PostgreSQL a new database
 * with jobd's schema in it already (tests/pgtemplate.h). */
static inline void
apitest_store(struct srv *s, const char *backend)
{
    if (strcmp(backend, "pg") == 0) {
        if (pgtemplate_fresh_db(s->db, sizeof s->db) != 0)
            TEST_FAIL("cannot create a PostgreSQL database");
    } else {
        snprintf(s->db, sizeof s->db, "sqlite:%s", test_path("jobd.db"));
    }
}

/* When > 0, servers started afterwards get this RLIMIT_NOFILE (soft and hard). */
static long apitest_child_nofile;

/* Runs JOBD_BIN with argv (NULL-terminated) and stderr to log; returns pid. */
static inline pid_t
apitest_spawn(char *const *argv, const char *log, const char *out)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (apitest_child_nofile > 0) {
            struct rlimit rl = {(rlim_t)apitest_child_nofile, (rlim_t)apitest_child_nofile};
            if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
                _exit(126);
        }
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        if (out) {
            int ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            dup2(ofd, 1);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/*
 * Starts a server on s->db (set it first with apitest_store) with extra
 * flags (NULL-terminated, may be NULL); fails the test if it does not come
 * up within 20 s.
 */
static inline void
srv_start_db(struct srv *s, const char *const *extra)
{
    const char *bin = getenv("JOBD_BIN");
    if (bin == NULL)
        TEST_FAIL("JOBD_BIN is not set");
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)bin;
    argv[n++] = "server";
    argv[n++] = "--db";
    argv[n++] = s->db;
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    for (int i = 0; extra && extra[i] && n < 30; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    static int seq;
    char name[64];
    snprintf(name, sizeof name, "server%d.log", seq++);
    snprintf(s->log, sizeof s->log, "%s", test_path(name));
    s->pid = apitest_spawn(argv, s->log, NULL);
    int64_t deadline = apitest_now_ms() + 20000;
    while (apitest_now_ms() < deadline) {
        FILE *f = fopen(s->log, "r");
        char line[512];
        while (f && fgets(line, sizeof line, f)) {
            const char *p = strstr(line, "listening on http://127.0.0.1:");
            if (p) {
                s->port = atoi(p + strlen("listening on http://127.0.0.1:"));
                snprintf(s->base, sizeof s->base, "http://127.0.0.1:%d", s->port);
                fclose(f);
                return;
            }
        }
        if (f)
            fclose(f);
        int st;
        if (waitpid(s->pid, &st, WNOHANG) == s->pid)
            TEST_FAIL("jobd server exited early (status %d); see %s", st, s->log);
        apitest_nap_ms(10);
    }
    TEST_FAIL("jobd server did not start within 20 s");
}

static inline void
srv_start(struct srv *s, const char *backend, const char *const *extra)
{
    memset(s, 0, sizeof *s);
    apitest_store(s, backend);
    srv_start_db(s, extra);
}

/* SIGTERM; the server must exit 0 within 20 s. */
static inline void
srv_stop(struct srv *s)
{
    if (s->pid <= 0)
        return;
    kill(s->pid, SIGTERM);
    int64_t deadline = apitest_now_ms() + 20000;
    int st = 0;
    while (waitpid(s->pid, &st, WNOHANG) == 0) {
        if (apitest_now_ms() > deadline) {
            kill(s->pid, SIGKILL);
            TEST_FAIL("jobd server did not stop on SIGTERM");
        }
        apitest_nap_ms(10);
    }
    s->pid = 0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        FILE *f = fopen(s->log, "r");
        char line[512];
        while (f && fgets(line, sizeof line, f))
            fputs(line, stderr);
        if (f)
            fclose(f);
        TEST_FAIL("jobd server exited with status %d on SIGTERM", st);
    }
}

static size_t
apitest_body_cb(char *p, size_t size, size_t n, void *arg)
{
    struct resp *r = arg;
    size_t len = size * n;
    char *b = realloc(r->body, r->len + len + 1);
    if (b == NULL)
        return 0;
    memcpy(b + r->len, p, len);
    r->body = b;
    r->len += len;
    b[r->len] = '\0';
    return len;
}

static size_t
apitest_header_cb(char *p, size_t size, size_t n, void *arg)
{
    struct resp *r = arg;
    size_t len = size * n;
    if (r->hlen + len < sizeof r->headers) {
        memcpy(r->headers + r->hlen, p, len);
        r->hlen += len;
        r->headers[r->hlen] = '\0';
    }
    return len;
}

/*
 * One request. body may be NULL; hdrs is a NULL-terminated list of extra
 * "Name: value" lines (may be NULL). r must be freed with resp_fini.
 * Fails the test if no answer came.
 */
static inline void
http_req(const struct srv *s, const char *method, const char *path, const char *body,
         size_t body_len, const char *const *hdrs, struct resp *r)
{
    memset(r, 0, sizeof *r);
    CURL *h = curl_easy_init();
    char url[1024];
    snprintf(url, sizeof url, "%s%s", s->base, path);
    struct curl_slist *hl = curl_slist_append(NULL, "Expect:");
    hl = curl_slist_append(hl, "Content-Type: application/json");
    for (int i = 0; hdrs && hdrs[i]; i++)
        hl = curl_slist_append(hl, hdrs[i]);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, apitest_body_cb);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, apitest_header_cb);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    }
    CURLcode cc = curl_easy_perform(h);
    if (cc != CURLE_OK && cc != CURLE_SEND_ERROR)
        TEST_FAIL("%s %s: %s", method, path, curl_easy_strerror(cc));
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(hl);
    curl_easy_cleanup(h);
    if (r->body == NULL)
        r->body = calloc(1, 1);
}

static inline void
resp_fini(struct resp *r)
{
    free(r->body);
    r->body = NULL;
}

/*
 * Lease tokens (docs/API.md, Remote workers): req() notes the lease_token
 * of every job a POST /v1/claim answers, and adds it to a later heartbeat,
 * complete, fail or release of that job whose body names no lease_token,
 * as a remote worker would; a test of the tokens themselves says
 * "lease_token" (a wrong one, or null for none) and gets no help.
 */
struct apitest_tok {
    int64_t id;
    char tok[40];
};
static struct apitest_tok apitest_toks[4096];
static size_t apitest_ntoks;
static pthread_mutex_t apitest_tok_mu = PTHREAD_MUTEX_INITIALIZER;

static inline void
apitest_note_tokens(const struct resp *r)
{
    json_t *v = json_loadb(r->body, r->len, 0, NULL);
    size_t i;
    json_t *o;
    pthread_mutex_lock(&apitest_tok_mu);
    json_array_foreach(json_object_get(v, "jobs"), i, o) {
        const char *t = json_string_value(json_object_get(o, "lease_token"));
        if (t == NULL)
            continue;
        struct apitest_tok *e = &apitest_toks[apitest_ntoks++ % 4096];
        e->id = json_integer_value(json_object_get(o, "id"));
        snprintf(e->tok, sizeof e->tok, "%s", t);
    }
    pthread_mutex_unlock(&apitest_tok_mu);
    json_decref(v);
}

/* body with the noted token of the job path reports on (malloc'd), or NULL. */
static inline char *
apitest_with_token(const char *path, const char *body)
{
    long long id;
    char what[16];
    if (body == NULL || sscanf(path, "/v1/jobs/%lld/%15s", &id, what) != 2 ||
        (strcmp(what, "heartbeat") && strcmp(what, "complete") && strcmp(what, "fail") &&
         strcmp(what, "release")))
        return NULL;
    json_t *o = json_loads(body, 0, NULL);
    char *out = NULL;
    if (json_is_object(o) && json_object_get(o, "lease_token") == NULL) {
        pthread_mutex_lock(&apitest_tok_mu);
        size_t n = apitest_ntoks < 4096 ? apitest_ntoks : 4096;
        for (size_t k = apitest_ntoks; k > apitest_ntoks - n; k--) /* newest first */
            if (apitest_toks[(k - 1) % 4096].id == id) {
                json_object_set_new(o, "lease_token",
                                    json_string(apitest_toks[(k - 1) % 4096].tok));
                out = json_dumps(o, JSON_COMPACT);
                break;
            }
        pthread_mutex_unlock(&apitest_tok_mu);
    }
    json_decref(o);
    return out;
}

/* Request with a NUL-terminated body (or NULL); returns the status, keeps r. */
static inline long
req(const struct srv *s, const char *method, const char *path, const char *body, struct resp *r)
{
    char *with = apitest_with_token(path, body);
    if (with != NULL)
        body = with;
    http_req(s, method, path, body, body ? strlen(body) : 0, NULL, r);
    free(with);
    if (r->status == 200 && strcmp(path, "/v1/claim") == 0)
        apitest_note_tokens(r);
    return r->status;
}

/* Parses r's body as JSON (fails the test if it is not). New reference. */
static inline json_t *
resp_json(const struct resp *r)
{
    json_error_t je;
    json_t *v = json_loadb(r->body, r->len, JSON_DECODE_ANY, &je);
    if (v == NULL)
        TEST_FAIL("response is not JSON (%s): %.300s", je.text, r->body);
    return v;
}

/* The error code of an error response body. */
static inline const char *
err_code(const struct resp *r, char *buf, size_t len)
{
    json_t *v = resp_json(r);
    const char *c = json_string_value(json_object_get(json_object_get(v, "error"), "code"));
    snprintf(buf, len, "%s", c ? c : "(none)");
    json_decref(v);
    return buf;
}

/* Asserts status and (if code != NULL) the error code; frees r. */
#define EXPECT(srv_, method_, path_, body_, want_status_, want_code_)                              \
    do {                                                                                           \
        struct resp r_;                                                                            \
        long st_ = req((srv_), (method_), (path_), (body_), &r_);                                  \
        if (st_ != (want_status_))                                                                 \
            TEST_FAIL("%s %s: status %ld, want %d: %.300s", (method_), (path_), st_,               \
                      (int)(want_status_), r_.body);                                               \
        if ((want_code_) != NULL) {                                                                \
            char c_[64];                                                                           \
            ASSERT_STR_EQ(err_code(&r_, c_, sizeof c_), (const char *)(want_code_));               \
        }                                                                                          \
        resp_fini(&r_);                                                                            \
    } while (0)

/* POSTs a job body, expects 201 and returns the new id. */
static inline int64_t
create_job(const struct srv *s, const char *body)
{
    struct resp r;
    long st = req(s, "POST", "/v1/jobs", body, &r);
    if (st != 201)
        TEST_FAIL("POST /v1/jobs %s: %ld %s", body, st, r.body);
    json_t *v = resp_json(&r);
    int64_t id = json_integer_value(json_object_get(v, "id"));
    json_decref(v);
    resp_fini(&r);
    return id;
}

/* GET path, expect 200, return parsed JSON. */
static inline json_t *
get_json(const struct srv *s, const char *path)
{
    struct resp r;
    long st = req(s, "GET", path, NULL, &r);
    if (st != 200)
        TEST_FAIL("GET %s: %ld %s", path, st, r.body);
    json_t *v = resp_json(&r);
    resp_fini(&r);
    return v;
}

/* The value of an unlabelled metric in GET /metrics, or -1 if absent. */
static inline double
srv_metric(const struct srv *s, const char *name)
{
    struct resp r;
    if (req(s, "GET", "/metrics", NULL, &r) != 200)
        TEST_FAIL("GET /metrics: %ld", r.status);
    char pat[128];
    snprintf(pat, sizeof pat, "\n%s ", name);
    const char *p = strstr(r.body, pat);
    double v = p ? strtod(p + strlen(pat), NULL) : -1;
    resp_fini(&r);
    return v;
}

/*
 * Waits up to 10 s until metric reaches at least want (fails the test if
 * not). Looks again after 5 ms, then ever less often, up to every 50 ms: a
 * quick condition is seen at once, and a slow one (a server parking
 * thousands of connections) is not slowed further by hundreds of GET
 * /metrics.
 */
static inline void
srv_await_metric(const struct srv *s, const char *name, double want)
{
    int64_t deadline = apitest_now_ms() + 10000;
    int nap = 5;
    while (srv_metric(s, name) < want) {
        if (apitest_now_ms() > deadline)
            TEST_FAIL("%s did not reach %g within 10 s", name, want);
        apitest_nap_ms(nap);
        nap = nap < 25 ? nap * 2 : 50;
    }
}

/* The count of field (a status) of queue q in GET /v1/queues (0 if not listed). */
static inline int64_t
srv_queue_count(const struct srv *s, const char *q, const char *field)
{
    json_t *v = get_json(s, "/v1/queues");
    int64_t n = 0;
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(v, "queues"), i, o)
        if (strcmp(json_string_value(json_object_get(o, "name")), q) == 0)
            n = json_integer_value(json_object_get(o, field));
    json_decref(v);
    return n;
}

/*
 * Puts n pending jobs of type t on queue q of the server's SQLite store with
 * one INSERT of the test's own (the store's triggers keep the queue counts,
 * as for any insert), then checks the server counts them. For tests of what
 * is done to many jobs, not of how they came: POSTs of tens of thousands of
 * jobs cost the server more than the rest of such a test.
 */
static inline void
srv_sqlite_fill(const struct srv *s, const char *q, int n)
{
    sqlite3 *db = NULL;
    ASSERT_EQ(sqlite3_open(s->db + strlen("sqlite:"), &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 30000);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    long long us = (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000;
    char sql[600];
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d) "
             "INSERT INTO jobs (queue, type, payload, status, priority, run_at, max_attempts, "
             "  created_at) SELECT '%s', 't', '{}', 'pending', 0, %lld, 25, %lld FROM c",
             n, q, us, us);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        TEST_FAIL("filling queue %s: %s", q, msg ? msg : "?");
    sqlite3_close(db);
    ASSERT_EQ(srv_queue_count(s, q, "pending"), n); /* the server sees them */
}

/*
 * Waits until queue q counts want jobs of field (a status) in GET /v1/queues:
 * on PostgreSQL the counts come from a cache recounted about once a second
 * in the background. Fails the test after 5 s. Returns the ms it took.
 */
static inline int64_t
srv_await_queue_count(const struct srv *s, const char *q, const char *field, int64_t want)
{
    int64_t t0 = apitest_now_ms(), n;
    while ((n = srv_queue_count(s, q, field)) != want) {
        if (apitest_now_ms() - t0 > 5000)
            TEST_FAIL("queue %s still counts %lld %s after 5 s, want %lld", q, (long long)n, field,
                      (long long)want);
        apitest_nap_ms(50);
    }
    return apitest_now_ms() - t0;
}

/* Registers a test body t_NAME(backend) for both backends. */
#define BOTH(name)                                                                                 \
    static void t_##name(const char *backend);                                                     \
    TEST(sqlite_##name)                                                                            \
    {                                                                                              \
        t_##name("sqlite");                                                                        \
    }                                                                                              \
    TEST(pg_##name)                                                                                \
    {                                                                                              \
        if (apitest_backend_ok("pg"))                                                              \
            t_##name("pg");                                                                        \
    }                                                                                              \
    static void t_##name(const char *backend)

/* --- the CLI through the real binary (its stdout/stderr in the test's dir) --- */

/* Runs JOBD_BIN with args (NULL-terminated); env entries "K=V" are set first. */
static inline int
cli_run(const char *const *env, const char *const *args, char *out, size_t outlen)
{
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)getenv("JOBD_BIN");
    for (int i = 0; args[i] && n < 31; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        int o = open(test_path("cli.out"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(test_path("cli.err"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    FILE *f = fopen(test_path("cli.out"), "r");
    size_t got = f ? fread(out, 1, outlen - 1, f) : 0;
    out[got] = '\0';
    if (f)
        fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* The stderr of the last cli_run. */
static inline const char *
cli_last_err(char *buf, size_t len)
{
    FILE *f = fopen(test_path("cli.err"), "r");
    size_t got = f ? fread(buf, 1, len - 1, f) : 0;
    buf[got] = '\0';
    if (f)
        fclose(f);
    return buf;
}

/* Parses text as JSON (owned by the caller) or fails the test. */
static inline json_t *
cli_parse_json(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    if (v == NULL)
        TEST_FAIL("not JSON (%s): %s", je.text, text);
    return v;
}

#endif
