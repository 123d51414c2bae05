/*
 * qgroups.c — `jobd queues groups NAME [--limit N]`: the queue's busiest
 * groups (GET /v1/queues/NAME/groups, docs/MODEL.md, Groups), a table on a
 * terminal (GROUP PENDING RUNNING; "-" for the jobs without a group), the
 * server's JSON when piped. Thin: the server counts and orders.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/http.h"

static const char qgroups_usage[] =
    "usage: jobd queues groups NAME [--limit N] [--server URL]\n"
    "\n"
    "Lists the groups of queue NAME that have pending or running jobs, busiest\n"
    "first, with how many of each: a table on a terminal (- is the jobs without a\n"
    "group), the server's JSON when piped. --limit: at most N groups (1 to 1000,\n"
    "default 100).\n";

/* Prints the answer's groups as a table. */
static void
print_table(const char *body)
{
    json_t *o = json_loads(body, 0, NULL);
    printf("%-40s %10s %10s\n", "GROUP", "PENDING", "RUNNING");
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(o, "groups"), i, g) {
        const char *name = json_string_value(json_object_get(g, "group"));
        printf("%-40s %10lld %10lld\n", name ? name : "-",
               (long long)json_integer_value(json_object_get(g, "pending")),
               (long long)json_integer_value(json_object_get(g, "running")));
    }
    json_decref(o);
}

int
cli_queues_groups(int argc, char **argv)
{
    const char *server = NULL, *limit = NULL;
    for (int i = 1; i < argc; i++)
        if (cli_is_help(argv[i])) {
            fputs(qgroups_usage, stdout);
            return CLI_OK;
        }
    if (argc < 2 || argv[1][0] == '-')
        return cli_usage_error("queues groups", "missing the queue name after", argv[0]);
    for (int i = 2; i < argc; i++) {
        bool miss = false;
        const char *v;
        long n;
        if ((v = cli_opt(argc, argv, &i, "--limit", &miss))) {
            if (!cli_parse_int(v, 1, 1000, &n))
                return cli_usage_error("queues groups", "--limit must be 1 to 1000, not", v);
            limit = v;
        } else if (!miss && (v = cli_opt(argc, argv, &i, "--server", &miss))) {
            server = v;
        } else {
            return cli_usage_error("queues groups",
                                   miss ? "missing value for" : "unexpected argument", argv[i]);
        }
    }
    char *name = cli_http_escape(argv[1]);
    if (name == NULL)
        return CLI_FAILED;
    char path[1024];
    snprintf(path, sizeof path, "/v1/queues/%s/groups%s%s", name, limit ? "?limit=" : "",
             limit ? limit : "");
    free(name);
    struct cli_http_resp r = {0};
    int rc = cli_http("queues groups", cli_server_url(server), "GET", path, NULL, &r);
    if (rc != CLI_OK)
        return rc;
    if (r.status / 100 != 2)
        rc = cli_http_fail("queues groups", &r);
    else if (isatty(STDOUT_FILENO))
        print_table(r.body);
    else
        printf("%s\n", r.body);
    free(r.body);
    return rc;
}
