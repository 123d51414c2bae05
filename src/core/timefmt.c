/*
 * timefmt.c — RFC 3339 parsing and formatting with integer calendar math.
 *
 * No TZ variable and no C library time conversion (timegm is not even
 * POSIX; the others read process-global state and the environment). The
 * civil <-> days conversion is the well-known era-based algorithm on the
 * proleptic Gregorian calendar, exact for every int64 year we can reach.
 * Instants before 1970 are refused on input (jobd stores no such times, and
 * 0 means "none" in struct job).
 */
#include "core/timefmt.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/err.h"

#define US_PER_S INT64_C(1000000)
#define US_PER_DAY (INT64_C(86400) * US_PER_S)

int64_t
time_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = time_floor_div(y, 400);
    int64_t yoe = y - era * 400; /* [0, 399] */
    int64_t doy = (153 * (int64_t)(m > 2 ? m - 3 : m + 9) + 2) / 5 + (int64_t)d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; /* [0, 146096] */
    return era * 146097 + doe - 719468;
}

void
time_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d)
{
    days += 719468;
    int64_t era = time_floor_div(days, 146097);
    int64_t doe = days - era * 146097; /* [0, 146096] */
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100); /* [0, 365] */
    int64_t mp = (5 * doy + 2) / 153;                      /* [0, 11] */
    *d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
    *m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static bool
is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

unsigned
time_days_in_month(int64_t y, unsigned m)
{
    static const unsigned dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dim[m - 1];
}

/* Reads exactly n digits at *p; advances *p. Returns false if not digits. */
static bool
digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + (c - '0');
    }
    *p += n;
    *out = v;
    return true;
}

static int
bad(struct jobd_error *err, const char *field, const char *s, const char *why)
{
    const char *f = field ? field : "time";
    return jobd_error_set(err, JOBD_E_INVALID, f,
                          "%s: '%.40s' is not an RFC 3339 time: %s "
                          "(example: 2026-12-02T14:03:17Z or 2026-12-02T15:03:17.5+01:00)",
                          f, s, why);
}

int
time_parse_rfc3339(const char *s, int64_t *out_us, const char *field, struct jobd_error *err)
{
    if (s == NULL || *s == '\0')
        return bad(err, field, "", "it is empty");
    const char *p = s;
    int year, mon, day, hour, min, sec;
    if (!digits(&p, 4, &year) || *p++ != '-' || !digits(&p, 2, &mon) || *p++ != '-' ||
        !digits(&p, 2, &day))
        return bad(err, field, s, "expected the date as YYYY-MM-DD");
    if (mon < 1 || mon > 12)
        return bad(err, field, s, "the month must be 01 to 12");
    if (day < 1 || (unsigned)day > time_days_in_month(year, (unsigned)mon))
        return bad(err, field, s, "that day does not exist in that month");
    if (*p != 'T' && *p != 't' && *p != ' ')
        return bad(err, field, s, "expected 'T' and a time of day after the date");
    p++;
    if (!digits(&p, 2, &hour) || *p++ != ':' || !digits(&p, 2, &min) || *p++ != ':' ||
        !digits(&p, 2, &sec))
        return bad(err, field, s, "expected the time of day as hh:mm:ss");
    if (hour > 23)
        return bad(err, field, s, "the hour must be 00 to 23");
    if (min > 59)
        return bad(err, field, s, "the minute must be 00 to 59");
    if (sec > 59)
        return bad(err, field, s, "the second must be 00 to 59 (leap seconds are refused)");
    int64_t frac_us = 0;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return bad(err, field, s, "expected digits after the decimal point");
        /* Keep microseconds; further digits are truncated, never rounded up
         * into the next second. */
        int n = 0;
        for (; *p >= '0' && *p <= '9'; p++, n++)
            if (n < 6)
                frac_us = frac_us * 10 + (*p - '0');
        for (; n < 6; n++)
            frac_us *= 10;
    }
    int64_t offset_s = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1, oh, om;
        p++;
        if (!digits(&p, 2, &oh) || *p++ != ':' || !digits(&p, 2, &om))
            return bad(err, field, s, "expected the offset as +hh:mm or -hh:mm");
        if (oh > 23 || om > 59)
            return bad(err, field, s, "the offset is out of range");
        offset_s = sign * (oh * 3600 + om * 60);
    } else {
        return bad(err, field, s, "expected 'Z' or an offset like +01:00 after the time");
    }
    if (*p != '\0')
        return bad(err, field, s, "unexpected characters after the offset");
    int64_t days = time_days_from_civil(year, (unsigned)mon, (unsigned)day);
    int64_t secs = days * 86400 + hour * 3600 + min * 60 + sec - offset_s;
    if (secs < 0)
        return bad(err, field, s, "times before 1970-01-01T00:00:00Z are not supported");
    if (secs > TIME_MAX_US / US_PER_S)
        return bad(err, field, s, "times after 9999-12-31T23:59:59Z (UTC) are not supported");
    *out_us = secs * US_PER_S + frac_us;
    return JOBD_OK;
}

/* v (0 <= v < 10^n) as n decimal digits, zero-padded, at p (no NUL). */
static void
put_digits(char *p, int64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v /= 10)
        p[i] = (char)('0' + v % 10);
}

char *
time_format_rfc3339(int64_t us, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return buf;
    /* Truncate, then fix up: days * US_PER_DAY could overflow for INT64_MIN. */
    int64_t days = us / US_PER_DAY;
    int64_t rem_us = us % US_PER_DAY;
    if (rem_us < 0) {
        rem_us += US_PER_DAY;
        days--;
    }
    int64_t y;
    unsigned m, d;
    time_civil_from_days(days, &y, &m, &d);
    int64_t secs = rem_us / US_PER_S;
    if (y >= 0 && y <= 9999 && len >= 25) {
        /* The common case by hand: every answer with a job prints two or
         * more of these, and snprintf was most of their cost. */
        put_digits(buf, y, 4);
        buf[4] = '-';
        put_digits(buf + 5, m, 2);
        buf[7] = '-';
        put_digits(buf + 8, d, 2);
        buf[10] = 'T';
        put_digits(buf + 11, secs / 3600, 2);
        buf[13] = ':';
        put_digits(buf + 14, secs / 60 % 60, 2);
        buf[16] = ':';
        put_digits(buf + 17, secs % 60, 2);
        buf[19] = '.';
        put_digits(buf + 20, rem_us % US_PER_S / 1000, 3);
        buf[23] = 'Z';
        buf[24] = '\0';
        return buf;
    }
    snprintf(buf, len, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%03lldZ", (long long)y, m, d,
             (long long)(secs / 3600), (long long)(secs / 60 % 60), (long long)(secs % 60),
             (long long)(rem_us % US_PER_S / 1000));
    return buf;
}

char *
time_format_rfc3339_offset(int64_t us, int32_t offset_s, char *buf, size_t len)
{
    if (buf == NULL || len == 0)
        return buf;
    char utc[TIME_RFC3339_LEN];
    /* The wall time is the instant moved by the offset, formatted as if UTC. */
    time_format_rfc3339(time_floor_div(us, US_PER_S) * US_PER_S + (int64_t)offset_s * US_PER_S, utc,
                        sizeof utc);
    int32_t a = offset_s < 0 ? -offset_s : offset_s;
    snprintf(buf, len, "%.19s%c%02d:%02d", utc, offset_s < 0 ? '-' : '+', (int)(a / 3600),
             (int)(a / 60 % 60));
    return buf;
}
