/*
 * bulk.c — `jobd jobs retry|cancel|delete [filters]` (POST /v1/jobs/bulk)
 * and `jobd job delete ID` (DELETE /v1/jobs/{id}).
 *
 * The filter flags are those of `jobd jobs` plus --created-after,
 * --created-before and --ids; at least one is required, as the server
 * requires, so a bare `jobd jobs delete` cannot empty the store by accident.
 * --dry-run sends nothing that changes a job: bulk_dry.c lists the matches.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/http.h"
#include "cli/opts.h"
#include "core/job.h"
#include "core/json.h"

static const char bulk_usage[] =
    "usage: jobd jobs retry|cancel|delete [--status S] [--queue Q] [--type T]\n"
    "                 [--schedule NAME] [--created-after TIME] [--created-before TIME]\n"
    "                 [--key KEY] [--ids 1,2,3] [--limit N] [--dry-run] [--server URL]\n"
    "\n"
    "Retries, cancels or deletes every job that matches the filters (at least one),\n"
    "up to --limit jobs (default 10000, at most 100000), in batches of 1000. Each job\n"
    "takes the same transition as `jobd job retry|cancel` (or is deleted), or is\n"
    "skipped when its status does not allow it (running jobs are never deleted).\n"
    "Prints how many jobs matched, changed and were skipped: as text on a terminal,\n"
    "as JSON when piped.\n"
    "  --dry-run   change nothing: print how many jobs and which would match (and how\n"
    "              many of them their status lets change), read with GET /v1/jobs\n";

/* The limit of a bulk action that names none (docs/API.md, POST /v1/jobs/bulk). */
#define CLI_BULK_DEFAULT_LIMIT 10000

struct bulk_opts {
    long limit; /* 0: the server's default */
    const char *server;
    bool dry_run;
};

/* Parses "1,2,3" into a JSON array of ids; NULL on a bad list. */
static json_t *
parse_ids(const char *s)
{
    json_t *arr = json_array();
    while (arr != NULL && *s) {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || v < 1 || (*end != ',' && *end != '\0')) {
            json_decref(arr);
            return NULL;
        }
        json_array_append_new(arr, json_integer(v));
        s = *end == ',' ? end + 1 : end;
    }
    return arr;
}

/* Reads the filter flags into filter and the other flags into o; returns
 * CLI_OK, a usage error (named "jobs ACTION"), or -1 after printing the help. */
static int
bulk_parse(int argc, char **argv, json_t *filter, struct bulk_opts *o)
{
    enum { N_STR = 7, B_IDS = N_STR, B_LIMIT, B_SERVER, B_DRY };
    static const struct cli_optdef defs[] = {
        {"--status", 0, true},
        {"--queue", 0, true},
        {"--type", 0, true},
        {"--schedule", 0, true},
        {"--created-after", 0, true},
        {"--created-before", 0, true},
        {"--key", 0, true},
        [B_IDS] = {"--ids", 0, true},
        [B_LIMIT] = {"--limit", 'n', true},
        [B_SERVER] = {"--server", 0, true},
        [B_DRY] = {"--dry-run", 0, false},
        {NULL, 0, false},
    };
    static const char *const keys[N_STR] = {"status",        "queue",          "type", "schedule",
                                            "created_after", "created_before", "key"};
    char cmd[32];
    snprintf(cmd, sizeof cmd, "jobs %s", argv[0]);
    struct cli_args a;
    cli_args_init(&a, cmd, argc, argv, 1);
    int k;
    const char *v;
    for (enum cli_arg t; (t = cli_args_next(&a, defs, &k, &v)) != CLI_ARG_END;) {
        if (t == CLI_ARG_HELP) {
            fputs(bulk_usage, stdout);
            return -1;
        }
        if (t == CLI_ARG_BAD)
            return CLI_USAGE;
        if (t != CLI_ARG_OPT)
            return cli_usage_error(cmd, "unexpected argument", v);
        if (k < N_STR) {
            json_object_set_new(filter, keys[k], json_string(v));
        } else if (k == B_IDS) {
            json_t *ids = parse_ids(v);
            if (ids == NULL)
                return cli_usage_error(cmd, "--ids must be job ids separated by commas, not", v);
            json_object_set_new(filter, "ids", ids);
        } else if (k == B_LIMIT) {
            if (!cli_parse_int(v, 1, JOB_BULK_MAX, &o->limit))
                return cli_usage_error(cmd, "--limit must be an integer from 1 to 100000, not", v);
        } else if (k == B_DRY) {
            o->dry_run = true;
        } else {
            o->server = v;
        }
    }
    if (json_object_size(filter) == 0)
        return cli_usage_error(cmd, "give at least one filter (--status, --queue, ...)", NULL);
    return CLI_OK;
}

/* Prints the answer {matched, changed, skipped}. */
static void
print_counts(const char *body, size_t len)
{
    json_t *o = json_loadb(body, len, 0, NULL);
    if (isatty(1) && json_is_object(o)) {
        printf("matched %lld, changed %lld, skipped %lld\n",
               (long long)json_integer_value(json_object_get(o, "matched")),
               (long long)json_integer_value(json_object_get(o, "changed")),
               (long long)json_integer_value(json_object_get(o, "skipped")));
    } else {
        fwrite(body, 1, len, stdout);
        putchar('\n');
    }
    json_decref(o);
}

int
cli_jobs_bulk(int argc, char **argv)
{
    json_t *filter = json_object();
    struct bulk_opts o = {0};
    int rc = bulk_parse(argc, argv, filter, &o);
    if (rc != CLI_OK || o.dry_run) {
        if (rc == CLI_OK)
            rc = cli_jobs_bulk_dry(argv[0], o.server, filter,
                                   o.limit > 0 ? o.limit : CLI_BULK_DEFAULT_LIMIT);
        json_decref(filter);
        return rc < 0 ? CLI_OK : rc;
    }
    char cmd[32];
    snprintf(cmd, sizeof cmd, "jobs %s", argv[0]);
    long limit = o.limit;
    json_t *body = json_pack("{s:s, s:o}", "action", argv[0], "filter", filter);
    if (limit > 0)
        json_object_set_new(body, "limit", json_integer(limit));
    char *text = json_print(body, 0);
    json_decref(body);
    if (text == NULL) {
        fprintf(stderr, "jobd %s: a filter value is not valid UTF-8 or memory ran out\n", cmd);
        return CLI_USAGE;
    }
    struct cli_http_resp r;
    rc = cli_http(cmd, cli_server_url(o.server), "POST", "/v1/jobs/bulk", text, &r);
    free(text);
    if (rc != CLI_OK)
        return rc;
    if (r.status != 200)
        rc = cli_http_fail(cmd, &r);
    else
        print_counts(r.body, r.len);
    free(r.body);
    return rc;
}

int
cli_job_delete(const char *server, long id)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%ld", id);
    struct cli_http_resp r;
    int rc = cli_http("job delete", server, "DELETE", path, NULL, &r);
    if (rc != CLI_OK)
        return rc;
    if (r.status < 200 || r.status > 299)
        rc = cli_http_fail("job delete", &r);
    free(r.body);
    return rc;
}
