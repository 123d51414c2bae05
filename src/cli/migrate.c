/*
 * migrate.c — `jobd migrate [--db URL]`: create or upgrade the schema.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "store/store.h"

static const char usage[] =
    "usage: jobd migrate [--db URL]\n"
    "\n"
    "Creates or upgrades jobd's schema in the store. Safe to run while other\n"
    "jobd processes start or run; `jobd server` and `jobd worker` also do it.\n"
    "\n"
    "  --db URL   postgres://… or postgresql://… (libpq URI), sqlite:PATH or a\n"
    "             file path. Default: $JOBD_DB, else sqlite:jobd.db\n";

int
cmd_migrate(int argc, char **argv)
{
    const char *db = NULL;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            fputs(usage, stdout);
            return CLI_OK;
        } else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
            db = argv[++i];
        } else if (strncmp(argv[i], "--db=", 5) == 0) {
            db = argv[i] + 5;
        } else {
            fprintf(stderr, "jobd migrate: unexpected argument '%s'\n%s", argv[i], usage);
            return CLI_USAGE;
        }
    }
    struct jobd_error err = {0};
    struct store *st = NULL;
    int rc = store_open(cli_db_url(db), &st, &err);
    if (rc != JOBD_OK)
        return cli_report("cannot open store", rc, &err);
    int before = 0, after = 0;
    rc = store_schema_version(st, &before, &err);
    if (rc == JOBD_OK)
        rc = store_migrate(st, &err);
    if (rc == JOBD_OK)
        rc = store_schema_version(st, &after, &err);
    store_close(st);
    if (rc != JOBD_OK)
        return cli_report("migration failed", rc, &err);
    char safe[1024];
    const char *where = store_url_redact(cli_db_url(db), safe, sizeof safe);
    if (before == 0)
        printf("created the schema at version %d (%s)\n", after, where);
    else if (before < after)
        printf("upgraded the schema from version %d to %d (%s)\n", before, after, where);
    else
        printf("the schema is up to date at version %d (%s)\n", after, where);
    return CLI_OK;
}
