/*
 * opts.c — the option parser every subcommand shares (see opts.h).
 */
#include "cli/opts.h"

#include <string.h>

#include "cli/cli.h"

void
cli_args_init(struct cli_args *a, const char *cmd, int argc, char **argv, int start)
{
    a->cmd = cmd;
    a->argc = argc;
    a->argv = argv;
    a->i = start;
    a->only_pos = false;
}

/* The value of option k whose text after the name is rest ("" or "=v" or, short, "v"). */
static enum cli_arg
take_value(struct cli_args *a, const struct cli_optdef *d, const char *arg, const char *rest,
           const char **val)
{
    if (!d->has_value) {
        if (*rest != '\0') {
            cli_usage_error(a->cmd, "this option takes no value:", arg);
            return CLI_ARG_BAD;
        }
        *val = NULL;
        return CLI_ARG_OPT;
    }
    if (*rest != '\0') {
        *val = rest;
        return CLI_ARG_OPT;
    }
    if (a->i >= a->argc) {
        cli_usage_error(a->cmd, "missing value for", arg);
        return CLI_ARG_BAD;
    }
    *val = a->argv[a->i++];
    return CLI_ARG_OPT;
}

/* "--name" or "--name=value". */
static enum cli_arg
long_opt(struct cli_args *a, const struct cli_optdef *defs, const char *arg, int *which,
         const char **val)
{
    const char *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
    int as_switch = -1, with_value = -1;
    for (int k = 0; defs != NULL && defs[k].name != NULL; k++)
        if (strlen(defs[k].name) == n && strncmp(defs[k].name, arg, n) == 0) {
            if (defs[k].has_value && with_value < 0)
                with_value = k;
            else if (!defs[k].has_value && as_switch < 0)
                as_switch = k;
        }
    if (as_switch < 0 && with_value < 0) {
        cli_usage_error(a->cmd, "unknown option", arg);
        return CLI_ARG_BAD;
    }
    if (eq != NULL && with_value < 0) {
        cli_usage_error(a->cmd, "this option takes no value:", arg);
        return CLI_ARG_BAD;
    }
    /* "--name=v" takes the entry with a value; "--name" the switch if there is one. */
    *which = eq != NULL || as_switch < 0 ? with_value : as_switch;
    return take_value(a, &defs[*which], arg, eq ? eq + 1 : "", val);
}

/* "-n", "-n2" or "-n 2". */
static enum cli_arg
short_opt(struct cli_args *a, const struct cli_optdef *defs, const char *arg, int *which,
          const char **val)
{
    for (int k = 0; defs != NULL && defs[k].name != NULL; k++) {
        if (defs[k].short_name != 0 && defs[k].short_name == arg[1]) {
            *which = k;
            return take_value(a, &defs[k], arg, arg + 2, val);
        }
    }
    cli_usage_error(a->cmd, "unknown option", arg);
    return CLI_ARG_BAD;
}

enum cli_arg
cli_args_next(struct cli_args *a, const struct cli_optdef *defs, int *which, const char **val)
{
    if (a->i >= a->argc)
        return CLI_ARG_END;
    const char *arg = a->argv[a->i++];
    if (a->only_pos || arg[0] != '-' || arg[1] == '\0') {
        *val = arg;
        return CLI_ARG_POS;
    }
    if (strcmp(arg, "--") == 0) {
        a->only_pos = true;
        return cli_args_next(a, defs, which, val);
    }
    if (cli_is_help(arg))
        return CLI_ARG_HELP;
    if (arg[1] == '-')
        return long_opt(a, defs, arg, which, val);
    return short_opt(a, defs, arg, which, val);
}
