/*
 * cron.c — `jobd cron next EXPR [--tz ZONE] [--from TIME] [-n COUNT]`: prints
 * the next firings of a cron expression, one RFC 3339 UTC instant a line and
 * nothing else, so scripts and the acceptance tests can read it directly.
 * Thin: src/core/cron.c does the work; this file parses argv, reads the
 * clock for the default --from, and prints.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "core/cron.h"

static const char usage[] =
    "usage: jobd cron next EXPR [--tz ZONE] [--from TIME] [-n COUNT]\n"
    "\n"
    "Prints the next COUNT firing instants of the cron expression EXPR strictly\n"
    "after TIME, one RFC 3339 UTC timestamp a line.\n"
    "\n"
    "  EXPR         5 fields (minute hour day-of-month month day-of-week) or 6\n"
    "               (a leading second field), or a macro such as @daily; quote it.\n"
    "               Several arguments are joined with spaces.\n"
    "  --tz ZONE    IANA time zone the expression is read in (default UTC)\n"
    "  --from TIME  RFC 3339 instant, any offset (default: now)\n"
    "  -n COUNT     how many firings, 1-100000 (default 5)\n";

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t
days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* Reads exactly n digits at *pp into *out. */
static bool
digits(const char **pp, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*pp)[i]))
            return false;
        v = v * 10 + ((*pp)[i] - '0');
    }
    *pp += n;
    *out = v;
    return true;
}

/*
 * RFC 3339 date-time with any offset into microseconds since the epoch.
 * (A local copy until the shared time_parse_rfc3339 of src/core/timefmt.c
 * is available to every branch.)
 */
static bool
parse_rfc3339(const char *s, int64_t *out_us)
{
    int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
    const char *p = s;
    if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
        !digits(&p, 2, &d))
        return false;
    if (*p != 'T' && *p != 't' && *p != ' ')
        return false;
    p++;
    if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi) || *p++ != ':' ||
        !digits(&p, 2, &sec))
        return false;
    int64_t frac_us = 0;
    if (*p == '.') {
        p++;
        int n = 0;
        int64_t scale = 100000;
        while (isdigit((unsigned char)*p)) {
            if (n < 6)
                frac_us += (*p - '0') * scale;
            scale /= 10;
            n++;
            p++;
        }
        if (n == 0)
            return false;
    }
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        sign = *p == '-' ? -1 : 1;
        p++;
        if (!digits(&p, 2, &oh) || *p++ != ':' || !digits(&p, 2, &om) || oh > 23 || om > 59)
            return false;
    } else {
        return false;
    }
    if (*p != '\0')
        return false;
    static const int mdays[13] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo] || (mo == 2 && d == 29 && !leap) ||
        h > 23 || mi > 59 || sec > 59)
        return false;
    int64_t t = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec;
    t -= sign * (oh * 3600 + om * 60);
    *out_us = t * 1000000 + frac_us;
    return true;
}

/* UTC with milliseconds: 2026-12-02T14:03:00.000Z. */
static void
format_rfc3339(int64_t us, char *buf, size_t len)
{
    int64_t s = us / 1000000, ms = (us % 1000000) / 1000;
    if (us % 1000000 < 0) {
        s--;
        ms = (us % 1000000 + 1000000) / 1000;
    }
    int64_t days = s / 86400, sod = s % 86400;
    if (sod < 0) {
        sod += 86400;
        days--;
    }
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    unsigned d = doy - (153 * mp + 2) / 5 + 1;
    unsigned m = mp < 10 ? mp + 3 : mp - 9;
    int64_t y = (int64_t)yoe + era * 400 + (m <= 2);
    snprintf(buf, len, "%04" PRId64 "-%02u-%02uT%02d:%02d:%02d.%03dZ", y, m, d,
             (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60), (int)ms);
}

static int __attribute__((format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("jobd cron: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fputs(usage, stderr);
    return CLI_USAGE;
}

static int
cron_next_cmd(int argc, char **argv)
{
    const char *tz = NULL, *from = NULL, *count_s = NULL;
    char expr[CRON_TEXT_MAX + 1] = "";
    size_t expr_len = 0;
    bool have_expr = false;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(usage, stdout);
            return CLI_OK;
        } else if (strcmp(a, "--tz") == 0 || strcmp(a, "--from") == 0 || strcmp(a, "-n") == 0) {
            if (i + 1 >= argc)
                return usage_error("%s needs a value", a);
            const char **dst = a[2] == 't' ? &tz : a[2] == 'f' ? &from : &count_s;
            *dst = argv[++i];
        } else if (strncmp(a, "--tz=", 5) == 0) {
            tz = a + 5;
        } else if (strncmp(a, "--from=", 7) == 0) {
            from = a + 7;
        } else if (a[0] == '-' && a[1] != '\0' && strpbrk(a, " \t") == NULL) {
            return usage_error("unknown option '%s'", a);
        } else {
            size_t n = strlen(a);
            if (expr_len + n + 1 > CRON_TEXT_MAX)
                return usage_error("%s", "the expression is too long");
            if (have_expr)
                expr[expr_len++] = ' ';
            memcpy(expr + expr_len, a, n + 1);
            expr_len += n;
            have_expr = true;
        }
    }
    if (!have_expr)
        return usage_error("%s", "missing EXPR");

    long count = 5;
    if (count_s != NULL) {
        char *end = NULL;
        errno = 0;
        count = strtol(count_s, &end, 10);
        if (errno != 0 || end == count_s || *end != '\0' || count < 1 || count > 100000)
            return usage_error("-n must be a number from 1 to 100000, not '%s'", count_s);
    }
    int64_t at_us;
    if (from != NULL) {
        if (!parse_rfc3339(from, &at_us))
            return usage_error("--from must be an RFC 3339 time, not '%s'", from);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        at_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    }

    struct jobd_error err = {0};
    struct cron_expr e;
    struct cron_zone *z = NULL;
    int rc = cron_parse(expr, &e, &err);
    if (rc == 0)
        rc = cron_zone_open(tz, &z, &err);
    for (long i = 0; rc == 0 && i < count; i++) {
        rc = cron_next_in(&e, z, at_us, &at_us, &err);
        if (rc == 0) {
            char buf[40];
            format_rfc3339(at_us, buf, sizeof buf);
            puts(buf);
        }
    }
    cron_zone_free(z);
    if (rc != 0) {
        fflush(stdout);
        fprintf(stderr, "jobd cron next: %s\n", err.msg[0] ? err.msg : jobd_strerror(rc));
        return cli_exit_for(rc);
    }
    return CLI_OK;
}

int
cmd_cron(int argc, char **argv)
{
    if (argc < 2)
        return usage_error("%s", "missing subcommand (next)");
    if (cli_is_help(argv[1])) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "next") == 0)
        return cron_next_cmd(argc - 1, argv + 1);
    return usage_error("unknown subcommand '%s'", argv[1]);
}
