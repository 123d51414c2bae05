/*
 * main.c — the jobd binary: dispatches argv[1] to a subcommand in src/cli/.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"server", cmd_server, "run the HTTP API (and the scheduling plane)"},
    {"migrate", cmd_migrate, "create or upgrade the schema"},
    {"worker", cmd_worker, "run handlers for jobs (the worker plane)"},
    {"submit", cmd_submit, "enqueue a job through the API"},
    {"job", cmd_job, "show, cancel or retry a job through the API"},
    {"jobs", cmd_jobs, "list jobs through the API"},
    {"queues", cmd_queues, "list queues and their counts through the API"},
    {"workers", cmd_workers, "list workers, their state and the jobs they hold"},
    {"workflow", cmd_workflow, "submit, show, cancel, retry or delete a workflow of jobs"},
    {"workflows", cmd_workflows, "list workflows through the API"},
    {"schedule", cmd_schedule, "add, list, remove, pause, resume or trigger cron schedules"},
    {"cron", cmd_cron, "inspect cron expressions (cron next)"},
};
/* (`jobd help CMD` is not in the table: it is `jobd CMD --help`, help_command.) */

static void
print_usage(FILE *f)
{
    fputs("usage: jobd COMMAND [ARGS]   (jobd help COMMAND or jobd COMMAND --help for more)\n"
          "\ncommands:\n",
          f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

static const struct command *
find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0)
            return &commands[i];
    return NULL;
}

/*
 * `jobd help CMD [SUB...]` is `jobd CMD [SUB...] --help`: the command prints
 * its own usage, so the two can never differ. `jobd help jobs retry` reaches
 * the bulk actions' usage as `jobd jobs retry --help` does.
 */
static int
help_command(int argc, char **argv)
{
    if (argc < 3) {
        print_usage(stdout);
        return CLI_OK;
    }
    const struct command *c = find_command(argv[2]);
    if (c == NULL) {
        fprintf(stderr, "jobd help: unknown command '%s'; see 'jobd --help' for the commands\n",
                argv[2]);
        return CLI_USAGE;
    }
    char *args[16];
    int n = 0;
    for (int i = 2; i < argc && n < 14; i++)
        args[n++] = argv[i];
    args[n++] = (char *)"--help";
    args[n] = NULL;
    return c->run(n, args);
}

int
main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return CLI_USAGE;
    }
    if (cli_is_help(argv[1])) {
        print_usage(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "help") == 0)
        return help_command(argc, argv);
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("jobd %s\n", JOBD_VERSION);
        return CLI_OK;
    }
    const struct command *c = find_command(argv[1]);
    if (c != NULL)
        return c->run(argc - 1, argv + 1);
    fprintf(stderr, "jobd: unknown command '%s'; see 'jobd --help'\n", argv[1]);
    return CLI_USAGE;
}
