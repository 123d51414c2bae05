/*
 * workflows.c — `jobd workflows [filters]`: lists workflows through GET
 * /v1/workflows (docs/API.md, "Workflows"), newest first, following the
 * server's cursor until --limit workflows are printed, as `jobd jobs` does.
 *
 * A page of the API looks at up to `limit` workflows and keeps those of
 * the status asked for, so a page may hold fewer, even none, with more to
 * come: only a null `next` ends the list. On a terminal the rows are
 * collected first so that each column is as wide as its widest value;
 * piped, each workflow is one JSON line as the server sent it. When the
 * limit cut the list short, a line on stderr says how to get the next page.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/http.h"
#include "cli/opts.h"
#include "core/json.h"

static const char workflows_usage[] =
    "usage: jobd workflows [--status S] [--name NAME] [--limit N] [--after ID]\n"
    "                      [--server URL]\n"
    "\n"
    "Lists workflows, newest first (default limit 100): a table on a terminal, one\n"
    "JSON object a line when piped. --status is running, succeeded or failed;\n"
    "--name keeps the workflows of that exact name. STEPS is how many steps a\n"
    "workflow has, COUNTS how many of them are in each status. When more workflows\n"
    "match than --limit, a line on stderr gives the command for the next page\n"
    "(--after ID: workflows older than workflow ID). jobd workflow show ID draws one.\n";

/* The most the server gives in one page (docs/API.md, "Workflows"). */
#define WFL_PAGE_MAX 100
#define WFL_DEFAULT 100

enum { W_STATUS, W_NAME, W_LIMIT, W_AFTER, W_SERVER };
static const struct cli_optdef wfl_opts[] = {
    [W_STATUS] = {"--status", 0, true}, [W_NAME] = {"--name", 0, true},
    [W_LIMIT] = {"--limit", 'n', true}, [W_AFTER] = {"--after", 0, true},
    [W_SERVER] = {"--server", 0, true}, {NULL, 0, false},
};

struct wfl_opts {
    const char *status, *name, *server;
    char after[32]; /* the cursor: "" for the first page */
    long limit;
};

/* CLI_OK, a usage error, or -1 after printing the help. */
static int
wfl_parse(int argc, char **argv, struct wfl_opts *o)
{
    struct cli_args a;
    cli_args_init(&a, "workflows", argc, argv, 1);
    int k = 0;
    const char *v;
    long id;
    for (enum cli_arg t; (t = cli_args_next(&a, wfl_opts, &k, &v)) != CLI_ARG_END;) {
        if (t == CLI_ARG_HELP) {
            fputs(workflows_usage, stdout);
            return -1;
        }
        if (t == CLI_ARG_BAD)
            return CLI_USAGE;
        if (t == CLI_ARG_POS)
            return cli_usage_error("workflows", "unexpected argument", v);
        if (k == W_STATUS) {
            o->status = v;
        } else if (k == W_NAME) {
            o->name = v;
        } else if (k == W_SERVER) {
            o->server = v;
        } else if (k == W_LIMIT) {
            if (!cli_parse_int(v, 1, 100000000, &o->limit))
                return cli_usage_error("workflows", "--limit must be a positive integer, not", v);
        } else if (!cli_parse_int(v, 1, 0x7fffffffffffffffL, &id)) {
            return cli_usage_error("workflows", "--after must be a workflow ID, not", v);
        } else {
            snprintf(o->after, sizeof o->after, "%ld", id);
        }
    }
    return CLI_OK;
}

#define N_COLS 6
#define CELL 256 /* a name is at most 200 bytes (docs/API.md, "Workflows") */
static const char *const col_names[N_COLS] = {"ID",    "NAME",       "STATUS",
                                              "STEPS", "CREATED_AT", "COUNTS"};

/* Copies s into buf (size CELL) with control characters and DEL as '?'; "-" for NULL. */
static void
clean(const char *s, char *buf)
{
    size_t n = 0;
    for (s = s ? s : "-"; *s && n + 1 < CELL; s++)
        buf[n++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
    buf[n] = '\0';
}

/* The cells of workflow w's row. */
static void
row_cells(const json_t *w, char cell[N_COLS][CELL])
{
    static const char *const order[] = {"waiting",   "pending", "running",
                                        "succeeded", "dead",    "cancelled"};
    const json_t *c = json_object_get(w, "counts");
    long long total = 0;
    size_t used = 0;
    cell[5][0] = '\0';
    for (int i = 0; i < 6; i++) {
        long long v = json_integer_value(json_object_get(c, order[i]));
        total += v;
        if (v > 0 && used < CELL)
            used += (size_t)snprintf(cell[5] + used, CELL - used, "%s%lld %s", used ? ", " : "", v,
                                     order[i]);
    }
    snprintf(cell[0], CELL, "%lld", (long long)json_integer_value(json_object_get(w, "id")));
    clean(json_string_value(json_object_get(w, "name")), cell[1]);
    clean(json_string_value(json_object_get(w, "status")), cell[2]);
    snprintf(cell[3], CELL, "%lld", total);
    clean(json_string_value(json_object_get(w, "created_at")), cell[4]);
    if (cell[5][0] == '\0')
        snprintf(cell[5], CELL, "-");
}

static void
put_row(const int *w, char cell[N_COLS][CELL])
{
    printf("%*s  %-*s  %-*s  %*s  %-*s  %s\n", w[0], cell[0], w[1], cell[1], w[2], cell[2], w[3],
           cell[3], w[4], cell[4], cell[5]);
}

/* The collected workflows as a table, each column as wide as its data. */
static void
print_table(const json_t *rows)
{
    int w[N_COLS];
    char cell[N_COLS][CELL];
    for (int c = 0; c < N_COLS; c++) {
        w[c] = (int)strlen(col_names[c]);
        snprintf(cell[c], CELL, "%s", col_names[c]);
    }
    size_t i;
    const json_t *r;
    json_array_foreach(rows, i, r) {
        row_cells(r, cell);
        for (int c = 0; c < N_COLS; c++)
            if ((int)strlen(cell[c]) > w[c])
                w[c] = (int)strlen(cell[c]);
    }
    for (int c = 0; c < N_COLS; c++)
        snprintf(cell[c], CELL, "%s", col_names[c]);
    put_row(w, cell);
    json_array_foreach(rows, i, r) {
        row_cells(r, cell);
        put_row(w, cell);
    }
}

/*
 * GETs one page and keeps at most want of its workflows: into rows (table)
 * or printed (piped); sets o->after to the next cursor ("" at the end).
 * It asks for one more than want, so that a last page that ends the list
 * exactly gives no "more:" line; with --status for a whole page
 * (WFL_PAGE_MAX), as a page of `want` would look at only that many
 * workflows. A page cut after want goes on after the last id kept.
 * Returns the count kept, or -1 with *rc.
 */
static long
wfl_page(struct wfl_opts *o, long want, json_t *rows, int *rc)
{
    char path[1100], q[1024] = "", lim[24];
    snprintf(lim, sizeof lim, "%ld",
             want >= WFL_PAGE_MAX || o->status != NULL ? (long)WFL_PAGE_MAX : want + 1);
    if (!cli_query_add(q, sizeof q, "status", o->status) ||
        !cli_query_add(q, sizeof q, "name", o->name) || !cli_query_add(q, sizeof q, "limit", lim) ||
        !cli_query_add(q, sizeof q, "after", o->after[0] ? o->after : NULL)) {
        *rc = cli_usage_error("workflows", "filter values are too long", NULL);
        return -1;
    }
    snprintf(path, sizeof path, "/v1/workflows%s", q);
    struct cli_http_resp r;
    if ((*rc = cli_http("workflows", cli_server_url(o->server), "GET", path, NULL, &r)) != CLI_OK)
        return -1;
    if (r.status != 200) {
        *rc = cli_http_fail("workflows", &r);
        free(r.body);
        return -1;
    }
    json_t *body = json_loadb(r.body, r.len, 0, NULL);
    free(r.body);
    json_t *arr = json_object_get(body, "workflows");
    size_t i;
    json_t *w;
    *rc = json_is_array(arr) ? CLI_OK : CLI_FAILED;
    if (*rc != CLI_OK)
        fprintf(stderr, "jobd workflows: the server's answer has no workflow list\n");
    json_array_foreach(arr, i, w) {
        if ((long)i == want)
            break;
        char *line = rows == NULL ? json_print(w, 0) : NULL;
        if (rows != NULL ? json_array_append(rows, w) != 0 : line == NULL) {
            *rc = cli_error("workflows", JOBD_E_NOMEM, NULL); /* never a silent gap */
            break;
        }
        if (line != NULL)
            puts(line);
        free(line);
    }
    const char *nx = json_string_value(json_object_get(body, "next"));
    long n = (long)json_array_size(arr);
    if (n > want) { /* cut: go on after the last one kept */
        n = want;
        snprintf(o->after, sizeof o->after, "%lld",
                 (long long)json_integer_value(
                     json_object_get(json_array_get(arr, (size_t)n - 1), "id")));
    } else {
        snprintf(o->after, sizeof o->after, "%s", nx ? nx : "");
    }
    json_decref(body);
    return *rc == CLI_OK ? n : -1;
}

/* "more: jobd workflows FILTERS --limit N --after ID" on stderr. */
static void
print_more(const struct wfl_opts *o)
{
    fputs("more: jobd workflows", stderr);
    if (o->status != NULL) {
        fputs(" --status ", stderr);
        cli_put_shell_word(stderr, o->status);
    }
    if (o->name != NULL) {
        fputs(" --name ", stderr);
        cli_put_shell_word(stderr, o->name);
    }
    if (o->limit != WFL_DEFAULT)
        fprintf(stderr, " --limit %ld", o->limit);
    fprintf(stderr, " --after %s\n", o->after);
}

int
cmd_workflows(int argc, char **argv)
{
    struct wfl_opts o = {.limit = WFL_DEFAULT};
    int rc = wfl_parse(argc, argv, &o);
    if (rc != CLI_OK)
        return rc < 0 ? CLI_OK : rc;
    json_t *rows = isatty(1) ? json_array() : NULL;
    long left = o.limit;
    /* Only a null next ends the list: a page may keep none of its workflows. */
    while (left > 0) {
        long got = wfl_page(&o, left, rows, &rc);
        if (got < 0) {
            json_decref(rows);
            return rc;
        }
        left -= got;
        if (o.after[0] == '\0')
            break;
    }
    if (rows != NULL)
        print_table(rows);
    json_decref(rows);
    fflush(stdout);
    if (left <= 0 && o.after[0] != '\0')
        print_more(&o);
    return CLI_OK;
}
