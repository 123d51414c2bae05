/*
 * test_worker_http.c — the http runner (worker/http.c) against a real HTTP
 * server on a loopback port (tests/httpstub.h): headers, outcomes by
 * status, Retry-After in both forms, connection refused, timeout, abort.
 */
#include "test.h"

#include <pthread.h>

#include "httpstub.h"
#include "util/clock.h"
#include "worker/http.h"

struct inbox {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct run_result *head;
};
static struct inbox inbox = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL};

static void
deliver(void *ctx, struct run_result *r)
{
    struct inbox *in = ctx;
    pthread_mutex_lock(&in->mu);
    r->next = in->head;
    in->head = r;
    pthread_cond_broadcast(&in->cv);
    pthread_mutex_unlock(&in->mu);
}

static struct run_result *
wait_result(void)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 20;
    pthread_mutex_lock(&inbox.mu);
    while (inbox.head == NULL)
        if (pthread_cond_timedwait(&inbox.cv, &inbox.mu, &dl) != 0)
            break;
    struct run_result *r = inbox.head;
    if (r != NULL)
        inbox.head = r->next;
    pthread_mutex_unlock(&inbox.mu);
    if (r == NULL)
        TEST_FAIL("no result within 20 s");
    return r;
}

static struct httpstub stub;
static struct handler_conf handler;
static char url[256];

static struct http_runner *
setup(void)
{
    ASSERT_EQ(httpstub_start(&stub), 0);
    struct http_runner *h = NULL;
    struct jobd_error err = {0};
    ASSERT_OK(http_runner_new((struct run_sink){deliver, &inbox, NULL}, &h, &err), &err);
    return h;
}

static struct run_result *
call_tp(struct http_runner *h, const char *path, int64_t timeout_ms, const char *tp)
{
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", stub.port, path);
    handler.kind = HANDLER_HTTP;
    handler.url = url;
    struct run *r = calloc(1, sizeof *r);
    r->id = 42;
    r->attempt = 2;
    r->type = strdup("hook");
    r->queue = strdup("default");
    r->payload = strdup("{\"to\":\"a@b.c\"}");
    r->idempotency_key = strdup("k-1");
    r->traceparent = tp != NULL ? strdup(tp) : NULL;
    r->timeout_ms = timeout_ms;
    r->handler = &handler;
    http_runner_start(h, r);
    return wait_result();
}

static struct run_result *
call(struct http_runner *h, const char *path, int64_t timeout_ms)
{
    return call_tp(h, path, timeout_ms, NULL);
}

/* docs/WORKER.md, Trace context: the job's traceparent as a header, none without. */
TEST(traceparent_header_only_when_the_job_has_one)
{
    struct http_runner *h = setup();
    struct run_result *r =
        call_tp(h, "/trace", 5000, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    ASSERT_EQ(r->outcome, RUN_SUCCEEDED);
    ASSERT_STR_EQ(r->result,
                  "{\"tp\":\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\"}");
    run_result_free(r);
    r = call(h, "/trace", 5000);
    ASSERT_EQ(r->outcome, RUN_SUCCEEDED);
    ASSERT_STR_EQ(r->result, "{\"tp\":\"\"}");
    run_result_free(r);
    http_runner_free(h);
    httpstub_stop(&stub);
}

TEST(success_sends_headers_and_keeps_json_body)
{
    struct http_runner *h = setup();
    struct run_result *r = call(h, "/ok", 5000);
    ASSERT_EQ(r->outcome, RUN_SUCCEEDED);
    ASSERT_STR_EQ(r->result, "{\"attempt\":\"2\",\"ct\":\"application/json\",\"id\":\"42\","
                             "\"key\":\"k-1\",\"payload\":{\"to\":\"a@b.c\"}}");
    run_result_free(r);
    r = call(h, "/text", 5000);
    ASSERT_EQ(r->outcome, RUN_SUCCEEDED);
    ASSERT_NULL(r->result);
    run_result_free(r);
    http_runner_free(h);
    httpstub_stop(&stub);
}

TEST(client_errors_are_dead_server_errors_retry)
{
    struct http_runner *h = setup();
    struct run_result *r = call(h, "/bad", 5000);
    ASSERT_EQ(r->outcome, RUN_DEAD);
    ASSERT(strstr(r->error, "HTTP 400") != NULL);
    ASSERT(strstr(r->error, "no such recipient") != NULL);
    run_result_free(r);
    r = call(h, "/gone", 5000);
    ASSERT_EQ(r->outcome, RUN_DEAD);
    run_result_free(r);
    r = call(h, "/err", 5000);
    ASSERT_EQ(r->outcome, RUN_RETRY);
    ASSERT_EQ(r->retry_after_ms, -1);
    ASSERT(strstr(r->error, "HTTP 500") != NULL);
    run_result_free(r);
    r = call(h, "/busy", 5000);
    ASSERT_EQ(r->outcome, RUN_RETRY);
    ASSERT_EQ(r->retry_after_ms, 7000);
    run_result_free(r);
    r = call(h, "/date", 5000);
    ASSERT_EQ(r->outcome, RUN_RETRY);
    ASSERT(r->retry_after_ms > 100000 && r->retry_after_ms <= 121000);
    run_result_free(r);
    http_runner_free(h);
    httpstub_stop(&stub);
}

TEST(refused_and_timeout_retry)
{
    struct http_runner *h = setup();
    int dead = httpstub_dead_port();
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x", dead);
    handler.kind = HANDLER_HTTP;
    handler.url = url;
    struct run *run = calloc(1, sizeof *run);
    run->id = 1;
    run->attempt = 1;
    run->type = strdup("hook");
    run->queue = strdup("default");
    run->payload = strdup("{}");
    run->idempotency_key = strdup("job-1");
    run->handler = &handler;
    http_runner_start(h, run);
    struct run_result *r = wait_result();
    ASSERT_EQ(r->outcome, RUN_RETRY);
    ASSERT(strstr(r->error, "onnect") != NULL);
    run_result_free(r);
    int64_t t0 = clock_mono_now_us();
    r = call(h, "/slow", 300);
    int64_t ms = (clock_mono_now_us() - t0) / 1000;
    ASSERT_EQ(r->outcome, RUN_RETRY);
    ASSERT_EQ(r->stopped, RUN_STOP_TIMEOUT);
    ASSERT(ms >= 290 && ms < 3000);
    run_result_free(r);
    http_runner_free(h);
    httpstub_stop(&stub);
}

TEST(stop_aborts_the_call)
{
    struct http_runner *h = setup();
    snprintf(url, sizeof url, "http://127.0.0.1:%d/slow", stub.port);
    handler.kind = HANDLER_HTTP;
    handler.url = url;
    struct run *run = calloc(1, sizeof *run);
    run->id = 9;
    run->attempt = 4;
    run->type = strdup("hook");
    run->queue = strdup("default");
    run->payload = strdup("{}");
    run->idempotency_key = strdup("job-9");
    run->handler = &handler;
    http_runner_start(h, run);
    while (atomic_load(&stub.hits) == 0)
        usleep(1000);
    http_runner_stop(h, 9, 4, RUN_STOP_CANCEL);
    struct run_result *r = wait_result();
    ASSERT_EQ(r->outcome, RUN_RETRY);
    ASSERT_EQ(r->stopped, RUN_STOP_CANCEL);
    run_result_free(r);
    http_runner_free(h);
    httpstub_stop(&stub);
}

TEST(retry_after_parsing)
{
    ASSERT_EQ(http_retry_after_ms("120", 0), 120000);
    ASSERT_EQ(http_retry_after_ms(" 0 ", 0), 0);
    ASSERT_EQ(http_retry_after_ms("soon", 0), -1);
    ASSERT_EQ(http_retry_after_ms("", 0), -1);
    ASSERT_EQ(http_retry_after_ms("12x", 0), -1);
    /* Wed, 21 Oct 2015 07:28:00 GMT = 1445412480 */
    ASSERT_EQ(http_retry_after_ms("Wed, 21 Oct 2015 07:28:00 GMT", 1445412480 - 30), 30000);
    ASSERT_EQ(http_retry_after_ms("Wed, 21 Oct 2015 07:28:00 GMT", 1445412480 + 30), 0);
}
