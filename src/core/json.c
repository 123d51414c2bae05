/*
 * json.c — strict JSON parsing and canonical output on jansson.
 *
 * jansson parses recursively (up to its own compile-time depth of 2048), so
 * the nesting limit is enforced first by a flat byte scan that never
 * recurses; only texts that pass it reach json_loadb. The canonical printer
 * is our own small recursive walk (bounded by the same depth) rather than
 * json_dumps, because json_dumps prints reals with 17 significant digits
 * (0.1 -> 0.10000000000000001); we print the shortest form that reads back.
 * Every output buffer has a hard cap (max_bytes).
 */
#include "core/json.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/job.h"

static const char *
fname(const char *field)
{
    return field != NULL && *field != '\0' ? field : "json";
}

/*
 * Checks nesting without recursion. Strings are skipped (brackets inside
 * them do not count); everything else is left to the parser. Reports the
 * first bracket past the limit by line and column (1-based, in bytes).
 */
static int
check_depth(const char *text, size_t len, const char *field, struct jobd_error *err)
{
    int depth = 0;
    bool in_str = false, esc = false;
    size_t line = 1, col = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        col++;
        if (c == '\n') {
            line++;
            col = 0;
        }
        if (in_str) {
            if (esc)
                esc = false;
            else if (c == '\\')
                esc = true;
            else if (c == '"')
                in_str = false;
            continue;
        }
        if (c == '"') {
            in_str = true;
        } else if (c == '[' || c == '{') {
            if (++depth > JSON_DEPTH_MAX)
                return jobd_error_set(err, JOBD_E_INVALID, field,
                                      "%s: JSON nests deeper than %d levels at line %zu, "
                                      "column %zu",
                                      field, JSON_DEPTH_MAX, line, col);
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    return JOBD_OK;
}

/* One open array or object while json_path_at scans. */
struct path_level {
    bool array;
    size_t index;        /* arrays: the element's index */
    size_t key, key_len; /* objects: the current member's name in text */
    bool have_key;       /* objects: a name was read, its value not ended */
};

/* Skips a string starting at text[*i] == '"'; *i ends on its closing quote. */
static void
skip_string(const char *text, size_t end, size_t *i)
{
    for ((*i)++; *i < end && text[*i] != '"'; (*i)++)
        if (text[*i] == '\\')
            (*i)++;
}

void
json_path_at(const char *text, size_t len, size_t pos, char *buf, size_t buflen)
{
    struct path_level st[JSON_DEPTH_MAX + 1];
    int depth = 0; /* levels open; st[depth-1] is the innermost */
    size_t end = pos < len ? pos : len;
    for (size_t i = 0; i < end; i++) {
        char c = text[i];
        struct path_level *top = depth > 0 && depth <= JSON_DEPTH_MAX ? &st[depth - 1] : NULL;
        if (c == '"') {
            size_t start = i + 1;
            skip_string(text, end, &i);
            if (top != NULL && !top->array && !top->have_key)
                *top = (struct path_level){.key = start, .key_len = i - start, .have_key = true};
        } else if (c == '{' || c == '[') {
            if (++depth <= JSON_DEPTH_MAX)
                st[depth - 1] = (struct path_level){.array = c == '['};
        } else if ((c == '}' || c == ']') && depth > 0) {
            depth--;
        } else if (c == ',' && top != NULL) {
            if (top->array)
                top->index++;
            else
                top->have_key = false;
        }
    }
    size_t n = 0;
    buf[0] = '\0';
    for (int d = 0; d < depth && d < JSON_DEPTH_MAX && n + 1 < buflen; d++) {
        int w;
        if (st[d].array)
            w = snprintf(buf + n, buflen - n, "[%zu]", st[d].index);
        else if (st[d].have_key)
            w = snprintf(buf + n, buflen - n, "%s%.*s", n ? "." : "", (int)st[d].key_len,
                         text + st[d].key);
        else
            break;
        if (w < 0)
            break;
        n += (size_t)w < buflen - n ? (size_t)w : buflen - n - 1;
    }
}

static bool
all_space(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r')
            return false;
    return true;
}

int
json_parse_strict(const char *text, size_t len, size_t max_bytes, json_t **out, const char *field,
                  struct jobd_error *err)
{
    *out = NULL;
    const char *f = fname(field);
    if (text == NULL || all_space(text, len))
        return jobd_error_set(err, JOBD_E_INVALID, f, "%s: is empty, expected a JSON value", f);
    if (len > max_bytes)
        return jobd_error_set(err, JOBD_E_TOOBIG, f,
                              "%s: %zu bytes of JSON is over the limit "
                              "of %zu bytes",
                              f, len, max_bytes);
    int rc = check_depth(text, len, f, err);
    if (rc != JOBD_OK)
        return rc;
    json_error_t je;
    json_t *v = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    if (v == NULL) {
        /* jansson gives no reason at all when it cannot allocate its lexer. */
        if (json_error_code(&je) == json_error_out_of_memory || je.text[0] == '\0')
            return jobd_error_set(err, JOBD_E_NOMEM, f, "%s: out of memory parsing JSON", f);
        if (json_error_code(&je) == json_error_numeric_overflow) {
            char path[sizeof err->field];
            json_path_at(text, len, (size_t)je.position, path, sizeof path);
            return jobd_error_set(err, JOBD_E_INVALID, f,
                                  "%s: the number at line %d, column "
                                  "%d%s%s does not fit a 64-bit integer or a double; send it "
                                  "as a string",
                                  f, je.line, je.column, path[0] ? " at " : "", path);
        }
        return jobd_error_set(err, JOBD_E_INVALID, f,
                              "%s: invalid JSON at line %d, column %d: "
                              "%s",
                              f, je.line, je.column, je.text);
    }
    *out = v;
    return JOBD_OK;
}

/* ---- the canonical printer ---- */

/* An output buffer with a hard cap; once failed it stays failed. */
struct obuf {
    char *p;
    size_t n, cap, max;
    int rc; /* JOBD_OK, JOBD_E_TOOBIG or JOBD_E_NOMEM */
    /* How the value is laid out: the canonical form sorts keys and writes
     * "\u001f"; json_print keeps insertion order unless asked to sort and
     * writes "\u001F" as json_dumps does, so its strings read as before. */
    bool sort_keys, upper_hex;
    int max_depth; /* arrays and objects that may enclose a value */
};

static void
put(struct obuf *b, const char *s, size_t n)
{
    if (b->rc != JOBD_OK)
        return;
    if (n > b->max - b->n) {
        b->rc = JOBD_E_TOOBIG;
        return;
    }
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (np == NULL) {
            b->rc = JOBD_E_NOMEM;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void
put_str(struct obuf *b, const char *s, size_t n)
{
    put(b, "\"", 1);
    size_t run = 0; /* start of the pending run of bytes that need no escape */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        put(b, s + run, i - run);
        run = i + 1;
        char esc[8];
        switch (c) {
        case '"': put(b, "\\\"", 2); break;
        case '\\': put(b, "\\\\", 2); break;
        case '\b': put(b, "\\b", 2); break;
        case '\f': put(b, "\\f", 2); break;
        case '\n': put(b, "\\n", 2); break;
        case '\r': put(b, "\\r", 2); break;
        case '\t': put(b, "\\t", 2); break;
        default: snprintf(esc, sizeof esc, b->upper_hex ? "\\u%04X" : "\\u%04x", c); put(b, esc, 6);
        }
    }
    put(b, s + run, n - run);
    put(b, "\"", 1);
}

/*
 * Reals: the fewest significant digits (1..17) that read back to the same
 * double, laid out as JavaScript's Number#toString does (plain notation for
 * 1e-6 <= |d| < 1e21, else an exponent), plus ".0" when the plain form has no
 * point, so a real stays a real. snprintf and strtod share the locale, so
 * the round-trip test holds under any locale; digits are then picked out
 * by hand, so a decimal comma never reaches the output.
 */
static void
put_real(struct obuf *b, double d)
{
    if (d == 0) {
        put(b, signbit(d) ? "-0.0" : "0.0", signbit(d) ? 4 : 3);
        return;
    }
    char s[48];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(s, sizeof s, "%.*e", prec - 1, d);
        if (strtod(s, NULL) == d)
            break;
    }
    char dig[24];
    int k = 0;
    const char *p = s;
    bool neg = *p == '-';
    for (; *p != '\0' && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && k < 20)
            dig[k++] = *p;
    while (k > 1 && dig[k - 1] == '0')
        k--;
    int n = (*p == 'e' ? (int)strtol(p + 1, NULL, 10) : 0) + 1; /* d = 0.dig * 10^n */
    char t[64];
    size_t o = 0;
    if (neg)
        t[o++] = '-';
    if (k <= n && n <= 21) {
        memcpy(t + o, dig, (size_t)k);
        o += (size_t)k;
        for (int i = k; i < n; i++)
            t[o++] = '0';
        memcpy(t + o, ".0", 2);
        o += 2;
    } else if (0 < n && n <= 21) {
        memcpy(t + o, dig, (size_t)n);
        o += (size_t)n;
        t[o++] = '.';
        memcpy(t + o, dig + n, (size_t)(k - n));
        o += (size_t)(k - n);
    } else if (-6 < n && n <= 0) {
        t[o++] = '0';
        t[o++] = '.';
        for (int i = n; i < 0; i++)
            t[o++] = '0';
        memcpy(t + o, dig, (size_t)k);
        o += (size_t)k;
    } else {
        t[o++] = dig[0];
        if (k > 1) {
            t[o++] = '.';
            memcpy(t + o, dig + 1, (size_t)(k - 1));
            o += (size_t)(k - 1);
        }
        o += (size_t)snprintf(t + o, sizeof t - o, "e%d", n - 1);
    }
    put(b, t, o);
}

static int
cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* depth = how many arrays and objects enclose v. */
static int
put_value(struct obuf *b, const json_t *v, int depth)
{
    if ((json_is_array(v) || json_is_object(v)) && depth >= b->max_depth)
        return JOBD_E_INVALID;
    char num[32];
    switch (json_typeof(v)) {
    case JSON_NULL: put(b, "null", 4); break;
    case JSON_TRUE: put(b, "true", 4); break;
    case JSON_FALSE: put(b, "false", 5); break;
    case JSON_INTEGER:
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        put(b, num, strlen(num));
        break;
    case JSON_REAL:
        if (!isfinite(json_real_value(v)))
            return JOBD_E_INVALID;
        put_real(b, json_real_value(v));
        break;
    case JSON_STRING: put_str(b, json_string_value(v), json_string_length(v)); break;
    case JSON_ARRAY:
        put(b, "[", 1);
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i > 0)
                put(b, ",", 1);
            int rc = put_value(b, json_array_get(v, i), depth + 1);
            if (rc != JOBD_OK)
                return rc;
        }
        put(b, "]", 1);
        break;
    case JSON_OBJECT: {
        size_t n = json_object_size(v);
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        if (keys == NULL) {
            b->rc = JOBD_E_NOMEM;
            return JOBD_OK;
        }
        size_t i = 0;
        const char *k;
        json_t *item;
        json_object_foreach((json_t *)v, k, item)
            keys[i++] = k;
        if (b->sort_keys)
            qsort(keys, n, sizeof *keys, cmp_keys);
        put(b, "{", 1);
        int rc = JOBD_OK;
        for (i = 0; i < n && rc == JOBD_OK && b->rc == JOBD_OK; i++) {
            if (i > 0)
                put(b, ",", 1);
            put_str(b, keys[i], strlen(keys[i]));
            put(b, ":", 1);
            rc = put_value(b, json_object_get(v, keys[i]), depth + 1);
        }
        free(keys);
        if (rc != JOBD_OK)
            return rc;
        put(b, "}", 1);
        break;
    }
    }
    return JOBD_OK;
}

int
json_value_canonical(const json_t *v, size_t max_bytes, char **out, const char *field,
                     struct jobd_error *err)
{
    *out = NULL;
    const char *f = fname(field);
    if (v == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, f, "%s: no JSON value", f);
    struct obuf b = {.max = max_bytes, .sort_keys = true, .max_depth = JSON_DEPTH_MAX};
    int rc = put_value(&b, v, 0);
    if (rc == JOBD_OK)
        rc = b.rc;
    if (rc == JOBD_OK && b.p == NULL)
        rc = JOBD_E_INTERNAL; /* every value prints at least one byte */
    if (rc != JOBD_OK) {
        free(b.p);
        switch (rc) {
        case JOBD_E_TOOBIG:
            return jobd_error_set(err, rc, f, "%s: JSON is over the limit of %zu bytes", f,
                                  max_bytes);
        case JOBD_E_NOMEM: return jobd_error_set(err, rc, f, "%s: out of memory printing JSON", f);
        case JOBD_E_INVALID:
            return jobd_error_set(err, rc, f,
                                  "%s: JSON nests deeper than %d levels or holds "
                                  "a number that is not finite",
                                  f, JSON_DEPTH_MAX);
        default: return jobd_error_set(err, rc, f, "%s: could not print JSON", f);
        }
    }
    *out = b.p;
    return JOBD_OK;
}

int
json_canonical(const char *text, size_t len, size_t max_bytes, char **out, const char *field,
               struct jobd_error *err)
{
    *out = NULL;
    json_t *v = NULL;
    int rc = json_parse_strict(text, len, max_bytes, &v, field, err);
    if (rc != JOBD_OK)
        return rc;
    rc = json_value_canonical(v, max_bytes, out, field, err);
    json_decref(v);
    return rc;
}

int
json_result_canonical(const char *text, size_t len, char **out, struct jobd_error *err)
{
    return json_canonical(text, len, JOB_RESULT_MAX, out, "result", err);
}

bool
json_result_ok(const char *text, size_t len)
{
    char *c = NULL;
    int rc = json_result_canonical(text, len, &c, NULL);
    free(c);
    return rc == JOBD_OK;
}

char *
json_print(const json_t *v, size_t flags)
{
    if (v == NULL)
        return NULL;
    struct obuf b = {.max = SIZE_MAX,
                     .sort_keys = (flags & JSON_SORT_KEYS) != 0,
                     .upper_hex = true,
                     .max_depth = JSON_PRINT_DEPTH_MAX};
    int rc = put_value(&b, v, 0);
    if (rc == JOBD_OK)
        rc = b.rc;
    if (rc != JOBD_OK || b.p == NULL) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* Whether the integer token t (n bytes, an optional '-' then digits) fits
 * json_int_t. */
static bool
int_token_fits(const char *t, size_t n)
{
    char buf[24];
    if (n >= sizeof buf)
        return false;
    memcpy(buf, t, n);
    buf[n] = '\0';
    errno = 0;
    (void)strtoll(buf, NULL, 10);
    return errno != ERANGE;
}

/* jansson ran out of memory (it then sometimes gives no reason at all). */
static bool
load_oom(const json_error_t *je)
{
    return json_error_code(je) == json_error_out_of_memory || je->text[0] == '\0';
}

int
json_load_stored(const char *text, json_t **out)
{
    json_error_t je;
    *out = json_loads(text, JSON_DECODE_ANY, &je);
    if (*out != NULL)
        return JOBD_OK;
    if (json_error_code(&je) != json_error_numeric_overflow)
        return load_oom(&je) ? JOBD_E_NOMEM : JOBD_E_INVALID;
    /* Copy text with ".0" after each integer too big for 64 bits, so it is
     * read as the real it stands for. Only numbers outside strings. */
    struct obuf b = {.max = SIZE_MAX};
    bool in_str = false, esc = false;
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i++) {
        char c = text[i];
        if (in_str) {
            if (esc)
                esc = false;
            else if (c == '\\')
                esc = true;
            else if (c == '"')
                in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            size_t j = i + 1;
            bool integer = true;
            while (j < n && strchr("0123456789.eE+-", text[j]) != NULL) {
                integer = integer && text[j] >= '0' && text[j] <= '9';
                j++;
            }
            put(&b, text + i, j - i);
            if (integer && !int_token_fits(text + i, j - i))
                put(&b, ".0", 2);
            i = j - 1;
            continue;
        }
        put(&b, &c, 1);
    }
    if (b.rc != JOBD_OK || b.p == NULL) {
        free(b.p);
        return JOBD_E_NOMEM;
    }
    *out = json_loads(b.p, JSON_DECODE_ANY, &je);
    free(b.p);
    if (*out != NULL)
        return JOBD_OK;
    return load_oom(&je) ? JOBD_E_NOMEM : JOBD_E_INVALID;
}

/* ---- json_out: json_print's layout, appended piece by piece ---- */

static struct obuf
out_buf(const struct json_out *o)
{
    return (struct obuf){.p = o->p,
                         .n = o->n,
                         .cap = o->cap,
                         .max = SIZE_MAX,
                         .rc = o->rc,
                         .upper_hex = true,
                         .max_depth = JSON_PRINT_DEPTH_MAX};
}

static void
out_back(struct json_out *o, const struct obuf *b)
{
    o->p = b->p;
    o->n = b->n;
    o->cap = b->cap;
    o->rc = b->rc;
}

void
json_out_raw(struct json_out *o, const char *s, size_t n)
{
    struct obuf b = out_buf(o);
    put(&b, s, n);
    out_back(o, &b);
}

void
json_out_str(struct json_out *o, const char *s)
{
    struct obuf b = out_buf(o);
    if (s == NULL)
        put(&b, "null", 4);
    else
        put_str(&b, s, strlen(s));
    out_back(o, &b);
}

void
json_out_int(struct json_out *o, int64_t v)
{
    char num[24], *e = num + sizeof num, *p = e;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        *--p = '-';
    json_out_raw(o, p, (size_t)(e - p));
}

void
json_out_value(struct json_out *o, const json_t *v)
{
    if (o->rc != JOBD_OK)
        return;
    if (v == NULL) {
        o->rc = JOBD_E_NOMEM;
        return;
    }
    struct obuf b = out_buf(o);
    int rc = put_value(&b, v, 0);
    if (rc != JOBD_OK && b.rc == JOBD_OK)
        b.rc = rc;
    out_back(o, &b);
}
