/*
 * cron_time.h — UTC instant <-> "YYYY-MM-DDTHH:MM:SS.mmmZ" for the cron
 * tests (header-only). Independent of src/ on purpose: the tests check the
 * cron code against times written out by hand, so they must not share its
 * calendar arithmetic.
 */
#ifndef JOBD_TESTS_CRON_TIME_H
#define JOBD_TESTS_CRON_TIME_H

#include <inttypes.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* Parses "YYYY-MM-DDTHH:MM:SS[.fff]Z" (UTC only) into microseconds; -1 on error. */
static inline int
ct_parse(const char *s, int64_t *out_us)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    int ms = 0, n = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &n) != 6)
        return -1;
    if (s[n] == '.') {
        if (sscanf(s + n + 1, "%3d", &ms) != 1)
            return -1;
        n += 4;
    }
    if (s[n] != 'Z' || s[n + 1] != '\0')
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    *out_us = (int64_t)t * 1000000 + (int64_t)ms * 1000;
    return 0;
}

/* Formats us as "YYYY-MM-DDTHH:MM:SS.mmmZ" into buf (>= 32 bytes). */
static inline const char *
ct_format(int64_t us, char *buf, size_t len)
{
    time_t t = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char tmp[128];
    snprintf(tmp, sizeof tmp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (int)(us % 1000000 / 1000));
    size_t n = strlen(tmp) < len ? strlen(tmp) : len - 1;
    memcpy(buf, tmp, n);
    buf[n] = '\0';
    return buf;
}

#endif
