/*
 * http.h — the CLI's side of jobd's HTTP client (util/httpc.h): one request to the
 * jobd API, with --server / $JOBD_SERVER and $JOBD_TOKEN applied, and the
 * mapping of its outcome to the exit statuses of docs/CLI.md, "Common to
 * every command".
 */
#ifndef JOBD_CLI_HTTP_H
#define JOBD_CLI_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct cli_http_resp {
    long status; /* HTTP status; 0 if no answer */
    char *body;  /* malloc'd, NUL-terminated (may be empty); caller frees */
    size_t len;
    bool replayed; /* the answer had "Idempotent-Replayed: true" (docs/API.md) */
};

/* The server base URL: flag_value, else $JOBD_SERVER, else http://127.0.0.1:8080. */
const char *cli_server_url(const char *flag_value);

/*
 * Sends method base+path (path includes any query) with body (JSON text or
 * NULL). Returns 0 if an HTTP answer came (any status) and fills out; else
 * prints "jobd CMD: cannot reach SERVER: reason" and returns CLI_UNREACHABLE.
 * cmd ("submit", "job show") names the command in every message, so all the
 * errors of one command start alike (docs/CLI.md, "Common to every command").
 */
int cli_http(const char *cmd, const char *base, const char *method, const char *path,
             const char *body, struct cli_http_resp *out);

/*
 * For a non-2xx answer: prints "jobd CMD: MESSAGE (HTTP N)" (from the error
 * body) on stderr and returns the exit status of cli_http_exit.
 */
int cli_http_fail(const char *cmd, const struct cli_http_resp *r);

/*
 * The exit status of a non-2xx HTTP status: 400 (the server refused an
 * argument: a bad value, name or filter) -> CLI_USAGE, as the same mistake
 * caught by the CLI itself; 503 -> CLI_UNREACHABLE; others CLI_FAILED (404,
 * 409: the arguments were fine, the operation failed).
 */
int cli_http_exit(long status);

/* URL-encodes s into a malloc'd string (NULL on out-of-memory). */
char *cli_http_escape(const char *s);

/* Appends "?key=V" (the first parameter) or "&key=V" to the query q (a
 * string in a buffer of qlen bytes), V URL-encoded; nothing when v is NULL.
 * false when it does not fit or memory ran out (q then unspecified). */
bool cli_query_add(char *q, size_t qlen, const char *key, const char *v);


/*
 * Sends one request (as cli_http) and prints a 2xx body on stdout; a
 * non-2xx answer goes through cli_http_fail. Returns the exit status.
 */
int cli_send_print(const char *cmd, const char *server, const char *method, const char *path,
                   const char *body);
/* The same, also filling *resp_info (may be NULL) with the answer's status and
 * replayed flag when an answer came (its body is not kept: NULL). */
int cli_send_print_status(const char *cmd, const char *server, const char *method, const char *path,
                          const char *body, struct cli_http_resp *resp_info);

#endif
