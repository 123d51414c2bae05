/*
 * test_worker_e2e.c — `jobd worker` end to end: the real binary (JOBD_BIN),
 * real handler processes, a real HTTP server on loopback, real SQLite files
 * and a private PostgreSQL database (or a private cluster, for the restart
 * scenario). Jobs are enqueued and inspected with the store API directly.
 * Nothing sleeps to let time pass: every wait polls a condition against a
 * deadline.
 */
#include "test.h"
#include "workertest.h"

#include <fcntl.h>
#include <jansson.h>
#include <spawn.h>
#include <sys/wait.h>

#include "core/job.h"
#include "httpstub.h"
#include "pgtemplate.h"
#include "pgtest.h"
#include "store/store.h"
#include "util/clock.h"

extern char **environ;

static char db_url[700];
static char server_url[128]; /* set: the worker talks to this API server (--server) */

/* JSON equality by value (PostgreSQL hands jsonb back in its own layout). */
#define ASSERT_JSON_EQ(got, want)                                                                  \
    do {                                                                                           \
        const char *g_ = (got), *w_ = (want);                                                      \
        json_t *a_ = g_ ? json_loads(g_, JSON_DECODE_ANY, NULL) : NULL;                            \
        json_t *b_ = json_loads(w_, JSON_DECODE_ANY, NULL);                                        \
        int eq_ = a_ != NULL && b_ != NULL && json_equal(a_, b_);                                  \
        json_decref(a_);                                                                           \
        json_decref(b_);                                                                           \
        if (!eq_)                                                                                  \
            TEST_FAIL("%s is %s, want %s", #got, g_ ? g_ : "null", w_);                            \
    } while (0)

static int64_t
now_ms(void)
{
    return clock_mono_now_us() / 1000;
}

static void
use_sqlite(void)
{
    snprintf(db_url, sizeof db_url, "sqlite:%s/jobd.db", test_tmpdir);
}

/* False (and a note) if no PostgreSQL is around. */
static bool
use_pg(void)
{
    TEST_NEED_PG();
    /* jobd's schema in it already (tests/pgtemplate.h): the worker is tested here */
    if (pgtemplate_fresh_db(db_url, sizeof db_url) != 0)
        TEST_FAIL("cannot create a database");
    return true;
}

static void
write_file(const char *name, const char *text, bool exec)
{
    const char *path = test_path(name);
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fputs(text, f);
    fclose(f);
    if (exec)
        chmod(path, 0755);
}

/* Writes the handler scripts every scenario shares into the test dir. */
static void
write_handlers(void)
{
    char hang[1400];
    write_file("ok.sh",
               "#!/bin/sh\nread p\nprintf '{\"got\":%s,\"attempt\":%s,\"key\":\"%s\"}' "
               "\"$p\" \"$JOBD_ATTEMPT\" \"$JOBD_IDEMPOTENCY_KEY\"\n",
               true);
    write_file("dead.sh", "#!/bin/sh\necho 'bad payload' >&2\nexit 65\n", true);
    write_file("flaky.sh",
               "#!/bin/sh\nif [ \"$JOBD_ATTEMPT\" -lt 3 ]; then echo \"flake "
               "$JOBD_ATTEMPT\" >&2; exit 1; fi\necho '{\"ok\":true}'\n",
               true);
    write_file("always.sh", "#!/bin/sh\necho \"boom $JOBD_ATTEMPT\" >&2\nexit 1\n", true);
    snprintf(hang, sizeof hang,
             "#!/bin/sh\nsleep 60 &\necho $! > %s/gc.$JOBD_JOB_ID\n"
             "echo $$ > %s/c.$JOBD_JOB_ID\nwait\n",
             test_tmpdir, test_tmpdir);
    write_file("hang.sh", hang, true);
    write_file("slow.sh", "#!/bin/sh\nsleep 0.5\necho '{\"slow\":true}'\n", true);
    snprintf(hang, sizeof hang, "#!/bin/sh\ndate +%%s%%N > %s/ts.$JOBD_JOB_ID\n", test_tmpdir);
    write_file("ts.sh", hang, true);
}

/* The [worker] section and the exec handlers, plus extra text. */
static void
write_config(const char *worker_extra, const char *extra)
{
    char ini[12000];
    /* A lease far longer than a loaded machine's stall: nothing here waits
     * for one to run out, and a 3 s lease (its run stopped 1.4 s in without
     * a heartbeat answer) once fenced healthy runs under a parallel build. */
    snprintf(ini, sizeof ini,
             "[worker]\nconcurrency = 4\nlease = 30s\nheartbeat = 200ms\nbackoff_base = 10ms\n"
             "backoff_cap = 40ms\n%s\n"
             "[handler \"ok\"]\nexec = %s/ok.sh\n"
             "[handler \"dead\"]\nexec = %s/dead.sh\n"
             "[handler \"flaky\"]\nexec = %s/flaky.sh\n"
             "[handler \"always\"]\nexec = %s/always.sh\n"
             "[handler \"hang\"]\nexec = %s/hang.sh\ntimeout = 300ms\n"
             "[handler \"hangc\"]\nexec = %s/hang.sh\n"
             "[handler \"slow\"]\nexec = %s/slow.sh\n"
             "[handler \"ts\"]\nexec = %s/ts.sh\n%s",
             worker_extra, test_tmpdir, test_tmpdir, test_tmpdir, test_tmpdir, test_tmpdir,
             test_tmpdir, test_tmpdir, test_tmpdir, extra);
    write_file("worker.ini", ini, false);
}

static pid_t
start_worker(void)
{
    const char *bin = getenv("JOBD_BIN");
    if (bin == NULL)
        TEST_FAIL("JOBD_BIN is not set");
    char cfg[1100];
    snprintf(cfg, sizeof cfg, "%s/worker.ini", test_tmpdir);
    char *argv[] = {(char *)bin,
                    "worker",
                    server_url[0] ? "--server" : "--db",
                    server_url[0] ? server_url : db_url,
                    "--config",
                    cfg,
                    "--id",
                    "e2e",
                    NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, test_path("worker.log"), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, bin, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        TEST_FAIL("cannot start %s: %s", bin, strerror(rc));
    return pid;
}

static bool
log_contains(const char *needle)
{
    FILE *f = fopen(test_path("worker.log"), "r");
    if (f == NULL)
        return false;
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, needle) != NULL;
}

static void
dump_log(void)
{
    FILE *f = fopen(test_path("worker.log"), "r");
    if (f == NULL)
        return;
    char line[1024];
    fprintf(stderr, "--- worker.log ---\n");
    while (fgets(line, sizeof line, f))
        fprintf(stderr, "%s", line);
    fclose(f);
}

static void
wait_log(const char *needle, int timeout_ms)
{
    int64_t dl = now_ms() + timeout_ms;
    while (!log_contains(needle)) {
        if (now_ms() > dl) {
            dump_log();
            TEST_FAIL("the worker never logged \"%s\"", needle);
        }
        usleep(5000);
    }
}

/* SIGTERM, then the exit status (-1 if it did not exit within timeout_ms). */
static int
stop_worker(pid_t pid, int timeout_ms)
{
    kill(pid, SIGTERM);
    int64_t dl = now_ms() + timeout_ms;
    for (;;) {
        int status = 0;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (now_ms() > dl) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            dump_log();
            return -1;
        }
        usleep(5000);
    }
}

static int64_t
enqueue(struct store *st, const char *type, const char *payload, int max_attempts, const char *key,
        int64_t run_at_us)
{
    struct job_spec spec = {.type = type,
                            .payload = payload,
                            .max_attempts = max_attempts,
                            .idempotency_key = key,
                            .run_at_us = run_at_us};
    struct job j = {0};
    struct jobd_error err = {0};
    ASSERT_OK(store_enqueue(st, &spec, &j, NULL, &err), &err);
    int64_t id = j.id;
    job_fini(&j);
    return id;
}

/* Polls until job id has status (or fails after timeout_ms); fills out. */
static void
wait_status(struct store *st, int64_t id, enum job_status status, int timeout_ms, struct job *out)
{
    int64_t dl = now_ms() + timeout_ms;
    for (;;) {
        struct jobd_error err = {0};
        job_fini(out);
        ASSERT_OK(store_get(st, id, out, &err), &err);
        if (out->status == status)
            return;
        if (now_ms() > dl) {
            dump_log();
            TEST_FAIL("job %lld is %s (attempt %d, last_error %s), want %s", (long long)id,
                      job_status_name(out->status), out->attempt,
                      out->last_error ? out->last_error : "null", job_status_name(status));
        }
        usleep(5000);
    }
}

static pid_t
read_pid(const char *name, int timeout_ms)
{
    int64_t dl = now_ms() + timeout_ms;
    while (now_ms() < dl) {
        FILE *f = fopen(test_path(name), "r");
        long pid = 0;
        if (f != NULL) {
            if (fscanf(f, "%ld", &pid) != 1)
                pid = 0;
            fclose(f);
        }
        if (pid > 0)
            return (pid_t)pid;
        usleep(5000);
    }
    dump_log();
    TEST_FAIL("no pid in %s", name);
}

/* Gone = no such process, or a zombie (an orphan waits for init). */
static bool
gone(pid_t pid, int timeout_ms)
{
    int64_t dl = now_ms() + timeout_ms;
    while (now_ms() < dl) {
        char path[64], buf[256] = {0};
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            return true;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *rp = strrchr(buf, ')');
        if (rp != NULL && (rp[2] == 'Z' || rp[2] == 'X'))
            return true;
        usleep(5000);
    }
    return false;
}

/* ---- scenarios, each run on one backend ---- */

static void
exec_outcomes(void)
{
    write_handlers();
    write_config("", "");
    struct store *st = test_store_open(db_url);
    pid_t w = start_worker();
    int64_t ok = enqueue(st, "ok", "{\"n\":1}", 0, NULL, 0);
    int64_t keyed = enqueue(st, "ok", "{\"n\":2}", 0, "my-key", 0);
    int64_t dead = enqueue(st, "dead", "{}", 0, NULL, 0);
    int64_t flaky = enqueue(st, "flaky", "{}", 5, NULL, 0);
    int64_t always = enqueue(st, "always", "{}", 3, NULL, 0);
    struct job j = {0};
    char want[256];

    wait_status(st, ok, JOB_SUCCEEDED, 15000, &j);
    snprintf(want, sizeof want, "{\"attempt\":1,\"got\":{\"n\":1},\"key\":\"job-%lld\"}",
             (long long)ok);
    ASSERT_JSON_EQ(j.result, want);
    wait_status(st, keyed, JOB_SUCCEEDED, 15000, &j);
    ASSERT_JSON_EQ(j.result, "{\"attempt\":1,\"got\":{\"n\":2},\"key\":\"my-key\"}");

    wait_status(st, dead, JOB_DEAD, 15000, &j);
    ASSERT_EQ(j.attempt, 1); /* exit 65: dead at once, no retry */
    ASSERT_STR_EQ(j.last_error, "bad payload\n");

    wait_status(st, flaky, JOB_SUCCEEDED, 15000, &j);
    ASSERT_EQ(j.attempt, 3); /* two failures, retried with backoff */
    ASSERT_JSON_EQ(j.result, "{\"ok\":true}");

    wait_status(st, always, JOB_DEAD, 15000, &j);
    ASSERT_EQ(j.attempt, 3); /* max_attempts */
    ASSERT_STR_EQ(j.last_error, "boom 3\n");
    job_fini(&j);

    ASSERT_EQ(stop_worker(w, 10000), 0);
    store_close(st);
}

TEST(sqlite_exec_outcomes)
{
    use_sqlite();
    exec_outcomes();
}

TEST(pg_exec_outcomes)
{
    if (!use_pg())
        return;
    exec_outcomes();
    pgtest_drop_db(db_url);
}

/* Starts `jobd server` on db_url and a free loopback port; sets server_url. */
static pid_t
start_server(void)
{
    const char *bin = getenv("JOBD_BIN");
    int port = httpstub_dead_port();
    char listen[64];
    snprintf(listen, sizeof listen, "127.0.0.1:%d", port);
    char *argv[] = {(char *)bin, "server", "--db", db_url, "--listen", listen, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, test_path("server.log"), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, bin, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        TEST_FAIL("cannot start the server: %s", strerror(rc));
    int64_t dl = now_ms() + 20000;
    for (;;) {
        FILE *f = fopen(test_path("server.log"), "r");
        char buf[4096] = "";
        size_t n = f != NULL ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f != NULL)
            fclose(f);
        buf[n] = '\0';
        if (strstr(buf, "listening on") != NULL)
            break;
        if (now_ms() > dl)
            TEST_FAIL("the server did not start: %s", buf);
        usleep(10000);
    }
    snprintf(server_url, sizeof server_url, "http://127.0.0.1:%d", port);
    return pid;
}

TEST(remote_worker_over_the_api)
{
    use_sqlite();
    struct store *st = test_store_open(db_url); /* migrated before the server starts */
    store_close(st);
    pid_t server = start_server();
    exec_outcomes();
    ASSERT(log_contains("store=\"the API server\""));
    ASSERT_EQ(stop_worker(server, 10000), 0);
}

TEST(timeout_kills_the_process_group)
{
    use_sqlite();
    write_handlers();
    write_config("", "");
    struct store *st = test_store_open(db_url);
    pid_t w = start_worker();
    int64_t id = enqueue(st, "hang", "{}", 1, NULL, 0);
    char name[64];
    snprintf(name, sizeof name, "c.%lld", (long long)id);
    pid_t child = read_pid(name, 10000);
    snprintf(name, sizeof name, "gc.%lld", (long long)id);
    pid_t grandchild = read_pid(name, 10000);
    struct job j = {0};
    wait_status(st, id, JOB_DEAD, 15000, &j);
    ASSERT(strstr(j.last_error, "timed out") != NULL);
    ASSERT(gone(child, 3000));
    ASSERT(gone(grandchild, 3000));
    job_fini(&j);
    ASSERT_EQ(stop_worker(w, 10000), 0);
    store_close(st);
}

TEST(cancel_stops_a_running_job)
{
    use_sqlite();
    write_handlers();
    write_config("", "");
    struct store *st = test_store_open(db_url);
    pid_t w = start_worker();
    int64_t id = enqueue(st, "hangc", "{}", 0, NULL, 0);
    char name[64];
    snprintf(name, sizeof name, "c.%lld", (long long)id);
    pid_t child = read_pid(name, 10000);
    snprintf(name, sizeof name, "gc.%lld", (long long)id);
    pid_t grandchild = read_pid(name, 10000);
    struct job j = {0};
    struct jobd_error err = {0};
    ASSERT_OK(store_cancel(st, id, &j, &err), &err);
    ASSERT(j.cancel_requested);
    wait_status(st, id, JOB_CANCELLED, 10000, &j);
    ASSERT(gone(child, 3000));
    ASSERT(gone(grandchild, 3000));
    job_fini(&j);
    ASSERT_EQ(stop_worker(w, 10000), 0);
    store_close(st);
}

TEST(http_handlers)
{
    use_sqlite();
    write_handlers();
    struct httpstub stub;
    ASSERT_EQ(httpstub_start(&stub), 0);
    int dead_port = httpstub_dead_port();
    char extra[2048];
    snprintf(extra, sizeof extra,
             "[handler \"h.ok\"]\nhttp = http://127.0.0.1:%d/ok\n"
             "[handler \"h.bad\"]\nhttp = http://127.0.0.1:%d/bad\n"
             "[handler \"h.err\"]\nhttp = http://127.0.0.1:%d/err\n"
             "[handler \"h.busy\"]\nhttp = http://127.0.0.1:%d/busy\n"
             "[handler \"h.refused\"]\nhttp = http://127.0.0.1:%d/x\n"
             "[handler \"h.slow\"]\nhttp = http://127.0.0.1:%d/slow\ntimeout = 300ms\n",
             stub.port, stub.port, stub.port, stub.port, dead_port, stub.port);
    write_config("", extra);
    struct store *st = test_store_open(db_url);
    pid_t w = start_worker();
    int64_t ok = enqueue(st, "h.ok", "{\"a\":[1,2]}", 0, "hk", 0);
    int64_t bad = enqueue(st, "h.bad", "{}", 0, NULL, 0);
    int64_t err5 = enqueue(st, "h.err", "{}", 2, NULL, 0);
    int64_t busy = enqueue(st, "h.busy", "{}", 0, NULL, 0);
    int64_t refused = enqueue(st, "h.refused", "{}", 1, NULL, 0);
    int64_t slow = enqueue(st, "h.slow", "{}", 1, NULL, 0);
    struct job j = {0};
    char want[256];

    wait_status(st, ok, JOB_SUCCEEDED, 15000, &j);
    snprintf(want, sizeof want,
             "{\"attempt\":\"1\",\"ct\":\"application/json\",\"id\":\"%lld\","
             "\"key\":\"hk\",\"payload\":{\"a\":[1,2]}}",
             (long long)ok);
    ASSERT_JSON_EQ(j.result, want);
    wait_status(st, bad, JOB_DEAD, 15000, &j);
    ASSERT_EQ(j.attempt, 1);
    ASSERT(strstr(j.last_error, "HTTP 400") != NULL);
    wait_status(st, err5, JOB_DEAD, 15000, &j);
    ASSERT_EQ(j.attempt, 2);
    ASSERT(strstr(j.last_error, "HTTP 500") != NULL);
    wait_status(st, refused, JOB_DEAD, 15000, &j);
    ASSERT(strstr(j.last_error, "onnect") != NULL);
    wait_status(st, slow, JOB_DEAD, 15000, &j);
    ASSERT(strstr(j.last_error, "timed out") != NULL);
    /* 429 with Retry-After: 7 -> pending again, due about 7 s after the call */
    int64_t dl = now_ms() + 15000;
    for (;;) {
        wait_status(st, busy, JOB_PENDING, 15000, &j);
        if (j.attempt == 1 && j.last_error != NULL)
            break;
        if (now_ms() > dl)
            TEST_FAIL("the 429 job was never retried");
        usleep(5000);
    }
    int64_t delay_ms = (j.run_at_us - clock_real_now_us()) / 1000;
    ASSERT(strstr(j.last_error, "HTTP 429") != NULL);
    ASSERT(delay_ms > 5000 && delay_ms <= 7100);
    job_fini(&j);
    ASSERT_EQ(stop_worker(w, 10000), 0);
    httpstub_stop(&stub);
    store_close(st);
}

TEST(sigterm_lets_running_jobs_finish)
{
    use_sqlite();
    write_handlers();
    write_config("", "");
    struct store *st = test_store_open(db_url);
    int64_t ids[3];
    for (int i = 0; i < 3; i++)
        ids[i] = enqueue(st, "slow", "{}", 0, NULL, 0);
    pid_t w = start_worker();
    struct job j = {0};
    for (int i = 0; i < 3; i++)
        wait_status(st, ids[i], JOB_RUNNING, 10000, &j);
    int64_t t0 = now_ms();
    ASSERT_EQ(stop_worker(w, 10000), 0);
    ASSERT(now_ms() - t0 < 4000);
    for (int i = 0; i < 3; i++) {
        job_fini(&j);
        struct jobd_error err = {0};
        ASSERT_OK(store_get(st, ids[i], &j, &err), &err);
        ASSERT_EQ(j.status, JOB_SUCCEEDED);
    }
    job_fini(&j);
    store_close(st);
}

TEST(sigterm_stops_jobs_after_the_grace)
{
    use_sqlite();
    write_handlers();
    write_config("shutdown_grace = 200ms\n", "");
    struct store *st = test_store_open(db_url);
    int64_t id = enqueue(st, "hangc", "{}", 0, NULL, 0);
    pid_t w = start_worker();
    char name[64];
    snprintf(name, sizeof name, "c.%lld", (long long)id);
    pid_t child = read_pid(name, 10000);
    int64_t t0 = now_ms();
    ASSERT_EQ(stop_worker(w, 10000), 0);
    ASSERT(now_ms() - t0 < 4000);
    ASSERT(gone(child, 3000));
    struct job j = {0};
    struct jobd_error err = {0};
    ASSERT_OK(store_get(st, id, &j, &err), &err);
    ASSERT_EQ(j.status, JOB_PENDING); /* reported, due again at once */
    ASSERT_EQ(j.attempt, 1);
    ASSERT(strstr(j.last_error, "shutting down") != NULL);
    job_fini(&j);
    store_close(st);
}

static int64_t
read_ts_ns(int64_t id, int timeout_ms)
{
    char name[64];
    snprintf(name, sizeof name, "ts.%lld", (long long)id);
    int64_t dl = now_ms() + timeout_ms;
    while (now_ms() < dl) {
        FILE *f = fopen(test_path(name), "r");
        long long ns = 0;
        if (f != NULL) {
            if (fscanf(f, "%lld", &ns) != 1)
                ns = 0;
            fclose(f);
        }
        if (ns > 0)
            return ns;
        usleep(2000);
    }
    dump_log();
    TEST_FAIL("job %lld never started", (long long)id);
}

TEST(pg_idle_worker_wakes_on_notify_not_poll)
{
    if (!use_pg())
        return;
    write_handlers();
    write_config("poll_interval = 30s\n", "");
    struct store *st = test_store_open(db_url);
    pid_t w = start_worker();
    struct job j = {0};
    int64_t first = enqueue(st, "ok", "{}", 0, NULL, 0);
    wait_status(st, first, JOB_SUCCEEDED, 10000, &j); /* the loop is up, now idle */
    int64_t worst_ms = 0;
    for (int i = 0; i < 5; i++) {
        int64_t t0 = clock_real_now_us();
        int64_t id = enqueue(st, "ts", "{}", 0, NULL, 0);
        int64_t started_ms = (read_ts_ns(id, 5000) / 1000 - t0) / 1000;
        if (started_ms > worst_ms)
            worst_ms = started_ms;
        wait_status(st, id, JOB_SUCCEEDED, 5000, &j);
    }
    ASSERT(worst_ms < 1000);
    /* a job due in 700 ms starts on the run_at timer, not the 30 s poll */
    int64_t t0 = clock_real_now_us();
    int64_t later = enqueue(st, "ts", "{}", 0, NULL, t0 + 700000);
    int64_t started_ms = (read_ts_ns(later, 5000) / 1000 - t0) / 1000;
    ASSERT(started_ms >= 690 && started_ms < 1700);
    job_fini(&j);
    ASSERT_EQ(stop_worker(w, 10000), 0);
    store_close(st);
    pgtest_drop_db(db_url);
}

/*
 * The store goes away under a busy worker and comes back: the worker keeps
 * running, reconnects, reports what finished meanwhile and completes every
 * job. This restarts PostgreSQL, so it runs in a cluster of its own: the
 * test re-runs itself under a nested scripts/with-pg.sh.
 */
static void
pg_restart_inner(void)
{
    const char *ctl = getenv("JOBD_TEST_PG_CTL");
    const char *port = getenv("JOBD_TEST_PG_PORT");
    const char *data = getenv("JOBD_TEST_PG_DATA");
    ASSERT(ctl != NULL && port != NULL && data != NULL);
    ASSERT(pgtest_fresh_db(db_url, sizeof db_url) == 0);
    write_handlers();
    write_config("", "");
    struct store *st = test_store_open(db_url);
    int64_t ids[24];
    for (int i = 0; i < 24; i++)
        ids[i] = enqueue(st, "slow", "{}", 0, NULL, 0);
    pid_t w = start_worker();
    struct job j = {0};
    wait_status(st, ids[0], JOB_SUCCEEDED, 15000, &j);
    store_close(st);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s -m fast -w stop >/dev/null 2>&1", ctl);
    ASSERT_EQ(system(cmd), 0);
    wait_log("reconnecting", 15000);      /* it noticed */
    wait_log("still unreachable", 15000); /* and kept trying */
    char sockdir[1024];
    snprintf(sockdir, sizeof sockdir, "%s", data);
    *strrchr(sockdir, '/') = '\0';
    snprintf(cmd, sizeof cmd,
             "%s -w -t 30 -o \"-c listen_addresses=127.0.0.1 -p %s -k %s\" "
             "start >/dev/null 2>&1",
             ctl, port, sockdir);
    ASSERT_EQ(system(cmd), 0);
    st = test_store_open(db_url);
    for (int i = 0; i < 24; i++)
        wait_status(st, ids[i], JOB_SUCCEEDED, 30000, &j);
    ASSERT(log_contains("reconnected to the store"));
    ASSERT_EQ(kill(w, 0), 0); /* still the same process */
    job_fini(&j);
    ASSERT_EQ(stop_worker(w, 10000), 0);
    store_close(st);
    pgtest_drop_db(db_url);
}

TEST(pg_worker_survives_a_store_restart)
{
    if (getenv("JOBD_WORKER_OWN_CLUSTER") != NULL) {
        pg_restart_inner();
        return;
    }
    const char *src = getenv("JOBD_SRC");
    TEST_NEED_PG();
    if (src == NULL)
        TEST_FAIL("JOBD_SRC is not set (CTest sets it)");
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    ASSERT(n > 0);
    self[n] = '\0';
    char cmd[3000];
    snprintf(cmd, sizeof cmd,
             "JOBD_WORKER_OWN_CLUSTER=1 TEST_FILTER=pg_worker_survives "
             "'%s/scripts/with-pg.sh' '%s' >'%s/nested.log' 2>&1",
             src, self, test_tmpdir);
    int rc = system(cmd);
    if (rc != 0) {
        FILE *f = fopen(test_path("nested.log"), "r");
        char line[1024];
        while (f != NULL && fgets(line, sizeof line, f))
            fprintf(stderr, "  | %s", line);
        if (f != NULL)
            fclose(f);
        TEST_FAIL("the nested run failed (%d)", rc);
    }
}
