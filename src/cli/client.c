/*
 * client.c — the client subcommands over the HTTP API: submit, job
 * show|cancel|retry, jobs, queues. Thin: parse flags, build one JSON
 * body, send, print what the server answered. Exit statuses of
 * CONTRACT.md §3: 0 ok, 1 the server refused, 2 usage, 3 unreachable.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/http.h"
#include "cli/listing.h"
#include "core/job.h"

static const char submit_usage[] =
    "usage: jobd submit TYPE [--payload JSON] [--at TIME | --in DUR] [--priority N]\n"
    "                   [--queue Q] [--max-attempts N] [--key KEY] [--timeout DUR]\n"
    "                   [--server URL]\n"
    "\n"
    "Enqueues a job through the API and prints it as JSON.\n"
    "  --at TIME   RFC 3339 (2026-12-02T15:00:00Z); --in DUR: from now (5m, 1h30m)\n"
    "  --key KEY   idempotency key: the same request again returns the same job\n"
    "  --server    default $JOBD_SERVER, else http://127.0.0.1:8080; token: $JOBD_TOKEN\n";

static const char job_usage[] =
    "usage: jobd job show|cancel|retry|attempts|delete ID [--server URL]\n"
    "\n"
    "Shows, cancels or retries one job through the API and prints it: as JSON,\n"
    "or for show on a terminal, as text followed by its attempts.\n"
    "  delete    deletes a pending or finished job with its history (prints nothing;\n"
    "            a running job must be cancelled first)\n"
    "  attempts  the job's attempt history, oldest first: a table on a terminal,\n"
    "            one JSON object a line when piped\n";

static const char jobs_usage[] =
    "usage: jobd jobs [--status S] [--queue Q] [--type T] [--created-after TIME]\n"
    "                 [--created-before TIME] [--key KEY] [--limit N] [--server URL]\n"
    "       jobd jobs retry|cancel|delete [filters]   (see jobd jobs retry --help)\n"
    "\n"
    "Lists jobs, newest first (default limit 100): a table on a terminal, one\n"
    "JSON object a line when piped. --created-after is inclusive, --created-before\n"
    "exclusive (RFC 3339); --key is an exact idempotency key.\n";

static const char queues_usage[] =
    "usage: jobd queues [--server URL]\n"
    "       jobd queues limit|pause|resume NAME ...   (see jobd queues limit --help)\n"
    "\n"
    "Lists queues with their job counts and limits: a table on a terminal, JSON\n"
    "lines when piped.\n";

struct submit_opts {
    const char *type, *payload, *at, *in, *queue, *key, *timeout, *server;
    long priority, max_attempts;
    bool has_priority, has_max_attempts;
};

static int
submit_parse(int argc, char **argv, struct submit_opts *o)
{
    for (int i = 1; i < argc; i++) {
        bool miss = false;
        const char *v;
        if (cli_is_help(argv[i])) {
            fputs(submit_usage, stdout);
            return -1;
        } else if ((v = cli_opt(argc, argv, &i, "--payload", &miss))) {
            o->payload = v;
        } else if ((v = cli_opt(argc, argv, &i, "--at", &miss))) {
            o->at = v;
        } else if ((v = cli_opt(argc, argv, &i, "--in", &miss))) {
            o->in = v;
        } else if ((v = cli_opt(argc, argv, &i, "--queue", &miss))) {
            o->queue = v;
        } else if ((v = cli_opt(argc, argv, &i, "--key", &miss))) {
            o->key = v;
        } else if ((v = cli_opt(argc, argv, &i, "--timeout", &miss))) {
            o->timeout = v;
        } else if ((v = cli_opt(argc, argv, &i, "--server", &miss))) {
            o->server = v;
        } else if ((v = cli_opt(argc, argv, &i, "--priority", &miss))) {
            if (!cli_parse_int(v, -1000000, 1000000, &o->priority))
                return cli_usage_error("submit", "--priority must be an integer, not", v,
                                   submit_usage);
            o->has_priority = true;
        } else if ((v = cli_opt(argc, argv, &i, "--max-attempts", &miss))) {
            if (!cli_parse_int(v, 1, 1000000, &o->max_attempts))
                return cli_usage_error("submit", "--max-attempts must be a positive integer, not",
                                   v, submit_usage);
            o->has_max_attempts = true;
        } else if (miss) {
            return cli_usage_error("submit", "missing value for", argv[i], submit_usage);
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return cli_usage_error("submit", "unknown option", argv[i], submit_usage);
        } else if (o->type == NULL) {
            o->type = argv[i];
        } else {
            return cli_usage_error("submit", "unexpected argument", argv[i], submit_usage);
        }
        if (miss)
            return cli_usage_error("submit", "missing value for", argv[i], submit_usage);
    }
    if (o->type == NULL)
        return cli_usage_error("submit", "missing TYPE", NULL, submit_usage);
    if (o->at && o->in)
        return cli_usage_error("submit", "give --at or --in, not both", NULL, submit_usage);
    return CLI_OK;
}

int
cmd_submit(int argc, char **argv)
{
    struct submit_opts o = {0};
    int rc = submit_parse(argc, argv, &o);
    if (rc != CLI_OK)
        return rc < 0 ? CLI_OK : rc;
    json_t *body = json_object();
    json_object_set_new(body, "type", json_string(o.type));
    if (o.payload) {
        json_error_t je;
        json_t *p = json_loads(o.payload, JSON_DECODE_ANY, &je);
        if (p == NULL) {
            json_decref(body);
            fprintf(stderr, "jobd submit: --payload is not valid JSON: %s (column %d)\n",
                    je.text, je.column);
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
    if (o.has_priority)
        json_object_set_new(body, "priority", json_integer(o.priority));
    if (o.has_max_attempts)
        json_object_set_new(body, "max_attempts", json_integer(o.max_attempts));
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (text == NULL) {
        fprintf(stderr, "jobd submit: a string is not valid UTF-8 or memory ran out\n");
        return CLI_USAGE;
    }
    rc = cli_send_print(cli_server_url(o.server), "POST", "/v1/jobs", text);
    free(text);
    return rc;
}

int
cmd_job(int argc, char **argv)
{
    const char *action = NULL, *id = NULL, *server = NULL;
    for (int i = 1; i < argc; i++) {
        bool miss = false;
        const char *v;
        if (cli_is_help(argv[i])) {
            fputs(job_usage, stdout);
            return CLI_OK;
        } else if ((v = cli_opt(argc, argv, &i, "--server", &miss))) {
            server = v;
        } else if (miss) {
            return cli_usage_error("job", "missing value for", argv[i], job_usage);
        } else if (argv[i][0] == '-') {
            return cli_usage_error("job", "unknown option", argv[i], job_usage);
        } else if (action == NULL) {
            action = argv[i];
        } else if (id == NULL) {
            id = argv[i];
        } else {
            return cli_usage_error("job", "unexpected argument", argv[i], job_usage);
        }
    }
    long n;
    if (action == NULL || id == NULL)
        return cli_usage_error("job", "need an action and an ID", NULL, job_usage);
    if (!cli_parse_int(id, 1, 0x7fffffffffffffffL, &n))
        return cli_usage_error("job", "ID must be a positive integer, not", id, job_usage);
    char path[96];
    if (strcmp(action, "show") == 0)
        return cli_job_show(cli_server_url(server), n);
    if (strcmp(action, "attempts") == 0)
        return cli_job_attempts(cli_server_url(server), n);
    if (strcmp(action, "delete") == 0)
        return cli_job_delete(cli_server_url(server), n);
    if (strcmp(action, "cancel") == 0 || strcmp(action, "retry") == 0) {
        snprintf(path, sizeof path, "/v1/jobs/%ld/%s", n, action);
        return cli_send_print(cli_server_url(server), "POST", path, NULL);
    }
    return cli_usage_error("job", "unknown action", action, job_usage);
}

/* Appends "&key=escaped(v)" to q (size qlen). */
static bool
add_query(char *q, size_t qlen, const char *key, const char *v)
{
    if (v == NULL)
        return true;
    char *e = cli_http_escape(v);
    if (e == NULL)
        return false;
    size_t used = strlen(q);
    int n = snprintf(q + used, qlen - used, "%s%s=%s", used ? "&" : "?", key, e);
    free(e);
    return n > 0 && (size_t)n < qlen - used;
}

static void
print_job_row(json_t *j)
{
    const char *fields[] = {"status", "queue", "type", "run_at"};
    printf("%-10lld", (long long)json_integer_value(json_object_get(j, "id")));
    for (int k = 0; k < 4; k++) {
        const char *s = json_string_value(json_object_get(j, fields[k]));
        printf(k == 3 ? " %s" : " %-12s", s ? s : "-");
    }
    printf("  attempt %lld/%lld\n", (long long)json_integer_value(json_object_get(j, "attempt")),
           (long long)json_integer_value(json_object_get(j, "max_attempts")));
}

/* Prints one page; returns the number printed, or -1 with rc set. */
static long
jobs_page(const char *server, const char *path, bool table, char *next, size_t nextlen,
          int *rc)
{
    struct cli_http_resp r;
    *rc = cli_http(server, "GET", path, NULL, &r);
    if (*rc != CLI_OK)
        return -1;
    if (r.status != 200) {
        *rc = cli_http_fail(&r);
        free(r.body);
        return -1;
    }
    json_t *o = json_loadb(r.body, r.len, 0, NULL);
    free(r.body);
    json_t *arr = json_object_get(o, "jobs");
    if (!json_is_array(arr)) {
        json_decref(o);
        fprintf(stderr, "jobd: the server's answer has no job list\n");
        *rc = CLI_FAILED;
        return -1;
    }
    size_t i;
    json_t *j;
    json_array_foreach(arr, i, j) {
        if (table) {
            print_job_row(j);
        } else {
            char *line = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
            if (line)
                puts(line);
            free(line);
        }
    }
    const char *nx = json_string_value(json_object_get(o, "next"));
    snprintf(next, nextlen, "%s", nx ? nx : "");
    long n = (long)json_array_size(arr);
    json_decref(o);
    return n;
}

int
cmd_jobs(int argc, char **argv)
{
    const char *status = NULL, *queue = NULL, *type = NULL, *server = NULL;
    const char *after = NULL, *before = NULL, *key = NULL;
    long limit = JOB_PAGE_DEFAULT;
    if (argc > 1 && (strcmp(argv[1], "retry") == 0 || strcmp(argv[1], "cancel") == 0 ||
                     strcmp(argv[1], "delete") == 0))
        return cli_jobs_bulk(argc - 1, argv + 1);
    for (int i = 1; i < argc; i++) {
        bool miss = false;
        const char *v;
        if (cli_is_help(argv[i])) {
            fputs(jobs_usage, stdout);
            return CLI_OK;
        } else if ((v = cli_opt(argc, argv, &i, "--status", &miss))) {
            status = v;
        } else if ((v = cli_opt(argc, argv, &i, "--queue", &miss))) {
            queue = v;
        } else if ((v = cli_opt(argc, argv, &i, "--type", &miss))) {
            type = v;
        } else if ((v = cli_opt(argc, argv, &i, "--created-after", &miss))) {
            after = v;
        } else if ((v = cli_opt(argc, argv, &i, "--created-before", &miss))) {
            before = v;
        } else if ((v = cli_opt(argc, argv, &i, "--key", &miss))) {
            key = v;
        } else if ((v = cli_opt(argc, argv, &i, "--server", &miss))) {
            server = v;
        } else if ((v = cli_opt(argc, argv, &i, "--limit", &miss))) {
            if (!cli_parse_int(v, 1, 100000000, &limit))
                return cli_usage_error("jobs", "--limit must be a positive integer, not", v,
                                   jobs_usage);
        } else {
            return cli_usage_error("jobs", miss ? "missing value for" : "unexpected argument",
                               argv[i], jobs_usage);
        }
    }
    bool table = isatty(1);
    if (table)
        printf("%-10s %-12s %-12s %-12s %s\n", "ID", "STATUS", "QUEUE", "TYPE", "RUN_AT");
    char next[32] = "";
    int rc = CLI_OK;
    /* Follow the cursor until limit jobs are printed or the list ends. */
    while (limit > 0) {
        char path[1024] = "";
        char lim[24];
        snprintf(lim, sizeof lim, "%ld", limit > JOB_PAGE_MAX ? (long)JOB_PAGE_MAX : limit);
        if (!add_query(path, sizeof path, "status", status) ||
            !add_query(path, sizeof path, "queue", queue) ||
            !add_query(path, sizeof path, "type", type) ||
            !add_query(path, sizeof path, "created_after", after) ||
            !add_query(path, sizeof path, "created_before", before) ||
            !add_query(path, sizeof path, "key", key) ||
            !add_query(path, sizeof path, "limit", lim) ||
            !add_query(path, sizeof path, "after", next[0] ? next : NULL))
            return cli_usage_error("jobs", "filter values are too long", NULL, jobs_usage);
        char full[1100];
        snprintf(full, sizeof full, "/v1/jobs%s", path);
        long got = jobs_page(cli_server_url(server), full, table, next, sizeof next, &rc);
        if (got < 0)
            return rc;
        limit -= got;
        if (next[0] == '\0' || got == 0)
            break;
    }
    return CLI_OK;
}

static void
queues_header(void)
{
    printf("%-20s %-6s %9s %9s %9s %9s %9s  %s\n", "QUEUE", "PAUSED", "PENDING", "RUNNING",
           "SUCCEEDED", "DEAD", "CANCELLED", "LIMITS");
}

static void
queues_row(const json_t *q)
{
    printf("%-20s %-6s", json_string_value(json_object_get(q, "name")),
           json_is_true(json_object_get(q, "paused")) ? "yes" : "no");
    const char *cols[] = {"pending", "running", "succeeded", "dead", "cancelled"};
    for (int k = 0; k < 5; k++)
        printf(" %9lld", (long long)json_integer_value(json_object_get(q, cols[k])));
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
    putchar('\n');
}

int
cmd_queues(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "limit") == 0 || strcmp(argv[1], "pause") == 0 ||
                     strcmp(argv[1], "resume") == 0))
        return cli_queues_action(argc - 1, argv + 1);
    static const struct cli_listing l = {"queues", queues_usage,  "/v1/queues",
                                         "queues", queues_header, queues_row};
    return cli_listing_run(argc, argv, &l);
}
