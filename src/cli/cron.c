/*
 * cron.c — `jobd cron next EXPR [--tz ZONE] [--from TIME] [-n COUNT]`: prints
 * the next firings of a cron expression, one RFC 3339 UTC instant a line and
 * nothing else, so scripts and the acceptance tests can read it directly.
 * Thin: src/core/cron.c does the work; this file parses argv, reads the
 * clock for the default --from, and prints.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "core/cron.h"
#include "core/timefmt.h"

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
        struct jobd_error terr = {0};
        if (time_parse_rfc3339(from, &at_us, "from", &terr) != 0)
            return usage_error("--%s", terr.msg);
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
            char buf[TIME_RFC3339_LEN];
            puts(time_format_rfc3339(at_us, buf, sizeof buf));
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
