/*
 * jobview.c — `jobd job show ID` and `jobd job attempts ID`: one job and its
 * attempt history (GET /v1/jobs/{id}, GET /v1/jobs/{id}/attempts).
 *
 * On a terminal a person reads them, so they are laid out as text; piped,
 * a script reads them, so they stay JSON exactly as the server sent it (one
 * object for show, one attempt a line for attempts). The server's strings
 * are printed as text with control characters replaced, so job data can
 * never move the cursor or change the terminal.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/http.h"
#include "core/json.h"

/* GETs path and parses the 200 answer; NULL with *rc set otherwise (errors
 * named after cmd). */
static json_t *
get_object(const char *cmd, const char *server, const char *path, int *rc)
{
    struct cli_http_resp r;
    *rc = cli_http(cmd, server, "GET", path, NULL, &r);
    if (*rc != CLI_OK)
        return NULL;
    if (r.status != 200) {
        *rc = cli_http_fail(cmd, &r);
        free(r.body);
        return NULL;
    }
    json_t *o = json_loadb(r.body, r.len, 0, NULL);
    free(r.body);
    if (!json_is_object(o)) {
        json_decref(o);
        fprintf(stderr, "jobd %s: the server's answer to GET %s is not a JSON object\n", cmd, path);
        *rc = CLI_FAILED;
    }
    return o;
}

/* Copies s into buf (size len, truncated) with control characters and DEL as '?'. */
static const char *
clean(const char *s, char *buf, size_t len)
{
    size_t n = 0;
    for (; *s && n + 1 < len; s++)
        buf[n++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
    buf[n] = '\0';
    return buf;
}

/* Prints s without trailing newlines; inner lines are indented under the value. */
static void
put_text(const char *s)
{
    size_t len = strlen(s);
    while (len > 0 && s[len - 1] == '\n')
        len--;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\n')
            fputs("\n                  ", stdout);
        else
            putchar((unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i]);
    }
}

/* "key: value" for a field of o (strings as text, others as compact JSON). */
static void
put_field(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    printf("%-17s ", key);
    if (v == NULL || json_is_null(v)) {
        puts("-");
        return;
    }
    if (json_is_string(v)) {
        put_text(json_string_value(v));
    } else {
        char *t = json_print(v, 0);
        put_text(t ? t : "?");
        free(t);
    }
    putchar('\n');
}

static const char *
str_or_dash(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "-";
}

/* The attempts as a table; with indent for `job show`. */
static void
put_attempts_table(json_t *arr, const char *indent)
{
    printf("%s%-8s %-10s %-24s %-24s %9s  %s\n", indent, "ATTEMPT", "OUTCOME", "STARTED_AT",
           "WORKER", "DURATION", "ERROR");
    size_t i;
    json_t *a;
    json_array_foreach(arr, i, a) {
        json_t *d = json_object_get(a, "duration_s");
        char dur[32] = "-";
        if (json_is_number(d))
            snprintf(dur, sizeof dur, "%.3fs", json_number_value(d));
        char worker[25], err[200] = "-";
        const char *e = json_string_value(json_object_get(a, "error"));
        /* One line per attempt: the last line of the error says most. */
        if (e != NULL) {
            const char *end = e + strlen(e);
            while (end > e && end[-1] == '\n')
                end--;
            const char *last = end;
            while (last > e && last[-1] != '\n')
                last--;
            char tail[200];
            snprintf(tail, sizeof tail, "%.*s", (int)(end - last), last);
            clean(tail, err, sizeof err);
        }
        printf("%s%-8lld %-10s %-24s %-24s %9s  %s\n", indent,
               (long long)json_integer_value(json_object_get(a, "attempt")),
               str_or_dash(a, "outcome"), str_or_dash(a, "started_at"),
               clean(str_or_dash(a, "worker_id"), worker, sizeof worker), dur, err);
    }
}

/* false when v could not be printed (out of memory). */
static bool
print_json(json_t *v)
{
    char *t = json_print(v, 0);
    if (t == NULL)
        return false;
    puts(t);
    free(t);
    return true;
}

int
cli_job_attempts(const char *server, long id)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%ld/attempts", id);
    int rc;
    json_t *o = get_object("job attempts", server, path, &rc);
    if (o == NULL)
        return rc;
    json_t *arr = json_object_get(o, "attempts");
    if (isatty(1)) {
        put_attempts_table(arr, "");
    } else {
        size_t i;
        json_t *a;
        json_array_foreach(arr, i, a) {
            if (!print_json(a)) {
                json_decref(o);
                return cli_error("job attempts", JOBD_E_NOMEM, NULL);
            }
        }
    }
    json_decref(o);
    return CLI_OK;
}

/*
 * The job's progress (docs/API.md, The job object) as one line: "40% 3 of
 * 8 files", the percent or the message alone, or "-" when it reported none.
 */
static void
put_progress(json_t *j)
{
    json_t *p = json_object_get(j, "progress");
    printf("%-17s ", "progress");
    if (!json_is_object(p)) {
        puts("-");
        return;
    }
    json_t *pct = json_object_get(p, "percent");
    const char *msg = json_string_value(json_object_get(p, "message"));
    if (json_is_number(pct))
        printf("%.4g%%%s", json_number_value(pct), msg ? " " : "");
    if (msg)
        put_text(msg);
    else if (!json_is_number(pct))
        fputs("(data only)", stdout);
    putchar('\n');
}

int
cli_job_show(const char *server, long id)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%ld", id);
    if (!isatty(1))
        return cli_send_print("job show", server, "GET", path, NULL);
    int rc;
    json_t *j = get_object("job show", server, path, &rc);
    if (j == NULL)
        return rc;
    static const char *const fields[] = {"id",
                                         "status",
                                         "queue",
                                         "type",
                                         "priority",
                                         "attempt",
                                         "max_attempts",
                                         "run_at",
                                         "created_at",
                                         "started_at",
                                         "finished_at",
                                         "worker_id",
                                         "lease_expires_at",
                                         "idempotency_key",
                                         "schedule",
                                         "scheduled_for",
                                         "depends_on",
                                         "on_parent_failure",
                                         "workflow",
                                         "step",
                                         "timeout_s",
                                         "traceparent",
                                         "payload",
                                         "result",
                                         "last_error",
                                         NULL};
    /* A running job being stopped says so (docs/API.md, The job object). */
    if (json_is_true(json_object_get(j, "cancel_requested")))
        json_object_set_new(j, "status", json_string("running, cancel requested"));
    for (int k = 0; fields[k]; k++) {
        put_field(j, fields[k]);
        if (strcmp(fields[k], "status") == 0)
            put_progress(j); /* next to the status it qualifies */
    }
    json_decref(j);
    snprintf(path, sizeof path, "/v1/jobs/%ld/attempts", id);
    json_t *o = get_object("job show", server, path, &rc);
    if (o == NULL)
        return rc;
    json_t *arr = json_object_get(o, "attempts");
    printf("attempts          %zu\n", json_array_size(arr));
    if (json_array_size(arr) > 0)
        put_attempts_table(arr, "  ");
    json_decref(o);
    return CLI_OK;
}
