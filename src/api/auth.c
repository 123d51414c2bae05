/*
 * auth.c — see auth.h. The check compares the client's token against every
 * configured token over exactly the client's length, so its time depends on
 * neither the content nor the lengths of the configured tokens, nor on
 * which one (if any) matched.
 */
#include "api/auth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/err.h"
#include "util/errtext.h"

struct api_token {
    char *s;
    size_t len;
    enum api_role role;
};

struct api_auth {
    struct api_token *v;
    size_t n;
    char warning[512];
};

static const char *const role_names[] = {"none", "read", "worker", "write", "admin"};

const char *
api_role_name(enum api_role r)
{
    return r <= API_ROLE_ADMIN ? role_names[r] : "none";
}

void
api_auth_free(struct api_auth *a)
{
    if (a == NULL)
        return;
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i].s);
    free(a->v);
    free(a);
}

static int
add_token(struct api_auth *a, const char *t, size_t len, enum api_role role)
{
    struct api_token *v = realloc(a->v, (a->n + 1) * sizeof *v);
    if (v == NULL)
        return JOBD_E_NOMEM;
    a->v = v;
    a->v[a->n] = (struct api_token){.s = strndup(t, len), .len = len, .role = role};
    if (a->v[a->n].s == NULL)
        return JOBD_E_NOMEM;
    a->n++;
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
        if (add_token(a, tokens[i], strlen(tokens[i]), API_ROLE_ADMIN) != JOBD_OK) {
            api_auth_free(a);
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        }
    }
    *out = a;
    return JOBD_OK;
}

static bool
is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* The next blank-separated word of *p as [start, len); len 0 at the end. */
static size_t
next_word(const char **p, const char **start)
{
    while (is_blank(**p))
        (*p)++;
    *start = *p;
    while (**p != '\0' && !is_blank(**p))
        (*p)++;
    return (size_t)(*p - *start);
}

static bool
parse_role(const char *w, size_t len, enum api_role *out)
{
    for (int r = API_ROLE_READ; r <= API_ROLE_ADMIN; r++)
        if (strlen(role_names[r]) == len && memcmp(w, role_names[r], len) == 0) {
            *out = (enum api_role)r;
            return true;
        }
    return false;
}

/* One line: a comment, blank, or "TOKEN [ROLE]". */
static int
parse_line(struct api_auth *a, const char *line, const char *path, int lineno,
           struct jobd_error *err)
{
    const char *p = line, *tok, *role, *extra;
    size_t len = next_word(&p, &tok);
    if (len == 0 || tok[0] == '#')
        return JOBD_OK;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)tok[i] < 0x20 || tok[i] == 0x7f)
            return jobd_error_set(err, JOBD_E_INVALID, "tokens",
                                  "%s:%d: a token must not contain control characters", path,
                                  lineno);
    if (len < API_TOKEN_MIN)
        return jobd_error_set(err, JOBD_E_INVALID, "tokens",
                              "%s:%d: the token is %zu characters; tokens must be at least %d",
                              path, lineno, len, API_TOKEN_MIN);
    enum api_role r = API_ROLE_ADMIN;
    size_t rlen = next_word(&p, &role);
    if (rlen > 0 && !parse_role(role, rlen, &r))
        return jobd_error_set(err, JOBD_E_INVALID, "tokens",
                              "%s:%d: unknown role '%.*s' (admin, write, worker or read)", path,
                              lineno, (int)(rlen > 32 ? 32 : rlen), role);
    if (next_word(&p, &extra) > 0)
        return jobd_error_set(err, JOBD_E_INVALID, "tokens",
                              "%s:%d: unexpected text after the role: '%.32s'", path, lineno,
                              extra);
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].len == len && memcmp(a->v[i].s, tok, len) == 0)
            return jobd_error_set(err, JOBD_E_INVALID, "tokens",
                                  "%s:%d: the same token is already on an earlier line", path,
                                  lineno);
    if (add_token(a, tok, len, r) != JOBD_OK)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    return JOBD_OK;
}

/* Notes in a->warning when other users may read the file. */
static void
check_mode(struct api_auth *a, FILE *f, const char *path)
{
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && (sb.st_mode & (S_IRGRP | S_IROTH)) != 0)
        snprintf(a->warning, sizeof a->warning,
                 "tokens file %s is readable by other users (mode %03o); chmod 600 it", path,
                 (unsigned)(sb.st_mode & 0777));
}

int
api_auth_load(const char *path, struct api_auth **out, struct jobd_error *err)
{
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return jobd_error_set(err, JOBD_E_IO, "tokens", "cannot read tokens file %s: %s", path,
                              errno_text(errno));
    struct api_auth *a = calloc(1, sizeof *a);
    if (a == NULL) {
        fclose(f);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    check_mode(a, f, path);
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

const char *
api_auth_warning(const struct api_auth *a)
{
    return a != NULL && a->warning[0] ? a->warning : NULL;
}

/*
 * 0 iff tok equals in. Reads inlen bytes whatever tok is (past its end it
 * reads its first byte again), so the time tells nothing about tok.
 */
static unsigned
ct_diff(const struct api_token *tok, const char *in, size_t inlen)
{
    unsigned d = tok->len != inlen;
    for (size_t i = 0; i < inlen; i++) {
        size_t j = i < tok->len ? i : 0;
        d |= (unsigned)((unsigned char)tok->s[j] ^ (unsigned char)in[i]);
    }
    return d;
}

enum api_role
api_auth_role(const struct api_auth *a, const char *header)
{
    if (a == NULL || a->n == 0)
        return API_ROLE_ADMIN;
    if (header == NULL || strncasecmp(header, "Bearer ", 7) != 0)
        return API_ROLE_NONE;
    const char *in = header + 7;
    while (*in == ' ')
        in++;
    size_t inlen = strlen(in);
    while (inlen > 0 && in[inlen - 1] == ' ')
        inlen--;
    unsigned role = API_ROLE_NONE;
    for (size_t i = 0; i < a->n; i++) {
        /* mask is all ones iff equal; no branch on the comparison. */
        unsigned eq = ct_diff(&a->v[i], in, inlen) == 0;
        unsigned mask = 0u - eq;
        role |= mask & (unsigned)a->v[i].role;
    }
    /* At most one token matches: the loader refuses duplicates. */
    return (enum api_role)role;
}

bool
api_auth_check(const struct api_auth *a, const char *header)
{
    return api_auth_role(a, header) != API_ROLE_NONE;
}
