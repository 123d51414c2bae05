/*
 * workers.c — `jobd workers` (GET /v1/workers): the workers that announced
 * themselves, a table on a terminal, one JSON object a line when piped.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/listing.h"

static const char workers_usage[] =
    "usage: jobd workers [--server URL]\n"
    "\n"
    "Lists the workers (--db and --server workers and servers' own) with their\n"
    "state: active, draining (stopping, finishing its jobs) or gone (not seen for\n"
    "3 heartbeat intervals; listed for an hour after), and the jobs each holds.\n"
    "A table on a terminal, one JSON object a line when piped; every page of\n"
    "GET /v1/workers is read, however many workers there are.\n";

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
print_row(const json_t *w)
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

static void
print_header(void)
{
    printf("%-40s %-24s %-9s %6s %11s %s\n", "ID", "HOST", "STATE", "PID", "RUNNING",
           "LAST_SEEN_AT");
}

int
cmd_workers(int argc, char **argv)
{
    static const struct cli_listing l = {"workers",    workers_usage, "/v1/workers", "workers",
                                         print_header, print_row,     true,          NULL};
    return cli_listing_run(argc, argv, &l);
}
