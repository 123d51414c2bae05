/*
 * server_opts.c — see server_opts.h. One table lists every setting with its
 * kind; the three sources all go through opt_set, so a value means the same
 * from a flag, the environment or the file, and the sources are applied in
 * reverse precedence (file, environment, flags) so the last one wins.
 */
#include "cli/server_opts.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/xsite.h"
#include "cli/cli.h"
#include "core/duration.h"
#include "core/job.h"
#include "store/store.h"
#include "util/errtext.h"
#include "util/log.h"

enum opt_kind { OPT_STR, OPT_DUR, OPT_BOOL, OPT_THREADS, OPT_KEEP, OPT_CONNS, OPT_COUNT };

struct opt {
    const char *name; /* the long flag without "--"; the file key */
    enum opt_kind kind;
    size_t off;                   /* of the field in struct server_opts */
    bool (*check)(const char *v); /* OPT_STR: NULL or the test a value must pass */
    const char *want;             /* what check wants, for the message */
};

static bool
is_level(const char *v)
{
    enum log_level l;
    return log_parse_level(v, &l);
}

static bool
is_format(const char *v)
{
    enum log_format f;
    return log_parse_format(v, &f);
}

static bool
is_pg_url(const char *v)
{
    return store_url_notifies(v);
}

static bool
is_host_list(const char *v)
{
    struct api_xsite x;
    return api_xsite_parse(v, &x, NULL) == JOBD_OK;
}

static bool
is_access(const char *v)
{
    enum log_access a;
    return log_parse_access(v, &a);
}

#define F(field) offsetof(struct server_opts, field)
static const struct opt opts[] = {
    {"db", OPT_STR, F(db), NULL, NULL},
    {"listen", OPT_STR, F(listen), NULL, NULL},
    {"worker-config", OPT_STR, F(worker_config), NULL, NULL},
    {"tokens", OPT_STR, F(tokens), NULL, NULL},
    {"allowed-hosts", OPT_STR, F(allowed_hosts), is_host_list,
     "a comma-separated list of host names or addresses, each with an optional :port"},
    {"insecure", OPT_BOOL, F(insecure), NULL, NULL},
    {"retention-allow-short", OPT_BOOL, F(retention_allow_short), NULL, NULL},
    {"reap-interval", OPT_DUR, F(reap_ms), NULL, NULL},
    {"backoff-base", OPT_DUR, F(backoff_base_ms), NULL, NULL},
    {"backoff-cap", OPT_DUR, F(backoff_cap_ms), NULL, NULL},
    {"max-lease", OPT_DUR, F(max_lease_ms), NULL, NULL},
    {"retention", OPT_KEEP, F(retention_ms), NULL, NULL},
    {"retention-succeeded", OPT_KEEP, F(retention_succeeded_ms), NULL, NULL},
    {"retention-dead", OPT_KEEP, F(retention_dead_ms), NULL, NULL},
    {"shutdown-grace", OPT_DUR, F(grace_ms), NULL, NULL},
    {"threads", OPT_THREADS, F(threads), NULL, NULL},
    {"max-connections", OPT_COUNT, F(max_connections), NULL, NULL},
    {"max-connections-per-ip", OPT_COUNT, F(max_connections_per_ip), NULL, NULL},
    {"request-timeout", OPT_DUR, F(request_timeout_ms), NULL, NULL},
    {"db-connections", OPT_CONNS, F(db_conns), NULL, NULL},
    {"max-schedules", OPT_COUNT, F(max_schedules), NULL, NULL},
    {"max-workers", OPT_COUNT, F(max_workers), NULL, NULL},
    {"max-bulk", OPT_COUNT, F(max_bulk), NULL, NULL},
    {"max-waits", OPT_COUNT, F(max_waits), NULL, NULL},
    {"notify-db", OPT_STR, F(notify_db), is_pg_url, "a postgres:// or postgresql:// URL"},
    {"log-level", OPT_STR, F(log_level), is_level, "debug, info, warn or error"},
    {"log-format", OPT_STR, F(log_format), is_format, "text or json"},
    {"access-log", OPT_STR, F(access_log), is_access, "notable, all or off"},
    {"access-log-slow", OPT_DUR, F(access_slow_ms), NULL, NULL},
};
#undef F
enum { N_OPTS = sizeof opts / sizeof opts[0] };

static const struct opt *
opt_find(const char *name)
{
    for (size_t i = 0; i < N_OPTS; i++)
        if (strcmp(opts[i].name, name) == 0)
            return &opts[i];
    return NULL;
}

static bool
parse_bool(const char *v, bool *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0)
            return (*out = true), true;
        if (strcasecmp(v, no[i]) == 0)
            return (*out = false), true;
    }
    return false;
}

/* Sets one setting from its text; where ("FILE:LINE: ", "$JOBD_X: ", "")
 * prefixes the error. Returns CLI_OK or CLI_USAGE after printing. */
static int
opt_set(struct server_opts *o, const struct opt *op, const char *v, const char *where)
{
    void *field = (char *)o + op->off;
    struct jobd_error err = {0};
    long n;
    switch (op->kind) {
    case OPT_STR: {
        if (op->check != NULL && !op->check(v)) {
            char safe[512]; /* a URL's password never reaches a message */
            fprintf(stderr, "jobd server: %s--%s must be %s, not '%s'\n", where, op->name, op->want,
                    store_url_redact(v, safe, sizeof safe));
            return CLI_USAGE;
        }
        char *copy = strdup(v);
        if (copy == NULL)
            return cli_error_what("server", "server options", JOBD_E_NOMEM, NULL);
        free(*(char **)field);
        *(char **)field = copy;
        return CLI_OK;
    }
    case OPT_DUR:
        if (duration_parse_ms(v, field, op->name, &err) == JOBD_OK)
            return CLI_OK;
        fprintf(stderr, "jobd server: %s--%s: %s\n", where, op->name, err.msg);
        return CLI_USAGE;
    case OPT_BOOL:
        if (parse_bool(v, field))
            return CLI_OK;
        fprintf(stderr, "jobd server: %s--%s must be true or false, not '%s'\n", where, op->name,
                v);
        return CLI_USAGE;
    case OPT_KEEP:
        /* A retention: "off" keeps for ever (-1). 0 would prune every finished
         * job at once; it was once read as "the default", so it is refused. */
        if (strcmp(v, "off") == 0) {
            *(int64_t *)field = -1;
            return CLI_OK;
        }
        if (duration_parse_ms(v, field, op->name, &err) == JOBD_OK && *(int64_t *)field > 0)
            return CLI_OK;
        fprintf(stderr,
                "jobd server: %s--%s must be a duration over 0 (7d, 12h) or off, not "
                "'%s'\n",
                where, op->name, v);
        return CLI_USAGE;
    case OPT_THREADS:
        if (cli_parse_int(v, 1, 256, &n)) {
            *(unsigned *)field = (unsigned)n;
            return CLI_OK;
        }
        fprintf(stderr, "jobd server: %s--%s must be 1 to 256, not '%s'\n", where, op->name, v);
        return CLI_USAGE;
    case OPT_CONNS:
        if (cli_parse_int(v, 1, 10000, &n)) {
            *(long *)field = n;
            return CLI_OK;
        }
        fprintf(stderr, "jobd server: %s--%s must be 1 to 10000, not '%s'\n", where, op->name, v);
        return CLI_USAGE;
    case OPT_COUNT:
        if (cli_parse_int(v, 1, 1000000, &n)) {
            *(unsigned *)field = (unsigned)n;
            return CLI_OK;
        }
        fprintf(stderr, "jobd server: %s--%s must be 1 to 1000000, not '%s'\n", where, op->name, v);
        return CLI_USAGE;
    }
    return CLI_USAGE;
}

/* ---- the config file ---- */

struct file_state {
    struct server_opts *o;
    const char *path;
    FILE *f;
    int line; /* of the line inih is handling */
    int rc;   /* the first error's exit status */
};

/* Counts lines for the messages: inih hands the handler no line number. */
static char *
counting_reader(char *str, int num, void *stream)
{
    struct file_state *fs = stream;
    char *s = fgets(str, num, fs->f);
    if (s != NULL && (strchr(s, '\n') != NULL || feof(fs->f)))
        fs->line++;
    return s;
}

static int
on_key(void *user, const char *section, const char *name, const char *value)
{
    struct file_state *fs = user;
    if (fs->rc != CLI_OK)
        return 1; /* report the first error only */
    char where[600];
    snprintf(where, sizeof where, "%s:%d: ", fs->path, fs->line);
    const struct opt *op = opt_find(name);
    if (strcmp(section, "server") != 0) {
        fprintf(stderr, "jobd server: %sunknown section [%s] (the file has one: [server])\n", where,
                section);
        fs->rc = CLI_USAGE;
    } else if (op == NULL) {
        fprintf(stderr, "jobd server: %sunknown key '%s' in [server]\n", where, name);
        fs->rc = CLI_USAGE;
    } else {
        fs->rc = opt_set(fs->o, op, value, where);
    }
    return 1;
}

static int
load_file(struct server_opts *o, const char *path)
{
    struct file_state fs = {.o = o, .path = path, .rc = CLI_OK};
    fs.f = fopen(path, "r");
    if (fs.f == NULL) {
        fprintf(stderr, "jobd server: --config: cannot read %s: %s\n", path, errno_text(errno));
        return CLI_USAGE;
    }
    int r = ini_parse_stream(counting_reader, &fs, on_key, &fs);
    fclose(fs.f);
    if (fs.rc == CLI_OK && r > 0) {
        fprintf(stderr, "jobd server: %s:%d: not a key = value line or [section]\n", path, r);
        return CLI_USAGE;
    }
    if (fs.rc == CLI_OK && r < 0)
        return cli_error_what("server", "--config", JOBD_E_NOMEM, NULL);
    return fs.rc;
}

/* ---- the environment ---- */

static int
load_env(struct server_opts *o)
{
    for (size_t i = 0; i < N_OPTS; i++) {
        char var[64] = "JOBD_";
        size_t k = 5;
        for (const char *c = opts[i].name; *c && k + 1 < sizeof var; c++)
            var[k++] = *c == '-' ? '_' : (char)toupper((unsigned char)*c);
        var[k] = '\0';
        const char *v = getenv(var);
        if (v == NULL || v[0] == '\0')
            continue;
        char where[80];
        snprintf(where, sizeof where, "$%s: ", var);
        int rc = opt_set(o, &opts[i], v, where);
        if (rc != CLI_OK)
            return rc;
    }
    return CLI_OK;
}

/* ---- the flags ---- */

/* Matches argv[*i] against every flag; *op and *v get the setting and its
 * text ("true" for --insecure). Returns CLI_OK or CLI_USAGE after printing. */
static int
match_flag(int argc, char **argv, int *i, const char *usage, const struct opt **op, const char **v)
{
    const char *a = argv[*i];
    if (strcmp(a, "--insecure") == 0 || strcmp(a, "--retention-allow-short") == 0) {
        *op = opt_find(a + 2);
        *v = "true";
        return CLI_OK;
    }
    for (size_t k = 0; k < N_OPTS; k++) {
        char flag[64];
        bool missing = false;
        if (opts[k].kind == OPT_BOOL)
            continue;
        snprintf(flag, sizeof flag, "--%s", opts[k].name);
        if ((*v = cli_opt(argc, argv, i, flag, &missing)) != NULL) {
            *op = &opts[k];
            return CLI_OK;
        }
        if (missing)
            return cli_usage_error("server", "missing value for", a);
    }
    return cli_usage_error("server", "unexpected argument", a);
}

/* The backoff pair, with the defaults filled in, as a worker's config checks it. */
static int
check_backoff(const struct server_opts *o)
{
    int64_t base = o->backoff_base_ms > 0 ? o->backoff_base_ms : JOB_DEFAULT_BACKOFF_BASE_MS;
    int64_t cap = o->backoff_cap_ms > 0 ? o->backoff_cap_ms : JOB_DEFAULT_BACKOFF_CAP_MS;
    if (cap >= base)
        return CLI_OK;
    fprintf(stderr,
            "jobd server: --backoff-cap (%lld ms) must not be shorter than "
            "--backoff-base (%lld ms)\n",
            (long long)cap, (long long)base);
    return CLI_USAGE;
}

/* The shortest retention taken without --retention-allow-short: a typo such as
 * "7m" for "7d" would otherwise prune every finished job within minutes. */
#define RETENTION_MIN_MS (3600LL * 1000)

static int
check_retention(const struct server_opts *o)
{
    static const char *const names[] = {"retention", "retention-succeeded", "retention-dead"};
    const int64_t v[] = {o->retention_ms, o->retention_succeeded_ms, o->retention_dead_ms};
    for (int i = 0; i < 3 && !o->retention_allow_short; i++)
        if (v[i] > 0 && v[i] < RETENTION_MIN_MS) {
            fprintf(stderr,
                    "jobd server: --%s is under 1h (%lld ms): finished jobs would be pruned "
                    "almost at once; add --retention-allow-short if that is meant\n",
                    names[i], (long long)v[i]);
            return CLI_USAGE;
        }
    return CLI_OK;
}

/* Finds --config (and --help) before anything is applied: the file comes first. */
static int
find_config(int argc, char **argv, const char *usage, struct server_opts *o)
{
    for (int i = 1; i < argc; i++) {
        bool missing = false;
        const char *v;
        if (cli_is_help(argv[i])) {
            fputs(usage, stdout);
            return -1;
        }
        if ((v = cli_opt(argc, argv, &i, "--config", &missing)) != NULL) {
            free(o->config);
            if ((o->config = strdup(v)) == NULL)
                return cli_error_what("server", "server options", JOBD_E_NOMEM, NULL);
        } else if (missing) {
            return cli_usage_error("server", "missing value for", argv[i]);
        }
    }
    return CLI_OK;
}

int
server_opts_load(int argc, char **argv, const char *usage, struct server_opts *o)
{
    memset(o, 0, sizeof *o);
    o->grace_ms = -1; /* unset: 30 s for requests, the worker config's for jobs */
    int rc = find_config(argc, argv, usage, o);
    if (rc == CLI_OK && o->config != NULL)
        rc = load_file(o, o->config);
    if (rc == CLI_OK)
        rc = load_env(o);
    for (int i = 1; rc == CLI_OK && i < argc; i++) {
        bool missing = false;
        if (cli_opt(argc, argv, &i, "--config", &missing) != NULL)
            continue;
        const struct opt *op = NULL;
        const char *v = NULL;
        rc = match_flag(argc, argv, &i, usage, &op, &v);
        if (rc == CLI_OK)
            rc = opt_set(o, op, v, "");
    }
    if (rc == CLI_OK && o->listen == NULL && (o->listen = strdup("127.0.0.1:8080")) == NULL)
        rc = cli_error_what("server", "server options", JOBD_E_NOMEM, NULL);
    if (rc == CLI_OK)
        rc = check_backoff(o);
    if (rc == CLI_OK)
        rc = check_retention(o);
    return rc;
}

void
server_opts_fini(struct server_opts *o)
{
    free(o->config);
    free(o->db);
    free(o->listen);
    free(o->worker_config);
    free(o->tokens);
    free(o->log_level);
    free(o->log_format);
    free(o->access_log);
    free(o->notify_db);
    free(o->allowed_hosts);
    memset(o, 0, sizeof *o);
}
