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
 * a new table, so a reload (SIGHUP) loads again and swaps the pointer. A
 * reload that fails never grants anything (docs/OPERATIONS.md, Reloading):
 * api_auth_narrow keeps only the tokens in force that the file still lists
 * on a valid line, each at the lower of its two roles.
 */
#ifndef JOBD_API_AUTH_H
#define JOBD_API_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "jobd.h"

/* Roles in increasing power: each may do all that the ones before it may. */
enum api_role {
    API_ROLE_NONE = 0, /* no valid token */
    API_ROLE_READ,     /* GET only */
    API_ROLE_WORKER,   /* GET, claim, heartbeat, complete, fail, release */
    API_ROLE_WRITE,    /* everything but the admin routes */
    API_ROLE_ADMIN,    /* everything */
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
/*
 * The table for a reload that failed (path has a bad line, is unreadable, or
 * the rest of the configuration does not load): the tokens of in_force
 * (borrowed; may be NULL) that path lists on a line without error, each with
 * the lower of its old and new roles. Tokens the file no longer lists, lists
 * only on bad lines, or adds are refused; a file that cannot be read leaves
 * no token (and the table still requires one). *out is owned by the caller;
 * err gets the first bad line's message (or why the file cannot be read).
 * Only JOBD_E_NOMEM fails.
 */
int api_auth_narrow(const struct api_auth *in_force, const char *path, struct api_auth **out,
                    struct jobd_error *err);
/* Builds from n tokens (copied), each with role admin. For tests and embedding. */
int api_auth_from(const char *const *tokens, size_t n, struct api_auth **out,
                  struct jobd_error *err);
void api_auth_free(struct api_auth *a);
/* How many tokens are loaded (0 for NULL). */
size_t api_auth_count(const struct api_auth *a);
/* True if requests need a token: a has tokens, or was narrowed (even to none). */
bool api_auth_required(const struct api_auth *a);
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
