/*
 * test_worker_exec.c — the exec runner (worker/exec.c) with real child
 * processes: payload on stdin, JOBD_* environment, exit codes, bounded
 * output, timeouts that kill the whole process group, stop requests.
 */
#include "test.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "util/clock.h"
#include "worker/exec.h"

struct inbox {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct run_result *head;
};

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

/* Waits up to 20 s for one result. */
static struct run_result *
wait_result(struct inbox *in)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 20;
    pthread_mutex_lock(&in->mu);
    while (in->head == NULL)
        if (pthread_cond_timedwait(&in->cv, &in->mu, &dl) != 0)
            break;
    struct run_result *r = in->head;
    if (r != NULL)
        in->head = r->next;
    pthread_mutex_unlock(&in->mu);
    if (r == NULL)
        TEST_FAIL("no result within 20 s");
    return r;
}

static struct handler_conf handler;
static struct inbox inbox = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL};

static struct exec_runner *
runner(void)
{
    struct exec_runner *x = NULL;
    struct jobd_error err = {0};
    ASSERT_OK(exec_runner_new((struct run_sink){deliver, &inbox, NULL}, &x, &err), &err);
    return x;
}

/*
 * A run of `sh -c script`. Each run gets its own handler: the runner's
 * thread reads a run's handler while the test readies the next run, so one
 * shared handler rewritten per run was a data race (make tsan found it).
 * Each test runs in its own process, so the pool starts empty for each.
 */
static struct run *
mkrun(int64_t id, const char *script, int64_t timeout_ms)
{
    enum { POOL = 64 };
    static struct handler_conf pool[POOL];
    static char *argvs[POOL][4];
    static int used;
    if (used == POOL)
        TEST_FAIL("mkrun: more than %d runs in one test", POOL);
    char **argv = argvs[used];
    argv[0] = "/bin/sh";
    argv[1] = "-c";
    argv[2] = (char *)script;
    argv[3] = NULL;
    struct handler_conf *h = &pool[used++];
    *h = handler;
    h->argv = argv;
    h->kind = HANDLER_EXEC;
    struct run *r = calloc(1, sizeof *r);
    r->id = id;
    r->attempt = 3;
    r->type = strdup("t.x");
    r->queue = strdup("mail");
    r->payload = strdup("{\"a\":1}");
    r->idempotency_key = strdup("job-7");
    r->timeout_ms = timeout_ms;
    r->handler = h;
    return r;
}

TEST(success_with_json_result_and_env)
{
    struct exec_runner *x = runner();
    exec_runner_start(x, mkrun(7,
                               "read p; printf '{\"p\":%s,\"id\":\"%s\",\"a\":%s,"
                               "\"t\":\"%s\",\"q\":\"%s\",\"k\":\"%s\"}' \"$p\" "
                               "\"$JOBD_JOB_ID\" $JOBD_ATTEMPT $JOBD_TYPE $JOBD_QUEUE "
                               "$JOBD_IDEMPOTENCY_KEY; test -z \"$JOBD_SCHEDULED_FOR\"",
                               0));
    struct run_result *r = wait_result(&inbox);
    ASSERT_EQ(r->outcome, RUN_SUCCEEDED);
    ASSERT_EQ(r->id, 7);
    ASSERT_EQ(r->attempt, 3);
    ASSERT_STR_EQ(r->result, "{\"a\":3,\"id\":\"7\",\"k\":\"job-7\",\"p\":{\"a\":1},"
                             "\"q\":\"mail\",\"t\":\"t.x\"}");
    run_result_free(r);
    exec_runner_free(x);
}

TEST(scheduled_for_is_rfc3339_utc)
{
    struct exec_runner *x = runner();
    struct run *r = mkrun(8, "printf '\"%s\"' \"$JOBD_SCHEDULED_FOR\"", 0);
    r->scheduled_for_us = INT64_C(1796220197120000); /* 2026-12-02T14:03:17.120Z */
    exec_runner_start(x, r);
    struct run_result *res = wait_result(&inbox);
    ASSERT_EQ(res->outcome, RUN_SUCCEEDED);
    ASSERT_STR_EQ(res->result, "\"2026-12-02T14:03:17.120Z\"");
    run_result_free(res);
    exec_runner_free(x);
}

/* docs/WORKER.md, Trace context: the job's, never the worker's own. */
TEST(traceparent_in_env_only_when_the_job_has_one)
{
    setenv("TRACEPARENT", "00-11111111111111111111111111111111-2222222222222222-01", 1);
    struct exec_runner *x = runner();
    struct run *r = mkrun(9, "printf '\"%s\"' \"${TRACEPARENT-unset}\"", 0);
    r->traceparent = strdup("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    exec_runner_start(x, r);
    struct run_result *res = wait_result(&inbox);
    ASSERT_EQ(res->outcome, RUN_SUCCEEDED);
    ASSERT_STR_EQ(res->result, "\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\"");
    run_result_free(res);
    exec_runner_start(x, mkrun(10, "printf '\"%s\"' \"${TRACEPARENT-unset}\"", 0));
    res = wait_result(&inbox);
    ASSERT_EQ(res->outcome, RUN_SUCCEEDED);
    ASSERT_STR_EQ(res->result, "\"unset\"");
    run_result_free(res);
    exec_runner_free(x);
    unsetenv("TRACEPARENT");
}

TEST(non_json_or_huge_stdout_is_no_result)
{
    struct exec_runner *x = runner();
    exec_runner_start(x, mkrun(1, "echo hello", 0));
    struct run_result *r = wait_result(&inbox);
    ASSERT_EQ(r->outcome, RUN_SUCCEEDED);
    ASSERT_NULL(r->result);
    run_result_free(r);
    /* 1 MiB of a JSON string: too big, must not be held or kept */
    exec_runner_start(x, mkrun(2,
                               "printf '\"'; head -c 1048576 /dev/zero | tr '\\0' a; "
                               "printf '\"'",
                               0));
    r = wait_result(&inbox);
    ASSERT_EQ(r->outcome, RUN_SUCCEEDED);
    ASSERT_NULL(r->result);
    run_result_free(r);
    exec_runner_free(x);
}

TEST(exit_65_is_dead_other_exit_retries_with_stderr_tail)
{
    struct exec_runner *x = runner();
    exec_runner_start(x, mkrun(1, "echo bad input >&2; exit 65", 0));
    struct run_result *r = wait_result(&inbox);
    ASSERT_EQ(r->outcome, RUN_DEAD);
    ASSERT_STR_EQ(r->error, "bad input\n");
    run_result_free(r);
    /* 100 KiB of stderr then a last line: only the last 4 KiB are kept */
    exec_runner_start(x, mkrun(2,
                               "head -c 102400 /dev/zero | tr '\\0' x >&2; "
                               "echo; echo the end >&2; exit 3",
                               0));
    r = wait_result(&inbox);
    ASSERT_EQ(r->outcome, RUN_RETRY);
    ASSERT_EQ(strlen(r->error), 4096);
    ASSERT(strstr(r->error, "the end\n") != NULL);
    run_result_free(r);
    exec_runner_start(x, mkrun(3, "kill -9 $$", 0));
    r = wait_result(&inbox);
    ASSERT_EQ(r->outcome, RUN_RETRY);
    ASSERT(strstr(r->error, "signal 9") != NULL);
    run_result_free(r);
    exec_runner_free(x);
}

TEST(missing_program_is_retryable)
{
    struct exec_runner *x = runner();
    struct run *run = mkrun(1, "", 0);
    static char *argv[] = {"/nonexistent/handler", NULL};
    ((struct handler_conf *)run->handler)->argv = argv; /* its own (mkrun) */
    exec_runner_start(x, run);
    struct run_result *r = wait_result(&inbox);
    ASSERT_EQ(r->outcome, RUN_RETRY);
    ASSERT(strstr(r->error, "/nonexistent/handler") != NULL);
    run_result_free(r);
    exec_runner_free(x);
}

/* Alive = exists and is not a zombie, checked for up to 2 s (a killed
 * orphan is reaped by init at its own pace). */
static bool
alive(pid_t pid)
{
    int64_t dl = clock_mono_now_us() + 2000000;
    while (clock_mono_now_us() < dl) {
        if (kill(pid, 0) != 0)
            return false;
        char path[64], buf[256] = {0};
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            return false;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *rp = strrchr(buf, ')');
        if (rp != NULL && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'))
            return false;
        usleep(10000);
    }
    return true;
}

static pid_t
read_pid(const char *path)
{
    int64_t dl = clock_mono_now_us() + 10000000;
    while (clock_mono_now_us() < dl) {
        FILE *f = fopen(path, "r");
        long pid = 0;
        if (f != NULL) {
            if (fscanf(f, "%ld", &pid) != 1)
                pid = 0;
            fclose(f);
        }
        if (pid > 0)
            return (pid_t)pid;
        usleep(10000);
    }
    TEST_FAIL("no pid in %s", path);
}

TEST(timeout_kills_the_process_group)
{
    struct exec_runner *x = runner();
    char script[1400];
    snprintf(script, sizeof script,
             "sleep 60 & echo $! > %s/grandchild; echo $$ > %s/child; "
             "wait",
             test_tmpdir, test_tmpdir);
    int64_t t0 = clock_mono_now_us();
    exec_runner_start(x, mkrun(1, script, 300));
    pid_t gc = read_pid(test_path("grandchild"));
    pid_t ch = read_pid(test_path("child"));
    struct run_result *r = wait_result(&inbox);
    int64_t took_ms = (clock_mono_now_us() - t0) / 1000;
    ASSERT_EQ(r->outcome, RUN_RETRY);
    ASSERT_EQ(r->stopped, RUN_STOP_TIMEOUT);
    ASSERT(strstr(r->error, "timed out") != NULL);
    ASSERT(took_ms >= 300 && took_ms < 4000);
    ASSERT(!alive(ch));
    ASSERT(!alive(gc));
    run_result_free(r);
    exec_runner_free(x);
}

TEST(stop_request_ends_the_run)
{
    struct exec_runner *x = runner();
    char script[1400];
    snprintf(script, sizeof script, "echo $$ > %s/child; exec sleep 60", test_tmpdir);
    exec_runner_start(x, mkrun(5, script, 0));
    pid_t ch = read_pid(test_path("child"));
    exec_runner_stop(x, 5, 2, RUN_STOP_CANCEL); /* wrong attempt: ignored */
    exec_runner_stop(x, 5, 3, RUN_STOP_CANCEL);
    struct run_result *r = wait_result(&inbox);
    ASSERT_EQ(r->outcome, RUN_RETRY);
    ASSERT_EQ(r->stopped, RUN_STOP_CANCEL);
    ASSERT(!alive(ch));
    run_result_free(r);
    exec_runner_free(x);
}

TEST(free_kills_running_children)
{
    struct exec_runner *x = runner();
    char script[1400];
    snprintf(script, sizeof script, "echo $$ > %s/child; exec sleep 60", test_tmpdir);
    exec_runner_start(x, mkrun(5, script, 0));
    pid_t ch = read_pid(test_path("child"));
    exec_runner_free(x);
    ASSERT(!alive(ch));
}

TEST(many_at_once)
{
    struct exec_runner *x = runner();
    for (int i = 0; i < 50; i++)
        exec_runner_start(x, mkrun(i + 1, "cat", 0));
    int seen = 0;
    for (int i = 0; i < 50; i++) {
        struct run_result *r = wait_result(&inbox);
        ASSERT_EQ(r->outcome, RUN_SUCCEEDED);
        ASSERT_STR_EQ(r->result, "{\"a\":1}");
        seen++;
        run_result_free(r);
    }
    ASSERT_EQ(seen, 50);
    exec_runner_free(x);
}
