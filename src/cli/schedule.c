/*
 * schedule.c — `jobd schedule add|ls|rm|pause|resume|trigger` over the HTTP
 * API (docs/CLI.md, "jobd schedule"; docs/API.md, "Schedules"). Thin like the
 * other client commands, and built on the same helpers (cli/http.h): the
 * server validates the cron expression and the zone, so the messages naming
 * the bad field come from one place. `add` uses PUT so that it creates or
 * replaces.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/http.h"
#include "cli/listing.h"
#include "cli/opts.h"
#include "core/job.h"
#include "core/json.h"

static const char schedule_usage[] =
    "usage: jobd schedule add NAME CRON TYPE [--tz ZONE] [--payload JSON] [--queue Q]\n"
    "                         [--priority N] [--max-attempts N] [--catchup once|all|skip]\n"
    "       jobd schedule ls\n"
    "       jobd schedule rm|pause|resume|trigger NAME\n"
    "  (every form also takes [--server URL]; default $JOBD_SERVER, else\n"
    "   http://127.0.0.1:8080; token: $JOBD_TOKEN)\n"
    "\n"
    "add creates or replaces a schedule, prints it as JSON and says on stderr which\n"
    "it did; a replace with the same CRON and --tz keeps the next firing. CRON has\n"
    "five fields (minute hour day-of-month month day-of-week) or six (a leading\n"
    "second), quote it.\n"
    "ls lists every schedule (all pages): a table on a terminal, one JSON object\n"
    "a line with its payload when piped.\n"
    "rm removes one (the jobs it made stay); pause and resume print the schedule;\n"
    "trigger makes a job due now and prints it.\n";

struct sched_opts {
    const char *pos[3];
    int npos;
    const char *tz, *payload, *queue, *catchup, *server;
    long priority, max_attempts;
    bool has_priority, has_max_attempts, help;
};

enum { SO_SERVER, SO_TZ, SO_PAYLOAD, SO_QUEUE, SO_CATCHUP, SO_PRIORITY, SO_MAX_ATTEMPTS };
/* add takes them all; the other actions only the first (the table cut short). */
static const struct cli_optdef sched_opts_def[] = {
    {"--server", 0, true},       {"--tz", 0, true},      {"--payload", 0, true},
    {"--queue", 0, true},        {"--catchup", 0, true}, {"--priority", 0, true},
    {"--max-attempts", 0, true}, {NULL, 0, false},
};
static const struct cli_optdef sched_server_def[] = {{"--server", 0, true}, {NULL, 0, false}};

/* Stores option k's value v in o; CLI_OK or a usage error. */
static int
sched_set(struct sched_opts *o, int k, const char *v)
{
    const char **dst[] = {[SO_SERVER] = &o->server,
                          [SO_TZ] = &o->tz,
                          [SO_PAYLOAD] = &o->payload,
                          [SO_QUEUE] = &o->queue,
                          [SO_CATCHUP] = &o->catchup};
    if (k == SO_CATCHUP && strcmp(v, "once") != 0 && strcmp(v, "all") != 0 &&
        strcmp(v, "skip") != 0)
        return cli_usage_error("schedule", "--catchup must be once, all or skip, not", v);
    if (k == SO_PRIORITY) {
        if (!cli_parse_int(v, JOB_PRIORITY_MIN, JOB_PRIORITY_MAX, &o->priority))
            return cli_usage_error("schedule", "--priority must be an integer, not", v);
        o->has_priority = true;
    } else if (k == SO_MAX_ATTEMPTS) {
        if (!cli_parse_int(v, 1, JOB_MAX_ATTEMPTS_MAX, &o->max_attempts))
            return cli_usage_error("schedule", "--max-attempts must be a positive integer, not", v);
        o->has_max_attempts = true;
    } else {
        *dst[k] = v;
    }
    return CLI_OK;
}

/* Parses argv[2..] (after "schedule ACTION"); returns CLI_OK or CLI_USAGE. */
static int
sched_parse(int argc, char **argv, bool is_add, struct sched_opts *o)
{
    struct cli_args a;
    cli_args_init(&a, "schedule", argc, argv, 2);
    int k, rc = CLI_OK;
    const char *v;
    const struct cli_optdef *defs = is_add ? sched_opts_def : sched_server_def;
    for (enum cli_arg t; rc == CLI_OK && (t = cli_args_next(&a, defs, &k, &v)) != CLI_ARG_END;) {
        if (t == CLI_ARG_HELP) {
            o->help = true;
            return CLI_OK;
        } else if (t == CLI_ARG_BAD) {
            return CLI_USAGE;
        } else if (t == CLI_ARG_OPT) {
            rc = sched_set(o, k, v);
        } else if (o->npos >= 3) {
            return cli_usage_error("schedule", "unexpected argument", v);
        } else {
            o->pos[o->npos++] = v;
        }
    }
    return rc;
}

/* Builds the PUT body of `add`; NULL after printing why (a usage error). */
static char *
add_body(const struct sched_opts *o)
{
    json_t *body = json_object();
    json_object_set_new(body, "cron", json_string(o->pos[1]));
    json_object_set_new(body, "type", json_string(o->pos[2]));
    if (o->payload) {
        json_error_t je;
        json_t *p = json_loads(o->payload, JSON_DECODE_ANY, &je);
        if (p == NULL) {
            json_decref(body);
            fprintf(stderr, "jobd schedule: --payload is not valid JSON: %s (column %d)\n", je.text,
                    je.column);
            return NULL;
        }
        json_object_set_new(body, "payload", p);
    }
    if (o->tz)
        json_object_set_new(body, "timezone", json_string(o->tz));
    if (o->queue)
        json_object_set_new(body, "queue", json_string(o->queue));
    if (o->catchup)
        json_object_set_new(body, "catchup", json_string(o->catchup));
    if (o->has_priority)
        json_object_set_new(body, "priority", json_integer(o->priority));
    if (o->has_max_attempts)
        json_object_set_new(body, "max_attempts", json_integer(o->max_attempts));
    char *text = json_print(body, 0);
    json_decref(body);
    if (text == NULL)
        fprintf(stderr, "jobd schedule: an argument is not valid UTF-8 or memory ran out\n");
    return text;
}

/* "/v1/schedules/NAME[/suffix]" with NAME escaped; malloc'd, NULL on out-of-memory. */
static char *
sched_path(const char *name, const char *suffix)
{
    char *e = cli_http_escape(name);
    if (e == NULL)
        return NULL;
    size_t len = strlen(e) + strlen(suffix) + 32;
    char *p = malloc(len);
    if (p != NULL)
        snprintf(p, len, "/v1/schedules/%s%s", e, suffix);
    free(e);
    return p;
}

static void
print_sched_row(const json_t *s)
{
    const char *cols[] = {"name", "cron", "timezone", "type"};
    const int widths[] = {20, 18, 16, 16};
    for (int k = 0; k < 4; k++) {
        const char *v = json_string_value(json_object_get(s, cols[k]));
        printf("%-*s ", widths[k], v ? v : "-");
    }
    const char *next = json_string_value(json_object_get(s, "next_run_at"));
    printf("%-6s %s\n", json_is_true(json_object_get(s, "paused")) ? "yes" : "no",
           next ? next : "-");
}

static void
print_sched_header(void)
{
    printf("%-20s %-18s %-16s %-16s %-6s %s\n", "NAME", "CRON", "TIMEZONE", "TYPE", "PAUSED",
           "NEXT_RUN_AT");
}

/* Every schedule, page after page; piped, each with its payload (?full=1). */
static int
sched_ls(const char *server)
{
    static const struct cli_listing l = {"schedule ls", schedule_usage,     "/v1/schedules",
                                         "schedules",   print_sched_header, print_sched_row,
                                         true,          "full=1",           NULL};
    return cli_listing_print(server, &l);
}

static int
sched_rm(const char *server, const char *name)
{
    char *path = sched_path(name, "");
    if (path == NULL)
        return CLI_FAILED;
    struct cli_http_resp r;
    int rc = cli_http("schedule rm", server, "DELETE", path, NULL, &r);
    free(path);
    if (rc != CLI_OK)
        return rc;
    if (r.status < 200 || r.status > 299)
        rc = cli_http_fail("schedule rm", &r);
    free(r.body);
    return rc;
}

int
cmd_schedule(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error("schedule", "missing action", NULL);
    const char *action = argv[1];
    if (cli_is_help(action)) {
        fputs(schedule_usage, stdout);
        return CLI_OK;
    }
    static const char *const actions[] = {"add", "ls", "rm", "pause", "resume", "trigger"};
    static const int want_pos[] = {3, 0, 1, 1, 1, 1};
    int a = -1;
    for (int k = 0; k < 6; k++)
        if (strcmp(action, actions[k]) == 0)
            a = k;
    if (a < 0)
        return cli_usage_error("schedule", "unknown action", action);
    struct sched_opts o = {0};
    int rc = sched_parse(argc, argv, a == 0, &o);
    if (rc != CLI_OK)
        return rc;
    if (o.help) {
        fputs(schedule_usage, stdout);
        return CLI_OK;
    }
    if (o.npos != want_pos[a])
        return cli_usage_error("schedule",
                               a == 0   ? "add needs NAME CRON TYPE"
                               : a == 1 ? "ls takes no arguments"
                                        : "need exactly one NAME",
                               NULL);
    const char *server = cli_server_url(o.server);
    if (a == 1)
        return sched_ls(server);
    if (a == 2)
        return sched_rm(server, o.pos[0]);
    char *body = NULL;
    if (a == 0 && (body = add_body(&o)) == NULL)
        return CLI_USAGE;
    char suffix[16] = "";
    if (a >= 3)
        snprintf(suffix, sizeof suffix, "/%s", action);
    char *path = sched_path(o.pos[0], suffix);
    if (path == NULL) {
        free(body);
        fprintf(stderr, "jobd schedule %s: out of memory\n", action);
        return CLI_FAILED;
    }
    struct cli_http_resp got = {0};
    char cmd[32];
    snprintf(cmd, sizeof cmd, "schedule %s", action);
    rc = cli_send_print_status(cmd, server, a == 0 ? "PUT" : "POST", path, body, &got);
    free(path);
    free(body);
    /* PUT answers 201 for a new schedule, 200 for one it replaced. */
    if (a == 0 && rc == CLI_OK)
        fprintf(stderr, "jobd schedule: %s schedule '%s'\n",
                got.status == 201 ? "created" : "replaced", o.pos[0]);
    return rc;
}
