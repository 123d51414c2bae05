/*
 * worker.c — `jobd worker`: runs the worker plane in this process.
 *
 * Thin: reads the INI file, applies the flags on top, migrates (unless it
 * talks to an API server with --server), starts the
 * worker (src/worker/worker.c) and waits for SIGTERM/SIGINT in service_run
 * (signals are blocked in every thread, so none of them is interrupted;
 * under systemd it reports READY/STOPPING and pings the watchdog),
 * then stops it gracefully and exits 0.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/service.h"
#include "core/err.h"
#include "store/store.h"
#include "util/errtext.h"
#include "util/log.h"
#include "worker/config.h"
#include "worker/exec.h"
#include "worker/privs.h"
#include "worker/worker.h"

static const char usage[] =
    "usage: jobd worker [--db URL | --server URL] --config FILE [--concurrency N]\n"
    "                   [--queues a,b] [--id ID]\n"
    "                   [--shutdown-grace DUR] [--poll-interval DUR]\n"
    "                   [--db-connections N] [--notify-db URL]\n"
    "                   [--log-format text|json] [--log-level LEVEL]\n"
    "\n"
    "Runs handlers for the job types named in the config file's [handler \"TYPE\"]\n"
    "sections: claims due jobs in batches, heartbeats their leases, reports the\n"
    "outcomes. An exec handler with `user = NAME` runs as that user (the worker\n"
    "must be root or hold CAP_SETUID and CAP_SETGID; no handler inherits them).\n"
    "On SIGTERM or SIGINT it stops claiming, lets running jobs finish for up to\n"
    "shutdown_grace, stops and reports the rest, and exits 0.\n"
    "\n"
    "  --db URL              postgres://… / postgresql://… or sqlite:PATH (default:\n"
    "                        $JOBD_DB, else --server $JOBD_SERVER, else\n"
    "                        sqlite:jobd.db)\n"
    "  --server URL          talk to a jobd API server (http://HOST:PORT) instead of\n"
    "                        the database: claims, heartbeats and reports go over\n"
    "                        HTTP (token from $JOBD_TOKEN); polls every 250ms.\n"
    "                        Default: $JOBD_SERVER when neither --db nor $JOBD_DB\n"
    "                        is given\n"
    "  --config FILE         the worker's INI file (see examples/worker.ini)\n"
    "  --concurrency N       jobs run at once (overrides [worker] concurrency)\n"
    "  --queues a,b          claim only from these queues (default: all)\n"
    "  --id ID               the worker id recorded on claimed jobs (default HOST:PID)\n"
    "  --shutdown-grace DUR  how long running jobs may finish on SIGTERM (default 30s)\n"
    "  --poll-interval DUR   safety-net poll (default 5s on PostgreSQL; on SQLite 1s\n"
    "                        while inotify watches the WAL, else 100ms; 1s on\n"
    "                        PostgreSQL without a listener)\n"
    "  --db-connections N    PostgreSQL connections this worker opens, 1 to 3\n"
    "                        (default 3): the loop's; a listener for NOTIFY; a\n"
    "                        flusher for completions. 1 polls instead of listening\n"
    "  --notify-db URL       a direct PostgreSQL URL for LISTEN, when --db goes\n"
    "                        through PgBouncer in transaction mode (?pooler=transaction);\n"
    "                        without it such a worker polls\n"
    "  --log-format F        text (default) or json: one event a line on stderr\n"
    "  --log-level L         debug, info (default), warn or error\n"
    "\n"
    "Exit status: 0 stopped cleanly, 1 failed, 2 usage error, 3 store unreachable.\n";

struct flag {
    const char *name;
    const char *key; /* [worker] key it sets, or NULL */
    const char **value;
};

static int
usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "jobd worker: %s%s; see 'jobd worker --help'\n", what, arg);
    return CLI_USAGE;
}

#define MAX_FLAGS 16

/* Reads argv into flags; -1 = go on, else the exit status (help, usage error). */
static int
parse_flags(int argc, char **argv, struct flag *flags, size_t nflags)
{
    struct cli_optdef defs[MAX_FLAGS + 1] = {{NULL, 0, false}};
    for (size_t f = 0; f < nflags && f < MAX_FLAGS; f++)
        defs[f] = (struct cli_optdef){flags[f].name, 0, true};
    struct cli_args a;
    cli_args_init(&a, "worker", argc, argv, 1);
    int k;
    const char *v;
    for (enum cli_arg t; (t = cli_args_next(&a, defs, &k, &v)) != CLI_ARG_END;) {
        if (t == CLI_ARG_HELP) {
            fputs(usage, stdout);
            return CLI_OK;
        }
        if (t == CLI_ARG_BAD)
            return CLI_USAGE;
        if (t == CLI_ARG_POS)
            return usage_error("unexpected argument ", v);
        *flags[k].value = v;
    }
    return -1;
}

/* The file, then the flags that override its [worker] keys, then the checks. */
static int
load_config(struct worker_config *cfg, const char *path, const struct flag *flags, size_t nflags,
            struct jobd_error *err)
{
    int rc = worker_config_load(cfg, path, err);
    for (size_t f = 0; rc == JOBD_OK && f < nflags; f++)
        if (flags[f].key != NULL && *flags[f].value != NULL) {
            rc = worker_config_set(cfg, flags[f].key, *flags[f].value, err);
            if (rc != JOBD_OK) {
                char msg[sizeof err->msg];
                snprintf(msg, sizeof msg, "%s", err->msg);
                jobd_error_set(err, rc, flags[f].key, "%s: %s", flags[f].name, msg);
            }
        }
    if (rc == JOBD_OK)
        rc = worker_config_check(cfg, err);
    return rc;
}

/* --server, else $JOBD_SERVER when neither --db nor $JOBD_DB names a
 * database (the packaged unit's default: the local API server). */
static const char *
default_server(const char *db, const char *server)
{
    const char *env_db = getenv("JOBD_DB"), *env_server = getenv("JOBD_SERVER");
    if (server != NULL || db != NULL || (env_db != NULL && env_db[0] != '\0'))
        return server;
    return env_server != NULL && env_server[0] != '\0' ? env_server : NULL;
}

/* Keeps CAP_SETUID/CAP_SETGID only if a handler runs as another user
 * (src/worker/privs.h), before any thread starts. */
static void
limit_privileges(const struct worker_config *cfg)
{
    bool setid = false;
    for (size_t i = 0; i < cfg->n_handlers; i++)
        setid = setid || exec_user_switches(&cfg->handlers[i]);
    if (privs_limit(setid) != 0)
        log_at(LOGL_WARN, "worker", "cannot drop capabilities", LF_STR("error", errno_text(errno)));
}

/* Runs the worker until SIGTERM or SIGINT. */
static int
run_worker(const struct worker_config *cfg, const char *url)
{
    sigset_t stop_sigs;
    service_block_signals(&stop_sigs);
    signal(SIGPIPE, SIG_IGN);
    struct jobd_error err = {0};
    struct worker *w = NULL;
    int rc = worker_start(cfg, url, NULL, &w, &err);
    if (rc != JOBD_OK)
        return cli_error_what("worker", "cannot start the worker", rc, &err);
    log_at(LOGL_INFO, "worker", "running", LF_STR("worker", worker_id(w)),
           LF_INT("handlers", cfg->n_handlers), LF_INT("concurrency", cfg->concurrency),
           LF_STR("store", worker_store_label(w)));
    int sig = service_run(&stop_sigs, "running", NULL, NULL);
    log_at(LOGL_INFO, "worker", "stopping", LF_STR("worker", worker_id(w)),
           LF_STR("signal", sig == SIGINT ? "SIGINT" : "SIGTERM"));
    worker_stop(w, -1);
    log_at(LOGL_INFO, "worker", "stopped");
    return CLI_OK;
}

int
cmd_worker(int argc, char **argv)
{
    const char *db = NULL, *server = NULL, *config = NULL, *concurrency = NULL, *queues = NULL;
    const char *id = NULL, *grace = NULL, *poll = NULL, *log_format = NULL, *log_level = NULL;
    const char *conns = NULL, *notify = NULL;
    struct flag flags[] = {
        {"--db", NULL, &db},
        {"--server", NULL, &server},
        {"--config", NULL, &config},
        {"--concurrency", "concurrency", &concurrency},
        {"--queues", "queues", &queues},
        {"--id", "id", &id},
        {"--shutdown-grace", "shutdown_grace", &grace},
        {"--poll-interval", "poll_interval", &poll},
        {"--db-connections", "db_connections", &conns},
        {"--notify-db", "notify_db", &notify},
        {"--log-format", NULL, &log_format},
        {"--log-level", NULL, &log_level},
    };
    const size_t nflags = sizeof flags / sizeof flags[0];
    int done = parse_flags(argc, argv, flags, nflags);
    if (done >= 0)
        return done;
    if (server != NULL && db != NULL)
        return usage_error("give --db or --server, not both", "");
    char safe[512]; /* a URL's password never reaches a message */
    server = default_server(db, server);
    if (server != NULL && store_url_kind(server) != STORE_URL_SERVER)
        return usage_error("--server must be an http:// or https:// URL: ",
                           store_url_redact(server, safe, sizeof safe));
    if (db != NULL && store_url_kind(db) != STORE_URL_DATABASE)
        return usage_error("--db must be postgres://…, postgresql://…, sqlite:PATH or a "
                           "path (--server for an API server): ",
                           store_url_redact(db, safe, sizeof safe));
    if (config == NULL)
        return usage_error("--config FILE is required", "");
    if (cli_log_setup("worker", log_format, log_level, NULL) != CLI_OK)
        return CLI_USAGE;

    struct jobd_error err = {0};
    struct worker_config cfg;
    worker_config_init(&cfg);
    int rc = load_config(&cfg, config, flags, nflags, &err);
    if (rc != JOBD_OK) {
        worker_config_fini(&cfg);
        fprintf(stderr, "jobd worker: %s\n", err.msg);
        return CLI_USAGE;
    }
    /* With --server the API server owns (and migrates) the store. */
    const char *url = server != NULL ? server : cli_db_url(db);
    struct store *st = NULL;
    if (server == NULL) {
        rc = store_open(url, &st, &err);
        if (rc == JOBD_OK)
            rc = store_migrate(st, &err);
        store_close(st);
    }
    if (rc != JOBD_OK) {
        worker_config_fini(&cfg);
        return cli_error_what("worker", "cannot prepare the store", rc, &err);
    }
    limit_privileges(&cfg);
    rc = run_worker(&cfg, url);
    worker_config_fini(&cfg);
    return rc;
}
