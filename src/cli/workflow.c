/*
 * workflow.c — `jobd workflow submit|show|cancel|retry|delete`: one
 * workflow through the API (docs/API.md, "Workflows"; docs/CLI.md,
 * "`jobd workflow`"). Thin: submit sends the file's JSON as it is written
 * (the server checks the steps and names the one at fault), cancel and
 * retry print the workflow the server answers, delete prints nothing. show is in
 * wftree.c.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/http.h"
#include "cli/opts.h"
#include "util/errtext.h"

static const char workflow_usage[] =
    "usage: jobd workflow submit FILE|- [--server URL]\n"
    "       jobd workflow show|cancel|retry|delete ID [--server URL]\n"
    "\n"
    "A workflow is a named set of jobs (steps) with dependencies, submitted at once.\n"
    "  submit  sends the workflow in FILE (- reads stdin), JSON as POST /v1/workflows\n"
    "          takes it: {\"name\": N, \"idempotency_key\": K, \"steps\": [{\"ref\": R,\n"
    "          \"type\": T, \"depends_on\": [R, ...], ...}]}; prints the workflow's id and\n"
    "          each step's job id as JSON ({\"id\":3,\"jobs\":{\"extract\":41,...}}); the\n"
    "          same idempotency key again prints the first answer and says so on stderr\n"
    "  show    the workflow: on a terminal its steps as a tree with their statuses\n"
    "          (roots first, each step under its parents; a step with several parents\n"
    "          is drawn once, then named as shown above), as JSON when piped\n"
    "  cancel  cancels every step that has not ended (a running one is asked to stop)\n"
    "  retry   puts every dead or cancelled step back to pending, or waiting while a\n"
    "          parent has not ended; both print the workflow as JSON, as show piped\n"
    "  delete  deletes a workflow whose steps have all ended, with their jobs (prints\n"
    "          nothing; the token needs admin)\n";

/* A workflow file's size at most: the API's limit of a batch body. */
#define WF_FILE_MAX (16L * 1024 * 1024)

/* Reads all of f into a malloc'd NUL-terminated buffer, at most WF_FILE_MAX
 * bytes (*len the bytes read). NULL on a read error, memory running out or
 * a longer file, with *why set. */
static char *
slurp(FILE *f, size_t *len, const char **why)
{
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (buf == NULL) {
            *why = "out of memory";
            return NULL;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap || n > (size_t)WF_FILE_MAX)
            break;
        char *more = realloc(buf, cap * 2 + 1);
        if (more == NULL)
            free(buf);
        buf = more;
        cap *= 2;
    }
    *why = ferror(f) ? errno_text(errno) : n > (size_t)WF_FILE_MAX ? "over 16 MiB" : NULL;
    if (*why != NULL) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Reads path ("-": stdin); NULL after printing why (exit status in *rc). */
static char *
read_file(const char *path, size_t *len, int *rc)
{
    bool in = strcmp(path, "-") == 0;
    FILE *f = in ? stdin : fopen(path, "rb");
    const char *why = NULL;
    char *text = f != NULL ? slurp(f, len, &why) : NULL;
    if (f == NULL)
        why = errno_text(errno);
    if (f != NULL && !in)
        fclose(f);
    *rc = why != NULL && strcmp(why, "out of memory") == 0 ? CLI_FAILED : CLI_USAGE;
    if (text == NULL)
        fprintf(stderr, "jobd workflow submit: cannot read %s: %s\n", in ? "stdin" : path, why);
    return text;
}

/* The server's answer: 201 a new workflow, 200 the one the key made before
 * (docs/API.md, "Workflows"). Prints it; the replay is said on stderr. */
static int
submit_answer(const struct cli_http_resp *r, const json_t *sent)
{
    fputs(r->body, stdout);
    if (r->len == 0 || r->body[r->len - 1] != '\n')
        fputc('\n', stdout);
    fflush(stdout);
    if (r->status == 200) {
        json_t *a = json_loadb(r->body, r->len, 0, NULL);
        fprintf(stderr, "jobd workflow submit: workflow %lld already exists for idempotency key ",
                (long long)json_integer_value(json_object_get(a, "id")));
        const char *key = json_string_value(json_object_get(sent, "idempotency_key"));
        cli_put_shell_word(stderr, key ? key : "");
        fputs(" (replayed): no new job was made\n", stderr);
        json_decref(a);
    }
    return CLI_OK;
}

static int
workflow_submit(const char *server, const char *path)
{
    size_t len = 0;
    int rc;
    char *text = read_file(path, &len, &rc);
    if (text == NULL)
        return rc;
    json_error_t je;
    json_t *sent = json_loadb(text, len, 0, &je);
    const char *name = strcmp(path, "-") == 0 ? "stdin" : path;
    if (sent == NULL)
        fprintf(stderr, "jobd workflow submit: %s is not valid JSON: %s (line %d, column %d)\n",
                name, je.text, je.line, je.column);
    else if (!json_is_object(sent))
        fprintf(stderr, "jobd workflow submit: %s holds no JSON object: a workflow is one\n", name);
    if (!json_is_object(sent)) {
        json_decref(sent);
        free(text);
        return CLI_USAGE;
    }
    struct cli_http_resp r;
    rc = cli_http("workflow submit", server, "POST", "/v1/workflows", text, &r);
    free(text);
    if (rc == CLI_OK) {
        rc = r.status == 200 || r.status == 201 ? submit_answer(&r, sent)
                                                : cli_http_fail("workflow submit", &r);
        free(r.body);
    }
    json_decref(sent);
    return rc;
}

/* cancel, retry (print the answer) or delete (204, prints nothing). */
static int
workflow_action(const char *server, const char *action, long id)
{
    char path[96], cmd[32];
    snprintf(cmd, sizeof cmd, "workflow %s", action);
    if (strcmp(action, "delete") != 0) {
        snprintf(path, sizeof path, "/v1/workflows/%ld/%s", id, action);
        return cli_send_print(cmd, server, "POST", path, NULL);
    }
    snprintf(path, sizeof path, "/v1/workflows/%ld", id);
    struct cli_http_resp r;
    int rc = cli_http(cmd, server, "DELETE", path, NULL, &r);
    if (rc != CLI_OK)
        return rc;
    if (r.status < 200 || r.status > 299)
        rc = cli_http_fail(cmd, &r);
    free(r.body);
    return rc;
}

int
cmd_workflow(int argc, char **argv)
{
    static const struct cli_optdef defs[] = {{"--server", 0, true}, {NULL, 0, false}};
    const char *action = NULL, *arg = NULL, *server = NULL, *v;
    struct cli_args a;
    cli_args_init(&a, "workflow", argc, argv, 1);
    int k;
    for (enum cli_arg t; (t = cli_args_next(&a, defs, &k, &v)) != CLI_ARG_END;) {
        if (t == CLI_ARG_HELP) {
            fputs(workflow_usage, stdout);
            return CLI_OK;
        } else if (t == CLI_ARG_BAD) {
            return CLI_USAGE;
        } else if (t == CLI_ARG_OPT) {
            server = v;
        } else if (action == NULL) {
            action = v;
        } else if (arg == NULL) {
            arg = v;
        } else {
            return cli_usage_error("workflow", "unexpected argument", v);
        }
    }
    if (action == NULL)
        return cli_usage_error("workflow", "need an action: submit, show, cancel, retry or delete",
                               NULL);
    bool known = false;
    for (const char *const *s =
             (const char *const[]){"submit", "show", "cancel", "retry", "delete", NULL};
         *s; s++)
        known = known || strcmp(action, *s) == 0;
    if (!known)
        return cli_usage_error("workflow", "unknown action", action);
    if (strcmp(action, "submit") == 0)
        return arg ? workflow_submit(cli_server_url(server), arg)
                   : cli_usage_error("workflow", "submit needs a FILE (or - for stdin)", NULL);
    long id;
    if (arg == NULL)
        return cli_usage_error("workflow", "need a workflow ID", NULL);
    if (!cli_parse_int(arg, 1, 0x7fffffffffffffffL, &id))
        return cli_usage_error("workflow", "ID must be a positive integer, not", arg);
    if (strcmp(action, "show") == 0)
        return cli_workflow_show(cli_server_url(server), id);
    return workflow_action(cli_server_url(server), action, id);
}
