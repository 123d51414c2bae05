/*
 * workers.c — `jobd workers` (GET /v1/workers): the workers that announced
 * themselves, a table on a terminal, one JSON object a line when piped.
 *
 * The table shows what each worker claims (queues, types) and the ids of
 * the jobs it holds, so "why is my job not running" is answered on one
 * screen. Every page is read before printing so that each column is as
 * wide as its widest value (worker ids run from "w1" to "host:pid" and
 * longer); the held job ids come last, unpadded, as the list can be long.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/listing.h"

static const char workers_usage[] =
    "usage: jobd workers [--server URL]\n"
    "\n"
    "Lists the workers (--db and --server workers and servers' own) with their\n"
    "state: active, draining (stopping, finishing its jobs) or gone (not seen for\n"
    "3 heartbeat intervals; listed for an hour after), the queues (* for every\n"
    "queue) and types each claims, and the ids of the jobs each holds (JOBS).\n"
    "A table on a terminal, one JSON object a line when piped; every page of\n"
    "GET /v1/workers is read, however many workers there are.\n";

#define N_COLS 9
#define CELL 256
static const char *const col_names[N_COLS] = {"ID",     "HOST",  "STATE",        "PID", "RUNNING",
                                              "QUEUES", "TYPES", "LAST_SEEN_AT", "JOBS"};

/* Appends s to buf (size CELL) with control characters as '?'; truncates. */
static void
put_clean(char *buf, const char *s)
{
    size_t n = strlen(buf);
    for (; s && *s && n + 1 < CELL; s++)
        buf[n++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
    buf[n] = '\0';
}

/* The strings of array a joined with ","; empty for [] (the caller's default). */
static void
join_strings(char *buf, const json_t *a)
{
    size_t i;
    const json_t *s;
    buf[0] = '\0';
    json_array_foreach(a, i, s) {
        if (i > 0)
            put_clean(buf, ",");
        put_clean(buf, json_string_value(s));
    }
}

/* The cells of worker w but JOBS (printed from the JSON itself). */
static void
row_cells(const json_t *w, char cell[N_COLS][CELL])
{
    for (int c = 0; c < N_COLS; c++)
        cell[c][0] = '\0';
    const char *id = json_string_value(json_object_get(w, "id"));
    const char *host = json_string_value(json_object_get(w, "hostname"));
    const char *state = json_string_value(json_object_get(w, "state"));
    put_clean(cell[0], id ? id : "-");
    put_clean(cell[1], host && *host ? host : "-");
    put_clean(cell[2], state ? state : "-");
    long long pid = (long long)json_integer_value(json_object_get(w, "pid"));
    if (pid > 0) /* a worker known only from its claims has no pid */
        snprintf(cell[3], CELL, "%lld", pid);
    else
        put_clean(cell[3], "-");
    snprintf(cell[4], CELL, "%lld/%lld", (long long)json_array_size(json_object_get(w, "running")),
             (long long)json_integer_value(json_object_get(w, "concurrency")));
    join_strings(cell[5], json_object_get(w, "queues"));
    if (cell[5][0] == '\0')
        put_clean(cell[5], "*"); /* [] claims from every queue */
    join_strings(cell[6], json_object_get(w, "types"));
    if (cell[6][0] == '\0')
        put_clean(cell[6], "-");
    const char *seen = json_string_value(json_object_get(w, "last_seen_at"));
    put_clean(cell[7], seen ? seen : "-");
}

/* The ids of the jobs w holds, "12,15"; "-" for none. Never truncated. */
static void
put_jobs(const json_t *w)
{
    size_t i;
    const json_t *id;
    const json_t *running = json_object_get(w, "running");
    json_array_foreach(running, i, id)
        printf("%s%lld", i ? "," : "", (long long)json_integer_value(id));
    if (json_array_size(running) == 0)
        putchar('-');
}

/* Pads every column but the last to its width w[c]; PID and RUNNING right-aligned. */
static void
put_cells(const int *w, const char *const *cells)
{
    for (int c = 0; c < N_COLS - 1; c++)
        printf(c == 3 || c == 4 ? "%*s  " : "%-*s  ", w[c], cells[c]);
}

static void
print_table(const json_t *workers)
{
    int w[N_COLS];
    char cell[N_COLS][CELL];
    const char *cells[N_COLS];
    for (int c = 0; c < N_COLS; c++) {
        w[c] = (int)strlen(col_names[c]);
        cells[c] = cell[c];
    }
    size_t i;
    const json_t *wk;
    json_array_foreach(workers, i, wk) {
        row_cells(wk, cell);
        for (int c = 0; c < N_COLS - 1; c++)
            if ((int)strlen(cell[c]) > w[c])
                w[c] = (int)strlen(cell[c]);
    }
    put_cells(w, col_names);
    puts(col_names[N_COLS - 1]);
    json_array_foreach(workers, i, wk) {
        row_cells(wk, cell);
        put_cells(w, cells);
        put_jobs(wk);
        putchar('\n');
    }
}

int
cmd_workers(int argc, char **argv)
{
    static const struct cli_listing l = {"workers", workers_usage, "/v1/workers", "workers",  NULL,
                                         NULL,      true,          NULL,          print_table};
    return cli_listing_run(argc, argv, &l);
}
