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
#include <unistd.h>

#include "core/err.h"
#include "core/job.h"
#include "util/errtext.h"

struct api_token {
    char *s;
    size_t len;
    enum api_role role;
    char **queues; /* queues=a,b: the only queues it may claim and report in; NULL = any */
    size_t n_queues;
};

struct api_auth {
    struct api_token *v;
    size_t n;
    bool locked; /* tokens are required even when n is 0 (a narrowed table) */
    char warning[512];
};

static const char *const role_names[] = {"none", "read", "worker", "write", "admin"};

const char *
api_role_name(enum api_role r)
{
    return r <= API_ROLE_ADMIN ? role_names[r] : "none";
}

static void
token_fini(struct api_token *t)
{
    free(t->s);
    for (size_t k = 0; k < t->n_queues; k++)
        free(t->queues[k]);
    free(t->queues);
    memset(t, 0, sizeof *t);
}

void
api_auth_free(struct api_auth *a)
{
    if (a == NULL)
        return;
    for (size_t i = 0; i < a->n; i++)
        token_fini(&a->v[i]);
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
api_auth_from(const char *const *tokens, size_t n, struct api_auth **out, struct jobd_error *err)
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

/*
 * "queues=a,b" after the role into t (docs/OPERATIONS.md, Security): each
 * name a valid queue name. JOBD_E_INVALID naming the line.
 */
static int
parse_queues(struct api_token *t, const char *w, size_t len, const char *path, int lineno,
             struct jobd_error *err)
{
    if (len < 7 || memcmp(w, "queues=", 7) != 0)
        return jobd_error_set(err, JOBD_E_INVALID, "tokens",
                              "%s:%d: unexpected text after the role: '%.*s' (queues=a,b "
                              "limits a token to queues)",
                              path, lineno, (int)(len > 32 ? 32 : len), w);
    const char *p = w + 7, *end = w + len;
    while (p <= end) {
        const char *c = memchr(p, ',', (size_t)(end - p));
        size_t n = (size_t)((c ? c : end) - p);
        char name[JOB_NAME_MAX + 2];
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name - 1 ? n : sizeof name - 1), p);
        struct jobd_error e2 = {0};
        if (n == 0 || n > JOB_NAME_MAX || job_validate_queue(name, "queues", &e2) != JOBD_OK)
            return jobd_error_set(err, JOBD_E_INVALID, "tokens",
                                  "%s:%d: queues=: '%.*s' is not a queue name", path, lineno,
                                  (int)(n > 32 ? 32 : n), p);
        char **v = realloc(t->queues, (t->n_queues + 1) * sizeof *v);
        if (v == NULL || (v[t->n_queues] = strdup(name)) == NULL) {
            if (v != NULL)
                t->queues = v;
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        }
        t->queues = v;
        t->n_queues++;
        p += n + 1;
    }
    return JOBD_OK;
}

/* One line: a comment, blank, or "TOKEN [ROLE [queues=a,b]]". */
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
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].len == len && memcmp(a->v[i].s, tok, len) == 0)
            return jobd_error_set(err, JOBD_E_INVALID, "tokens",
                                  "%s:%d: the same token is already on an earlier line", path,
                                  lineno);
    if (add_token(a, tok, len, r) != JOBD_OK)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    size_t elen = next_word(&p, &extra);
    int rc = elen > 0 ? parse_queues(&a->v[a->n - 1], extra, elen, path, lineno, err) : JOBD_OK;
    if (rc == JOBD_OK && next_word(&p, &extra) > 0)
        rc = jobd_error_set(err, JOBD_E_INVALID, "tokens",
                            "%s:%d: unexpected text after queues=: '%.32s'", path, lineno, extra);
    return rc; /* a failed line's token is freed with the table, which is not used */
}

/*
 * Notes in a->warning when users other than the server's may read the file.
 * The group may read it when it is the server's own group: the package
 * installs it 0640 root:jobd, and the server runs as jobd (docs/OPERATIONS.md,
 * Security). Anyone else, or a group that is not the server's, is warned of.
 */
static void
check_mode(struct api_auth *a, FILE *f, const char *path)
{
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0)
        return;
    bool others = (sb.st_mode & S_IROTH) != 0;
    bool group = (sb.st_mode & S_IRGRP) != 0 && sb.st_gid != getegid();
    if (others || group)
        snprintf(a->warning, sizeof a->warning,
                 "tokens file %s is readable by other users (mode %03o); chmod 600 it, or 640 "
                 "with the server's group",
                 path, (unsigned)(sb.st_mode & 0777));
}

/*
 * Reads path into a new table *out. strict: the first bad line fails the
 * whole file (err says where). Not strict: bad lines are skipped, the first
 * one's message goes to err and *bad counts them; only an unreadable file or
 * out-of-memory fails.
 */
static int
read_tokens(const char *path, bool strict, struct api_auth **out, int *bad, struct jobd_error *err)
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
    struct jobd_error line_err = {0};
    while (rc == JOBD_OK && getline(&line, &cap, f) >= 0) {
        rc = parse_line(a, line, path, ++lineno, &line_err);
        if (rc == JOBD_OK || rc == JOBD_E_NOMEM || strict)
            continue;
        if ((*bad)++ == 0 && err != NULL)
            *err = line_err;
        rc = JOBD_OK;
    }
    free(line);
    fclose(f);
    if (rc != JOBD_OK && err != NULL)
        *err = line_err;
    if (rc == JOBD_OK && a->n == 0 && strict)
        rc = jobd_error_set(err, JOBD_E_INVALID, "tokens", "tokens file %s holds no token", path);
    if (rc != JOBD_OK) {
        api_auth_free(a);
        return rc;
    }
    *out = a;
    return JOBD_OK;
}

int
api_auth_load(const char *path, struct api_auth **out, struct jobd_error *err)
{
    int bad = 0;
    return read_tokens(path, true, out, &bad, err);
}

/* The entry of a for the token t, or NULL. */
static const struct api_token *
same_token(const struct api_auth *a, const struct api_token *t)
{
    for (size_t i = 0; a != NULL && i < a->n; i++)
        if (a->v[i].len == t->len && memcmp(a->v[i].s, t->s, t->len) == 0)
            return &a->v[i];
    return NULL;
}

/* True if a and b limit to the same queues (both to none: any queue). */
static bool
same_queues(const struct api_token *a, const struct api_token *b)
{
    if ((a->queues == NULL) != (b->queues == NULL) || a->n_queues != b->n_queues)
        return false;
    for (size_t k = 0; k < a->n_queues; k++)
        if (strcmp(a->queues[k], b->queues[k]) != 0)
            return false;
    return true;
}

int
api_auth_narrow(const struct api_auth *in_force, const char *path, struct api_auth **out,
                struct jobd_error *err)
{
    int bad = 0;
    struct api_auth *a = NULL;
    int rc = path != NULL ? read_tokens(path, false, &a, &bad, err) : JOBD_E_IO;
    if (rc == JOBD_E_NOMEM)
        return rc;
    if (a == NULL && (a = calloc(1, sizeof *a)) == NULL) /* unreadable: no token stays */
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    size_t kept = 0;
    for (size_t i = 0; i < a->n; i++) {
        const struct api_token *old = same_token(in_force, &a->v[i]);
        if (old == NULL || !same_queues(old, &a->v[i])) {
            /* New in the file, or its queues changed (a wider list must not
             * come in with a bad file): waits for a good reload. */
            token_fini(&a->v[i]);
            continue;
        }
        if (old->role < a->v[i].role)
            a->v[i].role = old->role;
        a->v[kept++] = a->v[i];
    }
    a->n = kept;
    a->locked = true;
    *out = a;
    return JOBD_OK;
}

size_t
api_auth_count(const struct api_auth *a)
{
    return a ? a->n : 0;
}

bool
api_auth_required(const struct api_auth *a)
{
    return a != NULL && (a->n > 0 || a->locked);
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

/* The token of a's table that header carries (compared in constant time), or NULL. */
static const struct api_token *
find_token(const struct api_auth *a, const char *header)
{
    if (a == NULL || header == NULL || strncasecmp(header, "Bearer ", 7) != 0)
        return NULL;
    const char *in = header + 7;
    while (*in == ' ')
        in++;
    size_t inlen = strlen(in);
    while (inlen > 0 && in[inlen - 1] == ' ')
        inlen--;
    const struct api_token *found = NULL;
    for (size_t i = 0; i < a->n; i++)
        if (ct_diff(&a->v[i], in, inlen) == 0)
            found = &a->v[i]; /* every token is compared: no early exit */
    return found;
}

bool
api_auth_queues(const struct api_auth *a, const char *header, const char *const **queues, size_t *n)
{
    const struct api_token *t = find_token(a, header);
    *queues = NULL;
    *n = 0;
    if (t == NULL || t->queues == NULL)
        return false;
    *queues = (const char *const *)t->queues;
    *n = t->n_queues;
    return true;
}

enum api_role
api_auth_role(const struct api_auth *a, const char *header)
{
    if (!api_auth_required(a))
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
