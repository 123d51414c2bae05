/*
 * auth.h — bearer tokens and their roles for the API (`jobd server --tokens
 * FILE`). The file: one token a line, optionally followed by blanks and a
 * role (`admin`, the default, `write`, `worker`, `read`); a line whose first
 * non-blank character is `#` is a comment (a `#` inside a token is part of
 * it); blank lines are ignored. Tokens under 16 characters are refused.
 *
 * With any token loaded, every route but /healthz needs `Authorization:
 * Bearer TOKEN`, and the token's role must allow the route. The check takes
 * the same time whatever the configured tokens are (it depends only on how
 * many there are and on the length of what the client sent).
 *
 * A table is immutable once loaded and thread-safe to read. Loading builds
 * a new table, so a reload (SIGHUP) loads again and swaps the pointer.
 */
#ifndef JOBD_API_AUTH_H
#define JOBD_API_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "jobd.h"

/* Roles in increasing power: each may do all that the ones before it may. */
enum api_role {
    API_ROLE_NONE = 0,             /* no valid token */
    API_ROLE_READ,                 /* GET only */
    API_ROLE_WORKER,               /* GET, claim, heartbeat, complete, fail, release */
    API_ROLE_WRITE,                /* everything but the admin routes */
    API_ROLE_ADMIN,                /* everything */
};

/* Shortest token accepted. */
#define API_TOKEN_MIN 16

struct api_auth;

/*
 * Loads a tokens file into a new table, owned by the caller (api_auth_free).
 * JOBD_E_IO if it cannot be read; JOBD_E_INVALID naming FILE:LINE for a
 * token under API_TOKEN_MIN characters, with control characters, an unknown
 * role or words after the role, or when the file holds no token.
 */
int api_auth_load(const char *path, struct api_auth **out, struct jobd_error *err);
/* Builds from n tokens (copied), each with role admin. For tests and embedding. */
int api_auth_from(const char *const *tokens, size_t n, struct api_auth **out,
                  struct jobd_error *err);
void api_auth_free(struct api_auth *a);
/* How many tokens are loaded (0 for NULL). */
size_t api_auth_count(const struct api_auth *a);
/* A warning about the loaded file (readable by other users), or NULL.
 * Borrowed from a. */
const char *api_auth_warning(const struct api_auth *a);
/*
 * The role of header (the whole Authorization value, may be NULL) if it is
 * "Bearer <a configured token>", else API_ROLE_NONE. With no tokens
 * configured, API_ROLE_ADMIN.
 */
enum api_role api_auth_role(const struct api_auth *a, const char *header);
/*
 * True when header's token is limited to queues (`queues=a,b` in the tokens
 * file): *queues (borrowed from a, valid while a is) and *n then name them.
 * False, *queues NULL, for a token of any queue and without tokens.
 */
bool api_auth_queues(const struct api_auth *a, const char *header, const char *const **queues,
                     size_t *n);
/* True if header carries a valid token (any role) or no tokens are configured. */
bool api_auth_check(const struct api_auth *a, const char *header);
/* "read", "worker", "write", "admin" ("none" for API_ROLE_NONE). */
const char *api_role_name(enum api_role r);

#endif
