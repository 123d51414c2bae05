/*
 * log.c — see log.h. A line is built in a stack buffer that keeps a small
 * reserve, so however early a long value cuts it, the closing quote, the
 * truncated mark and the newline still fit and every line stays well formed.
 */
#include "util/log.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static _Atomic int cfg_format = LOG_TEXT;
static _Atomic int cfg_min = LOGL_INFO;
static _Atomic int cfg_access = LOG_ACCESS_NOTABLE;

void
log_configure(enum log_format fmt, enum log_level min, enum log_access access)
{
    atomic_store(&cfg_format, (int)fmt);
    atomic_store(&cfg_min, (int)min);
    atomic_store(&cfg_access, (int)access);
}

static const char *const level_names[] = {"debug", "info", "warn", "error"};

bool
log_parse_level(const char *s, enum log_level *out)
{
    for (int i = LOGL_DEBUG; i <= LOGL_ERROR; i++)
        if (s != NULL && strcmp(s, level_names[i]) == 0) {
            *out = (enum log_level)i;
            return true;
        }
    return false;
}

bool
log_parse_format(const char *s, enum log_format *out)
{
    if (s != NULL && strcmp(s, "text") == 0)
        *out = LOG_TEXT;
    else if (s != NULL && strcmp(s, "json") == 0)
        *out = LOG_JSON;
    else
        return false;
    return true;
}

bool
log_parse_access(const char *s, enum log_access *out)
{
    if (s != NULL && strcmp(s, "notable") == 0)
        *out = LOG_ACCESS_NOTABLE;
    else if (s != NULL && (strcmp(s, "all") == 0 || strcmp(s, "on") == 0))
        *out = LOG_ACCESS_ALL;
    else if (s != NULL && strcmp(s, "off") == 0)
        *out = LOG_ACCESS_OFF;
    else
        return false;
    return true;
}

bool
log_enabled(enum log_level lvl)
{
    return (int)lvl >= atomic_load(&cfg_min);
}

enum log_access
log_access_mode(void)
{
    return (enum log_access)atomic_load(&cfg_access);
}

/* Room kept back for what closes a cut line: '"', the mark, '}' and '\n'. */
#define RESERVE 48

struct lbuf {
    char *p;
    size_t len;
    bool cut; /* something did not fit; nothing more but the closing goes in */
};

static void
put(struct lbuf *b, const char *s, size_t n)
{
    if (b->cut)
        return;
    if (b->len + n > LOG_LINE_MAX - RESERVE) {
        b->cut = true;
        return;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void
puts_(struct lbuf *b, const char *s)
{
    put(b, s, strlen(s));
}

/* For the closing bytes only: the reserve guarantees they fit. */
static void
force(struct lbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->len + n <= LOG_LINE_MAX) {
        memcpy(b->p + b->len, s, n);
        b->len += n;
    }
}

/*
 * Length of the valid UTF-8 sequence at s (at most n bytes) that encodes a
 * printable code point (not a C1 control, not a surrogate, not overlong),
 * or 0 if the byte at s must be escaped.
 */
static size_t
utf8_printable(const unsigned char *s, size_t n)
{
    size_t len;
    uint32_t cp;
    if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        len = 2;
        cp = s[0] & 0x1F;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        len = 3;
        cp = s[0] & 0x0F;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        len = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    static const uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp < 0xA0)
        return 0;
    return len;
}

/* The escape of one byte that cannot go out as it is, in text or json. */
static void
escape_byte(struct lbuf *b, unsigned char c, bool json)
{
    char e[8];
    switch (c) {
    case '\n': puts_(b, "\\n"); return;
    case '\t': puts_(b, "\\t"); return;
    case '\r': puts_(b, "\\r"); return;
    default: break;
    }
    if (json && c >= 0x80)
        snprintf(e, sizeof e, "\\ufffd"); /* a byte of invalid UTF-8 */
    else
        snprintf(e, sizeof e, json ? "\\u%04x" : "\\x%02x", c);
    puts_(b, e);
}

/* Writes s escaped; quote and backslash are escaped when esc_quote. */
static void
put_escaped(struct lbuf *b, const char *str, bool json, bool esc_quote)
{
    const unsigned char *s = (const unsigned char *)(str != NULL ? str : "");
    size_t n = strlen((const char *)s);
    for (size_t i = 0; i < n && !b->cut;) {
        unsigned char c = s[i];
        if (c >= 0x20 && c < 0x7F) {
            if ((c == '"' && esc_quote) || c == '\\')
                put(b, "\\", 1);
            put(b, (const char *)&s[i], 1);
            i++;
            continue;
        }
        size_t u = c >= 0x80 ? utf8_printable(s + i, n - i) : 0;
        if (json && c == 0xC2 && i + 1 < n && s[i + 1] >= 0x80 && s[i + 1] <= 0x9F) {
            char e[8]; /* a C1 control: valid UTF-8, still escaped */
            snprintf(e, sizeof e, "\\u%04x", s[i + 1]);
            puts_(b, e);
            i += 2;
        } else if (u > 0) {
            put(b, (const char *)&s[i], u);
            i += u;
        } else {
            escape_byte(b, c, json);
            i++;
        }
    }
}

/* Closes a string whose opening quote went out, cut or not. */
static void
close_quote(struct lbuf *b)
{
    put(b, "\"", 1);
    if (b->cut)
        force(b, "\"");
}

/*
 * Writes prefix (which ends in an opening quote) and s escaped, closed. The
 * prefix goes in whole or not at all, so a cut line never ends in a key
 * without its value.
 */
static void
put_quoted(struct lbuf *b, const char *prefix, const char *s, bool json)
{
    put(b, prefix, strlen(prefix));
    if (b->cut)
        return;
    put_escaped(b, s, json, true);
    close_quote(b);
}

/* Whether a text value must be quoted to read back as one value. */
static bool
text_needs_quotes(const char *s)
{
    if (s == NULL || *s == '\0')
        return true;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= ' ' || *p == '"' || *p == '=' || *p == '\\' || *p >= 0x7F)
            return true;
    return false;
}

/* A traceparent's length and where its trace id lies in it (version 00:
 * "00-" then 32 hex digits; core/traceparent.h, which this libc-only
 * module does not include). */
#define LOG_TP_LEN 55
#define LOG_TRACE_AT 3
#define LOG_TRACE_LEN 32

static void
put_field(struct lbuf *b, const struct log_field *f, bool json)
{
    if (f->kind == LOG_FIELD_TRACE) { /* LF_TRACE: the trace id, or nothing */
        if (f->s == NULL || strlen(f->s) != LOG_TP_LEN)
            return;
        char id[LOG_TRACE_LEN + 1];
        memcpy(id, f->s + LOG_TRACE_AT, LOG_TRACE_LEN);
        id[LOG_TRACE_LEN] = '\0';
        struct log_field s = LF_STR(f->key, id);
        put_field(b, &s, json);
        return;
    }
    char unit[160];
    const char *sep = json ? "," : " ";
    const char *q = json ? "\"" : "";
    const char *eq = json ? "\":" : "=";
    if (f->kind == LOG_FIELD_INT)
        snprintf(unit, sizeof unit, "%s%s%s%s%lld", sep, q, f->key, eq, (long long)f->i);
    else if (f->kind == LOG_FIELD_DBL && isfinite(f->d))
        snprintf(unit, sizeof unit, "%s%s%s%s%.6g", sep, q, f->key, eq, f->d);
    else if (f->kind == LOG_FIELD_DBL)
        snprintf(unit, sizeof unit, "%s%s%s%s%s", sep, q, f->key, eq, json ? "null" : "NaN");
    if (f->kind != LOG_FIELD_STR) {
        puts_(b, unit);
    } else if (json || text_needs_quotes(f->s)) {
        snprintf(unit, sizeof unit, "%s%s%s%s\"", sep, q, f->key, eq);
        put_quoted(b, unit, f->s, json);
    } else {
        snprintf(unit, sizeof unit, " %s=", f->key);
        puts_(b, unit);
        put_escaped(b, f->s, false, true); /* plain: nothing in it to escape */
    }
}

static void
format_ts(char *out, size_t len, int64_t now_us)
{
    time_t secs = (time_t)(now_us / 1000000);
    struct tm tm;
    if (gmtime_r(&secs, &tm) == NULL)
        memset(&tm, 0, sizeof tm);
    char day[24];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, len, "%s.%03dZ", day, (int)(now_us / 1000 % 1000));
}

size_t
log_format_line(char *buf, enum log_format fmt, int64_t now_us, enum log_level lvl,
                const char *comp, const char *msg, const struct log_field *f, size_t nf)
{
    struct lbuf b = {.p = buf};
    bool json = fmt == LOG_JSON;
    char ts[40];
    format_ts(ts, sizeof ts, now_us);
    const char *level = level_names[lvl <= LOGL_ERROR ? lvl : LOGL_ERROR];
    if (json) {
        puts_(&b, "{\"ts\":\"");
        puts_(&b, ts);
        puts_(&b, "\",\"level\":\"");
        puts_(&b, level);
        puts_(&b, "\"");
        put_quoted(&b, ",\"component\":\"", comp, true);
        put_quoted(&b, ",\"msg\":\"", msg, true);
    } else {
        puts_(&b, ts);
        puts_(&b, " ");
        puts_(&b, level);
        puts_(&b, " ");
        put_escaped(&b, comp, false, false);
        puts_(&b, ": ");
        put_escaped(&b, msg, false, false);
    }
    for (size_t i = 0; i < nf && !b.cut; i++)
        put_field(&b, &f[i], json);
    if (b.cut)
        force(&b, json ? ",\"truncated\":true" : " truncated=true");
    force(&b, json ? "}\n" : "\n");
    assert(b.len <= LOG_LINE_MAX && buf[b.len - 1] == '\n'); /* the reserve held */
    return b.len;
}

static int64_t
real_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void
log_write(enum log_level lvl, const char *comp, const char *msg, const struct log_field *f,
          size_t nf)
{
    if (!log_enabled(lvl))
        return;
    char line[LOG_LINE_MAX];
    size_t n = log_format_line(line, (enum log_format)atomic_load(&cfg_format), real_now_us(), lvl,
                               comp, msg, f, nf);
    int saved = errno; /* callers may log between a failure and reading errno */
    /* One write per line: a pipe or file takes it whole, so threads never
     * interleave. A short or failed write is dropped; there is nowhere to say so. */
    ssize_t w = write(2, line, n);
    (void)w;
    errno = saved;
}

void
log_writef(enum log_level lvl, const char *comp, const struct log_field *f, size_t nf,
           const char *fmt, ...)
{
    if (!log_enabled(lvl))
        return;
    char msg[LOG_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_write(lvl, comp, msg, f, nf);
}
