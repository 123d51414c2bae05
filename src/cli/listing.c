/*
 * listing.c — read-only listing commands (see listing.h).
 */
#include "cli/listing.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/http.h"
#include "cli/opts.h"
#include "core/json.h"

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

/* Rows asked for per page: the most the server gives (docs/API.md, Paging). */
#define CLI_LIST_PAGE 1000

/* The path of the page after cursor after (NULL: the first); malloc'd or NULL. */
static char *
page_path(const struct cli_listing *l, bool table, const char *after)
{
    if (!l->paged)
        return strdup(l->path);
    char *e = after ? cli_http_escape(after) : NULL;
    if (after != NULL && e == NULL)
        return NULL;
    const char *extra = table ? NULL : l->piped_query;
    size_t n = strlen(l->path) + (extra ? strlen(extra) : 0) + (e ? strlen(e) : 0) + 32;
    char *p = malloc(n);
    if (p != NULL)
        snprintf(p, n, "%s?limit=%d%s%s%s%s", l->path, CLI_LIST_PAGE, extra ? "&" : "",
                 extra ? extra : "", e ? "&after=" : "", e ? e : "");
    free(e);
    return p;
}

/* GETs one page; its answer (new reference) in *out. CLI_*. */
static int
get_page(const char *cmd, const char *server, const char *path, json_t **out)
{
    struct cli_http_resp r;
    int rc = cli_http(cmd, server, "GET", path, NULL, &r);
    if (rc != CLI_OK)
        return rc;
    if (r.status != 200) {
        rc = cli_http_fail(cmd, &r);
        free(r.body);
        return rc;
    }
    *out = json_loadb(r.body, r.len, 0, NULL);
    free(r.body);
    if (!json_is_object(*out)) {
        json_decref(*out);
        fprintf(stderr, "jobd %s: the server's answer is not JSON\n", cmd);
        return CLI_FAILED;
    }
    return CLI_OK;
}

/* false when a row could not be printed (out of memory): never a silent gap. */
static bool
print_rows(const struct cli_listing *l, bool table, const json_t *arr)
{
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        if (table) {
            l->row(e);
        } else {
            char *line = json_print(e, 0);
            if (line == NULL)
                return false;
            puts(line);
            free(line);
        }
    }
    return true;
}

/*
 * l->table on a terminal: every page first, then the table at once, so its
 * columns can be as wide as their data. Returns the exit status.
 */
static int
print_whole_table(const char *server, const struct cli_listing *l)
{
    json_t *all = json_array();
    char *after = NULL;
    int rc = all != NULL ? CLI_OK : cli_error(l->cmd, JOBD_E_NOMEM, NULL);
    for (bool first = true; rc == CLI_OK && (first || after != NULL); first = false) {
        char *path = page_path(l, true, after);
        json_t *o = NULL;
        rc = path ? get_page(l->cmd, cli_server_url(server), path, &o)
                  : cli_error(l->cmd, JOBD_E_NOMEM, NULL);
        free(path);
        free(after);
        after = NULL;
        json_t *arr = json_object_get(o, l->key);
        if (rc == CLI_OK && !json_is_array(arr)) {
            fprintf(stderr, "jobd %s: the server's answer has no %s list\n", l->cmd, l->key);
            rc = CLI_FAILED;
        } else if (rc == CLI_OK && json_array_extend(all, arr) != 0) {
            rc = cli_error(l->cmd, JOBD_E_NOMEM, NULL);
        }
        const char *next = json_string_value(json_object_get(o, "next"));
        if (rc == CLI_OK && next != NULL && json_array_size(arr) > 0 &&
            (after = strdup(next)) == NULL)
            rc = cli_error(l->cmd, JOBD_E_NOMEM, NULL);
        json_decref(o);
    }
    free(after);
    if (rc == CLI_OK)
        l->table(all);
    json_decref(all);
    return rc;
}

int
cli_listing_print(const char *server, const struct cli_listing *l)
{
    bool table = isatty(1);
    if (table && l->table != NULL)
        return print_whole_table(server, l);
    char *after = NULL;
    int rc = CLI_OK;
    for (bool first = true; rc == CLI_OK && (first || after != NULL); first = false) {
        char *path = page_path(l, table, after);
        json_t *o = NULL;
        rc = path ? get_page(l->cmd, cli_server_url(server), path, &o)
                  : cli_error(l->cmd, JOBD_E_NOMEM, NULL);
        free(path);
        free(after);
        after = NULL;
        json_t *arr = json_object_get(o, l->key);
        if (rc == CLI_OK && !json_is_array(arr)) {
            fprintf(stderr, "jobd %s: the server's answer has no %s list\n", l->cmd, l->key);
            rc = CLI_FAILED;
        }
        if (rc == CLI_OK && first && table)
            l->header();
        if (rc == CLI_OK && !print_rows(l, table, arr))
            rc = cli_error(l->cmd, JOBD_E_NOMEM, NULL);
        const char *next = json_string_value(json_object_get(o, "next"));
        if (rc == CLI_OK && next != NULL && json_array_size(arr) > 0 &&
            (after = strdup(next)) == NULL)
            rc = cli_error(l->cmd, JOBD_E_NOMEM, NULL);
        json_decref(o);
    }
    free(after);
    return rc;
}

int
cli_listing_run(int argc, char **argv, const struct cli_listing *l)
{
    const char *server = NULL;
    bool done = false;
    int rc = parse_args(argc, argv, l, &server, &done);
    if (rc != CLI_OK || done)
        return rc;
    return cli_listing_print(server, l);
}
