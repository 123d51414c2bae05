/*
 * http.h — the CLI's HTTP client (libcurl easy interface): one request to the
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
};

/* The server base URL: flag_value, else $JOBD_SERVER, else http://127.0.0.1:8080. */
const char *cli_server_url(const char *flag_value);

/*
 * Sends method base+path (path includes any query) with body (JSON text or
 * NULL). Returns 0 if an HTTP answer came (any status) and fills out; else
 * prints "jobd: cannot reach SERVER: reason" and returns CLI_UNREACHABLE.
 */
int cli_http(const char *base, const char *method, const char *path, const char *body,
             struct cli_http_resp *out);

/*
 * For a non-2xx answer: prints "jobd: MESSAGE" (from the error body) on
 * stderr and returns the exit status (503 -> 3, others 1).
 */
int cli_http_fail(const struct cli_http_resp *r);

/* URL-encodes s into a malloc'd string (NULL on out-of-memory). */
char *cli_http_escape(const char *s);


/*
 * Sends one request (as cli_http) and prints a 2xx body on stdout; a
 * non-2xx answer goes through cli_http_fail. Returns the exit status.
 */
int cli_send_print(const char *server, const char *method, const char *path, const char *body);
/* The same, also setting *status (may be NULL) to the HTTP status when an answer came. */
int cli_send_print_status(const char *server, const char *method, const char *path,
                          const char *body, long *status);

#endif
