/*
 * config.h — the worker's configuration: the INI file of docs/WORKER.md,
 * "Configuration".
 *
 *   [worker]            concurrency, queues, lease, heartbeat, backoff_base,
 *                       backoff_cap, shutdown_grace, and (jobd's additions)
 *                       id, poll_interval, prefetch, db_connections, notify_db
 *   [handler "TYPE"]    exec = COMMAND LINE  or  http = URL (a key of a row of
 *                       runner_kinds, runner.h);  timeout = DUR;  env = NAME,NAME;
 *                       user = NAME (exec: run as that user, docs/WORKER.md)
 *
 * The same struct also carries C handlers registered through libjobd
 * (include/jobd.h), so the worker loop sees one list of handlers whatever
 * their kind. Parsing is on inih; every error names the file, the line and
 * the key. A loaded config owns all its strings (worker_config_fini).
 */
#ifndef JOBD_WORKER_CONFIG_H
#define JOBD_WORKER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/job.h"
#include "jobd.h"

/* A handler's kind: the index of its row in runner_kinds (runner.h). */
enum handler_kind {
    HANDLER_NONE = 0, /* not set yet (a section without exec= or http=) */
    HANDLER_EXEC = 1,
    HANDLER_HTTP = 2,
    HANDLER_C = 3,
    HANDLER_KIND_COUNT /* arrays indexed by kind have this many entries */
};

struct jobd_run;
/* The C handler signature (the same as jobd_handler_fn in include/jobd.h). */
typedef int (*worker_c_fn)(struct jobd_run *run, void *ctx);

struct handler_conf {
    char *type; /* job type it handles */
    enum handler_kind kind;
    char **argv;        /* HANDLER_EXEC: NULL-terminated, argv[0] the program */
    char **env;         /* HANDLER_EXEC: `env =` names passed through to the
                                 child (NULL-terminated), or NULL */
    char *origin;       /* "FILE:LINE" of the key that set the kind, for messages;
                                 NULL for handlers registered in code */
    char *url;          /* HANDLER_HTTP */
    worker_c_fn fn;     /* HANDLER_C (borrowed) */
    void *ctx;          /* HANDLER_C (borrowed) */
    int64_t timeout_ms; /* 0 = none (the job's own timeout still applies) */
    /* HANDLER_EXEC `user = NAME`: the child runs as that user (exec_user.c),
     * resolved when the file is read; user NULL = the worker's own. */
    char *user;
    uid_t uid;
    gid_t gid;     /* the user's primary group */
    gid_t *groups; /* its supplementary groups (n_groups, owned) */
    size_t n_groups;
    char *home; /* its home directory: the child's HOME */
    /* HANDLER_EXEC `log_bytes =`: how much of the end of each attempt's stderr
     * is kept as its log (docs/WORKER.md, Attempt logs); handler_log_bytes
     * says what applies when the key is absent (log_bytes_set false). */
    int64_t log_bytes;
    bool log_bytes_set;
};

/* The default of log_bytes: 16 KiB. Its ceiling is ATTEMPT_LOG_MAX (1 MiB). */
#define HANDLER_LOG_BYTES_DEFAULT (16 * 1024)

/* The bytes of stderr kept per attempt of h: 0 = none (not an exec handler, or off). */
int64_t handler_log_bytes(const struct handler_conf *h);

/*
 * What a worker tells the program that embeds it as it goes (jobd server
 * feeds its /metrics with them). Called on the worker's loop thread; they
 * must be quick and must not call back into the worker. Any may be NULL;
 * arg is borrowed and must outlive the worker.
 */
struct worker_events {
    void *arg;
    /* A claimed job is being started (j as claimed: run_at, started_at, ...). */
    void (*started)(void *arg, const struct job *j);
    /* A run of a job in queue ended after duration_s, as the worker timed it. */
    void (*ran)(void *arg, const char *queue, double duration_s);
    /* The store took n reports that left jobs in status: JOB_SUCCEEDED,
     * JOB_PENDING (a retry), JOB_DEAD or JOB_CANCELLED. */
    void (*finished)(void *arg, enum job_status status, uint64_t n);
    /* n reports (heartbeats, completions, failures) were refused as stale. */
    void (*fenced)(void *arg, uint64_t n);
};

/* The most jobs an adaptive ("auto") prefetch queues beyond concurrency. */
#define WORKER_PREFETCH_AUTO_MAX 1000

#define WORKER_DB_CONNECTIONS_MIN 1
#define WORKER_DB_CONNECTIONS_MAX 3 /* loop, listener, flusher */

struct worker_config {
    int concurrency; /* >= 1; jobs run at once */
    int prefetch;    /* claimed jobs queued beyond concurrency (C handlers only);
                                 -1 = "auto": adaptive, up to WORKER_PREFETCH_AUTO_MAX
                                 (worker_claim.c: wk_prefetch_now) */
    char **queues;   /* n_queues names; NULL = every queue */
    size_t n_queues;
    int64_t lease_ms;
    int64_t heartbeat_ms; /* < lease_ms */
    int64_t backoff_base_ms;
    int64_t backoff_cap_ms;
    int64_t shutdown_grace_ms;
    int64_t poll_ms;    /* safety-net poll; 0 = the backend's default */
    char *worker_id;    /* NULL = "HOST:PID" chosen at start */
    int db_connections; /* PostgreSQL connections the worker may open, 1..3
                                 (WORKER_DB_CONNECTIONS_*): 1 the loop alone, polling;
                                 2 and a listener for NOTIFY; 3 (default) and a
                                 flusher writing completions */
    char *notify_db;    /* a direct PostgreSQL URL for LISTEN when the store URL
                                 goes through a transaction pooler; NULL = the store URL */
    struct handler_conf *handlers;
    size_t n_handlers;
    struct worker_events events; /* not from the file: set by an embedder */
};

/*
 * Fills cfg with the defaults of docs/WORKER.md, "Configuration" (no
 * handlers).
 */
void worker_config_init(struct worker_config *cfg);
/* Frees everything cfg owns and re-initialises it. NULL-safe. */
void worker_config_fini(struct worker_config *cfg);

/*
 * Reads the INI file at path into cfg (which must be initialised; values in
 * the file override what is there). Relative exec programs that contain a
 * '/' are resolved against the file's directory, so a config and its
 * handler scripts can move together. JOBD_E_IO if the file cannot be read;
 * JOBD_E_INVALID with err->msg "PATH:LINE: key 'K': what is wrong" (field =
 * the key) for anything bad. On error cfg may hold part of the file; fini it.
 */
JOBD_MUST_USE int worker_config_load(struct worker_config *cfg, const char *path,
                                     struct jobd_error *err);

/*
 * Sets one [worker] key from text, exactly as the file would (used by the
 * command line and by jobd_worker_set_option). JOBD_E_INVALID naming key.
 */
JOBD_MUST_USE int worker_config_set(struct worker_config *cfg, const char *key, const char *value,
                                    struct jobd_error *err);

/* Splits "a,b" into cfg->queues (replacing them), validating each name. */
JOBD_MUST_USE int worker_config_set_queues(struct worker_config *cfg, const char *list,
                                           struct jobd_error *err);

/*
 * Adds a C handler for type (replacing any handler of that type). fn and ctx
 * are borrowed and must outlive the worker. JOBD_E_INVALID for a bad type.
 */
JOBD_MUST_USE int worker_config_add_c(struct worker_config *cfg, const char *type, worker_c_fn fn,
                                      void *ctx, int64_t timeout_ms, struct jobd_error *err);

/* The handler for type, or NULL. Borrowed from cfg. */
const struct handler_conf *worker_config_handler(const struct worker_config *cfg, const char *type);

/*
 * Checks the whole config: at least one handler, heartbeat < lease, ...
 * JOBD_E_INVALID naming the key.
 */
/*
 * How many claimed jobs the worker may keep queued beyond concurrency: cfg's
 * prefetch (-1, auto: at most WORKER_PREFETCH_AUTO_MAX) when every handler
 * is a C handler (their thread pool has a queue), else 0 — exec and http
 * runs start as soon as they are claimed, so for them a claim never exceeds
 * the free slots.
 */
int worker_effective_prefetch(const struct worker_config *cfg);
JOBD_MUST_USE int worker_config_check(const struct worker_config *cfg, struct jobd_error *err);

/* Deep copy of src into dst (initialised or zero). JOBD_E_NOMEM. */
JOBD_MUST_USE int worker_config_copy(struct worker_config *dst, const struct worker_config *src);

#endif
