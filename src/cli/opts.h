/*
 * opts.h — the one option parser of the jobd command line.
 *
 * Every subcommand reads its argv through cli_args_next, so options work
 * the same everywhere, the way users know from getopt_long: `--name value`,
 * `--name=value`, `-n 2`, `-n2`, `-h`/`--help`, and `--` ends the options
 * (what follows is positional even if it starts with '-'). A value is taken
 * from the next argument whatever it looks like (`--priority -5`). Anything
 * else starting with '-' (but a lone "-") is an unknown option. Errors are
 * one line naming what is wrong and pointing at --help (cli_usage_error).
 *
 * It is an iterator rather than a table that stores values, because the
 * commands differ in what they do with a value (parse a number, fill a JSON
 * body, collect a cron expression from several words) and a loop over
 * cli_args_next with a switch keeps that in the command.
 */
#ifndef JOBD_CLI_OPTS_H
#define JOBD_CLI_OPTS_H

#include <stdbool.h>

/*
 * One option a command accepts; a table ends with a NULL name. A name may
 * be listed twice, as a switch and with a value: then the value is
 * optional and only given as "--name=v" (getopt_long's optional_argument),
 * and the form used picks the entry.
 */
struct cli_optdef {
    const char *name; /* the long form with its dashes, "--queue" */
    char short_name;  /* 'n' for -n, or 0 */
    bool has_value;   /* takes a value (else a switch: "--name=v" is an error) */
};

/* The state of one parse; set up with cli_args_init. Borrows argv. */
struct cli_args {
    const char *cmd; /* "jobs", "schedule": named in errors and in "see 'jobd CMD --help'" */
    int argc;
    char **argv;
    int i;         /* the next argv index to read */
    bool only_pos; /* "--" was seen */
};

enum cli_arg {
    CLI_ARG_END,  /* argv is used up */
    CLI_ARG_OPT,  /* an option: *which is its index in the table, *val its value or NULL */
    CLI_ARG_POS,  /* a positional argument in *val */
    CLI_ARG_HELP, /* -h or --help before "--": the command prints its usage, exits 0 */
    CLI_ARG_BAD,  /* a usage error, already printed on stderr: exit CLI_USAGE */
};

/* Starts reading argv[start..argc-1] for command cmd (borrowed: it must live
 * as long as a; "jobs retry" for an action's errors). */
void cli_args_init(struct cli_args *a, const char *cmd, int argc, char **argv, int start);

/*
 * Reads the next argument against defs. *which and *val are set as the
 * return value says; *val points into argv (borrowed). Prints the one-line
 * error itself for an unknown option, a missing value, or a value given to
 * a switch.
 */
enum cli_arg cli_args_next(struct cli_args *a, const struct cli_optdef *defs, int *which,
                           const char **val);

#endif
