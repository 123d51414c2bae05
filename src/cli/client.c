/*
 * client.c — the client subcommands over the HTTP API: submit, job
 * show|cancel|retry|attempts|delete, queues. Thin: parse flags, build one
 * JSON body, send, print what the server answered. Exit statuses of
 * docs/CLI.md, "Common to every command": 0 ok, 1 the server refused, 2
 * usage, 3 unreachable.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/http.h"
#include "cli/listing.h"
#include "cli/opts.h"
#include "core/duration.h"
#include "core/job.h"
#include "core/json.h"
#include "core/traceparent.h"
#include "util/clock.h"

static const char submit_usage[] =
    "usage: jobd submit TYPE [--payload JSON] [--at TIME | --in DUR] [--priority N]\n"
    "                   [--queue Q] [--max-attempts N] [--key KEY] [--timeout DUR]\n"
    "                   [--depends-on ID[,ID...]] [--on-parent-failure cancel|run]\n"
    "                   [--debounce KEY/DUR | --unique KEY/DUR] [--group G]\n"
    "                   [--traceparent TP] [--wait[=DUR]] [--server URL]\n"
    "\n"
    "Enqueues a job through the API and prints it as JSON. Warns on stderr when no\n"
    "live worker (jobd workers) handles TYPE on the queue: the job waits for one.\n"
    "When --key made a job before, prints that job and says on stderr that it was\n"
    "replayed (\"job N already exists for idempotency key KEY (replayed)\").\n"
    "  --at TIME   RFC 3339 (2026-12-02T15:00:00Z); --in DUR: from now (5m, 1h30m)\n"
    "  --key KEY   idempotency key: the same request again returns the same job\n"
    "  --debounce KEY/DUR  while a pending TYPE job on the queue was submitted with\n"
    "              KEY, replace its payload and priority and make it due in DUR;\n"
    "              else make a job due in DUR (bursts run once, DUR after the last)\n"
    "  --unique KEY/DUR  at most one job with KEY per DUR: inside that window, print\n"
    "              the job KEY made (whatever its status) and make none\n"
    "  --depends-on ID,...  the job waits (status waiting) until these jobs end;\n"
    "              then it runs if they all succeeded, else as --on-parent-failure\n"
    "              says: cancel (the default: it is cancelled) or run (it runs anyway)\n"
    "  --group G   the job's group (a tenant, a customer id: A-Z a-z 0-9 . _ : -,\n"
    "              1 to 128): due jobs of different groups are claimed in turn,\n"
    "              and the queue's group limits count per group (jobd queues limit)\n"
    "  --traceparent TP  a W3C traceparent (00-<trace id>-<parent id>-<flags>) the\n"
    "              job carries to its handlers and log lines; default $TRACEPARENT\n"
    "              when valid (so a handler's submits join its job's trace)\n"
    "  --wait[=DUR]  then wait until the job ends (at most DUR; no limit without):\n"
    "              print its result as JSON (null if none) and exit 0 if it\n"
    "              succeeded, 1 if it went dead or was cancelled (the reason on\n"
    "              stderr) or is still not finished when DUR is over\n"
    "  --server    default $JOBD_SERVER, else http://127.0.0.1:8080; token: $JOBD_TOKEN\n";

static const char job_usage[] =
    "usage: jobd job show|cancel|retry|attempts|delete ID [--server URL]\n"
    "       jobd job log ID [ATTEMPT] [--server URL]\n"
    "\n"
    "Shows, cancels or retries one job through the API and prints it: as JSON,\n"
    "or for show on a terminal, as text followed by its attempts.\n"
    "  delete    deletes a pending or finished job with its history (prints nothing;\n"
    "            a running job must be cancelled first; the token needs admin)\n"
    "  attempts  the job's attempt history, oldest first: a table on a terminal,\n"
    "            one JSON object a line when piped\n"
    "  log       the kept end of an attempt's stderr (the latest attempt's\n"
    "            without ATTEMPT), as it is\n";

static const char queues_usage[] =
    "usage: jobd queues [--server URL]\n"
    "       jobd queues limit|pause|resume NAME ...   (see jobd queues limit --help)\n"
    "       jobd queues groups NAME [--limit N]       (see jobd queues groups --help)\n"
    "\n"
    "Lists queues with their job counts, how long the oldest due pending job has\n"
    "waited (- when none is due: jobs scheduled for later do not count), how many\n"
    "jobs succeeded, failed and went dead in the last minute, and their limits: a\n"
    "table on a terminal, JSON lines when piped. A queue with pending jobs of a type\n"
    "no live worker handles ends its row with \"warning: no live worker handles\n"
    "TYPE, ...\" (unhandled_types in the JSON).\n";

struct submit_opts {
    const char *type, *payload, *at, *in, *queue, *key, *timeout, *server, *traceparent, *group;
    json_t *window;                /* --debounce or --unique as {key, for} (owned) */
    const char *window_kind;       /* "debounce" or "unique" */
    json_t *depends_on;            /* --depends-on, an array of ids (owned) */
    const char *on_parent_failure; /* --on-parent-failure */
    long priority, max_attempts;
    bool has_priority, has_max_attempts;
    bool wait;       /* --wait */
    int64_t wait_ms; /* --wait=DUR; 0 = no limit */
};

enum {
    S_PAYLOAD,
    S_AT,
    S_IN,
    S_QUEUE,
    S_KEY,
    S_TIMEOUT,
    S_SERVER,
    S_PRIORITY,
    S_MAX_ATTEMPTS,
    S_WAIT,
    S_WAIT_FOR,
    S_DEPENDS_ON,
    S_ON_PARENT_FAILURE,
    S_TRACEPARENT,
    S_DEBOUNCE,
    S_UNIQUE,
    S_GROUP
};
static const struct cli_optdef submit_opts_def[] = {
    [S_PAYLOAD] = {"--payload", 0, true},
    [S_AT] = {"--at", 0, true},
    [S_IN] = {"--in", 0, true},
    [S_QUEUE] = {"--queue", 0, true},
    [S_KEY] = {"--key", 0, true},
    [S_TIMEOUT] = {"--timeout", 0, true},
    [S_SERVER] = {"--server", 0, true},
    [S_PRIORITY] = {"--priority", 0, true},
    [S_MAX_ATTEMPTS] = {"--max-attempts", 0, true},
    [S_WAIT] = {"--wait", 0, false},
    [S_WAIT_FOR] = {"--wait", 0, true}, /* --wait=DUR (opts.h) */
    [S_DEPENDS_ON] = {"--depends-on", 0, true},
    [S_ON_PARENT_FAILURE] = {"--on-parent-failure", 0, true},
    [S_TRACEPARENT] = {"--traceparent", 0, true},
    [S_DEBOUNCE] = {"--debounce", 0, true},
    [S_UNIQUE] = {"--unique", 0, true},
    [S_GROUP] = {"--group", 0, true},
    {NULL, 0, false},
};

/* --depends-on ID[,ID...] (may be given again): appends the ids to o->depends_on. */
static int
submit_deps(struct submit_opts *o, const char *v)
{
    if (o->depends_on == NULL && (o->depends_on = json_array()) == NULL)
        return cli_usage_error("submit", "out of memory at", v);
    const char *p = v;
    for (;;) {
        char *end = NULL;
        errno = 0;
        long long id = strtoll(p, &end, 10);
        if (end == p || errno != 0 || id <= 0 || (*end != ',' && *end != '\0'))
            return cli_usage_error("submit", "--depends-on takes job ids separated by commas, not",
                                   v);
        json_array_append_new(o->depends_on, json_integer(id));
        if (*end == '\0')
            return CLI_OK;
        p = end + 1;
    }
}

/*
 * --debounce KEY/DUR or --unique KEY/DUR (docs/CLI.md, submit): split at
 * the last '/' (a duration has none, a key may), DUR checked here so a typo
 * is a usage error; the server checks the key.
 */
static int
submit_window(struct submit_opts *o, const char *kind, const char *v)
{
    char opt[16];
    snprintf(opt, sizeof opt, "--%s", kind);
    if (o->window != NULL)
        return cli_usage_error("submit", "give one --debounce or --unique, not also", opt);
    const char *slash = strrchr(v, '/');
    int64_t ms = 0;
    struct jobd_error err = {0};
    if (slash == NULL || slash == v || duration_parse_ms(slash + 1, &ms, "DUR", &err) != JOBD_OK ||
        ms <= 0) {
        fprintf(stderr,
                "jobd submit: %s takes KEY/DUR (a key, a slash, a duration above zero such as "
                "30s), not '%s'\n",
                opt, v);
        return CLI_USAGE;
    }
    o->window = json_pack("{s:s%,s:s}", "key", v, (size_t)(slash - v), "for", slash + 1);
    if (o->window == NULL)
        return cli_usage_error("submit", "the key is not valid UTF-8:", v);
    o->window_kind = kind;
    return CLI_OK;
}

/* Stores option k's value v in o; CLI_OK or a usage error. */
static int
submit_set(struct submit_opts *o, int k, const char *v)
{
    const char **dst[] = {[S_PAYLOAD] = &o->payload, [S_AT] = &o->at,
                          [S_IN] = &o->in,           [S_QUEUE] = &o->queue,
                          [S_KEY] = &o->key,         [S_TIMEOUT] = &o->timeout,
                          [S_SERVER] = &o->server,   [S_TRACEPARENT] = &o->traceparent,
                          [S_GROUP] = &o->group};
    if (k == S_DEPENDS_ON)
        return submit_deps(o, v);
    if (k == S_DEBOUNCE || k == S_UNIQUE)
        return submit_window(o, k == S_DEBOUNCE ? "debounce" : "unique", v);
    if (k == S_ON_PARENT_FAILURE) {
        if (strcmp(v, "cancel") != 0 && strcmp(v, "run") != 0)
            return cli_usage_error("submit", "--on-parent-failure takes cancel or run, not", v);
        o->on_parent_failure = v;
        return CLI_OK;
    }
    if (k == S_PRIORITY) {
        if (!cli_parse_int(v, JOB_PRIORITY_MIN, JOB_PRIORITY_MAX, &o->priority))
            return cli_usage_error("submit", "--priority must be an integer, not", v);
        o->has_priority = true;
    } else if (k == S_MAX_ATTEMPTS) {
        if (!cli_parse_int(v, 1, JOB_MAX_ATTEMPTS_MAX, &o->max_attempts))
            return cli_usage_error("submit", "--max-attempts must be a positive integer, not", v);
        o->has_max_attempts = true;
    } else if (k == S_WAIT || k == S_WAIT_FOR) {
        struct jobd_error err = {0};
        o->wait = true;
        if (v != NULL &&
            (duration_parse_ms(v, &o->wait_ms, "--wait", &err) != JOBD_OK || o->wait_ms <= 0))
            return cli_usage_error("submit", "--wait takes a duration above zero (30s, 5m), not",
                                   v);
    } else {
        *dst[k] = v;
    }
    return CLI_OK;
}

/*
 * Sends the submit and prints the job. When the server answered with
 * Idempotent-Replayed: true (docs/API.md, the key made a job before, or
 * the unique window's job) or 200 to a debounce (its pending job was
 * replaced), no new job was made: a line on stderr says which job the key
 * gave back, so a person does not take it for a new one; stdout is the job
 * either way, naming the key o had.
 */
static int
submit_send(const char *server, const char *text, const struct submit_opts *o)
{
    const char *what = o->window_kind == NULL                    ? "idempotency key"
                       : strcmp(o->window_kind, "debounce") == 0 ? "debounce key"
                                                                 : "unique key";
    const char *key = o->window ? json_string_value(json_object_get(o->window, "key")) : o->key;
    struct cli_http_resp r;
    int rc = cli_http("submit", server, "POST", "/v1/jobs", text, &r);
    if (rc != CLI_OK)
        return rc;
    if (r.status < 200 || r.status > 299) {
        rc = cli_http_fail("submit", &r);
        free(r.body);
        return rc;
    }
    fputs(r.body, stdout);
    if (r.len == 0 || r.body[r.len - 1] != '\n')
        fputc('\n', stdout);
    fflush(stdout);
    bool debounced = strcmp(what, "debounce key") == 0 && r.status == 200;
    if (r.replayed || debounced) {
        json_t *j = json_loadb(r.body, r.len, 0, NULL);
        fprintf(stderr, "jobd submit: job %lld %s %s ",
                (long long)json_integer_value(json_object_get(j, "id")),
                debounced ? "holds" : "already exists for", what);
        for (const char *s = key ? key : ""; *s; s++) /* control characters as '?' */
            fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, stderr);
        fputs(debounced ? ": replaced in place, no new job was made\n"
                        : " (replayed): no new job was made\n",
              stderr);
        json_decref(j);
    }
    free(r.body);
    return CLI_OK;
}

/* CLI_OK, a usage error, or -1 after printing the help. */
static int
submit_parse(int argc, char **argv, struct submit_opts *o)
{
    struct cli_args a;
    cli_args_init(&a, "submit", argc, argv, 1);
    int k = 0, rc = CLI_OK;
    const char *v;
    for (enum cli_arg t;
         rc == CLI_OK && (t = cli_args_next(&a, submit_opts_def, &k, &v)) != CLI_ARG_END;) {
        if (t == CLI_ARG_HELP) {
            fputs(submit_usage, stdout);
            return -1;
        } else if (t == CLI_ARG_BAD) {
            return CLI_USAGE;
        } else if (t == CLI_ARG_OPT) {
            rc = submit_set(o, k, v);
        } else if (o->type == NULL) {
            o->type = v;
        } else {
            return cli_usage_error("submit", "unexpected argument", v);
        }
    }
    if (rc != CLI_OK)
        return rc;
    if (o->type == NULL)
        return cli_usage_error("submit", "missing TYPE", NULL);
    if (o->at && o->in)
        return cli_usage_error("submit", "give --at or --in, not both", NULL);
    return CLI_OK;
}

/* The longest wait one request may ask for (docs/API.md, Waiting for a result). */
#define SUBMIT_WAIT_STEP_MS 60000

/*
 * One request of --wait: answers 2xx with a job into *job (the caller's to
 * json_decref), or an exit status (already reported).
 */
static int
wait_request(const char *server, const char *method, const char *path, const char *body,
             json_t **job)
{
    struct cli_http_resp r;
    int rc = cli_http("submit", server, method, path, body, &r);
    if (rc != CLI_OK)
        return rc;
    if (r.status < 200 || r.status > 299) {
        rc = cli_http_fail("submit", &r);
        free(r.body);
        return rc;
    }
    *job = json_loads(r.body, 0, NULL);
    free(r.body);
    if (!json_is_object(*job)) {
        json_decref(*job);
        fprintf(stderr, "jobd submit: the server answered something that is not a job\n");
        return CLI_FAILED;
    }
    return CLI_OK;
}

/* How long the next request may wait: SUBMIT_WAIT_STEP_MS, or what is left
 * of deadline (monotonic us; 0 = none). 0 when nothing is left. */
static int64_t
wait_step_ms(int64_t deadline_us)
{
    if (deadline_us == 0)
        return SUBMIT_WAIT_STEP_MS;
    int64_t left = (deadline_us - clock_mono_now_us()) / 1000;
    return left <= 0 ? 0 : left < SUBMIT_WAIT_STEP_MS ? left : SUBMIT_WAIT_STEP_MS;
}

/*
 * submit --wait: POST /v1/jobs?wait=, then GET /v1/jobs/ID?wait= until the
 * job ends or wait_ms (0: no limit) is over, each request waiting at most
 * the server's 60 s. Prints the result; the exit status says the outcome.
 */
static int
submit_wait(const char *server, const char *body, int64_t wait_ms)
{
    int64_t deadline = wait_ms > 0 ? clock_mono_now_us() + wait_ms * 1000 : 0;
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs?wait=%lldms", (long long)wait_step_ms(deadline));
    json_t *job = NULL;
    int rc = wait_request(server, "POST", path, body, &job);
    enum job_status st = JOB_PENDING;
    while (rc == CLI_OK) {
        const char *name = json_string_value(json_object_get(job, "status"));
        if (name == NULL || job_status_parse(name, &st) != JOBD_OK || job_status_terminal(st))
            break;
        int64_t step = wait_step_ms(deadline);
        if (step == 0)
            break;
        snprintf(path, sizeof path, "/v1/jobs/%lld?wait=%lldms",
                 (long long)json_integer_value(json_object_get(job, "id")), (long long)step);
        json_decref(job);
        job = NULL;
        rc = wait_request(server, "GET", path, NULL, &job);
    }
    if (rc != CLI_OK)
        return rc;
    long long id = (long long)json_integer_value(json_object_get(job, "id"));
    if (!job_status_terminal(st)) {
        fprintf(stderr, "jobd submit: job %lld is still %s after %s\n", id, job_status_name(st),
                duration_format_ms(wait_ms, path, sizeof path));
        json_decref(job);
        return CLI_FAILED;
    }
    json_t *result = json_object_get(job, "result");
    char *text = json_print(result ? result : json_null(), JSON_ENCODE_ANY | JSON_COMPACT);
    if (text != NULL)
        printf("%s\n", text);
    free(text);
    if (st != JOB_SUCCEEDED) {
        const char *why = json_string_value(json_object_get(job, "last_error"));
        fprintf(stderr, "jobd submit: job %lld %s%s%s\n", id, job_status_name(st), why ? ": " : "",
                why ? why : "");
        rc = CLI_FAILED;
    }
    json_decref(job);
    return rc;
}

int
cmd_submit(int argc, char **argv)
{
    struct submit_opts o = {0};
    int rc = submit_parse(argc, argv, &o);
    if (rc != CLI_OK) {
        json_decref(o.depends_on);
        json_decref(o.window);
        return rc < 0 ? CLI_OK : rc;
    }
    json_t *body = json_object();
    json_object_set_new(body, "type", json_string(o.type));
    if (o.payload) {
        json_error_t je;
        json_t *p = json_loads(o.payload, JSON_DECODE_ANY, &je);
        if (p == NULL) {
            json_decref(body);
            json_decref(o.depends_on);
            json_decref(o.window);
            fprintf(stderr, "jobd submit: --payload is not valid JSON: %s (column %d)\n", je.text,
                    je.column);
            return CLI_USAGE;
        }
        json_object_set_new(body, "payload", p);
    }
    if (o.at)
        json_object_set_new(body, "run_at", json_string(o.at));
    if (o.in)
        json_object_set_new(body, "in", json_string(o.in));
    if (o.queue)
        json_object_set_new(body, "queue", json_string(o.queue));
    if (o.key)
        json_object_set_new(body, "idempotency_key", json_string(o.key));
    if (o.timeout)
        json_object_set_new(body, "timeout", json_string(o.timeout));
    /* A handler's environment carries its job's (docs/WORKER.md, Trace
     * context): a job it submits joins the same trace. An invalid one there
     * is not the caller's mistake, and is left out; --traceparent is checked. */
    struct jobd_error tperr = {0};
    const char *env_tp = getenv("TRACEPARENT");
    if (o.traceparent == NULL && env_tp != NULL &&
        traceparent_validate(env_tp, "TRACEPARENT", &tperr) == JOBD_OK)
        o.traceparent = env_tp;
    if (o.traceparent)
        json_object_set_new(body, "traceparent", json_string(o.traceparent));
    if (o.group)
        json_object_set_new(body, "group", json_string(o.group));
    if (o.has_priority)
        json_object_set_new(body, "priority", json_integer(o.priority));
    if (o.has_max_attempts)
        json_object_set_new(body, "max_attempts", json_integer(o.max_attempts));
    if (o.depends_on) /* docs/API.md, Dependencies */
        json_object_set(body, "depends_on", o.depends_on);
    if (o.on_parent_failure)
        json_object_set_new(body, "on_parent_failure", json_string(o.on_parent_failure));
    json_decref(o.depends_on);
    o.depends_on = NULL;
    if (o.window) /* docs/API.md, Debounce and unique windows */
        json_object_set(body, o.window_kind, o.window);
    char *text = json_print(body, 0);
    json_decref(body);
    if (text == NULL) {
        json_decref(o.window);
        fprintf(stderr, "jobd submit: a string is not valid UTF-8 or memory ran out\n");
        return CLI_USAGE;
    }
    if (o.wait) {
        cli_warn_unhandled(cli_server_url(o.server), o.type, o.queue ? o.queue : JOB_DEFAULT_QUEUE);
        rc = submit_wait(cli_server_url(o.server), text, o.wait_ms);
        free(text);
        json_decref(o.window);
        return rc;
    }
    rc = submit_send(cli_server_url(o.server), text, &o);
    free(text);
    json_decref(o.window);
    if (rc == CLI_OK) {
        cli_warn_unhandled(cli_server_url(o.server), o.type, o.queue ? o.queue : JOB_DEFAULT_QUEUE);
    }
    return rc;
}

static const struct cli_optdef server_only[] = {{"--server", 0, true}, {NULL, 0, false}};

int
cmd_job(int argc, char **argv)
{
    const char *action = NULL, *id = NULL, *server = NULL, *attempt = NULL, *v;
    struct cli_args a;
    cli_args_init(&a, "job", argc, argv, 1);
    int k;
    for (enum cli_arg t; (t = cli_args_next(&a, server_only, &k, &v)) != CLI_ARG_END;) {
        if (t == CLI_ARG_HELP) {
            fputs(job_usage, stdout);
            return CLI_OK;
        } else if (t == CLI_ARG_BAD) {
            return CLI_USAGE;
        } else if (t == CLI_ARG_OPT) {
            server = v;
        } else if (action == NULL) {
            action = v;
        } else if (id == NULL) {
            id = v;
        } else if (attempt == NULL && strcmp(action, "log") == 0) {
            attempt = v;
        } else {
            return cli_usage_error("job", "unexpected argument", v);
        }
    }
    long n;
    if (action == NULL || id == NULL)
        return cli_usage_error("job", "need an action and an ID", NULL);
    if (!cli_parse_int(id, 1, 0x7fffffffffffffffL, &n))
        return cli_usage_error("job", "ID must be a positive integer, not", id);
    char path[96];
    if (strcmp(action, "show") == 0)
        return cli_job_show(cli_server_url(server), n);
    if (strcmp(action, "attempts") == 0)
        return cli_job_attempts(cli_server_url(server), n);
    if (strcmp(action, "log") == 0) {
        long an = 0;
        if (attempt != NULL && !cli_parse_int(attempt, 1, 0x7fffffffL, &an))
            return cli_usage_error("job", "ATTEMPT must be a positive integer, not", attempt);
        return cli_job_log(cli_server_url(server), n, an);
    }
    if (strcmp(action, "delete") == 0)
        return cli_job_delete(cli_server_url(server), n);
    if (strcmp(action, "cancel") == 0 || strcmp(action, "retry") == 0) {
        snprintf(path, sizeof path, "/v1/jobs/%ld/%s", n, action);
        return cli_send_print(strcmp(action, "cancel") == 0 ? "job cancel" : "job retry",
                              cli_server_url(server), "POST", path, NULL);
    }
    return cli_usage_error("job", "unknown action", action);
}

static void
queues_header(void)
{
    printf("%-20s %-6s %9s %9s %9s %9s %9s %14s  %-22s  %s\n", "QUEUE", "PAUSED", "PENDING",
           "RUNNING", "SUCCEEDED", "DEAD", "CANCELLED", "OLDEST_PENDING", "LAST 1M OK/FAILED/DEAD",
           "LIMITS");
}

/* An age in seconds as a person reads it: 7ms, 12.3s, 5m03s, 2h05m, 3d04h; "-" for none. */
static const char *
age_text(double s, char *buf, size_t len)
{
    long long t = (long long)s;
    if (!(s > 0))
        snprintf(buf, len, "-");
    else if (s < 1)
        snprintf(buf, len, "%dms", (int)(s * 1000 + 0.5));
    else if (s < 60)
        snprintf(buf, len, "%.1fs", s);
    else if (s < 3600)
        snprintf(buf, len, "%lldm%02llds", t / 60, t % 60);
    else if (s < 86400)
        snprintf(buf, len, "%lldh%02lldm", t / 3600, t / 60 % 60);
    else
        snprintf(buf, len, "%lldd%02lldh", t / 86400, t / 3600 % 24);
    return buf;
}

/* "  warning: no live worker handles T1, T2" after a queue's row, when its
 * pending jobs have types nobody claims (docs/API.md, Queues). */
static void
queue_warning(const json_t *types)
{
    size_t i;
    const json_t *t;
    json_array_foreach(types, i, t) {
        char name[160];
        const char *s = json_string_value(t);
        size_t n = 0;
        for (; s != NULL && *s && n + 1 < sizeof name; s++) /* control characters as '?' */
            name[n++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
        name[n] = '\0';
        printf("%s%s", i == 0 ? "  warning: no live worker handles " : ", ", name);
    }
}

static void
queues_row(const json_t *q)
{
    printf("%-20s %-6s", json_string_value(json_object_get(q, "name")),
           json_is_true(json_object_get(q, "paused")) ? "yes" : "no");
    const char *cols[] = {"pending", "running", "succeeded", "dead", "cancelled"};
    for (int k = 0; k < 5; k++)
        printf(" %9lld", (long long)json_integer_value(json_object_get(q, cols[k])));
    char age[32];
    printf(" %14s", age_text(json_number_value(json_object_get(q, "oldest_pending_age_s")), age,
                             sizeof age));
    const json_t *tp = json_object_get(q, "throughput_1m");
    char last[80];
    snprintf(last, sizeof last, "%lld/%lld/%lld",
             (long long)json_integer_value(json_object_get(tp, "succeeded")),
             (long long)json_integer_value(json_object_get(tp, "failed")),
             (long long)json_integer_value(json_object_get(tp, "dead")));
    printf("  %-22s", last);
    json_t *mr = json_object_get(q, "max_running"), *rate = json_object_get(q, "rate");
    printf("  ");
    if (json_is_integer(mr))
        printf("max %lld running%s", (long long)json_integer_value(mr),
               json_is_object(rate) ? ", " : "");
    if (json_is_object(rate))
        printf("%lld per %s", (long long)json_integer_value(json_object_get(rate, "limit")),
               json_string_value(json_object_get(rate, "per")));
    if (!json_is_integer(mr) && !json_is_object(rate))
        putchar('-');
    queue_warning(json_object_get(q, "unhandled_types"));
    putchar('\n');
}

int
cmd_queues(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "limit") == 0 || strcmp(argv[1], "pause") == 0 ||
                     strcmp(argv[1], "resume") == 0))
        return cli_queues_action(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "groups") == 0)
        return cli_queues_groups(argc - 1, argv + 1);
    static const struct cli_listing l = {"queues", queues_usage,  "/v1/queues",
                                         "queues", queues_header, queues_row,
                                         false,    NULL,          NULL};
    return cli_listing_run(argc, argv, &l);
}
