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
    "3 heartbeat intervals; listed for an hour after), the queues (* = every\n"
    "queue) and job types each claims, and the ids of the jobs it holds.\n"
    "A table on a terminal, one JSON object a line when piped; every page of\n"
    "GET /v1/workers is read, however many workers there are.\n";

/* Column widths, from every row (print_header), so each column is as wide as its data. */
static int w_id = 2, w_host = 4, w_queues = 6, w_types = 5;

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

/* The array a (of names or of ids) joined by ',' into buf, cleaned; empty as dash. */
static const char *
joined(const json_t *a, const char *dash, char *buf, size_t len)
{
    size_t n = 0, i;
    const json_t *v;
    buf[0] = '\0';
    json_array_foreach(a, i, v) {
        char item[160];
        if (json_is_integer(v))
            snprintf(item, sizeof item, "%lld", (long long)json_integer_value(v));
        else
            clean(json_string_value(v), item, sizeof item);
        int w = snprintf(buf + n, len - n, "%s%s", i ? "," : "", item);
        if (w < 0 || (size_t)w >= len - n)
            break;
        n += (size_t)w;
    }
    if (n == 0)
        snprintf(buf, len, "%s", dash);
    return buf;
}

static int
widest(int w, const char *s)
{
    int n = (int)strlen(s);
    return n > w ? n : w;
}

static void
print_row(const json_t *w)
{
    char id[130], host[256], queues[1024], types[1024], jobs[1024];
    printf("%-*s  %-*s  %-8s  %7lld  %5lld/%-5lld  %-24s  %-*s  %-*s  %s\n", w_id,
           clean(json_string_value(json_object_get(w, "id")), id, sizeof id), w_host,
           clean(json_string_value(json_object_get(w, "hostname")), host, sizeof host),
           json_string_value(json_object_get(w, "state")),
           (long long)json_integer_value(json_object_get(w, "pid")),
           (long long)json_array_size(json_object_get(w, "running")),
           (long long)json_integer_value(json_object_get(w, "concurrency")),
           json_string_value(json_object_get(w, "last_seen_at")), w_queues,
           joined(json_object_get(w, "queues"), "*", queues, sizeof queues), w_types,
           joined(json_object_get(w, "types"), "-", types, sizeof types),
           joined(json_object_get(w, "running"), "-", jobs, sizeof jobs));
}

static void
print_header(const json_t *rows)
{
    size_t i;
    const json_t *w;
    json_array_foreach(rows, i, w) {
        char buf[1024];
        w_id = widest(w_id, clean(json_string_value(json_object_get(w, "id")), buf, 130));
        w_host = widest(w_host, clean(json_string_value(json_object_get(w, "hostname")), buf, 256));
        w_queues = widest(w_queues, joined(json_object_get(w, "queues"), "*", buf, sizeof buf));
        w_types = widest(w_types, joined(json_object_get(w, "types"), "-", buf, sizeof buf));
    }
    printf("%-*s  %-*s  %-8s  %7s  %11s  %-24s  %-*s  %-*s  %s\n", w_id, "ID", w_host, "HOST",
           "STATE", "PID", "RUNNING", "LAST_SEEN_AT", w_queues, "QUEUES", w_types, "TYPES", "JOBS");
}

int
cmd_workers(int argc, char **argv)
{
    static const struct cli_listing l = {"workers",    workers_usage, "/v1/workers", "workers",
                                         print_header, print_row,     true,          NULL};
    return cli_listing_run(argc, argv, &l);
}
