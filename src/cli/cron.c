/*
 * cron.c — `jobd cron next EXPR [--tz ZONE] [--from TIME] [-n COUNT]`: prints
 * the next firings of a cron expression, one RFC 3339 instant a line (UTC,
 * or in the --tz zone's offset, which is what a user of that zone reads) and
 * nothing else, so scripts and the acceptance tests can read it directly.
 * Thin: src/core/cron.c does the work; this file parses argv, reads the
 * clock for the default --from, and prints.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "core/cron.h"
#include "core/timefmt.h"

static const char usage[] =
    "usage: jobd cron next EXPR [--tz ZONE] [--from TIME] [-n COUNT]\n"
    "\n"
    "Prints the next COUNT firing instants of the cron expression EXPR strictly\n"
    "after TIME, one RFC 3339 timestamp a line: in UTC (2026-03-29T01:00:00.000Z),\n"
    "or with --tz in that zone's offset at the instant (2026-03-29T03:00:00+02:00).\n"
    "\n"
    "  EXPR         5 fields (minute hour day-of-month month day-of-week) or 6\n"
    "               (a leading second field), or a macro such as @daily; quote it.\n"
    "               Several arguments are joined with spaces; -- before EXPR\n"
    "               lets it start with '-'.\n"
    "  --tz ZONE    IANA time zone the expression is read and printed in (default UTC)\n"
    "  --from TIME  RFC 3339 instant, any offset (default: now)\n"
    "  -n COUNT     how many firings, 1-100000 (default 5); also --count COUNT\n";

static int __attribute__((format(printf, 1, 2))) usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("jobd cron: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("; see 'jobd cron --help'\n", stderr);
    return CLI_USAGE;
}

struct cron_opts {
    const char *tz, *from;
    long count;
    char expr[CRON_TEXT_MAX + 1];
};

/* Reads argv into o; CLI_OK, CLI_USAGE after printing, or -1 after the help. */
static int
cron_parse_args(int argc, char **argv, struct cron_opts *o)
{
    enum { C_TZ, C_FROM, C_COUNT };
    static const struct cli_optdef defs[] = {
        {"--tz", 0, true}, {"--from", 0, true}, {"--count", 'n', true}, {NULL, 0, false}};
    struct cli_args a;
    cli_args_init(&a, "cron", argc, argv, 1);
    size_t expr_len = 0;
    int k;
    const char *v;
    for (enum cli_arg t; (t = cli_args_next(&a, defs, &k, &v)) != CLI_ARG_END;) {
        if (t == CLI_ARG_HELP) {
            fputs(usage, stdout);
            return -1;
        } else if (t == CLI_ARG_BAD) {
            return CLI_USAGE;
        } else if (t == CLI_ARG_OPT && k == C_COUNT) {
            if (!cli_parse_int(v, 1, 100000, &o->count))
                return usage_error("-n must be a number from 1 to 100000, not '%s'", v);
        } else if (t == CLI_ARG_OPT) {
            *(k == C_TZ ? &o->tz : &o->from) = v;
        } else {
            size_t n = strlen(v);
            if (expr_len + n + 1 > CRON_TEXT_MAX)
                return usage_error("%s", "the expression is too long");
            if (expr_len > 0)
                o->expr[expr_len++] = ' ';
            memcpy(o->expr + expr_len, v, n + 1);
            expr_len += n;
        }
    }
    if (expr_len == 0)
        return usage_error("%s", "missing EXPR");
    return CLI_OK;
}

/* Prints one firing: UTC as "…Z", in another zone with that zone's offset then. */
static int
print_instant(struct cron_zone *z, int64_t at_us, struct jobd_error *err)
{
    char buf[TIME_RFC3339_LEN];
    if (cron_zone_is_utc(z)) {
        puts(time_format_rfc3339(at_us, buf, sizeof buf));
        return 0;
    }
    int32_t off;
    int rc = cron_zone_offset(z, at_us, &off, err);
    if (rc == 0)
        puts(time_format_rfc3339_offset(at_us, off, buf, sizeof buf));
    return rc;
}

static int
cron_next_cmd(int argc, char **argv)
{
    struct cron_opts o = {.count = 5};
    int rc = cron_parse_args(argc, argv, &o);
    if (rc != CLI_OK)
        return rc < 0 ? CLI_OK : rc;
    int64_t at_us;
    if (o.from != NULL) {
        struct jobd_error terr = {0};
        if (time_parse_rfc3339(o.from, &at_us, "from", &terr) != 0)
            return usage_error("--%s", terr.msg);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        at_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    }

    struct jobd_error err = {0};
    struct cron_expr e;
    struct cron_zone *z = NULL;
    rc = cron_parse(o.expr, &e, &err);
    if (rc == 0)
        rc = cron_zone_open(o.tz, &z, &err);
    for (long i = 0; rc == 0 && i < o.count; i++) {
        rc = cron_next_in(&e, z, at_us, &at_us, &err);
        if (rc == 0)
            rc = print_instant(z, at_us, &err);
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
