/*
 * migrate.c — `jobd migrate [--db URL] [--status]`: create or upgrade the
 * schema, or say where it stands without changing it.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "store/store.h"

static const char usage[] =
    "usage: jobd migrate [--db URL] [--status]\n"
    "\n"
    "Creates or upgrades jobd's schema in the store. Safe to run while other\n"
    "jobd processes start or run; `jobd server` and `jobd worker` also do it.\n"
    "Migrations only go forward: a store migrated by a newer jobd refuses older ones.\n"
    "\n"
    "  --db URL   postgres://… or postgresql://… (libpq URI), sqlite:PATH or a\n"
    "             file path. Default: $JOBD_DB, else sqlite:jobd.db\n"
    "  --status   change nothing; print the schema version and the migrations\n"
    "             this jobd would apply (exit 1 if the store is newer than it)\n";

/* --status: "schema version C of N" and one line per pending step. */
static int
print_status(struct store *st, const char *url)
{
    struct jobd_error err = {0};
    int current = 0, newest = 0;
    int rc = store_schema_status(st, &current, &newest, &err);
    if (rc != JOBD_OK)
        return cli_error_what("migrate", "cannot read the schema version", rc, &err);
    char safe[1024];
    printf("store: %s (%s)\n", store_url_redact(url, safe, sizeof safe), store_backend(st));
    printf("schema version: %d\nnewest this jobd knows: %d\n", current, newest);
    if (current > newest) {
        printf("the store is newer than this jobd: upgrade jobd\n");
        return CLI_FAILED;
    }
    if (current == newest) {
        printf("pending migrations: none\n");
        return CLI_OK;
    }
    printf("pending migrations: %d\n", newest - current);
    for (int v = current + 1; v <= newest; v++) {
        const char *name = store_migration_name(st, v);
        printf("  %d%s%s\n", v, name ? " " : "", name ? name : "");
    }
    return CLI_OK;
}

int
cmd_migrate(int argc, char **argv)
{
    static const struct cli_optdef defs[] = {
        {"--db", 0, true}, {"--status", 0, false}, {NULL, 0, false}};
    const char *db = NULL, *v;
    bool status = false;
    struct cli_args a;
    cli_args_init(&a, "migrate", argc, argv, 1);
    int k;
    for (enum cli_arg t; (t = cli_args_next(&a, defs, &k, &v)) != CLI_ARG_END;) {
        if (t == CLI_ARG_HELP) {
            fputs(usage, stdout);
            return CLI_OK;
        } else if (t == CLI_ARG_BAD) {
            return CLI_USAGE;
        } else if (t == CLI_ARG_POS) {
            return cli_usage_error("migrate", "unexpected argument", v);
        } else if (k == 0) {
            db = v;
        } else {
            status = true;
        }
    }
    struct jobd_error err = {0};
    if (store_url_kind(cli_db_url(db)) == STORE_URL_SERVER) {
        return cli_usage_error("migrate", "--db must name a database, not an API server", NULL);
    }
    struct store *st = NULL;
    int rc = store_open(cli_db_url(db), &st, &err);
    if (rc != JOBD_OK)
        return cli_error_what("migrate", "cannot open store", rc, &err);
    if (status) {
        int out = print_status(st, cli_db_url(db));
        store_close(st);
        return out;
    }
    int before = 0, after = 0, newest = 0;
    rc = store_schema_status(st, &before, &newest, &err);
    if (rc == JOBD_OK)
        rc = store_migrate(st, &err);
    if (rc == JOBD_OK)
        rc = store_schema_status(st, &after, &newest, &err);
    store_close(st);
    if (rc != JOBD_OK)
        return cli_error_what("migrate", "migration failed", rc, &err);
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
