/*
 * server.c — `jobd server`: parses flags, opens and migrates the store,
 * wires the API (store pool, group committer, long-poll thread, metrics,
 * tokens) and serves until SIGTERM/SIGINT, then stops accepting, answers
 * what is in flight and exits 0.
 *
 * With the API it runs the scheduling plane (cron materializer, reaper,
 * pruner) and, with --worker-config, a worker in the same process; the API
 * wakes that worker in memory after every committed enqueue.
 *
 * Signals are blocked in every thread and taken by sigwait() in the main
 * thread, so no handler runs in the middle of libmicrohttpd or libpq.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/auth.h"
#include "api/claimpresence.h"
#include "api/commit.h"
#include "api/countsd.h"
#include "api/cancelwait.h"
#include "api/events.h"
#include "api/jobwait.h"
#include "api/longpoll.h"
#include "api/metrics.h"
#include "api/storepool.h"
#include "api/xsite.h"
#include "cli/cli.h"
#include "cli/limits.h"
#include "cli/server_opts.h"
#include "cli/server_reload.h"
#include "cli/service.h"
#include "sched/plane.h"
#include "store/store.h"
#include "util/log.h"
#include "worker/config.h"
#include "worker/worker.h"

static const char usage[] =
    "usage: jobd server [--config FILE] [--db URL] [--listen HOST:PORT]\n"
    "                   [--worker-config FILE] [--tokens FILE] [--reap-interval DUR]\n"
    "                   [--backoff-base DUR] [--backoff-cap DUR] [--max-lease DUR]\n"
    "                   [--retention DUR|off] [--retention-succeeded DUR|off]\n"
    "                   [--retention-dead DUR|off] [--retention-allow-short]\n"
    "                   [--insecure] [--allowed-hosts H,…] [--shutdown-grace DUR]\n"
    "                   [--threads N] [--max-connections N] [--max-connections-per-ip N]\n"
    "                   [--request-timeout DUR]\n"
    "                   [--db-connections N] [--notify-db URL]\n"
    "                   [--max-schedules N] [--max-workers N] [--max-bulk N]\n"
    "                   [--max-waits N]\n"
    "                   [--log-format text|json] [--log-level LEVEL]\n"
    "                   [--access-log notable|all|off] [--access-log-slow DUR]\n"
    "       jobd server --check-config [the same options]\n"
    "\n"
    "Runs the HTTP API (docs/API.md) on the store, migrating it first.\n"
    "\n"
    "  --config FILE        read settings from the [server] section of FILE: the keys\n"
    "                       are the long flags' names (listen = 127.0.0.1:8080).\n"
    "                       A flag beats $JOBD_<NAME> (JOBD_REAP_INTERVAL), which\n"
    "                       beats the file, which beats the default\n"
    "  --db URL             postgres://…, postgresql://…, sqlite:PATH or a path.\n"
    "                       Default: $JOBD_DB, else sqlite:jobd.db\n"
    "  --listen HOST:PORT   default 127.0.0.1:8080; port 0 picks a free port.\n"
    "                       A non-loopback HOST needs --tokens (or --insecure).\n"
    "  --tokens FILE        bearer tokens, one a line (at least 16 characters),\n"
    "                       each optionally followed by a role: admin (default),\n"
    "                       write, worker or read, and queues=a,b to claim and\n"
    "                       report only in those queues; lines starting with #\n"
    "                       are comments. Every route but /healthz then needs\n"
    "                       Authorization: Bearer TOKEN\n"
    "  --insecure           allow a non-loopback --listen without tokens\n"
    "  --allowed-hosts H,…  the names (host or host:port) this server answers to in\n"
    "                       the Host header, besides IP addresses and localhost,\n"
    "                       and the origins whose pages may call it (a proxy's\n"
    "                       public name). The Host is checked without tokens, or\n"
    "                       when this is given (docs/OPERATIONS.md, Security)"
    "  --worker-config FILE also run a worker in this process (docs/WORKER.md)\n"
    "  --reap-interval DUR  how often expired leases are reaped (default 30s)\n"
    "  --backoff-base DUR, --backoff-cap DUR\n"
    "                       the retry delays this server decides (a reaped lease,\n"
    "                       .../fail without retry_in_s): random(0, min(cap,\n"
    "                       base * 2^n)); default 5s and 15m\n"
    "  --max-lease DUR      the longest lease a claim or heartbeat over HTTP gets\n"
    "                       (longer lease_s is cut to it; default 1h)\n"
    "  --retention DUR|off  prune finished jobs older than this (default 7d; off keeps\n"
    "                       them for ever)\n"
    "  --retention-succeeded DUR|off, --retention-dead DUR|off\n"
    "                       the same for succeeded jobs, and for dead and cancelled\n"
    "                       ones (default: --retention)\n"
    "  --retention-allow-short\n"
    "                       allow a retention under 1h (refused otherwise)\n"
    "  --shutdown-grace DUR how long running work may finish on SIGTERM (30s)\n"
    "  --threads N          HTTP worker threads (default 4)\n"
    "  --max-connections N  client connections open at once (default: sized from\n"
    "                       the descriptor limit, which is raised to its hard\n"
    "                       limit at start, keeping some for the store and\n"
    "                       handlers; at most 4096)\n"
    "  --max-connections-per-ip N\n"
    "                       connections open at once from one address (default\n"
    "                       a quarter of --max-connections)\n"
    "  --request-timeout DUR  a request's headers and body must arrive within\n"
    "                       this, however slowly the bytes trickle (default 60s)\n"
    "  --db-connections N   database connections this server opens at most: the\n"
    "                       requests', the committer's, the long-poll's, the\n"
    "                       scheduling plane's, the waits' (?wait=), the\n"
    "                       cancel waits' (GET /v1/cancels), the event\n"
    "                       streams' (GET /v1/events) and --notify-db's\n"
    "                       (default threads + 6, + 1 with --notify-db; at\n"
    "                       least 7, 8 with it). A\n"
    "                       --worker-config worker has its own (db_connections)\n"
    "  --notify-db URL      a direct PostgreSQL URL for LISTEN when --db goes\n"
    "                       through PgBouncer in transaction mode (?pooler=transaction);\n"
    "                       without it long-polls poll every 500ms\n"
    "  --max-schedules N    schedules the store keeps at most: creating one more is\n"
    "                       409 limit_reached (default 10000)\n"
    "  --max-workers N      worker presence rows kept at most: a new worker's\n"
    "                       announce makes room by forgetting gone workers, and\n"
    "                       is 409 limit_reached when N are live (default 1000)\n"
    "  --max-bulk N         bulk actions (POST /v1/jobs/bulk) running at once; more\n"
    "                       are 429 with Retry-After (default 2)\n"
    "  --max-waits N        requests waiting for a result (?wait=) parked at once;\n"
    "                       more are 429 too_many_waits with Retry-After (default\n"
    "                       10000)\n"
    "  --log-format F       text (default) or json: one event a line on stderr\n"
    "  --log-level L        debug, info (default), warn or error\n"
    "  --access-log notable|all|off\n"
    "                       which HTTP requests get a log line: notable (default)\n"
    "                       leaves out successful reads, claims that found no job\n"
    "                       and heartbeats unless slow, and keeps errors, slow\n"
    "                       requests and changes; all (or on) every request\n"
    "  --access-log-slow DUR  a request this slow is notable (default 1s)\n"
    "  --check-config       check the options, --config FILE, --worker-config and the\n"
    "                       tokens file as a start would, without opening the store\n"
    "                       or listening; exit 0 if valid, else 1 naming FILE:LINE\n"
    "                       (the packaged unit's ExecReload runs it before SIGHUP)\n"
    "\n"
    "Logs on stderr, one event a line (docs/LOGGING.md). The first line says\n"
    "where it listens:\n"
    "  2026-12-03T12:35:01.123Z info server: listening on http://127.0.0.1:PORT\n"
    "SIGHUP reloads the tokens file and the log level (--config is read again)\n"
    "without dropping connections. A reload that fails is logged, shown in the\n"
    "systemd STATUS= and in the gauge jobd_config_reload_failed, and grants\n"
    "nothing: only tokens in force that the file still lists on a valid line stay,\n"
    "at the lower of their two roles. Under systemd (Type=notify) it reports READY,\n"
    "RELOADING and STOPPING and pings the watchdog.\n";

/* What the budget must cover besides the requests: committer, long-poll, plane,
 * the waits thread (api/jobwait.h), the cancel waits thread (api/cancelwait.h),
 * the events thread (api/events.h). */
#define SERVER_FIXED_CONNS 6
/* How long a request waits for a connection when all are in use, before a 503. */
#define SERVER_POOL_WAIT_MS 10000

/* Connections the budget needs whatever the requests: + 1 for --notify-db's. */
static long
fixed_conns(const struct server_opts *o)
{
    return SERVER_FIXED_CONNS + (o->notify_db != NULL ? 1 : 0);
}

/* --db-connections, or its default: threads + the fixed ones. */
static long
db_budget(const struct server_opts *o)
{
    return o->db_conns > 0 ? o->db_conns : (long)(o->threads ? o->threads : 4) + fixed_conns(o);
}

/* The store pool's share: all but the plane's connection, the waits
 * thread's, the cancel waits thread's, the events thread's and
 * --notify-db's (the long-poll's own); the committer's and the long-poll's
 * come from it. */
static long
pool_conns(const struct server_opts *o)
{
    return db_budget(o) - 4 - (o->notify_db != NULL ? 1 : 0);
}

/* The settings of o the request handlers read, defaults filled in. */
static void
ctx_settings(struct api_ctx *ctx, const struct server_opts *o)
{
    ctx->backoff_base_ms = o->backoff_base_ms; /* for .../fail, as the reaper's */
    ctx->backoff_cap_ms = o->backoff_cap_ms;
    ctx->max_lease_ms = o->max_lease_ms;
    ctx->max_schedules = o->max_schedules ? o->max_schedules : SERVER_DEFAULT_MAX_SCHEDULES;
    ctx->max_workers = o->max_workers ? o->max_workers : SERVER_DEFAULT_MAX_WORKERS;
    ctx->max_bulk = (int)(o->max_bulk ? o->max_bulk : SERVER_DEFAULT_MAX_BULK);
}

/* Splits "HOST:PORT" / "[V6]:PORT" / ":PORT"; host written to buf. */
static bool
split_listen(const char *s, char *host, size_t hostlen, int *port)
{
    const char *colon;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (close == NULL || close[1] != ':')
            return false;
        snprintf(host, hostlen, "%.*s", (int)(close - s - 1), s + 1);
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (colon == NULL)
            return false;
        snprintf(host, hostlen, "%.*s", (int)(colon - s), s);
    }
    if (host[0] == '\0')
        snprintf(host, hostlen, "127.0.0.1");
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || p < 0 || p > 65535)
        return false;
    *port = (int)p;
    return true;
}

static bool
is_loopback(const char *host)
{
    return strcmp(host, "localhost") == 0 || strncmp(host, "127.", 4) == 0 ||
           strcmp(host, "::1") == 0;
}

/* The running pieces, torn down in reverse order by stop_all. */
struct server_parts {
    struct store_pool *pool;
    struct api_metrics *metrics;
    struct committer *committer;
    struct longpoll *longpoll;
    struct jobwait *jobwait;         /* ?wait= */
    struct cancelwait *cancelwait;   /* GET /v1/cancels?wait= */
    struct events *events;           /* GET /v1/events */
    struct claim_presence *presence; /* claims' presence, remembered (claimpresence.h) */
    struct api_server *http;
    struct sched_plane *plane;
    struct countsd *counts; /* queue counts recounted in the background */
    struct worker *worker;
    struct worker_config wcfg;
    bool wcfg_loaded;
    struct wakeup wake;
    bool wake_ok;
    struct api_ctx ctx;          /* shared by the HTTP threads */
    struct server_reload reload; /* SIGHUP's state: the command line, old tables */
};

static void
stop_all(struct server_parts *p, int64_t grace_ms)
{
    if (p->worker)
        worker_request_stop(p->worker); /* no new claims from here on */
    api_server_quiesce(p->http);        /* no new connections */
    longpoll_stop(p->longpoll);         /* parked claims answered and resumed */
    jobwait_stop(p->jobwait);           /* parked waits answered with the job as it is */
    cancelwait_stop(p->cancelwait);     /* parked cancel waits answered */
    events_stop(p->events);             /* event streams end */
    int64_t http_grace = grace_ms >= 0 ? grace_ms : 30000;
    if (!api_server_drain(p->http, http_grace > INT32_MAX ? INT32_MAX : (int)http_grace))
        log_at(LOGL_WARN, "server", "requests still running after the shutdown grace; closing");
    /* An enqueue waiting for its group commit holds a suspended connection,
     * and libmicrohttpd must not be stopped with one: write what is queued
     * (every waiter is answered and resumed), then let those answers go. */
    committer_quiesce(p->committer);
    (void)api_server_drain(p->http, 2000);
    api_server_stop(p->http);   /* closes idle keep-alive connections */
    longpoll_free(p->longpoll); /* no HTTP thread can park a claim any more */
    jobwait_free(p->jobwait);   /* nor a wait */
    cancelwait_free(p->cancelwait);
    events_free(p->events);           /* its streams went with the connections */
    committer_stop(p->committer);     /* no request can reach it any more */
    worker_stop(p->worker, grace_ms); /* running jobs finish or are reported */
    sched_plane_stop(p->plane);
    countsd_stop(p->counts);
    if (p->wcfg_loaded)
        worker_config_fini(&p->wcfg);
    store_pool_free(p->pool);
    api_auth_free(p->ctx.auth);
    server_reload_fini(&p->reload);
    api_metrics_free(p->metrics);
    claim_presence_free(p->presence);
    if (p->wake_ok)
        wakeup_fini(&p->wake);
}

/* Opens and migrates the store once, so a bad URL fails before listening. */
static int
prepare_store(const char *url)
{
    struct jobd_error err = {0};
    if (store_url_kind(url) == STORE_URL_SERVER) {
        fprintf(stderr, "jobd server: --db must name a database, not an API server: %s\n", url);
        return CLI_USAGE;
    }
    struct store *st = NULL;
    int rc = store_open(url, &st, &err);
    if (rc == JOBD_OK)
        rc = store_migrate(st, &err);
    store_close(st);
    if (rc != JOBD_OK)
        return cli_error_what("server", "cannot open the store", rc, &err);
    return CLI_OK;
}

/* The plane's reaper reports here, for jobd_jobs_reaped_total. */
static void
count_reaped(void *metrics, int n)
{
    api_metrics_reaped(metrics, (uint64_t)n);
}

/* The embedded worker's events (see struct worker_events), for /metrics and
 * the waits for results; arg is the struct server_parts. */
static void
worker_started(void *arg, const struct job *j)
{
    api_metrics_claimed(((struct server_parts *)arg)->metrics, j);
}

static void
worker_ran(void *arg, const char *queue, double duration_s)
{
    api_metrics_duration(((struct server_parts *)arg)->metrics, queue, duration_s);
}

static void
worker_finished(void *arg, enum job_status status, uint64_t n)
{
    struct server_parts *p = arg;
    api_metrics_ended(p->metrics, status, n);
    if (job_status_terminal(status))
        jobwait_signal(p->jobwait); /* in-process: no need to wait for the store's signal */
}

static void
worker_fenced(void *arg, uint64_t n)
{
    api_metrics_fenced(((struct server_parts *)arg)->metrics, n);
}

/* Says which Host names are answered (api/xsite.h; docs/OPERATIONS.md, Security). */
static void
log_host_check(const struct server_opts *o, const struct api_xsite *x, bool tokens)
{
    if (api_xsite_checks_host(x, tokens))
        log_writef(LOGL_INFO, "server", NULL, 0,
                   "answering Host names: IP addresses, localhost%s%s", x->n > 0 ? ", " : "",
                   x->n > 0 ? o->allowed_hosts : "");
    else
        log_writef(LOGL_INFO, "server", NULL, 0,
                   "answering any Host name (tokens are configured; --allowed-hosts would "
                   "limit them)");
}

/* Starts the HTTP server on host:port and says where it listens. */
static int
start_http(const struct server_opts *o, const char *host, int port, const struct conn_limits *lim,
           struct server_parts *p)
{
    struct jobd_error err = {0};
    struct api_xsite xsite;
    int rc = api_xsite_parse(o->allowed_hosts, &xsite, &err); /* checked with the options */
    if (rc != JOBD_OK)
        return cli_error_what("server", "--allowed-hosts", rc, &err);
    struct api_server_config cfg = {.host = host,
                                    .port = port,
                                    .threads = o->threads,
                                    .access_log = log_access_mode(),
                                    .access_slow_ms = o->access_slow_ms,
                                    .max_connections = lim->max_connections,
                                    .max_connections_per_ip = lim->per_ip,
                                    .request_timeout_ms = o->request_timeout_ms,
                                    .xsite = &xsite};
    int bound = 0;
    if ((rc = api_server_start(&cfg, &p->ctx, &p->http, &bound, &err)) != JOBD_OK)
        return cli_error_what("server", "cannot listen", rc, &err);
    /* Scripts and tests read the URL from this line: keep its words. */
    log_writef(LOGL_INFO, "server", NULL, 0,
               strchr(host, ':') ? "listening on http://[%s]:%d" : "listening on http://%s:%d",
               host, bound);
    log_host_check(o, &xsite, api_auth_count(p->ctx.auth) > 0);
    return CLI_OK;
}

/* --tokens, and the path SIGHUP reads again. */
static int
load_tokens(const struct server_opts *o, struct server_parts *p)
{
    struct jobd_error err = {0};
    int rc;
    if (o->tokens == NULL)
        return CLI_OK;
    if ((rc = api_auth_load(o->tokens, &p->ctx.auth, &err)) != JOBD_OK)
        return cli_error_what("server", "--tokens", rc, &err);
    if (api_auth_warning(p->ctx.auth) != NULL)
        log_writef(LOGL_WARN, "server", NULL, 0, "%s", api_auth_warning(p->ctx.auth));
    if ((p->reload.tokens_path = strdup(o->tokens)) == NULL)
        return cli_error_what("server", "cannot start", JOBD_E_NOMEM, NULL);
    return CLI_OK;
}

/* The threads that answer requests later: the group committer, the
 * long-poll, the waits for results (?wait=). */
static int
start_request_threads(const struct server_opts *o, const struct jobd_clock *clock,
                      struct server_parts *p, struct jobd_error *err)
{
    int rc;
    if ((rc = store_pool_set_notify_url(p->pool, o->notify_db, err)) ||
        (rc = committer_start(p->pool, &p->wake, p->metrics, &p->committer, err)) ||
        (rc = longpoll_start(p->pool, &p->wake, p->metrics, &p->longpoll, err)))
        return rc;
    /* Their own connections: direct ones for LISTEN where the pool's goes through a pooler. */
    const char *listen_url = o->notify_db ? o->notify_db : cli_db_url(o->db);
    if ((rc = cancelwait_start(listen_url, &p->wake, &p->cancelwait, err)) ||
        (rc = events_start(listen_url, p->metrics, &p->events, err)))
        return rc;
    return jobwait_start(listen_url, clock, o->max_waits ? o->max_waits : JOBWAIT_DEFAULT_MAX,
                         p->metrics, &p->jobwait, err);
}

static int
start_all(const struct server_opts *o, const char *host, int port, struct server_parts *p)
{
    struct jobd_error err = {0};
    int rc;
    if ((rc = load_tokens(o, p)) != CLI_OK || (rc = prepare_store(cli_db_url(o->db))) != CLI_OK)
        return rc;
    p->wake_ok = wakeup_init(&p->wake) == 0;
    p->metrics = api_metrics_new();
    p->presence = claim_presence_new();
    if (!p->wake_ok || p->metrics == NULL || p->presence == NULL)
        return cli_error_what("server", "cannot start", JOBD_E_NOMEM, NULL);
    const char *clock_file;
    const struct jobd_clock *clock = clock_for_server(&clock_file);
    if (clock != NULL)
        log_at(LOGL_WARN, "server", "test clock: real time plus an offset",
               LF_STR("file", clock_file));
    if ((rc = store_pool_new(cli_db_url(o->db), clock, &p->pool, &err)))
        return cli_error_what("server", "cannot start", rc, &err);
    store_pool_limit(p->pool, (size_t)pool_conns(o), SERVER_POOL_WAIT_MS);
    if ((rc = start_request_threads(o, clock, p, &err)))
        return cli_error_what("server", "cannot start", rc, &err);
    struct api_auth *auth = p->ctx.auth; /* loaded first, kept across the assignment */
    p->ctx = (struct api_ctx){.pool = p->pool,
                              .auth = auth,
                              .metrics = p->metrics,
                              .committer = p->committer,
                              .longpoll = p->longpoll,
                              .jobwait = p->jobwait,
                              .cancelwait = p->cancelwait,
                              .events = p->events,
                              .presence = p->presence,
                              .wake = &p->wake,
                              .defer_enqueue = true,
                              .clock = clock};
    ctx_settings(&p->ctx, o);
    p->reload.auth = &p->ctx.auth;
    p->reload.metrics = p->metrics;
    struct conn_limits lim = {.max_connections = o->max_connections,
                              .per_ip = o->max_connections_per_ip};
    limits_size(&lim);
    log_writef(LOGL_INFO, "server", NULL, 0,
               "descriptor limit %llu: up to %u connections, "
               "%u from one address",
               (unsigned long long)lim.nofile, lim.max_connections, lim.per_ip);
    if ((rc = start_http(o, host, port, &lim, p)) != CLI_OK)
        return rc;
    log_writef(LOGL_INFO, "server", NULL, 0,
               "at most %ld database connections (%ld for requests, the committer and the "
               "long-poll; 1 scheduling plane; 1 for waits; 1 for cancel waits%s)",
               db_budget(o), pool_conns(o), o->notify_db ? "; 1 LISTEN on --notify-db" : "");
    struct sched_plane_config pc = {.db_url = cli_db_url(o->db),
                                    .reap_interval_ms = o->reap_ms,
                                    .retention_ms = o->retention_ms,
                                    .retention_succeeded_ms = o->retention_succeeded_ms,
                                    .retention_dead_ms = o->retention_dead_ms,
                                    .wake = &p->wake,
                                    .clock = clock,
                                    .on_reaped = count_reaped,
                                    .on_reaped_arg = p->metrics};
    pc.backoff_base_ms = o->backoff_base_ms;
    pc.backoff_cap_ms = o->backoff_cap_ms;
    if ((rc = sched_plane_start(&pc, &p->plane, &err)) != JOBD_OK)
        return cli_error_what("server", "cannot start the scheduling plane", rc, &err);
    if ((rc = countsd_start(p->pool, &p->counts, &err)) != JOBD_OK)
        return cli_error_what("server", "cannot start", rc, &err);
    if (p->wcfg_loaded) {
        p->wcfg.events = (struct worker_events){.arg = p,
                                                .started = worker_started,
                                                .ran = worker_ran,
                                                .finished = worker_finished,
                                                .fenced = worker_fenced};
        if ((rc = worker_start(&p->wcfg, cli_db_url(o->db), &p->wake, &p->worker, &err)))
            return cli_error_what("server", "cannot start the embedded worker", rc, &err);
        log_at(LOGL_INFO, "server", "embedded worker running",
               LF_STR("worker", worker_id(p->worker)), LF_INT("handlers", p->wcfg.n_handlers));
    }
    return CLI_OK;
}

/* Checks what the options cannot check alone; loads --worker-config. */
static int
check_opts(const struct server_opts *o, char *host, size_t hostlen, int *port,
           struct server_parts *parts)
{
    if (o->request_timeout_ms != 0 && o->request_timeout_ms < 1000) {
        fprintf(stderr, "jobd server: --request-timeout must be at least 1s\n");
        return CLI_USAGE;
    }
    if (!split_listen(o->listen, host, hostlen, port)) {
        fprintf(stderr, "jobd server: --listen must be HOST:PORT, not '%s'\n", o->listen);
        return CLI_USAGE;
    }
    if (!is_loopback(host) && o->tokens == NULL && !o->insecure) {
        fprintf(stderr,
                "jobd server: refusing to listen on non-loopback %s without "
                "--tokens (add --insecure to do it anyway)\n",
                host);
        return CLI_USAGE;
    }
    if (db_budget(o) < fixed_conns(o) + 1) {
        fprintf(stderr,
                "jobd server: --db-connections must be at least %ld: one for the "
                "committer, the long-poll, the scheduling plane, the waits, the cancel waits, the "
                "event streams%s, "
                "and one for "
                "requests\n",
                fixed_conns(o) + 1, o->notify_db != NULL ? ", --notify-db" : "");
        return CLI_USAGE;
    }
    if (o->worker_config == NULL)
        return CLI_OK;
    struct jobd_error err = {0};
    worker_config_init(&parts->wcfg);
    parts->wcfg_loaded = true;
    int rc = worker_config_load(&parts->wcfg, o->worker_config, &err);
    if (rc == JOBD_OK)
        rc = worker_config_check(&parts->wcfg, &err);
    if (rc != JOBD_OK) {
        fprintf(stderr, "jobd server: --worker-config %s: %s\n", o->worker_config, err.msg);
        worker_config_fini(&parts->wcfg);
        parts->wcfg_loaded = false;
        return CLI_USAGE;
    }
    return CLI_OK;
}

/*
 * --check-config: everything start-up checks without opening the store or
 * listening (the options, the listen address, --worker-config, the tokens
 * file), so ExecReload can refuse a reload before the signal is sent
 * (docs/OPERATIONS.md, Reloading). 0 valid, 1 not (the reason on stderr,
 * naming FILE:LINE where there is one).
 */
static int
check_config(int argc, char **argv)
{
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (args == NULL)
        return cli_error_what("server", "--check-config", JOBD_E_NOMEM, NULL);
    int n = 0;
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--check-config") != 0)
            args[n++] = argv[i];
    struct server_opts o;
    struct server_parts parts = {0};
    struct api_auth *auth = NULL;
    struct jobd_error err = {0};
    char host[128];
    int port = 0;
    int rc = server_opts_load(n, args, usage, &o);
    if (rc < 0) { /* --help */
        rc = CLI_OK;
        goto out;
    }
    if (rc == CLI_OK)
        rc = check_opts(&o, host, sizeof host, &port, &parts);
    if (rc == CLI_OK && store_url_kind(cli_db_url(o.db)) == STORE_URL_SERVER) {
        fprintf(stderr, "jobd server: --db must name a database, not an API server: %s\n",
                cli_db_url(o.db));
        rc = CLI_USAGE;
    }
    if (rc == CLI_OK && o.tokens != NULL && api_auth_load(o.tokens, &auth, &err) != JOBD_OK) {
        fprintf(stderr, "jobd server: --tokens: %s\n", err.msg);
        rc = CLI_FAILED;
    }
    if (rc == CLI_OK && api_auth_warning(auth) != NULL)
        fprintf(stderr, "jobd server: warning: %s\n", api_auth_warning(auth));
    if (rc == CLI_OK)
        printf("jobd server: configuration OK (%s%s; tokens: %s, %zu)\n",
               o.config != NULL ? "--config " : "no --config", o.config != NULL ? o.config : "",
               o.tokens != NULL ? o.tokens : "none", api_auth_count(auth));
    else
        fprintf(stderr, "jobd server: the configuration is not valid\n");
    if (parts.wcfg_loaded)
        worker_config_fini(&parts.wcfg);
    api_auth_free(auth);
    rc = rc == CLI_OK ? CLI_OK : CLI_FAILED;
out:
    server_opts_fini(&o);
    free(args);
    return rc;
}

int
cmd_server(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--check-config") == 0)
            return check_config(argc, argv);
    struct server_opts o;
    int rc = server_opts_load(argc, argv, usage, &o);
    if (rc != CLI_OK) {
        server_opts_fini(&o);
        return rc < 0 ? CLI_OK : rc;
    }
    rc = cli_log_setup("server", o.log_format, o.log_level, o.access_log);
    char host[128];
    int port = 0;
    struct server_parts parts = {.reload = {.argc = argc, .argv = argv}};
    if (o.log_format != NULL)
        (void)log_parse_format(o.log_format, &parts.reload.log_format); /* checked above */
    if (rc == CLI_OK)
        rc = check_opts(&o, host, sizeof host, &port, &parts);
    if (rc != CLI_OK) {
        server_opts_fini(&o);
        return rc;
    }
    /* Block the signals before any thread starts, so every thread inherits it. */
    sigset_t set;
    service_block_signals(&set);
    signal(SIGPIPE, SIG_IGN);

    rc = start_all(&o, host, port, &parts);
    if (rc == CLI_OK) {
        int sig = service_run(&set, "serving", server_reload, &parts.reload);
        log_at(LOGL_INFO, "server", "shutting down",
               LF_STR("signal", sig == SIGINT ? "SIGINT" : "SIGTERM"));
    }
    stop_all(&parts, o.grace_ms);
    server_opts_fini(&o);
    return rc;
}
