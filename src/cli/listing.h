/*
 * listing.h — the shape shared by read-only listing commands (`jobd queues`,
 * `jobd workers`): they take only --server and --help, GET one route, and
 * print each element of one array of the answer, as a table on a terminal
 * and as JSON lines when piped. One function, so the commands differ only
 * in their columns. A list the server pages (an answer with "next": schedules,
 * workers) is read page after page until "next" is null, so the command
 * prints every row however many there are.
 */
#ifndef JOBD_CLI_LISTING_H
#define JOBD_CLI_LISTING_H

#include <jansson.h>
#include <stdbool.h>

struct cli_listing {
    const char *cmd;             /* "queues": named in usage errors */
    const char *usage;           /* printed for --help */
    const char *path;            /* the route to GET, "/v1/queues" */
    const char *key;             /* the answer's array, "queues" */
    void (*header)(void);        /* prints the table's header line */
    void (*row)(const json_t *); /* prints one element as a table row (borrowed) */
    bool paged;                  /* the route pages (?limit=&after=, "next") */
    const char *piped_query;     /* paged: NULL, or added to the query when piped ("full=1") */
    /* NULL, or on a terminal: every row of every page is collected first and
     * this prints them all (borrowed array), so columns can be as wide as their
     * data; header and row are then unused. */
    void (*table)(const json_t *rows);
};

/* Runs the listing command l over argv; returns an exit status (CLI_*). */
int cli_listing_run(int argc, char **argv, const struct cli_listing *l);
/* Prints every row of l from server (NULL: the default), all pages. CLI_*. */
int cli_listing_print(const char *server, const struct cli_listing *l);

#endif
