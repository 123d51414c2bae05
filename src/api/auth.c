/*
 * auth.c — see auth.h. Tokens are kept as-is; the check walks every token
 * and every byte of the longest one whatever the input, so neither an early
 * mismatch nor the matching token's position shows in the timing.
 */
#include "api/auth.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"

struct api_auth {
    char **tokens;
    size_t n;
    size_t maxlen;
};

void
api_auth_free(struct api_auth *a)
{
    if (a == NULL)
        return;
    for (size_t i = 0; i < a->n; i++)
        free(a->tokens[i]);
    free(a->tokens);
    free(a);
}

static int
add_token(struct api_auth *a, const char *t, size_t len)
{
    char **v = realloc(a->tokens, (a->n + 1) * sizeof *v);
    if (v == NULL)
        return JOBD_E_NOMEM;
    a->tokens = v;
    a->tokens[a->n] = strndup(t, len);
    if (a->tokens[a->n] == NULL)
        return JOBD_E_NOMEM;
    a->n++;
    if (len > a->maxlen)
        a->maxlen = len;
    return JOBD_OK;
}

int
api_auth_from(const char *const *tokens, size_t n, struct api_auth **out,
              struct jobd_error *err)
{
    *out = NULL;
    struct api_auth *a = calloc(1, sizeof *a);
    if (a == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (add_token(a, tokens[i], strlen(tokens[i])) != JOBD_OK) {
            api_auth_free(a);
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        }
    }
    *out = a;
    return JOBD_OK;
}

/* Trims one line and adds it if it is a token. */
static int
parse_line(struct api_auth *a, char *line, const char *path, int lineno, struct jobd_error *err)
{
    char *hash = strchr(line, '#');
    if (hash != NULL)
        *hash = '\0';
    char *s = line;
    while (*s == ' ' || *s == '\t')
        s++;
    size_t len = strlen(s);
    while (len > 0 && isspace((unsigned char)s[len - 1]))
        len--;
    if (len == 0)
        return JOBD_OK;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f)
            return jobd_error_set(err, JOBD_E_INVALID, "tokens",
                                  "%s:%d: a token must not contain spaces or control "
                                  "characters", path, lineno);
    if (add_token(a, s, len) != JOBD_OK)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    return JOBD_OK;
}

int
api_auth_load(const char *path, struct api_auth **out, struct jobd_error *err)
{
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return jobd_error_set(err, JOBD_E_IO, "tokens", "cannot read tokens file %s: %s", path,
                              strerror(errno));
    struct api_auth *a = calloc(1, sizeof *a);
    if (a == NULL) {
        fclose(f);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, rc = JOBD_OK;
    while (rc == JOBD_OK && getline(&line, &cap, f) >= 0)
        rc = parse_line(a, line, path, ++lineno, err);
    free(line);
    fclose(f);
    if (rc == JOBD_OK && a->n == 0)
        rc = jobd_error_set(err, JOBD_E_INVALID, "tokens", "tokens file %s holds no token",
                            path);
    if (rc != JOBD_OK) {
        api_auth_free(a);
        return rc;
    }
    *out = a;
    return JOBD_OK;
}

size_t
api_auth_count(const struct api_auth *a)
{
    return a ? a->n : 0;
}

/* 0 iff equal; touches maxlen bytes whatever the inputs. */
static unsigned
ct_diff(const char *tok, size_t toklen, const char *in, size_t inlen, size_t maxlen)
{
    unsigned d = (unsigned)(toklen ^ inlen);
    for (size_t i = 0; i < maxlen; i++) {
        unsigned char x = i < toklen ? (unsigned char)tok[i] : 0;
        unsigned char y = i < inlen ? (unsigned char)in[i] : 0;
        d |= (unsigned)(x ^ y);
    }
    return d;
}

bool
api_auth_check(const struct api_auth *a, const char *header)
{
    if (a == NULL || a->n == 0)
        return true;
    if (header == NULL || strncasecmp(header, "Bearer ", 7) != 0)
        return false;
    const char *in = header + 7;
    while (*in == ' ')
        in++;
    size_t inlen = strlen(in);
    while (inlen > 0 && in[inlen - 1] == ' ')
        inlen--;
    if (inlen == 0 || inlen > a->maxlen)
        return false;
    unsigned ok = 0;
    for (size_t i = 0; i < a->n; i++)
        ok |= ct_diff(a->tokens[i], strlen(a->tokens[i]), in, inlen, a->maxlen) == 0;
    return ok != 0;
}
