/*
 * duration.c — parsing and formatting durations ("250ms", "1h30m").
 *
 * The grammar is deliberately strict (units largest first, each at most
 * once, no sign, no spaces, no bare number) so that every duration has one
 * canonical spelling and a typo like "30" (seconds? minutes?) is an error
 * instead of a guess. All arithmetic is checked: nothing wraps. Pure.
 */
#include "core/duration.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/err.h"

/* Units in the order they must appear, with their size in milliseconds. */
static const struct unit {
    const char *name;
    int64_t ms;
} units[] = {
    {"d", 86400000}, {"h", 3600000}, {"m", 60000}, {"s", 1000}, {"ms", 1},
};
#define N_UNITS (sizeof units / sizeof units[0])

static int
bad(struct jobd_error *err, const char *field, const char *s, const char *why)
{
    const char *f = field ? field : "duration";
    return jobd_error_set(err, JOBD_E_INVALID, f,
                          "%s: '%.40s' is not a duration: %s (write an integer with a unit, "
                          "ms s m h d, or a sum like 1h30m)",
                          f, s, why);
}

/* Which unit starts at p ("ms" wins over "m"), or -1. Sets *len. */
static int
unit_at(const char *p, size_t *len)
{
    if (p[0] == 'm' && p[1] == 's') {
        *len = 2;
        return 4;
    }
    for (int i = 0; i < 4; i++)
        if (p[0] == units[i].name[0]) {
            *len = 1;
            return i;
        }
    return -1;
}

int
duration_parse_ms(const char *s, int64_t *out_ms, const char *field, struct jobd_error *err)
{
    if (s == NULL || *s == '\0')
        return bad(err, field, "", "it is empty");
    const char *p = s;
    int next_unit = 0; /* index of the smallest unit still allowed */
    int64_t total = 0;
    while (*p != '\0') {
        if (*p < '0' || *p > '9')
            return bad(err, field, s, "expected a digit");
        int64_t n = 0;
        while (*p >= '0' && *p <= '9') {
            int d = *p - '0';
            if (n > (INT64_MAX - d) / 10)
                return bad(err, field, s, "the number is too large");
            n = n * 10 + d;
            p++;
        }
        size_t ulen = 0;
        int u = unit_at(p, &ulen);
        if (u < 0)
            return bad(err, field, s, *p == '\0' ? "a number needs a unit" : "unknown unit");
        if (u < next_unit)
            return bad(err, field, s, "units must appear once each, largest first");
        if (n > INT64_MAX / units[u].ms || total > INT64_MAX - n * units[u].ms)
            return bad(err, field, s, "the duration is too long");
        total += n * units[u].ms;
        next_unit = u + 1;
        p += ulen;
    }
    *out_ms = total;
    return JOBD_OK;
}

char *
duration_format_ms(int64_t ms, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return buf;
    size_t off = 0;
    buf[0] = '\0';
    /* Magnitude as unsigned so INT64_MIN formats without overflow. */
    uint64_t v = ms < 0 ? (uint64_t)0 - (uint64_t)ms : (uint64_t)ms;
    if (ms < 0)
        off += (size_t)snprintf(buf + off, len - off, "-");
    if (v == 0) {
        snprintf(buf + off, off < len ? len - off : 0, "0s");
        return buf;
    }
    for (size_t i = 0; i < N_UNITS && off < len; i++) {
        uint64_t q = v / (uint64_t)units[i].ms;
        v %= (uint64_t)units[i].ms;
        if (q != 0)
            off += (size_t)snprintf(buf + off, len - off, "%llu%s", (unsigned long long)q,
                                    units[i].name);
    }
    return buf;
}
