/*
 * workers.c — `jobd workers` (GET /v1/workers): the workers that announced
 * themselves, a table on a terminal, one JSON object a line when piped.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/http.h"

static const char workers_usage[] =
    "usage: jobd workers [--server URL]\n"
    "\n"
    "Lists the workers (--db workers and servers' own; not yet --server ones) with their\n"
    "state: active, draining (stopping, finishing its jobs) or gone (not seen for\n"
    "3 heartbeat intervals; listed for an hour after), and the jobs each holds.\n"
    "A table on a terminal, one JSON object a line when piped.\n";

/* Copies s into buf with control characters as '?'. */
static const char *
clean(const char *s, char *buf, size_t len)
{
    size_t n = 0;
    for (; s && *s && n + 1 < len; s++)
        buf[n++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
    buf[n] = '\0';
    return buf;
}

static void
print_row(json_t *w)
{
    char id[41], host[25];
    printf("%-40s %-24s %-9s %6lld %5lld/%-5lld %s\n",
           clean(json_string_value(json_object_get(w, "id")), id, sizeof id),
           clean(json_string_value(json_object_get(w, "hostname")), host, sizeof host),
           json_string_value(json_object_get(w, "state")),
           (long long)json_integer_value(json_object_get(w, "pid")),
           (long long)json_array_size(json_object_get(w, "running")),
           (long long)json_integer_value(json_object_get(w, "concurrency")),
           json_string_value(json_object_get(w, "last_seen_at")));
}

int
cmd_workers(int argc, char **argv)
{
    const char *server = NULL;
    for (int i = 1; i < argc; i++) {
        bool miss = false;
        const char *v;
        if (cli_is_help(argv[i])) {
            fputs(workers_usage, stdout);
            return CLI_OK;
        } else if ((v = cli_opt(argc, argv, &i, "--server", &miss))) {
            server = v;
        } else {
            return cli_usage_error("workers", miss ? "missing value for" : "unexpected argument",
                                   argv[i], workers_usage);
        }
    }
    struct cli_http_resp r;
    int rc = cli_http(cli_server_url(server), "GET", "/v1/workers", NULL, &r);
    if (rc != CLI_OK)
        return rc;
    if (r.status != 200) {
        rc = cli_http_fail(&r);
        free(r.body);
        return rc;
    }
    json_t *o = json_loadb(r.body, r.len, 0, NULL);
    free(r.body);
    bool table = isatty(1);
    if (table)
        printf("%-40s %-24s %-9s %6s %11s %s\n", "ID", "HOST", "STATE", "PID", "RUNNING",
               "LAST_SEEN_AT");
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(o, "workers"), i, w) {
        if (table) {
            print_row(w);
        } else {
            char *line = json_dumps(w, JSON_COMPACT | JSON_PRESERVE_ORDER);
            if (line)
                puts(line);
            free(line);
        }
    }
    json_decref(o);
    return CLI_OK;
}
