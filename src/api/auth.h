/*
 * auth.h — bearer tokens for the API (`jobd server --tokens FILE`): one token
 * a line, `#` starts a comment, blank lines ignored. Every route but
 * /healthz needs `Authorization: Bearer TOKEN` when any token is loaded.
 * Comparison is constant-time over every configured token, so timing tells
 * nothing about which prefix matched. Immutable after loading; thread-safe.
 */
#ifndef JOBD_API_AUTH_H
#define JOBD_API_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "jobd.h"

struct api_auth;

/*
 * Loads a tokens file. *out is owned by the caller (api_auth_free).
 * JOBD_E_IO if it cannot be read, JOBD_E_INVALID if it holds no token or a
 * token with whitespace or control characters inside.
 */
int api_auth_load(const char *path, struct api_auth **out, struct jobd_error *err);
/* Builds from n tokens (copied). For tests and embedding. */
int api_auth_from(const char *const *tokens, size_t n, struct api_auth **out,
                  struct jobd_error *err);
void api_auth_free(struct api_auth *a);
/* How many tokens are loaded (0 for NULL). */
size_t api_auth_count(const struct api_auth *a);
/* True if header (the whole Authorization value, may be NULL) is
 * "Bearer <a configured token>". With no tokens, always true. */
bool api_auth_check(const struct api_auth *a, const char *header);

#endif
