/*
 * schedule.c — `jobd schedule add|ls|rm|pause|resume|trigger` over the
 * HTTP API (CONTRACT.md §3), like the other client commands: parse, send
 * one request, print the answer as JSON. `add` creates or replaces (PUT).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/http.h"

static const char usage[] =
    "usage: jobd schedule add NAME CRON TYPE [--tz ZONE] [--payload JSON] [--queue Q]\n"
    "                         [--priority N] [--max-attempts N] [--catchup once|all|skip]\n"
    "       jobd schedule ls\n"
    "       jobd schedule rm|pause|resume|trigger NAME\n"
    "  all take [--server URL] (default $JOBD_SERVER, else http://127.0.0.1:8080)\n"
    "\n"
    "add creates or replaces a schedule; ls lists them; rm deletes one (the jobs\n"
    "it made stay); trigger makes one job now. Output is JSON.\n";

static int
bad_usage(const char *msg, const char *arg)
{
    fprintf(stderr, "jobd schedule: %s%s%s\n%s", msg, arg ? " " : "", arg ? arg : "", usage);
    return CLI_USAGE;
}

/* Sends and prints; a 204 prints nothing. */
static int
send_print(const char *server, const char *method, const char *path, const char *body)
{
    struct cli_http_resp r;
    int rc = cli_http(server, method, path, body, &r);
    if (rc != CLI_OK)
        return rc;
    if (r.status < 200 || r.status > 299)
        rc = cli_http_fail(&r);
    else if (r.len > 0)
        printf("%s%s", r.body, r.body[r.len - 1] == '\n' ? "" : "\n");
    free(r.body);
    return rc;
}

struct add_opts {
    const char *tz, *payload, *queue, *priority, *max_attempts, *catchup;
};

static int
add_body(const char *cron, const char *type, const struct add_opts *o, char **out)
{
    json_t *b = json_pack("{s:s, s:s}", "cron", cron, "type", type);
    if (b == NULL)
        return bad_usage("arguments must be valid UTF-8", NULL);
    if (o->tz)
        json_object_set_new(b, "timezone", json_string(o->tz));
    if (o->queue)
        json_object_set_new(b, "queue", json_string(o->queue));
    if (o->catchup)
        json_object_set_new(b, "catchup", json_string(o->catchup));
    const char *nums[2][2] = {{"priority", o->priority}, {"max_attempts", o->max_attempts}};
    for (int i = 0; i < 2; i++) {
        if (nums[i][1] == NULL)
            continue;
        char *end;
        long long v = strtoll(nums[i][1], &end, 10);
        if (*nums[i][1] == '\0' || *end != '\0') {
            json_decref(b);
            return bad_usage("not an integer:", nums[i][1]);
        }
        json_object_set_new(b, nums[i][0], json_integer(v));
    }
    if (o->payload) {
        json_error_t je;
        json_t *p = json_loads(o->payload, JSON_DECODE_ANY, &je);
        if (p == NULL) {
            json_decref(b);
            return bad_usage("--payload is not valid JSON:", je.text);
        }
        json_object_set_new(b, "payload", p);
    }
    *out = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    return *out ? CLI_OK : bad_usage("arguments must be valid UTF-8", NULL);
}

int
cmd_schedule(int argc, char **argv)
{
    const char *pos[4] = {0};
    int npos = 0;
    const char *server = NULL;
    struct add_opts o = {0};
    struct {
        const char *flag;
        const char **dst;
    } flags[] = {{"--tz", &o.tz},           {"--payload", &o.payload},
                 {"--queue", &o.queue},     {"--priority", &o.priority},
                 {"--max-attempts", &o.max_attempts}, {"--catchup", &o.catchup},
                 {"--server", &server}};
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            fputs(usage, stdout);
            return CLI_OK;
        }
        bool matched = false;
        for (size_t f = 0; f < sizeof flags / sizeof flags[0] && !matched; f++) {
            size_t n = strlen(flags[f].flag);
            if (strncmp(argv[i], flags[f].flag, n) != 0)
                continue;
            if (argv[i][n] == '=') {
                *flags[f].dst = argv[i] + n + 1;
                matched = true;
            } else if (argv[i][n] == '\0') {
                if (i + 1 >= argc)
                    return bad_usage("missing value for", argv[i]);
                *flags[f].dst = argv[++i];
                matched = true;
            }
        }
        if (matched)
            continue;
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return bad_usage("unknown option", argv[i]);
        if (npos == 4)
            return bad_usage("unexpected argument", argv[i]);
        pos[npos++] = argv[i];
    }
    if (npos == 0)
        return bad_usage("missing action", NULL);
    const char *act = pos[0];
    const char *srv = cli_server_url(server);
    if (strcmp(act, "ls") == 0) {
        if (npos != 1)
            return bad_usage("ls takes no argument", NULL);
        return send_print(srv, "GET", "/v1/schedules", NULL);
    }
    if (npos < 2)
        return bad_usage("missing NAME", NULL);
    char *name = cli_http_escape(pos[1]);
    if (name == NULL)
        return CLI_FAILED;
    char path[600];
    snprintf(path, sizeof path, "/v1/schedules/%s", name);
    free(name);
    if (strcmp(act, "add") == 0) {
        if (npos != 4)
            return bad_usage("add needs NAME CRON TYPE", NULL);
        char *body = NULL;
        int rc = add_body(pos[2], pos[3], &o, &body);
        if (rc != CLI_OK)
            return rc;
        rc = send_print(srv, "PUT", path, body);
        free(body);
        return rc;
    }
    if (npos != 2)
        return bad_usage("too many arguments for", act);
    if (strcmp(act, "rm") == 0)
        return send_print(srv, "DELETE", path, NULL);
    if (strcmp(act, "pause") == 0 || strcmp(act, "resume") == 0 ||
        strcmp(act, "trigger") == 0) {
        size_t used = strlen(path);
        snprintf(path + used, sizeof path - used, "/%s", act);
        return send_print(srv, "POST", path, NULL);
    }
    return bad_usage("unknown action", act);
}
