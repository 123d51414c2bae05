/*
 * test_alloc_torture.c — allocation-failure torture, the way curl's
 * `runtests.pl -t` and SQLite's malloc tests do it: run an operation once
 * to count its allocations, then again with the 1st, the 2nd, ... the Nth
 * allocation failing, until a run reaches its end without meeting the
 * failure. Every run that met one must return an error (no silent partial
 * success), free everything (LeakSanitizer checks after the loop), and
 * never crash (ASan/UBSan, and the assertions that stay on in this build).
 *
 * The seam: this executable is linked with -Wl,--wrap for malloc, calloc,
 * realloc, strdup, strndup and asprintf (CMakeLists.txt), so every call
 * jobd's own code makes goes through the counters below; jansson's
 * allocations come here through json_set_alloc_funcs. SQLite's and libpq's
 * internal allocations are theirs and not failed.
 *
 * Covered: core parsing (cron with a zone, durations, strict and canonical
 * JSON, json_print, job specs), the API request path (api_handle on a real SQLite store:
 * enqueue, get, list, claim, complete, a schedule) and the stores' row
 * decoding (store_get, store_list, store_claim on SQLite; on PostgreSQL too
 * when JOBD_TEST_PG_URL is set).
 *
 * The invariants the code asserts (store_claim: no more jobs than asked,
 * each with its fencing token bumped; the logger's reserve) stay on here:
 * `make test` builds Debug, without NDEBUG.
 */
#define _GNU_SOURCE /* vasprintf */
#include <jansson.h>
#include <stdarg.h>
#include <stdatomic.h>

#include "api/api.h"
#include "api/handlers.h"
#include "api/jobjson.h"
#include "api/storepool.h"
#include "core/cron.h"
#include "core/duration.h"
#include "core/err.h"
#include "core/job.h"
#include "core/json.h"
#include "pgtest.h"
#include "store/store.h"
#include "test.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>
#define HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>
#define HAVE_LSAN 1
#endif
#endif

/* ---- the seam ---- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
int __wrap_asprintf(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static long fail_at;  /* 0: never fail */
static long n_allocs; /* allocations seen since arming */
static bool failed;   /* the run met its failure */
static bool in_lib;   /* ... inside jansson, which may recover by itself */

/* True if this allocation is the one to fail. */
static bool
should_fail(void)
{
    n_allocs++;
    if (fail_at != 0 && n_allocs == fail_at) {
        failed = true;
#ifdef HAVE_LSAN
        if (getenv("TORTURE_TRACE") != NULL) /* where the failed allocation was */
            __sanitizer_print_stack_trace();
#endif
        return true;
    }
    return false;
}

void *
__wrap_malloc(size_t n)
{
    return should_fail() ? NULL : __real_malloc(n);
}

void *
__wrap_calloc(size_t n, size_t size)
{
    return should_fail() ? NULL : __real_calloc(n, size);
}

void *
__wrap_realloc(void *p, size_t n)
{
    return should_fail() ? NULL : __real_realloc(p, n);
}

char *
__wrap_strdup(const char *s)
{
    return should_fail() ? NULL : __real_strdup(s);
}

char *
__wrap_strndup(const char *s, size_t n)
{
    return should_fail() ? NULL : __real_strndup(s, n);
}

int
__wrap_asprintf(char **out, const char *fmt, ...)
{
    if (should_fail()) {
        *out = NULL;
        return -1;
    }
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(out, fmt, ap);
    va_end(ap);
    return rc;
}

static void *
json_malloc(size_t n)
{
    void *p = __wrap_malloc(n);
    if (p == NULL)
        in_lib = true;
    return p;
}

__attribute__((constructor)) static void
route_jansson(void)
{
    json_set_alloc_funcs(json_malloc, free);
}

/*
 * Runs op with the 1st, 2nd, ... allocation failing until a run ends without
 * meeting its failure (that run must succeed). op returns true on success.
 * Returns how many allocations the full run made.
 */
static long
torture(const char *name, bool (*op)(void *arg), void *arg)
{
    for (long n = 1;; n++) {
        fail_at = n;
        n_allocs = 0;
        failed = false;
        in_lib = false;
        bool ok = op(arg);
        fail_at = 0;
        if (!failed) {
            if (!ok)
                TEST_FAIL("%s: fails with no allocation failed (%ld allocations)", name, n_allocs);
            return n - 1;
        }
        /* jansson recovers from some failures (and then the op checked its
         * result); a failure in jobd's own code must come back as an error. */
        if (ok && !in_lib)
            TEST_FAIL("%s: allocation %ld of %ld failed, yet it reported success", name, n,
                      n_allocs);
        if (n > 100000)
            TEST_FAIL("%s: more than 100000 allocations", name);
    }
}

/* No leak so far (LeakSanitizer; a no-op without it). */
static void
assert_no_leaks(void)
{
#ifdef HAVE_LSAN
    if (__lsan_do_recoverable_leak_check() != 0)
        TEST_FAIL("LeakSanitizer found leaks (above)");
#endif
}

/* ---- core parsing ---- */

static bool
op_cron(void *arg)
{
    struct jobd_error err = {0};
    struct cron_expr e;
    if (cron_parse("*/5 9-17 * * MON-FRI", &e, &err) != JOBD_OK)
        return false;
    struct cron_zone *z = NULL;
    if (cron_zone_open("Europe/Berlin", &z, &err) != JOBD_OK)
        return false;
    int64_t next = 0;
    int rc = cron_next_in(&e, z, INT64_C(1796220197120000), &next, &err);
    cron_zone_free(z);
    return rc == JOBD_OK && next > 0;
}

static bool
op_duration(void *arg)
{
    struct jobd_error err = {0};
    int64_t ms;
    return duration_parse_ms("1h30m250ms", &ms, "d", &err) == JOBD_OK && ms == 5400250;
}

static const char doc[] = "{\"b\":[1,2.5,\"x\\u00e9\",{\"z\":null,\"a\":true}],\"a\":-3e2}";

static bool
op_json(void *arg)
{
    struct jobd_error err = {0};
    char *canon = NULL;
    if (json_canonical(doc, strlen(doc), 1 << 20, &canon, "payload", &err) != JOBD_OK)
        return false;
    bool ok =
        strcmp(canon, "{\"a\":-300.0,\"b\":[1,2.5,\"x\xc3\xa9\",{\"a\":true,\"z\":null}]}") == 0;
    free(canon);
    json_t *v = NULL;
    if (json_parse_strict(doc, strlen(doc), 1 << 20, &v, "payload", &err) != JOBD_OK)
        return false;
    char *again = NULL;
    int rc = json_value_canonical(v, 1 << 20, &again, "payload", &err);
    free(again);
    /* json_print: NULL whenever an allocation failed, never a cut text. */
    char *printed = json_print(v, 0);
    json_decref(v);
    bool printed_ok =
        printed != NULL &&
        strcmp(printed, "{\"b\":[1,2.5,\"x\xc3\xa9\",{\"z\":null,\"a\":true}],\"a\":-300.0}") == 0;
    free(printed);
    return ok && rc == JOBD_OK && printed_ok;
}

static bool
op_spec(void *arg)
{
    static const char body[] =
        "{\"type\":\"email.send\",\"queue\":\"mail\",\"payload\":{\"to\":\"a@b.c\"},"
        "\"priority\":3,\"max_attempts\":5,\"idempotency_key\":\"k-1\",\"timeout_s\":30,"
        "\"in\":\"10m\"}";
    struct jobd_error err = {0};
    json_t *o = NULL;
    if (jobjson_parse_object(body, strlen(body), &o, &err) != JOBD_OK)
        return false;
    struct job_spec spec;
    struct spec_owned owned;
    memset(&owned, 0, sizeof owned);
    int rc = jobjson_spec(o, NULL, NULL, NULL, INT64_C(1796220197120000), &spec, &owned, &err);
    bool ok = rc == JOBD_OK && strcmp(spec.type, "email.send") == 0 && spec.priority == 3;
    jobjson_spec_fini(&owned);
    json_decref(o);
    return ok;
}

TEST(core_parsing)
{
    ASSERT(torture("cron", op_cron, NULL) >= 1); /* the zone allocates */
    torture("duration", op_duration, NULL);
    ASSERT(torture("json", op_json, NULL) > 5);
    ASSERT(torture("job spec", op_spec, NULL) > 5);
    assert_no_leaks();
}

/* ---- the API request path on a real SQLite store ---- */

struct api_fx {
    struct store_pool *pool;
    struct api_ctx ctx;
    int64_t id; /* a job that exists */
};

static int
handle(struct api_fx *fx, const char *method, const char *path, const char *body)
{
    struct api_request req = {.method = method,
                              .path = path,
                              .body = body ? body : "",
                              .body_len = body ? strlen(body) : 0};
    struct api_response r = {0};
    api_handle(&fx->ctx, &req, &r);
    int status = r.status;
    ASSERT(r.body != NULL || r.body_len == 0);
    /* Out of memory is the server's trouble: 5xx. Only where jansson itself
     * ran out (it then reports some failures as a syntax error) may a
     * valid request come back as 400. */
    if (status >= 400 && status < 500 && !in_lib)
        TEST_FAIL("%s %s: %d %.*s", method, path, status, (int)r.body_len, r.body);
    ASSERT(r.wait == NULL && r.deferred == NULL);
    api_response_fini(&r);
    return status;
}

static bool
op_enqueue(void *arg)
{
    int s = handle(arg, "POST", "/v1/jobs",
                   "{\"type\":\"t\",\"payload\":{\"n\":[1,2,3]},\"queue\":\"q\"}");
    ASSERT(s == 201 || s >= 400);
    return s == 201;
}

static bool
op_get(void *arg)
{
    struct api_fx *fx = arg;
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)fx->id);
    int s = handle(fx, "GET", path, NULL);
    ASSERT(s == 200 || s >= 400);
    return s == 200;
}

static bool
op_list(void *arg)
{
    struct api_fx *fx = arg;
    static const struct api_param q[] = {{"limit", "50"}, {"queue", "q"}};
    struct api_request req = {
        .method = "GET", .path = "/v1/jobs", .query = q, .n_query = 2, .body = ""};
    struct api_response r = {0};
    api_handle(&fx->ctx, &req, &r);
    int s = r.status;
    api_response_fini(&r);
    ASSERT(s == 200 || s >= 400);
    return s == 200;
}

static bool
op_queues(void *arg)
{
    int s = handle(arg, "GET", "/v1/queues", NULL);
    ASSERT(s == 200 || s >= 400);
    return s == 200;
}

static bool
op_schedule(void *arg)
{
    static int seq;
    char body[200];
    snprintf(
        body, sizeof body,
        "{\"name\":\"s%d\",\"cron\":\"0 9 * * *\",\"timezone\":\"Europe/Berlin\",\"type\":\"t\"}",
        seq++);
    int s = handle(arg, "POST", "/v1/schedules", body);
    ASSERT(s == 201 || s >= 400);
    return s == 201;
}

TEST(api_request_path)
{
    struct api_fx fx = {0};
    struct jobd_error err = {0};
    char url[600];
    snprintf(url, sizeof url, "sqlite:%s", test_path("t.db"));
    struct store *st = NULL;
    ASSERT_OK(store_open(url, &st, &err), &err);
    ASSERT_OK(store_migrate(st, &err), &err);
    store_close(st);
    ASSERT_OK(store_pool_new(url, NULL, &fx.pool, &err), &err);
    fx.ctx = (struct api_ctx){.pool = fx.pool};
    /* Warm: one connection open in the pool, one job to read. */
    ASSERT_EQ(handle(&fx, "POST", "/v1/jobs", "{\"type\":\"t\",\"queue\":\"q\"}"), 201);
    fx.id = 1;
    ASSERT(torture("POST /v1/jobs", op_enqueue, &fx) > 5);
    ASSERT(torture("GET /v1/jobs/ID", op_get, &fx) > 3);
    ASSERT(torture("GET /v1/jobs", op_list, &fx) > 3);
    torture("GET /v1/queues", op_queues, &fx);
    ASSERT(torture("POST /v1/schedules", op_schedule, &fx) > 3);
    store_pool_free(fx.pool);
    assert_no_leaks();
}

/* ---- the stores' row decoding ---- */

struct store_fx {
    struct store *st;
    int64_t id;
};

static bool
op_store_get(void *arg)
{
    struct store_fx *fx = arg;
    struct jobd_error err = {0};
    struct job j = {0};
    int rc = store_get(fx->st, fx->id, &j, &err);
    bool ok = rc == JOBD_OK && j.id == fx->id && j.payload != NULL;
    job_fini(&j);
    return ok;
}

static bool
op_store_list(void *arg)
{
    struct store_fx *fx = arg;
    struct jobd_error err = {0};
    struct job_filter f = {.limit = 20, .status = STORE_ANY};
    struct job_list l = {0};
    int64_t next = 0;
    int rc = store_list(fx->st, &f, &l, &next, &err);
    bool ok = rc == JOBD_OK && l.n > 0;
    job_list_fini(&l);
    return ok;
}

static void
seed(struct store_fx *fx, int n)
{
    for (int i = 0; i < n; i++) {
        struct job_spec spec = {.type = "t", .queue = "q", .payload = "{\"k\":\"v\"}"};
        struct job j = {0};
        bool replayed = false;
        struct jobd_error err = {0};
        ASSERT_OK(store_enqueue(fx->st, &spec, &j, &replayed, &err), &err);
        fx->id = j.id;
        job_fini(&j);
    }
}

static void
store_rows(const char *url)
{
    struct store_fx fx = {0};
    struct jobd_error err = {0};
    ASSERT_OK(store_open(url, &fx.st, &err), &err);
    ASSERT_OK(store_migrate(fx.st, &err), &err);
    seed(&fx, 5);
    ASSERT(torture("store_get", op_store_get, &fx) > 2);
    ASSERT(torture("store_list", op_store_list, &fx) > 2);
    store_close(fx.st);
    assert_no_leaks();
}

TEST(sqlite_row_decoding)
{
    char url[600];
    snprintf(url, sizeof url, "sqlite:%s", test_path("rows.db"));
    store_rows(url);
}

TEST(pg_row_decoding)
{
    TEST_NEED_PG();
    char url[512];
    if (pgtest_fresh_db(url, sizeof url) != 0)
        TEST_FAIL("cannot create a PostgreSQL database");
    store_rows(url);
    pgtest_drop_db(url);
}
