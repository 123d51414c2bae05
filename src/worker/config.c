/*
 * config.c — parsing the worker's INI file on inih (see config.h).
 *
 * inih reports only "the first bad line"; to name file, line and key in every
 * message we feed it through ini_parse_stream with a reader that counts the
 * lines it hands out, and keep the first error's text ourselves. Values are
 * validated as they arrive; cross-key rules (heartbeat < lease, a handler
 * needs exec= or http=) are checked at the end with the line of the key
 * that opened the handler section.
 */
#include "worker/config.h"

#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/duration.h"
#include "core/err.h"
#include "core/job.h"
#include "store/attemptlog.h"
#include "store/store.h"
#include "worker/exec.h"
#include "util/errtext.h"
#include "worker/runner.h"
#include "worker/words.h"

#define CONCURRENCY_MAX 10000

void
worker_config_init(struct worker_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->concurrency = 8;
    cfg->lease_ms = JOB_DEFAULT_LEASE_MS;
    cfg->heartbeat_ms = JOB_DEFAULT_HEARTBEAT_MS;
    cfg->backoff_base_ms = JOB_DEFAULT_BACKOFF_BASE_MS;
    cfg->backoff_cap_ms = JOB_DEFAULT_BACKOFF_CAP_MS;
    cfg->shutdown_grace_ms = 30000;
    cfg->prefetch = -1; /* auto (worker_effective_prefetch, wk_prefetch_now) */
    cfg->db_connections = WORKER_DB_CONNECTIONS_MAX;
}

static void
handler_fini(struct handler_conf *h)
{
    free(h->type);
    words_free(h->argv);
    words_free(h->env);
    free(h->url);
    free(h->origin);
    free(h->user);
    free(h->groups);
    free(h->home);
    memset(h, 0, sizeof *h);
}

static void
free_queues(struct worker_config *cfg)
{
    for (size_t i = 0; i < cfg->n_queues; i++)
        free(cfg->queues[i]);
    free(cfg->queues);
    cfg->queues = NULL;
    cfg->n_queues = 0;
}

void
worker_config_fini(struct worker_config *cfg)
{
    if (cfg == NULL)
        return;
    free_queues(cfg);
    for (size_t i = 0; i < cfg->n_handlers; i++)
        handler_fini(&cfg->handlers[i]);
    free(cfg->handlers);
    free(cfg->worker_id);
    free(cfg->notify_db);
    worker_config_init(cfg);
}

const struct handler_conf *
worker_config_handler(const struct worker_config *cfg, const char *type)
{
    for (size_t i = 0; i < cfg->n_handlers; i++)
        if (strcmp(cfg->handlers[i].type, type) == 0)
            return &cfg->handlers[i];
    return NULL;
}

int
worker_config_set_queues(struct worker_config *cfg, const char *list, struct jobd_error *err)
{
    free_queues(cfg);
    const char *p = list;
    while (*p != '\0') {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (*p == '\0')
            break;
        const char *end = p;
        while (*end != '\0' && *end != ',' && *end != ' ' && *end != '\t')
            end++;
        char *name = strndup(p, (size_t)(end - p));
        if (name == NULL)
            return jobd_error_set(err, JOBD_E_NOMEM, "queues", "out of memory");
        int rc = job_validate_queue(name, "queues", err);
        if (rc != JOBD_OK) {
            free(name);
            return rc;
        }
        char **v = realloc(cfg->queues, (cfg->n_queues + 1) * sizeof *v);
        if (v == NULL) {
            free(name);
            return jobd_error_set(err, JOBD_E_NOMEM, "queues", "out of memory");
        }
        cfg->queues = v;
        cfg->queues[cfg->n_queues++] = name;
        p = end;
    }
    if (cfg->n_queues == 0)
        return jobd_error_set(err, JOBD_E_INVALID, "queues", "queues names no queue");
    return JOBD_OK;
}

static int
parse_int(const char *key, const char *value, long lo, long hi, long *out, struct jobd_error *err)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno != 0 || end == value || *end != '\0' || v < lo || v > hi)
        return jobd_error_set(err, JOBD_E_INVALID, key,
                              "'%s' is not a whole number from %ld to %ld", value, lo, hi);
    *out = v;
    return JOBD_OK;
}

static int
parse_duration(const char *key, const char *value, bool allow_zero, int64_t *out,
               struct jobd_error *err)
{
    int rc = duration_parse_ms(value, out, key, err);
    if (rc != JOBD_OK)
        return rc;
    if (!allow_zero && *out <= 0)
        return jobd_error_set(err, JOBD_E_INVALID, key, "must be longer than 0");
    return JOBD_OK;
}

/* Only a PostgreSQL URL can LISTEN: anything else is a mistake to say now. */
static int
set_notify_db(struct worker_config *cfg, const char *value, struct jobd_error *err)
{
    if (!store_url_notifies(value))
        return jobd_error_set(err, JOBD_E_INVALID, "notify_db",
                              "notify_db must be a postgres:// or postgresql:// URL");
    char *v = strdup(value);
    if (v == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, "notify_db", "out of memory");
    free(cfg->notify_db);
    cfg->notify_db = v;
    return JOBD_OK;
}

int
worker_config_set(struct worker_config *cfg, const char *key, const char *value,
                  struct jobd_error *err)
{
    long n = 0;
    int rc;
    if (strcmp(key, "concurrency") == 0) {
        rc = parse_int(key, value, 1, CONCURRENCY_MAX, &n, err);
        if (rc == JOBD_OK)
            cfg->concurrency = (int)n;
        return rc;
    }
    if (strcmp(key, "prefetch") == 0) {
        if (strcmp(value, "auto") == 0) {
            cfg->prefetch = -1;
            return JOBD_OK;
        }
        rc = parse_int(key, value, 0, CONCURRENCY_MAX, &n, err);
        if (rc == JOBD_OK)
            cfg->prefetch = (int)n;
        else
            jobd_error_set(err, rc, key, "prefetch must be auto or a number from 0 to %d, got '%s'",
                           CONCURRENCY_MAX, value);
        return rc;
    }
    if (strcmp(key, "db_connections") == 0) {
        rc = parse_int(key, value, WORKER_DB_CONNECTIONS_MIN, WORKER_DB_CONNECTIONS_MAX, &n, err);
        if (rc == JOBD_OK)
            cfg->db_connections = (int)n;
        return rc;
    }
    if (strcmp(key, "notify_db") == 0)
        return set_notify_db(cfg, value, err);
    if (strcmp(key, "queues") == 0)
        return worker_config_set_queues(cfg, value, err);
    if (strcmp(key, "lease") == 0)
        return parse_duration(key, value, false, &cfg->lease_ms, err);
    if (strcmp(key, "heartbeat") == 0)
        return parse_duration(key, value, false, &cfg->heartbeat_ms, err);
    if (strcmp(key, "backoff_base") == 0)
        return parse_duration(key, value, true, &cfg->backoff_base_ms, err);
    if (strcmp(key, "backoff_cap") == 0)
        return parse_duration(key, value, true, &cfg->backoff_cap_ms, err);
    if (strcmp(key, "shutdown_grace") == 0)
        return parse_duration(key, value, true, &cfg->shutdown_grace_ms, err);
    if (strcmp(key, "poll_interval") == 0)
        return parse_duration(key, value, false, &cfg->poll_ms, err);
    if (strcmp(key, "id") == 0) {
        if (*value == '\0' || strlen(value) > JOB_WORKER_ID_MAX)
            return jobd_error_set(err, JOBD_E_INVALID, key, "id must have 1 to %d characters",
                                  JOB_WORKER_ID_MAX);
        char *id = strdup(value);
        if (id == NULL)
            return jobd_error_set(err, JOBD_E_NOMEM, key, "out of memory");
        free(cfg->worker_id);
        cfg->worker_id = id;
        return JOBD_OK;
    }
    return jobd_error_set(err, JOBD_E_INVALID, key, "unknown key in [worker]");
}

/* Adds an empty handler for type (or finds the one of that type). */
static struct handler_conf *
handler_slot(struct worker_config *cfg, const char *type, bool *existed)
{
    for (size_t i = 0; i < cfg->n_handlers; i++)
        if (strcmp(cfg->handlers[i].type, type) == 0) {
            *existed = true;
            return &cfg->handlers[i];
        }
    *existed = false;
    struct handler_conf *v = realloc(cfg->handlers, (cfg->n_handlers + 1) * sizeof *v);
    if (v == NULL)
        return NULL;
    cfg->handlers = v;
    struct handler_conf *h = &v[cfg->n_handlers];
    memset(h, 0, sizeof *h);
    h->type = strdup(type);
    if (h->type == NULL)
        return NULL;
    cfg->n_handlers++;
    return h;
}

int
worker_config_add_c(struct worker_config *cfg, const char *type, worker_c_fn fn, void *ctx,
                    int64_t timeout_ms, struct jobd_error *err)
{
    int rc = job_validate_type(type, "type", err);
    if (rc != JOBD_OK)
        return rc;
    if (fn == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "fn", "the handler function is NULL");
    bool existed = false;
    struct handler_conf *h = handler_slot(cfg, type, &existed);
    if (h == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, "type", "out of memory");
    words_free(h->argv);
    h->argv = NULL;
    free(h->url);
    h->url = NULL;
    h->kind = HANDLER_C;
    h->fn = fn;
    h->ctx = ctx;
    h->timeout_ms = timeout_ms;
    return JOBD_OK;
}

/* ---- the INI file ---- */

struct parse_state {
    struct worker_config *cfg;
    const char *path;
    char dir[PATH_MAX]; /* the file's directory, for relative programs */
    FILE *f;
    int line;               /* lines handed to inih so far = the current line */
    int err_line;           /* 0 until the first error */
    struct jobd_error err;  /* the first error */
    char section[160];      /* section of the previous key, to spot a new one */
    bool header_seen;       /* a [section] line came since the previous key */
    unsigned seen;          /* bit set of keys seen in this section */
    struct handler_conf *h; /* current [handler] */
    int *handler_lines;     /* line of each handler's first key */
};

static char *
counting_reader(char *str, int num, void *stream)
{
    struct parse_state *ps = stream;
    char *s = fgets(str, num, ps->f);
    if (s != NULL && s[strspn(s, " \t")] == '[')
        ps->header_seen = true; /* inih does not tell us; repeated headers matter */
    if (s != NULL && strchr(s, '\n') != NULL)
        ps->line++;
    else if (s != NULL && feof(ps->f))
        ps->line++;
    return s;
}

static int
fail(struct parse_state *ps, int code, const char *key, const char *detail)
{
    if (ps->err_line == 0) {
        ps->err_line = ps->line;
        jobd_error_set(&ps->err, code, key, "%s:%d: key '%s': %s", ps->path, ps->line, key, detail);
    }
    return 0;
}

/* A name a handler's `env =` may list: [A-Za-z_][A-Za-z0-9_]*. */
static bool
env_name_ok(const char *n)
{
    if (!(*n == '_' || (*n >= 'A' && *n <= 'Z') || (*n >= 'a' && *n <= 'z')))
        return false;
    for (n++; *n != '\0'; n++)
        if (!(*n == '_' || (*n >= 'A' && *n <= 'Z') || (*n >= 'a' && *n <= 'z') ||
              (*n >= '0' && *n <= '9')))
            return false;
    return true;
}

/* `env = NAME,NAME`: the worker's variables an exec handler also gets. */
static int
env_key(struct parse_state *ps, const char *value)
{
    struct handler_conf *h = ps->h;
    size_t n = 0;
    for (const char *p = value; *p != '\0'; p++)
        n += *p == ',';
    h->env = calloc(n + 2, sizeof *h->env);
    if (h->env == NULL)
        return fail(ps, JOBD_E_NOMEM, "env", "out of memory");
    size_t k = 0;
    for (const char *p = value; *p != '\0';) {
        p += strspn(p, " \t,");
        size_t len = strcspn(p, " \t,");
        if (len == 0)
            break;
        if ((h->env[k] = strndup(p, len)) == NULL)
            return fail(ps, JOBD_E_NOMEM, "env", "out of memory");
        if (!env_name_ok(h->env[k++])) {
            char msg[200];
            snprintf(msg, sizeof msg, "'%.*s' is not a variable name (letters, digits, _)",
                     (int)(len > 64 ? 64 : len), p);
            return fail(ps, JOBD_E_INVALID, "env", msg);
        }
        p += len;
    }
    if (k == 0)
        return fail(ps, JOBD_E_INVALID, "env", "names no variable (env = NAME,NAME)");
    return 1;
}

/* A key of the runner table (exec =, http =): sets the handler's kind. */
static int
kind_key(struct parse_state *ps, enum handler_kind kind, const char *name, const char *value)
{
    struct handler_conf *h = ps->h;
    struct jobd_error e = {0};
    if (h->kind == kind)
        return fail(ps, JOBD_E_INVALID, name, "given twice in one section");
    if (h->kind != HANDLER_NONE) {
        char keys[128], msg[200];
        runner_kind_keys(keys, sizeof keys, " and ");
        snprintf(msg, sizeof msg, "a handler takes exactly one of %s", keys);
        return fail(ps, JOBD_E_INVALID, name, msg);
    }
    if (runner_kinds[kind].configure(h, value, ps->dir, &e) != JOBD_OK)
        return fail(ps, e.code, name, e.msg[0] ? e.msg : "out of memory");
    char origin[PATH_MAX + 16];
    snprintf(origin, sizeof origin, "%s:%d", ps->path, ps->line);
    if ((h->origin = strdup(origin)) == NULL)
        return fail(ps, JOBD_E_NOMEM, name, "out of memory");
    h->kind = kind;
    return 1;
}

int64_t
handler_log_bytes(const struct handler_conf *h)
{
    if (h->kind != HANDLER_EXEC)
        return 0;
    return h->log_bytes_set ? h->log_bytes : HANDLER_LOG_BYTES_DEFAULT;
}

/*
 * `log_bytes = N` (docs/WORKER.md, Attempt logs): bytes, or with a suffix
 * KiB or MiB (K and M too); 0 = off; at most ATTEMPT_LOG_MAX.
 */
static int
log_bytes_key(struct parse_state *ps, const char *value)
{
    static const char usage[] = "must be a size from 0 (off) to 1MiB, like 16KiB or 65536";
    const char *p = value;
    int64_t n = 0;
    while (*p >= '0' && *p <= '9' && n <= ATTEMPT_LOG_MAX)
        n = n * 10 + (*p++ - '0');
    int64_t unit = 0;
    if (p == value)
        unit = 0;
    else if (*p == '\0' || strcmp(p, "B") == 0)
        unit = 1;
    else if (strcmp(p, "KiB") == 0 || strcmp(p, "K") == 0 || strcmp(p, "k") == 0)
        unit = 1024;
    else if (strcmp(p, "MiB") == 0 || strcmp(p, "M") == 0)
        unit = 1024 * 1024;
    if (unit == 0 || n > ATTEMPT_LOG_MAX || n * unit > ATTEMPT_LOG_MAX) {
        char msg[200];
        snprintf(msg, sizeof msg, "'%.40s' %s", value, usage);
        return fail(ps, JOBD_E_INVALID, "log_bytes", msg);
    }
    ps->h->log_bytes = n * unit;
    ps->h->log_bytes_set = true;
    return 1;
}

static int
handler_key(struct parse_state *ps, const char *name, const char *value)
{
    struct handler_conf *h = ps->h;
    struct jobd_error e = {0};
    enum handler_kind kind = runner_kind_by_key(name);
    if (kind != HANDLER_NONE)
        return kind_key(ps, kind, name, value);
    if (strcmp(name, "timeout") == 0) {
        if (parse_duration(name, value, false, &h->timeout_ms, &e) != JOBD_OK)
            return fail(ps, JOBD_E_INVALID, name, e.msg);
        return 1;
    }
    if (strcmp(name, "env") == 0)
        return env_key(ps, value);
    if (strcmp(name, "log_bytes") == 0)
        return log_bytes_key(ps, value);
    if (strcmp(name, "user") == 0) {
        if (exec_user_configure(h, value, &e) != JOBD_OK)
            return fail(ps, e.code, name, e.msg);
        return 1;
    }
    char keys[128], msg[200];
    runner_kind_keys(keys, sizeof keys, ", ");
    snprintf(msg, sizeof msg,
             "unknown key in a [handler] section (%s timeout=, env=, user=, log_bytes=)", keys);
    return fail(ps, JOBD_E_INVALID, name, msg);
}

/* Parses `handler "TYPE"` (quotes optional) into type; false if not a handler. */
static bool
handler_section(const char *section, char *type, size_t len)
{
    if (strncmp(section, "handler", 7) != 0 || (section[7] != ' ' && section[7] != '\t'))
        return false;
    const char *p = section + 7;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = strlen(p);
    if (n >= 2 && p[0] == '"' && p[n - 1] == '"') {
        p++;
        n -= 2;
    }
    if (n >= len)
        n = len - 1;
    memcpy(type, p, n);
    type[n] = '\0';
    return true;
}

static int
key_bit(const char *name)
{
    static const char *const keys[] = {
        "concurrency",    "queues",        "lease", "heartbeat", "backoff_base", "backoff_cap",
        "shutdown_grace", "poll_interval", "id",    "timeout",   "prefetch",     "env",
        "db_connections", "notify_db",     "user",  "log_bytes"};
    /* exec=, http= (the runner table's keys) are checked by kind_key */
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(keys[i], name) == 0)
            return (int)i;
    return -1;
}

static int
on_key(void *user, const char *section, const char *name, const char *value)
{
    struct parse_state *ps = user;
    struct jobd_error e = {0};
    bool new_section = ps->header_seen || strcmp(section, ps->section) != 0;
    ps->header_seen = false;
    if (new_section) {
        snprintf(ps->section, sizeof ps->section, "%s", section);
        ps->seen = 0;
        ps->h = NULL;
    }
    int bit = key_bit(name);
    if (bit >= 0 && (ps->seen & (1u << bit)) != 0)
        return fail(ps, JOBD_E_INVALID, name, "given twice in one section");
    if (bit >= 0)
        ps->seen |= 1u << bit;

    if (strcmp(section, "worker") == 0) {
        if (worker_config_set(ps->cfg, name, value, &e) != JOBD_OK)
            return fail(ps, e.code, name, e.msg);
        return 1;
    }
    char type[JOB_NAME_MAX + 2];
    if (handler_section(section, type, sizeof type)) {
        if (new_section) {
            if (job_validate_type(type, "type", &e) != JOBD_OK)
                return fail(ps, JOBD_E_INVALID, name, e.msg);
            bool existed = false;
            ps->h = handler_slot(ps->cfg, type, &existed);
            if (ps->h == NULL)
                return fail(ps, JOBD_E_NOMEM, name, "out of memory");
            if (existed)
                return fail(ps, JOBD_E_INVALID, name,
                            "a second [handler] section for the same type");
            int *lines = realloc(ps->handler_lines, ps->cfg->n_handlers * sizeof *lines);
            if (lines == NULL)
                return fail(ps, JOBD_E_NOMEM, name, "out of memory");
            ps->handler_lines = lines;
            lines[ps->cfg->n_handlers - 1] = ps->line;
        }
        if (ps->h == NULL)
            return 0; /* the section's first key already failed */
        return handler_key(ps, name, value);
    }
    return fail(ps, JOBD_E_INVALID, name, "unknown section (use [worker] or [handler \"TYPE\"])");
}

/* The rules across a handler section's keys, at the line that opened it. */
static int
handler_complete(const struct handler_conf *h, const char *path, int line, struct jobd_error *err)
{
    char keys[128];
    runner_kind_keys(keys, sizeof keys, " or ");
    if (h->kind == HANDLER_NONE)
        return jobd_error_set(err, JOBD_E_INVALID, "exec",
                              "%s:%d: key 'exec': [handler \"%s\"] needs %s", path, line, h->type,
                              keys);
    if (h->env != NULL && h->kind != HANDLER_EXEC)
        return jobd_error_set(err, JOBD_E_INVALID, "env",
                              "%s:%d: key 'env': [handler \"%s\"]: env= is for exec handlers", path,
                              line, h->type);
    if (h->log_bytes_set && h->kind != HANDLER_EXEC)
        return jobd_error_set(err, JOBD_E_INVALID, "log_bytes",
                              "%s:%d: key 'log_bytes': [handler \"%s\"]: log_bytes= is for exec "
                              "handlers",
                              path, line, h->type);
    if (h->user != NULL && h->kind != HANDLER_EXEC)
        return jobd_error_set(err, JOBD_E_INVALID, "user",
                              "%s:%d: key 'user': [handler \"%s\"]: user= is for exec handlers",
                              path, line, h->type);
    return JOBD_OK;
}

int
worker_config_load(struct worker_config *cfg, const char *path, struct jobd_error *err)
{
    struct parse_state *ps = calloc(1, sizeof *ps);
    if (ps == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, "config", "out of memory");
    ps->cfg = cfg;
    ps->path = path;
    const char *slash = strrchr(path, '/');
    if (slash != NULL)
        snprintf(ps->dir, sizeof ps->dir, "%.*s", (int)(slash - path), path);
    if (slash == path)
        snprintf(ps->dir, sizeof ps->dir, "/");
    ps->f = fopen(path, "r");
    if (ps->f == NULL) {
        int rc =
            jobd_error_set(err, JOBD_E_IO, "config", "cannot read %s: %s", path, errno_text(errno));
        free(ps);
        return rc;
    }
    size_t first_handler = cfg->n_handlers;
    int r = ini_parse_stream(counting_reader, ps, on_key, ps);
    fclose(ps->f);
    int rc = JOBD_OK;
    if (ps->err_line != 0) {
        rc = ps->err.code;
        if (err != NULL)
            *err = ps->err;
    } else if (r > 0) {
        rc = jobd_error_set(err, JOBD_E_INVALID, "config",
                            "%s:%d: not a key = value line or [section]", path, r);
    } else if (r < 0) {
        rc = jobd_error_set(err, JOBD_E_NOMEM, "config", "%s: out of memory", path);
    } else {
        for (size_t i = first_handler; rc == JOBD_OK && i < cfg->n_handlers; i++)
            rc = handler_complete(&cfg->handlers[i], path, ps->handler_lines[i - first_handler],
                                  err);
    }
    free(ps->handler_lines);
    free(ps);
    return rc;
}

int
worker_config_check(const struct worker_config *cfg, struct jobd_error *err)
{
    if (cfg->n_handlers == 0)
        return jobd_error_set(err, JOBD_E_INVALID, "handler",
                              "no handlers: add a [handler \"TYPE\"] section");
    if (cfg->heartbeat_ms >= cfg->lease_ms)
        return jobd_error_set(err, JOBD_E_INVALID, "heartbeat",
                              "heartbeat (%lldms) must be shorter than lease (%lldms)",
                              (long long)cfg->heartbeat_ms, (long long)cfg->lease_ms);
    if (cfg->backoff_cap_ms < cfg->backoff_base_ms)
        return jobd_error_set(err, JOBD_E_INVALID, "backoff_cap",
                              "backoff_cap must not be shorter than backoff_base");
    if (cfg->concurrency < 1 || cfg->concurrency > CONCURRENCY_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "concurrency",
                              "concurrency must be from 1 to %d", CONCURRENCY_MAX);
    if (cfg->prefetch < -1 || cfg->prefetch > CONCURRENCY_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "prefetch",
                              "prefetch must be auto or from 0 to %d", CONCURRENCY_MAX);
    for (size_t i = 0; i < cfg->n_handlers; i++)
        if (cfg->handlers[i].kind <= HANDLER_NONE || cfg->handlers[i].kind >= HANDLER_KIND_COUNT)
            return jobd_error_set(err, JOBD_E_INVALID, "handler",
                                  "[handler \"%s\"] has no kind (exec=, http=)",
                                  cfg->handlers[i].type);
    return JOBD_OK;
}

int
worker_effective_prefetch(const struct worker_config *cfg)
{
    for (size_t i = 0; i < cfg->n_handlers; i++)
        if (runner_kinds[cfg->handlers[i].kind].drop_queued == NULL)
            return 0; /* a kind without a queue starts each run at once */
    return cfg->prefetch < 0 ? WORKER_PREFETCH_AUTO_MAX : cfg->prefetch;
}

static char *
dup_or_null(const char *s, bool *oom)
{
    if (s == NULL)
        return NULL;
    char *d = strdup(s);
    if (d == NULL)
        *oom = true;
    return d;
}

/* A copy of a NULL-terminated array of strings (NULL for NULL). */
static char **
strv_dup(char *const *v, bool *oom)
{
    if (v == NULL)
        return NULL;
    size_t n = 0;
    while (v[n] != NULL)
        n++;
    char **d = calloc(n + 1, sizeof *d);
    if (d == NULL) {
        *oom = true;
        return NULL;
    }
    for (size_t k = 0; k < n; k++)
        d[k] = dup_or_null(v[k], oom);
    return d;
}

int
worker_config_copy(struct worker_config *dst, const struct worker_config *src)
{
    bool oom = false;
    *dst = *src;
    dst->queues = NULL;
    dst->handlers = NULL;
    dst->worker_id = dup_or_null(src->worker_id, &oom);
    dst->notify_db = dup_or_null(src->notify_db, &oom);
    dst->n_queues = 0;
    dst->n_handlers = 0;
    if (src->n_queues > 0) {
        dst->queues = calloc(src->n_queues, sizeof *dst->queues);
        if (dst->queues == NULL)
            oom = true;
        for (size_t i = 0; !oom && i < src->n_queues; i++) {
            dst->queues[i] = dup_or_null(src->queues[i], &oom);
            dst->n_queues = i + 1;
        }
    }
    if (!oom && src->n_handlers > 0) {
        dst->handlers = calloc(src->n_handlers, sizeof *dst->handlers);
        if (dst->handlers == NULL)
            oom = true;
        for (size_t i = 0; !oom && i < src->n_handlers; i++) {
            const struct handler_conf *s = &src->handlers[i];
            struct handler_conf *d = &dst->handlers[i];
            dst->n_handlers = i + 1;
            *d = *s;
            d->type = dup_or_null(s->type, &oom);
            d->url = dup_or_null(s->url, &oom);
            d->origin = dup_or_null(s->origin, &oom);
            d->argv = strv_dup(s->argv, &oom);
            d->env = strv_dup(s->env, &oom);
            d->user = dup_or_null(s->user, &oom);
            d->home = dup_or_null(s->home, &oom);
            d->groups = NULL;
            if (s->n_groups > 0 && (d->groups = malloc(s->n_groups * sizeof *d->groups)) != NULL)
                memcpy(d->groups, s->groups, s->n_groups * sizeof *d->groups);
            else if (s->n_groups > 0)
                oom = true;
        }
    }
    if (oom) {
        worker_config_fini(dst);
        return JOBD_E_NOMEM;
    }
    return JOBD_OK;
}
