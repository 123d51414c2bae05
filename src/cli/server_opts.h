/*
 * server_opts.h — where `jobd server` takes its settings from, in order of
 * precedence: a flag, then JOBD_<NAME> in the environment, then the
 * [server] section of --config FILE, then the default. Every setting has one
 * name, the long flag's: `--reap-interval`, `reap-interval = 30s` in the
 * file, JOBD_REAP_INTERVAL in the environment. A bad value or an unknown key
 * is a usage error that names where it came from (FILE:LINE, $JOBD_X or
 * --x).
 */
#ifndef JOBD_CLI_SERVER_OPTS_H
#define JOBD_CLI_SERVER_OPTS_H

#include <stdbool.h>
#include <stdint.h>

/* What clients may make the store keep (docs/OPERATIONS.md, Security). */
#define SERVER_DEFAULT_MAX_SCHEDULES 10000
#define SERVER_DEFAULT_MAX_WORKERS 1000
/* Bulk actions running at once (each a thread and a stream of batches). */
#define SERVER_DEFAULT_MAX_BULK 2

struct server_opts {
    char *config; /* --config FILE or NULL */
    char *db;     /* NULL: the built-in default of cli_db_url */
    char *listen;
    char *worker_config;
    char *tokens;
    char *log_level; /* NULL: the logger's default (checked, as the two below) */
    char *log_format;
    char *access_log;    /* "notable", "all" or "off" (or "on": "all") */
    char *notify_db;     /* a direct PostgreSQL URL for LISTEN, or NULL */
    char *allowed_hosts; /* names the server answers to (api/xsite.h), or NULL */
    int64_t reap_ms, retention_ms, grace_ms; /* 0 / 0 / -1: the defaults */
    /* the retry delays the server decides (reaped leases, .../fail without
     * retry_in_s); 0 = the defaults, 5 s and 15 m */
    int64_t backoff_base_ms, backoff_cap_ms;
    /* the longest lease a claim over HTTP gets; 0 = the default (1 h) */
    int64_t max_lease_ms;
    /* per outcome (succeeded; dead and cancelled): 0 = --retention; -1 (and
     * retention_ms -1) = off, kept for ever */
    int64_t retention_succeeded_ms, retention_dead_ms;
    bool insecure;
    bool retention_allow_short; /* a retention under 1 h is allowed (tests, demos) */
    unsigned threads;           /* 0: the API's default */
    unsigned max_connections, max_connections_per_ip; /* 0: sized from the fd limit */
    int64_t request_timeout_ms;                       /* 0: the API's default */
    int64_t access_slow_ms; /* a request this slow is notable; 0: the API's default (1 s) */
    long db_conns;          /* 0: the default (server.c: db_budget) */
    unsigned max_schedules; /* 0: SERVER_DEFAULT_MAX_SCHEDULES */
    unsigned max_workers;   /* 0: SERVER_DEFAULT_MAX_WORKERS */
    unsigned max_bulk;      /* 0: SERVER_DEFAULT_MAX_BULK */
    unsigned max_waits;     /* 0: JOBWAIT_DEFAULT_MAX (api/jobwait.h) */
};

/*
 * Fills *o (every string owned by o; server_opts_fini frees them) from
 * argv (argv[0] is "server"), the environment and the config file. Returns
 * CLI_OK, CLI_USAGE after printing the reason on stderr, or -1 after
 * printing the usage on stdout for --help.
 */
int server_opts_load(int argc, char **argv, const char *usage, struct server_opts *o);
void server_opts_fini(struct server_opts *o);

#endif
