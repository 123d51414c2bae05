/*
 * listing.h — the shape shared by read-only listing commands (`jobd queues`,
 * `jobd workers`): they take only --server and --help, GET one route, and
 * print each element of one array of the answer, as a table on a terminal
 * and as JSON lines when piped. One function, so the commands differ only
 * in their columns.
 */
#ifndef JOBD_CLI_LISTING_H
#define JOBD_CLI_LISTING_H

#include <jansson.h>

struct cli_listing {
    const char *cmd;             /* "queues": named in usage errors */
    const char *usage;           /* printed for --help */
    const char *path;            /* the route to GET, "/v1/queues" */
    const char *key;             /* the answer's array, "queues" */
    void (*header)(void);        /* prints the table's header line */
    void (*row)(const json_t *); /* prints one element as a table row (borrowed) */
};

/* Runs the listing command l over argv; returns an exit status (CLI_*). */
int cli_listing_run(int argc, char **argv, const struct cli_listing *l);

#endif
