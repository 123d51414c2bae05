/*
 * common.c — helpers every subcommand shares: where the store is, how an
 * error becomes an exit status and a one-line message, how flags are read.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

const char *
cli_db_url(const char *flag_value)
{
    if (flag_value != NULL && *flag_value != '\0')
        return flag_value;
    const char *env = getenv("JOBD_DB");
    if (env != NULL && *env != '\0')
        return env;
    return "sqlite:jobd.db";
}

int
cli_exit_for(int code)
{
    switch (code) {
    case JOBD_OK: return CLI_OK;
    case JOBD_E_INVALID: return CLI_USAGE;
    case JOBD_E_UNAVAILABLE: return CLI_UNREACHABLE;
    default: return CLI_FAILED;
    }
}

int
cli_error_what(const char *cmd, const char *what, int code, const struct jobd_error *err)
{
    const char *msg = (err != NULL && err->msg[0] != '\0') ? err->msg : jobd_strerror(code);
    fprintf(stderr, "jobd %s: %s%s%s\n", cmd, what ? what : "", what ? ": " : "", msg);
    return cli_exit_for(code);
}

int
cli_error(const char *cmd, int code, const struct jobd_error *err)
{
    return cli_error_what(cmd, NULL, code, err);
}

int
cli_log_setup(const char *cmd, const char *format, const char *level, const char *access)
{
    enum log_format fmt = LOG_TEXT;
    enum log_level min = LOGL_INFO;
    enum log_access acc = LOG_ACCESS_NOTABLE;
    if (format != NULL && !log_parse_format(format, &fmt))
        return cli_usage_error(cmd, "--log-format must be text or json, not", format);
    if (level != NULL && !log_parse_level(level, &min))
        return cli_usage_error(cmd, "--log-level must be debug, info, warn or error, not", level);
    if (access != NULL && !log_parse_access(access, &acc))
        return cli_usage_error(cmd, "--access-log must be notable, all or off, not", access);
    log_configure(fmt, min, acc);
    return CLI_OK;
}

bool
cli_is_help(const char *a)
{
    return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

/* "--x V" or "--x=V" -> V; *missing when the value is absent. */
const char *
cli_opt(int argc, char **argv, int *i, const char *flag, bool *missing)
{
    size_t n = strlen(flag);
    if (strncmp(argv[*i], flag, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

int
cli_usage_error(const char *cmd, const char *msg, const char *arg)
{
    fprintf(stderr, "jobd %s: %s%s%s%s; see 'jobd %s --help'\n", cmd, msg, arg ? " '" : "",
            arg ? arg : "", arg ? "'" : "", cmd);
    return CLI_USAGE;
}

bool
cli_parse_int(const char *s, long min, long max, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < min || v > max)
        return false;
    *out = v;
    return true;
}

void
cli_put_shell_word(FILE *f, const char *s)
{
    if (*s != '\0' && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                "0123456789._-:/@%+=,") == strlen(s)) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++)
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
    fputc('\'', f);
}
