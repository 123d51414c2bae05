/*
 * jobs.c — `jobd jobs [filters]`: lists jobs through GET /v1/jobs, newest
 * first, following the server's cursor until --limit jobs are printed.
 *
 * On a terminal the rows are collected first so that every column is as
 * wide as its widest value (names are up to 128 characters; fixed widths
 * either waste the line or break the columns). Piped, each job is one JSON
 * line as the server sent it, printed as it arrives. When the limit cut the
 * list short, a hint on stderr says how to get the next page, so stdout
 * stays the jobs only.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/http.h"
#include "cli/opts.h"
#include "core/err.h"
#include "core/job.h"
#include "core/json.h"
#include "core/timefmt.h"
#include "util/clock.h"

static const char jobs_usage[] =
    "usage: jobd jobs [--status S] [--queue Q] [--type T] [--schedule NAME]\n"
    "                 [--created-after TIME] [--created-before TIME] [--key KEY]\n"
    "                 [--group G] [--due | --scheduled] [--search TEXT [--scan N]]\n"
    "                 [--limit N] [--after ID] [--server URL]\n"
    "       jobd jobs retry|cancel|delete [filters]   (see jobd jobs retry --help)\n"
    "\n"
    "Lists jobs, newest first (default limit 100): a table on a terminal, one\n"
    "JSON object a line when piped. --status is waiting, pending, running,\n"
    "succeeded, dead or cancelled. --created-after is inclusive, --created-before\n"
    "exclusive (RFC 3339); --key is an exact idempotency key, --group an exact\n"
    "group; --schedule lists the jobs a schedule made. --due lists the pending\n"
    "jobs whose run_at has come, --scheduled those that wait for a later run_at.\n"
    "--search keeps the jobs whose type, idempotency key, payload or last error\n"
    "contain TEXT (ASCII letters in either case); it examines the newest 10000\n"
    "jobs at most (--scan N: up to 100000), and says on stderr where to go on\n"
    "when it stopped early. ATTEMPT is the attempts used of those allowed (a\n"
    "retry by hand gives all of them back). RUN_AT says when a pending job may\n"
    "run by this machine's clock: \"in 12m\" (scheduled) or \"3s late\" (due).\n"
    "When more jobs match than --limit, a line on stderr gives the command for\n"
    "the next page (--after ID: jobs older than job ID).\n";

/* The filters, in the order of the query and of the "more:" hint. */
enum {
    F_STATUS,
    F_QUEUE,
    F_TYPE,
    F_SCHEDULE,
    F_AFTER_T,
    F_BEFORE_T,
    F_KEY,
    F_GROUP,
    F_DUE,
    F_SEARCH,
    F_SCAN,
    N_FILTERS
};
enum { O_LIMIT = N_FILTERS, O_AFTER, O_SERVER, O_SCHEDULED };
static const struct cli_optdef jobs_opts[] = {
    [F_STATUS] = {"--status", 0, true},
    [F_QUEUE] = {"--queue", 0, true},
    [F_TYPE] = {"--type", 0, true},
    [F_SCHEDULE] = {"--schedule", 0, true},
    [F_AFTER_T] = {"--created-after", 0, true},
    [F_BEFORE_T] = {"--created-before", 0, true},
    [F_KEY] = {"--key", 0, true},
    [F_GROUP] = {"--group", 0, true},
    [F_DUE] = {"--due", 0, false},
    [F_SEARCH] = {"--search", 0, true},
    [F_SCAN] = {"--scan", 0, true},
    [O_LIMIT] = {"--limit", 'n', true},
    [O_AFTER] = {"--after", 0, true},
    [O_SERVER] = {"--server", 0, true},
    [O_SCHEDULED] = {"--scheduled", 0, false},
    {NULL, 0, false},
};
static const char *const query_names[N_FILTERS] = {
    "status", "queue", "type", "schedule", "created_after", "created_before",
    "key",    "group", "due",  "q",        "scan"};

struct jobs_opts {
    const char *filter[N_FILTERS];
    const char *server;
    char after[32]; /* the cursor: "" for the first page */
    long limit;
    bool partial; /* a search's scan budget ran out (docs/API.md, Search) */
};

/* CLI_OK, a usage error, or -1 after printing the help. */
static int
jobs_parse(int argc, char **argv, struct jobs_opts *o)
{
    struct cli_args a;
    cli_args_init(&a, "jobs", argc, argv, 1);
    int k = 0;
    const char *v;
    for (enum cli_arg t; (t = cli_args_next(&a, jobs_opts, &k, &v)) != CLI_ARG_END;) {
        if (t == CLI_ARG_HELP) {
            fputs(jobs_usage, stdout);
            return -1;
        }
        if (t == CLI_ARG_BAD)
            return CLI_USAGE;
        if (t == CLI_ARG_POS)
            return cli_usage_error("jobs", "unexpected argument", v);
        long id;
        if (k == F_DUE || k == O_SCHEDULED) { /* due=true|false: docs/API.md, Jobs */
            const char *want = k == F_DUE ? "true" : "false";
            if (o->filter[F_DUE] != NULL && strcmp(o->filter[F_DUE], want) != 0)
                return cli_usage_error("jobs", "--due and --scheduled exclude each other", NULL);
            o->filter[F_DUE] = want;
        } else if (k < N_FILTERS) {
            o->filter[k] = v;
        } else if (k == O_SERVER) {
            o->server = v;
        } else if (k == O_LIMIT) {
            if (!cli_parse_int(v, 1, 100000000, &o->limit))
                return cli_usage_error("jobs", "--limit must be a positive integer, not", v);
        } else if (!cli_parse_int(v, 1, 0x7fffffffffffffffL, &id)) {
            return cli_usage_error("jobs", "--after must be a job ID, not", v);
        } else {
            snprintf(o->after, sizeof o->after, "%ld", id);
        }
    }
    return CLI_OK;
}

/* Copies s into buf with control characters and DEL as '?'; "-" for NULL. */
static const char *
clean(const char *s, char *buf, size_t len)
{
    size_t n = 0;
    if (s == NULL)
        s = "-";
    for (; *s && n + 1 < len; s++)
        buf[n++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
    buf[n] = '\0';
    return buf;
}

/* A duration of s seconds (>= 0) as "45s", "12m", "2h05m", "3d04h". */
static void
span_text(long long s, char *buf, size_t len)
{
    if (s < 60)
        snprintf(buf, len, "%llds", s);
    else if (s < 3600)
        snprintf(buf, len, "%lldm", s / 60);
    else if (s < 86400)
        snprintf(buf, len, "%lldh%02lldm", s / 3600, s / 60 % 60);
    else
        snprintf(buf, len, "%lldd%02lldh", s / 86400, s / 3600 % 24);
}

/* The RUN_AT cell of job j: for a pending job, how far its run_at is from
 * this machine's now ("in 12m", "3s late"); "-" for the others. */
static void
run_at_text(const json_t *j, char *buf, size_t len)
{
    const char *st = json_string_value(json_object_get(j, "status"));
    const char *at = json_string_value(json_object_get(j, "run_at"));
    int64_t us;
    struct jobd_error err = {0};
    if (st == NULL || strcmp(st, "pending") != 0 || at == NULL ||
        time_parse_rfc3339(at, &us, "run_at", &err) != JOBD_OK) {
        snprintf(buf, len, "-");
        return;
    }
    int64_t d = us - clock_real_now_us();
    char span[32];
    if (d > 0) { /* scheduled: rounded up, so "in 0s" is never shown */
        span_text((long long)((d + 999999) / 1000000), span, sizeof span);
        snprintf(buf, len, "in %s", span);
    } else {
        span_text((long long)(-d / 1000000), span, sizeof span);
        snprintf(buf, len, "%s late", span);
    }
}

#define N_COLS 6
static const char *const col_names[N_COLS] = {"ID", "STATUS", "QUEUE", "TYPE", "ATTEMPT", "RUN_AT"};

/* The cells of job j's row, each cleaned into cell[k] (size 160). */
static void
row_cells(const json_t *j, char cell[N_COLS][160])
{
    snprintf(cell[0], 160, "%lld", (long long)json_integer_value(json_object_get(j, "id")));
    clean(json_string_value(json_object_get(j, "status")), cell[1], 160);
    clean(json_string_value(json_object_get(j, "queue")), cell[2], 160);
    clean(json_string_value(json_object_get(j, "type")), cell[3], 160);
    /* The attempts that count of those allowed: a manual retry starts at 0 again. */
    snprintf(cell[4], 160, "%lld/%lld",
             (long long)(json_integer_value(json_object_get(j, "attempt")) -
                         json_integer_value(json_object_get(j, "attempt_floor"))),
             (long long)json_integer_value(json_object_get(j, "max_attempts")));
    run_at_text(j, cell[5], 160);
}

/* One line of the table: ID right-aligned, the last column unpadded. */
static void
put_row(const int *w, const char *const *cells)
{
    printf("%*s", w[0], cells[0]);
    for (int c = 1; c < N_COLS - 1; c++)
        printf("  %-*s", w[c], cells[c]);
    printf("  %s\n", cells[N_COLS - 1]);
}

/* The collected jobs as a table: a header over every column, widths from the data. */
static void
print_table(const json_t *jobs)
{
    int w[N_COLS];
    char cell[N_COLS][160];
    const char *cells[N_COLS];
    for (int c = 0; c < N_COLS; c++) {
        w[c] = (int)strlen(col_names[c]);
        cells[c] = cell[c];
    }
    size_t i;
    const json_t *j;
    json_array_foreach(jobs, i, j) {
        row_cells(j, cell);
        for (int c = 0; c < N_COLS; c++)
            if ((int)strlen(cell[c]) > w[c])
                w[c] = (int)strlen(cell[c]);
    }
    put_row(w, col_names);
    json_array_foreach(jobs, i, j) {
        row_cells(j, cell);
        put_row(w, cells);
    }
}

/* GETs one page into jobs (table) or prints it (piped); sets o->after to the
 * next cursor ("" at the end). Returns the jobs on the page, or -1 with *rc. */
static long
jobs_page(struct jobs_opts *o, long want, json_t *jobs, int *rc)
{
    char path[1100], q[1024] = "", lim[24];
    snprintf(lim, sizeof lim, "%ld", want > JOB_PAGE_MAX ? (long)JOB_PAGE_MAX : want);
    bool fits = true;
    for (int k = 0; k < N_FILTERS; k++)
        fits = fits && cli_query_add(q, sizeof q, query_names[k], o->filter[k]);
    if (!fits || !cli_query_add(q, sizeof q, "limit", lim) ||
        !cli_query_add(q, sizeof q, "after", o->after[0] ? o->after : NULL)) {
        *rc = cli_usage_error("jobs", "filter values are too long", NULL);
        return -1;
    }
    snprintf(path, sizeof path, "/v1/jobs%s", q);
    struct cli_http_resp r;
    if ((*rc = cli_http("jobs", cli_server_url(o->server), "GET", path, NULL, &r)) != CLI_OK)
        return -1;
    if (r.status != 200) {
        *rc = cli_http_fail("jobs", &r);
        free(r.body);
        return -1;
    }
    json_t *body = json_loadb(r.body, r.len, 0, NULL);
    free(r.body);
    json_t *arr = json_object_get(body, "jobs");
    if (!json_is_array(arr)) {
        json_decref(body);
        fprintf(stderr, "jobd jobs: the server's answer has no job list\n");
        *rc = CLI_FAILED;
        return -1;
    }
    size_t i;
    json_t *j;
    json_array_foreach(arr, i, j) {
        if (jobs != NULL) {
            json_array_append(jobs, j);
        } else {
            char *line = json_print(j, 0);
            if (line == NULL) { /* never a silent gap in the list */
                json_decref(body);
                *rc = cli_error("jobs", JOBD_E_NOMEM, NULL);
                return -1;
            }
            puts(line);
            free(line);
        }
    }
    const char *nx = json_string_value(json_object_get(body, "next"));
    snprintf(o->after, sizeof o->after, "%s", nx ? nx : "");
    o->partial = json_is_true(json_object_get(body, "partial"));
    long n = (long)json_array_size(arr);
    json_decref(body);
    return n;
}

/* "more: jobd jobs FILTERS --limit N --after ID" on stderr. */
static void
print_more(const struct jobs_opts *o, long limit)
{
    fputs("more: jobd jobs", stderr);
    for (int k = 0; k < N_FILTERS; k++)
        if (k == F_DUE && o->filter[k] != NULL) {
            fputs(strcmp(o->filter[k], "true") == 0 ? " --due" : " --scheduled", stderr);
        } else if (o->filter[k] != NULL) {
            fprintf(stderr, " %s ", jobs_opts[k].name);
            cli_put_shell_word(stderr, o->filter[k]);
        }
    if (limit != JOB_PAGE_DEFAULT)
        fprintf(stderr, " --limit %ld", limit);
    fprintf(stderr, " --after %s\n", o->after);
}

int
cmd_jobs(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "retry") == 0 || strcmp(argv[1], "cancel") == 0 ||
                     strcmp(argv[1], "delete") == 0))
        return cli_jobs_bulk(argc - 1, argv + 1);
    struct jobs_opts o = {.limit = JOB_PAGE_DEFAULT};
    int rc = jobs_parse(argc, argv, &o);
    if (rc != CLI_OK)
        return rc < 0 ? CLI_OK : rc;
    json_t *jobs = isatty(1) ? json_array() : NULL;
    long left = o.limit;
    /* Follow the cursor until limit jobs are printed or the list ends. */
    while (left > 0) {
        long got = jobs_page(&o, left, jobs, &rc);
        if (got < 0) {
            json_decref(jobs);
            return rc;
        }
        left -= got;
        if (o.after[0] == '\0' || got == 0 || o.partial)
            break;
    }
    if (jobs != NULL)
        print_table(jobs);
    json_decref(jobs);
    fflush(stdout);
    if (o.partial)
        fputs("jobd jobs: the search stopped at its scan budget; older jobs were not examined\n",
              stderr);
    if ((left <= 0 || o.partial) && o.after[0] != '\0')
        print_more(&o, o.limit);
    return CLI_OK;
}
