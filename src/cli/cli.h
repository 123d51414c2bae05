/*
 * cli.h — the subcommands of the jobd binary and their shared helpers.
 *
 * Each cmd_* takes the arguments after its own name (argv[0] is the command
 * name) and returns the process exit status of docs/CLI.md, "Common to every
 * command": 0 success, 1 the operation failed, 2 usage error, 3 unreachable.
 * The CLI is thin: it parses, calls the libraries, prints.
 */
#ifndef JOBD_CLI_H
#define JOBD_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "jobd.h"

enum cli_exit {
    CLI_OK = 0,
    CLI_FAILED = 1,
    CLI_USAGE = 2,
    CLI_UNREACHABLE = 3,
};

int cmd_migrate(int argc, char **argv);
int cmd_server(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_job(int argc, char **argv);
int cmd_jobs(int argc, char **argv);
int cmd_queues(int argc, char **argv);
int cmd_workers(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
int cmd_cron(int argc, char **argv);
int cmd_worker(int argc, char **argv);
int cmd_workflow(int argc, char **argv);
int cmd_workflows(int argc, char **argv);

/*
 * `jobd job show ID` and `jobd job attempts ID` (jobview.c): text on a
 * terminal, JSON when piped. Return the exit status.
 */
int cli_job_show(const char *server, long id);
int cli_job_attempts(const char *server, long id);
/* `jobd workflow show ID` (wftree.c): GET /v1/workflows/{id}, its steps drawn
 * as a tree on a terminal, the JSON as it came when piped. server is
 * borrowed. Returns the exit status. */
int cli_workflow_show(const char *server, long id);
/* joblog.c: an attempt's log on stdout; attempt 0 = the job's latest. */
int cli_job_log(const char *server, long id, long attempt);
/* `jobd job delete ID` and `jobd jobs retry|cancel|delete [filters]` (bulk.c);
 * argv[0] of cli_jobs_bulk is the action. Return the exit status. */
int cli_job_delete(const char *server, long id);
int cli_jobs_bulk(int argc, char **argv);
/* `jobd jobs ACTION --dry-run [filters]` (bulk_dry.c): prints which jobs the
 * bulk action (retry, cancel or delete) would match with filter (the body's
 * filter object, borrowed) and limit, through GET /v1/jobs; changes nothing.
 * Returns the exit status. */
int cli_jobs_bulk_dry(const char *action, const char *server, const json_t *filter, long limit);
/* `jobd queues limit|pause|resume NAME ...` (queues.c); argv[0] is the action. */
int cli_queues_action(int argc, char **argv);
/* `jobd queues groups NAME` (qgroups.c); argv[0] is "groups". */
int cli_queues_groups(int argc, char **argv);
/* After a submit (unhandled.c): warns on stderr when no active worker claims
 * type from queue, per GET /v1/workers; silent if that cannot be asked. */
void cli_warn_unhandled(const char *server, const char *type, const char *queue);

/* The store URL: the --db value if given, else $JOBD_DB, else "sqlite:jobd.db". */
const char *cli_db_url(const char *flag_value);
/* Maps an error code to an exit status: JOBD_E_INVALID (a bad argument) -> 2,
 * JOBD_E_UNAVAILABLE -> 3, other errors 1. */
int cli_exit_for(int code);
/* Prints "jobd CMD: MSG" on stderr (MSG: err's message, else the code's) and
 * returns cli_exit_for(code). cmd is the command as typed: "workers",
 * "job show" (docs/CLI.md, "Common to every command"). (The former
 * cli_report(what, ...) printed "jobd: WHAT: MSG"; it is gone so that no
 * call can print an error without its command.) */
int cli_error(const char *cmd, int code, const struct jobd_error *err);
/* The same with what failed before the message: "jobd CMD: WHAT: MSG". */
int cli_error_what(const char *cmd, const char *what, int code, const struct jobd_error *err);
/* True if a is "--help" or "-h". */
bool cli_is_help(const char *a);

/*
 * Flag parsing shared by the subcommands. cli_opt matches "--x V" or
 * "--x=V" at argv[*i] and returns V (pointing into argv; advances *i past
 * V), NULL if argv[*i] is not flag; sets *missing when V is absent.
 */
const char *cli_opt(int argc, char **argv, int *i, const char *flag, bool *missing);

/*
 * Prints the one line "jobd CMD: MSG 'ARG'; see 'jobd CMD --help'" on stderr
 * (arg may be NULL) and returns CLI_USAGE. One line, never the whole usage:
 * that would bury the line that says what is wrong.
 */
int cli_usage_error(const char *cmd, const char *msg, const char *arg);

/*
 * The logging flags of the long-running commands (server, worker):
 * --log-format text|json, --log-level debug|info|warn|error and, for the
 * server, --access-log notable|all|off (access NULL: not a flag of cmd).
 * NULL values keep the defaults (text, info, notable). Configures util/log; on a bad value
 * prints which flag is wrong and returns CLI_USAGE.
 */
int cli_log_setup(const char *cmd, const char *format, const char *level, const char *access);

/* Writes s to f as one shell word: as it is when plain, else in single
 * quotes, control characters as '?' (the "more: jobd ..." hints of the
 * paged listings, so the line can be pasted back). */
void cli_put_shell_word(FILE *f, const char *s);

/* Parses a decimal integer in [min, max] into *out; false (out untouched) otherwise. */
bool cli_parse_int(const char *s, long min, long max, long *out);

#endif
