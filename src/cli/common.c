/*
 * common.c — helpers every subcommand shares: where the store is, how an
 * error becomes an exit status and a one-line message.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    case JOBD_E_UNAVAILABLE: return CLI_UNREACHABLE;
    default: return CLI_FAILED;
    }
}

int
cli_report(const char *what, int code, const struct jobd_error *err)
{
    const char *msg = (err != NULL && err->msg[0] != '\0') ? err->msg : jobd_strerror(code);
    fprintf(stderr, "jobd: %s: %s\n", what, msg);
    return cli_exit_for(code);
}

bool
cli_is_help(const char *a)
{
    return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}
