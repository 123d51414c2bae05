/*
 * queues.c — `jobd queues limit|pause|resume NAME`: a queue's limits
 * (PUT /v1/queues/NAME) and pausing, through the API. Thin: the flags
 * become one JSON body, the server validates and answers with the queue
 * object, printed as the server sent it. `--rate 20/1s` is split here only
 * into the body's {limit, per}; the server checks the numbers.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/http.h"
#include "core/job.h"
#include "core/json.h"

static const char queues_act_usage[] =
    "usage: jobd queues limit NAME [--max-running N|none] [--rate N/DUR|none]\n"
    "                              [--group-max-running N|none] [--group-rate N/DUR|none]\n"
    "                              [--server URL]\n"
    "       jobd queues pause|resume NAME [--server URL]\n"
    "\n"
    "limit sets or removes the limits of queue NAME, held by every worker and server\n"
    "together, and prints the queue as JSON (needs an admin token). A limit not named\n"
    "is kept; none removes it.\n"
    "  --max-running N   at most N of the queue's jobs run at once (1 to 1000000)\n"
    "  --rate N/DUR      at most N of its jobs start in each window of DUR (1s to 1d),\n"
    "                    windows aligned to the Unix epoch: 20/1s, 1000/1h\n"
    "  --group-max-running N, --group-rate N/DUR  the same for each group of the queue\n"
    "                    (jobs with a group: jobd submit --group; see jobd queues groups)\n"
    "Jobs held back by a limit stay pending and lose no attempt.\n"
    "pause stops workers from claiming the queue's jobs (running ones finish);\n"
    "resume lets them claim again. Both print the queue as JSON.\n";

/* --rate N/DUR into {"limit": N, "per": "DUR"}, "none" into null; NULL if malformed. */
static json_t *
parse_rate(const char *v)
{
    if (strcmp(v, "none") == 0)
        return json_null();
    const char *slash = strchr(v, '/');
    long n;
    char num[16];
    if (slash == NULL || slash == v || (size_t)(slash - v) >= sizeof num || slash[1] == '\0')
        return NULL;
    memcpy(num, v, (size_t)(slash - v));
    num[slash - v] = '\0';
    if (!cli_parse_int(num, 1, QUEUE_LIMIT_MAX, &n))
        return NULL;
    return json_pack("{s:I,s:s}", "limit", (json_int_t)n, "per", slash + 1);
}

/* The flags of limit and the body's fields they set (rate: N/DUR, else a count). */
static const struct {
    const char *flag, *key;
    bool rate;
} limit_flags[] = {
    {"--max-running", "max_running", false},
    {"--rate", "rate", true},
    {"--group-max-running", "group_max_running", false},
    {"--group-rate", "group_rate", true},
};

/* Sets body's field of limit flag k from v; CLI_OK or a usage error. */
static int
limit_set(json_t *body, size_t k, const char *v)
{
    long n;
    if (limit_flags[k].rate) {
        json_t *rate = parse_rate(v);
        if (rate == NULL)
            return cli_usage_error("queues", "a rate must be N/DUR (such as 20/1s) or none, not",
                                   v);
        json_object_set_new(body, limit_flags[k].key, rate);
    } else if (strcmp(v, "none") == 0) {
        json_object_set_new(body, limit_flags[k].key, json_null());
    } else if (cli_parse_int(v, 1, QUEUE_LIMIT_MAX, &n)) {
        json_object_set_new(body, limit_flags[k].key, json_integer(n));
    } else {
        return cli_usage_error("queues", "a running limit must be 1 to 1000000 or none, not", v);
    }
    return CLI_OK;
}

/* Reads limit's flags into body; returns CLI_OK or a usage error. */
static int
limit_parse(int argc, char **argv, json_t *body, const char **server)
{
    for (int i = 2; i < argc; i++) {
        bool miss = false;
        const char *v = NULL;
        size_t k = 0;
        for (; k < sizeof limit_flags / sizeof limit_flags[0] && v == NULL && !miss; k++)
            v = cli_opt(argc, argv, &i, limit_flags[k].flag, &miss);
        if (v != NULL) {
            int rc = limit_set(body, k - 1, v);
            if (rc != CLI_OK)
                return rc;
        } else if (!miss && (v = cli_opt(argc, argv, &i, "--server", &miss))) {
            *server = v;
        } else {
            return cli_usage_error("queues", miss ? "missing value for" : "unexpected argument",
                                   argv[i]);
        }
    }
    if (json_object_size(body) == 0)
        return cli_usage_error("queues",
                               "give --max-running, --rate, --group-max-running "
                               "and/or --group-rate",
                               NULL);
    return CLI_OK;
}

/* pause/resume: only --server may follow NAME. */
static int
plain_parse(int argc, char **argv, const char **server)
{
    for (int i = 2; i < argc; i++) {
        bool miss = false;
        const char *v = cli_opt(argc, argv, &i, "--server", &miss);
        if (v == NULL)
            return cli_usage_error("queues", miss ? "missing value for" : "unexpected argument",
                                   argv[i]);
        *server = v;
    }
    return CLI_OK;
}

int
cli_queues_action(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (cli_is_help(argv[i])) {
            fputs(queues_act_usage, stdout);
            return CLI_OK;
        }
    bool limit = strcmp(argv[0], "limit") == 0;
    if (argc < 2 || argv[1][0] == '-')
        return cli_usage_error("queues", "missing the queue name after", argv[0]);
    const char *server = NULL;
    json_t *body = json_object();
    int rc = body == NULL ? CLI_FAILED
             : limit      ? limit_parse(argc, argv, body, &server)
                          : plain_parse(argc, argv, &server);
    char *name = rc == CLI_OK ? cli_http_escape(argv[1]) : NULL;
    char *text = rc == CLI_OK ? json_print(body, 0) : NULL;
    json_decref(body);
    if (rc == CLI_OK && (name == NULL || text == NULL)) {
        fprintf(stderr, "jobd queues %s: out of memory\n", argv[0]);
        rc = CLI_FAILED;
    }
    if (rc == CLI_OK) {
        char path[1024];
        snprintf(path, sizeof path, "/v1/queues/%s%s%s", name, limit ? "" : "/",
                 limit ? "" : argv[0]);
        char cmd[32];
        snprintf(cmd, sizeof cmd, "queues %s", argv[0]);
        rc = cli_send_print(cmd, cli_server_url(server), limit ? "PUT" : "POST", path, text);
    }
    free(name);
    free(text);
    return rc;
}
