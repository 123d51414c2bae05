/*
 * remote.c — the store conformance suite against the remote store
 * (`store_conformance remote_sqlite|remote_pg`): the worker's operations go
 * over HTTP to a real `jobd server` process on the test's database, as
 * `jobd worker --server` sends them.
 *
 * The remote store implements only the worker's operations (claim,
 * heartbeat, complete, fail, release, next_run_at: store/remote/internal.h),
 * so a case's other calls (enqueue, get, cancel, retry, reap, lists...)
 * cannot go through it. The fixture's store is therefore the database
 * store the case would get anyway, with those worker operations of its
 * vtable replaced by calls into a remote store on the server: every case
 * runs unchanged, and its claims and reports are the server's.
 *
 * The server starts at the case's first worker operation (server_ready)
 * and stops with the fixture. The server keeps the case's manual clock: it runs with
 * $JOBD_TEST_CLOCK_FILE holding "@US" (util/clock.h), rewritten before each
 * request whenever the case moved the clock; its reaper and retention are
 * off (--reap-interval 24h, --retention off) so they never race a case's own
 * store_reap and store_prune. On PostgreSQL its counts thread and archive
 * pass still run, so the cases that count on being alone with the count
 * cache or the succeeded rows are left out there. A claim of every type (the fixture's claim())
 * names the types pending in the store: POST /v1/claim requires them.
 *
 * A case the HTTP routes cannot express is left out, with its reason, by
 * the table below (TEST_NOT_HERE, tests/test.h).
 */
#include "conformance.h"

#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The cases the worker routes cannot express, and why. */
static const struct {
    const char *name, *why;
    const char *only; /* the one backend this applies to, or NULL: both */
} not_here[] = {
    /* a heartbeat's lease end: the remote store answers 0, since the
     * server's clock is not the worker's (remote/open.c, remote_heartbeat) */
    {"heartbeat_extends_lease",
     "a heartbeat over HTTP gives no lease end (the worker keeps its own)", NULL},
    {"cancel_running_requests_then_fail_cancels",
     "a heartbeat over HTTP gives no lease end (the worker keeps its own)", NULL},
    /* the routes refuse attempt 0 (400) before any fence */
    {"heartbeat_stale_cases", "the routes refuse attempt 0 as invalid (400), not stale", NULL},
    {"release_is_fenced", "the routes refuse attempt 0 as invalid (400), not stale", NULL},
    /* a report on a job that does not exist is 404 (docs/API.md) */
    {"complete_without_result",
     "a report on a job that does not exist is 404 (JOBD_E_NOTFOUND), which workers take as stale",
     NULL},
    /* the claim's answer is what a worker needs (docs/API.md, POST /v1/claim) */
    {"claim_sets_lease_and_attempt", "the claim's answer has no started_at", NULL},
    {"limits_max_running_caps_a_claim_batch",
     "the claim's answer does not say when a queue limit lets a held job go (held_until_us)", NULL},
    {"limits_rate_caps_a_window_and_frees_the_next",
     "the claim's answer does not say when a queue limit lets a held job go (held_until_us)", NULL},
    {"limits_both_limits_the_tighter_wins",
     "the claim's answer does not say when a queue limit lets a held job go (held_until_us)", NULL},
    {"limits_null_removes_and_omitted_keeps",
     "the claim's answer does not say when a queue limit lets a held job go (held_until_us)", NULL},
    {"limits_do_not_touch_other_queues",
     "the claim's answer does not say when a queue limit lets a held job go (held_until_us)", NULL},
    {"groups_max_running_holds_per_group",
     "the claim's answer does not say when a group limit lets a held job go (held_until_us)", NULL},
    {"groups_rate_holds_per_group_and_window",
     "the claim's answer does not say when a group limit lets a held job go (held_until_us)", NULL},
    /* the server decides a failure's delay with its own --backoff-base/-cap */
    {"fail_backoff_counts_since_manual_retry",
     "a failure without retry_in_s takes the server's backoff policy, not the caller's", NULL},
    /* the server makes the lease token; a case cannot choose its hash */
    {"repeated_complete_is_known", "the server makes the lease token; a claim cannot choose it",
     NULL},
    {"repeated_fail_is_known", "the server makes the lease token; a claim cannot choose it", NULL},
    {"reaped_or_released_attempt_is_no_repeat",
     "the server makes the lease token; a claim cannot choose it", NULL},
    /* PostgreSQL's queue counts are a cache each server's counts thread
     * refreshes (docs/DESIGN.md, Cost per request): with the server's
     * thread beside it, a count may be up to a second old */
    {"queue_stats_counts", "the server's counts thread refreshes the count cache beside the case",
     "remote_pg"},
    {"stats_throughput_last_minute",
     "the server's counts thread refreshes the count cache beside the case", "remote_pg"},
};

/* The remote half of one test's fixture. */
struct remote_fx {
    struct fx *f;
    pid_t server;      /* 0 until the case's first worker operation */
    pid_t attached_by; /* the case's process */
    char base[64];
    char clock_file[1100], log_file[1100];
    int64_t clock_written_us;
    struct store *remote; /* the remote store on the server */
    struct store_ops ops; /* the database store's, with the worker's operations replaced */
    sqlite3 *sq;
    const struct store_ops *own; /* the database store's own, put back by remote_detach */
};

static struct remote_fx *rfx; /* the test's (one per forked test child) */

bool
is_remote(void)
{
    return strncmp(backend(), "remote_", 7) == 0;
}

/* Leaves the case out when the table says the routes cannot express it. */
static void
not_here_check(void)
{
    for (size_t i = 0; i < sizeof not_here / sizeof not_here[0]; i++)
        if (test_current != NULL && strcmp(not_here[i].name, test_current) == 0 &&
            (not_here[i].only == NULL || strcmp(not_here[i].only, backend()) == 0))
            TEST_NOT_HERE("%s", not_here[i].why);
}

/* Makes the server's clock the case's: "@US" into its clock file, when it moved. */
static void
sync_clock(void)
{
    int64_t now = now_of(rfx->f);
    if (now == rfx->clock_written_us)
        return;
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.new", rfx->clock_file);
    FILE *c = fopen(tmp, "w");
    if (c == NULL || fprintf(c, "@%lld\n", (long long)now) < 0 || fclose(c) != 0 ||
        rename(tmp, rfx->clock_file) != 0)
        TEST_FAIL("cannot write the server's clock file %s", rfx->clock_file);
    rfx->clock_written_us = now;
}

static void server_start(void);

/*
 * Before each worker operation: the server's clock is the case's, and the
 * server is running. It starts at the case's first worker operation, not
 * with the fixture: a case that makes none (of enqueue, lists, keys,
 * stats, workflow submission, among others) needs no server, since its
 * other calls go to the database store as under the "sqlite" or "pg"
 * backend. A server under ASan takes ~0.2 s to start and ~0.1 s to stop,
 * ~0.2 s of CPU (measured on this 2-core machine).
 */
static void
server_ready(void)
{
    sync_clock();
    if (rfx->server == 0) {
        /* The case's own process: a forked child has a database store of its own. */
        if (getpid() != rfx->attached_by)
            TEST_FAIL("a worker operation through the fixture's store in a forked child");
        server_start();
    }
}

/*
 * The types of the pending jobs, read from the database (caller frees each
 * and v). On the case's one connection (fx_pg), opened at its first claim: a
 * connection per claim cost more than the claim (PostgreSQL forks a
 * backend for each), and a case may claim hundreds of times.
 */
static size_t
pending_types(char ***v)
{
    *v = NULL;
    size_t n = 0;
    if (is_pg()) {
        PGconn *c = fx_pg(rfx->f); /* the case's, shared with raw_count */
        PGresult *r = PQexec(c, "SELECT DISTINCT type FROM jobd.jobs WHERE status = 'pending'");
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            TEST_FAIL("pending types: %s", PQerrorMessage(c));
        n = (size_t)PQntuples(r);
        *v = calloc(n + 1, sizeof **v);
        for (size_t i = 0; i < n; i++)
            (*v)[i] = strdup(PQgetvalue(r, (int)i, 0));
        PQclear(r);
    } else {
        if (rfx->sq == NULL && sqlite3_open(rfx->f->url + strlen("sqlite:"), &rfx->sq) != SQLITE_OK)
            TEST_FAIL("pending types: %s", sqlite3_errmsg(rfx->sq));
        sqlite3 *db = rfx->sq;
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, "SELECT DISTINCT type FROM jobs WHERE status = 'pending'", -1,
                               &st, NULL) != SQLITE_OK)
            TEST_FAIL("pending types: %s", sqlite3_errmsg(db));
        while (sqlite3_step(st) == SQLITE_ROW) {
            *v = realloc(*v, (n + 2) * sizeof **v);
            (*v)[n++] = strdup((const char *)sqlite3_column_text(st, 0));
            (*v)[n] = NULL;
        }
        sqlite3_finalize(st);
    }
    return n;
}

/* ---- the worker's operations, sent to the server ---- */

static int
r_claim(struct store *st, const struct claim_req *req, struct job_list *out, struct jobd_error *err)
{
    (void)st;
    struct claim_req r = *req;
    char **types = NULL;
    if (r.n_types == 0) {
        r.n_types = pending_types(&types);
        r.types = (const char *const *)types;
        if (r.n_types == 0) {
            free(types);
            return JOBD_OK; /* nothing pending: nothing to claim */
        }
    }
    server_ready();
    int rc = rfx->remote->ops->claim(rfx->remote, &r, out, err);
    for (size_t i = 0; types != NULL && types[i] != NULL; i++)
        free(types[i]);
    free(types);
    return rc;
}

static int
r_heartbeat(struct store *st, int64_t id, int32_t attempt, int64_t lease_ms, int64_t *until,
            bool *cancel, struct jobd_error *err)
{
    (void)st;
    server_ready();
    return rfx->remote->ops->heartbeat(rfx->remote, id, attempt, lease_ms, until, cancel, err);
}

static int
r_complete(struct store *st, int64_t id, int32_t attempt, const char *result, struct job *out,
           struct jobd_error *err)
{
    (void)st;
    server_ready();
    return rfx->remote->ops->complete(rfx->remote, id, attempt, result, out, err);
}

static int
r_complete_batch(struct store *st, const struct completion *c, size_t n, int *outcome,
                 struct jobd_error *err)
{
    (void)st;
    server_ready();
    return rfx->remote->ops->complete_batch(rfx->remote, c, n, outcome, err);
}

static int
r_fail(struct store *st, int64_t id, int32_t attempt, const char *error, bool retryable,
       int64_t delay_ms, const struct backoff_policy *bp, struct job *out, struct jobd_error *err)
{
    (void)st;
    server_ready();
    return rfx->remote->ops->fail(rfx->remote, id, attempt, error, retryable, delay_ms, bp, out,
                                  err);
}

static int
r_release(struct store *st, int64_t id, int32_t attempt, struct jobd_error *err)
{
    (void)st;
    server_ready();
    return rfx->remote->ops->release(rfx->remote, id, attempt, err);
}

/* ---- the server ---- */

static int
server_port(void)
{
    int64_t deadline = clock_mono_now_us() + 60 * SEC;
    static const char mark[] = "listening on http://127.0.0.1:";
    while (clock_mono_now_us() < deadline) {
        FILE *f = fopen(rfx->log_file, "r");
        char line[1024];
        while (f != NULL && fgets(line, sizeof line, f)) {
            const char *p = strstr(line, mark);
            if (p != NULL) {
                fclose(f);
                return (int)strtol(p + strlen(mark), NULL, 10);
            }
        }
        if (f != NULL)
            fclose(f);
        int st;
        if (waitpid(rfx->server, &st, WNOHANG) == rfx->server)
            TEST_FAIL("jobd server exited at start (its log: %s)", rfx->log_file);
        usleep(2000); /* the server is up in ~0.1 s: a 20 ms poll cost ~10 ms a start */
    }
    TEST_FAIL("jobd server never said where it listens (its log: %s)", rfx->log_file);
}

static void
server_start(void)
{
    const char *bin = getenv("JOBD_BIN");
    if (bin == NULL || *bin == '\0')
        TEST_FAIL("JOBD_BIN is not set (ctest sets it; by hand: JOBD_BIN=build-asan/jobd)");
    char url[sizeof rfx->f->url];
    snprintf(url, sizeof url, "%s", rfx->f->url);
    char *argv[] = {(char *)bin,       "server", "--db",        url,   "--listen", "127.0.0.1:0",
                    "--reap-interval", "24h",    "--retention", "off", NULL};
    setenv("JOBD_TEST_CLOCK_FILE", rfx->clock_file, 1);
    /* No leak check at its exit (LeakSanitizer, in an ASan build): it took
     * ~0.1 s of CPU a server, a third of what one costs, and told nothing,
     * since its report went to a log nobody reads. What the server's exit
     * does tell, its status, remote_detach checks. */
    const char *asan = getenv("ASAN_OPTIONS");
    char *asan_was = asan != NULL ? strdup(asan) : NULL;
    char asan_server[1024];
    snprintf(asan_server, sizeof asan_server, "%s%sdetect_leaks=0", asan != NULL ? asan : "",
             asan != NULL && *asan != '\0' ? ":" : "");
    setenv("ASAN_OPTIONS", asan_server, 1);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, rfx->log_file, O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    int rc = posix_spawn(&rfx->server, bin, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    unsetenv("JOBD_TEST_CLOCK_FILE");
    if (asan_was != NULL)
        setenv("ASAN_OPTIONS", asan_was, 1);
    else
        unsetenv("ASAN_OPTIONS");
    free(asan_was);
    if (rc != 0)
        TEST_FAIL("cannot start %s: %s", bin, strerror(rc)); /* lint-allow: strerror: one thread */
    snprintf(rfx->base, sizeof rfx->base, "http://127.0.0.1:%d", server_port());
    struct jobd_error err = {0};
    ASSERT_OK(store_open(rfx->base, &rfx->remote, &err), &err);
}

void
remote_attach(struct fx *f)
{
    not_here_check();
    rfx = calloc(1, sizeof *rfx);
    ASSERT(rfx != NULL);
    rfx->f = f;
    rfx->clock_written_us = -1;
    rfx->attached_by = getpid();
    snprintf(rfx->clock_file, sizeof rfx->clock_file, "%s", test_path("server.clock"));
    snprintf(rfx->log_file, sizeof rfx->log_file, "%s", test_path("server.log"));
    rfx->own = f->st->ops;
    rfx->ops = *f->st->ops;
    rfx->ops.claim = r_claim;
    rfx->ops.heartbeat = r_heartbeat;
    rfx->ops.complete = r_complete;
    rfx->ops.complete_batch = r_complete_batch;
    rfx->ops.fail = r_fail;
    rfx->ops.fail_batch = NULL; /* store_fail_batch sends one store_fail per report, as remote */
    rfx->ops.release = r_release;
    f->st->ops = &rfx->ops;
}

int
db_complete_batch(struct fx *f, const struct completion *c, size_t n, int *outcome)
{
    if (rfx == NULL || rfx->f != f)
        return store_complete_batch(f->st, c, n, outcome, &f->err);
    return rfx->own->complete_batch(f->st, c, n, outcome, &f->err);
}

void
remote_detach(struct fx *f)
{
    if (rfx == NULL || rfx->f != f)
        return;
    f->st->ops = rfx->own;
    store_close(rfx->remote);
    sqlite3_close(rfx->sq);
    if (rfx->server != 0) {
        kill(rfx->server, SIGTERM);
        int st = 0;
        while (waitpid(rfx->server, &st, 0) < 0 && errno == EINTR)
            ;
        /* Asked to stop, it stops cleanly (its log: rfx->log_file). */
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            TEST_FAIL("jobd server did not exit 0 on SIGTERM (status %d; its log: %s)", st,
                      rfx->log_file);
    }
    free(rfx);
    rfx = NULL;
}
