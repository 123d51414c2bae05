/*
 * listing.c — read-only listing commands (see listing.h).
 */
#include "cli/listing.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/http.h"
#include "cli/opts.h"

/* Reads argv: only --server and --help. Sets *done when help was printed. */
static int
parse_args(int argc, char **argv, const struct cli_listing *l, const char **server, bool *done)
{
    static const struct cli_optdef defs[] = {{"--server", 0, true}, {NULL, 0, false}};
    struct cli_args a;
    cli_args_init(&a, l->cmd, argc, argv, 1);
    int k;
    const char *v;
    for (enum cli_arg t; (t = cli_args_next(&a, defs, &k, &v)) != CLI_ARG_END;) {
        if (t == CLI_ARG_HELP) {
            fputs(l->usage, stdout);
            *done = true;
            return CLI_OK;
        } else if (t == CLI_ARG_BAD) {
            return CLI_USAGE;
        } else if (t == CLI_ARG_POS) {
            return cli_usage_error(l->cmd, "unexpected argument", v);
        }
        *server = v;
    }
    return CLI_OK;
}

int
cli_listing_run(int argc, char **argv, const struct cli_listing *l)
{
    const char *server = NULL;
    bool done = false;
    int rc = parse_args(argc, argv, l, &server, &done);
    if (rc != CLI_OK || done)
        return rc;
    struct cli_http_resp r;
    if ((rc = cli_http(cli_server_url(server), "GET", l->path, NULL, &r)) != CLI_OK)
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
        l->header();
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(o, l->key), i, e) {
        if (table) {
            l->row(e);
        } else {
            char *line = json_dumps(e, CLI_JSON_OUT);
            if (line)
                puts(line);
            free(line);
        }
    }
    json_decref(o);
    return CLI_OK;
}
