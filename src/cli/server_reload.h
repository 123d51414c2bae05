/*
 * server_reload.h — what `jobd server` does on SIGHUP: reads its options
 * again (flags, environment, --config FILE) and applies the two that can
 * change while serving, the tokens file and the log level.
 *
 * A reload either applies completely or fails loudly (docs/OPERATIONS.md,
 * Reloading): the error is logged, the systemd STATUS= says it, and the
 * gauge jobd_config_reload_failed is 1 until a reload succeeds. A failed
 * reload never grants anything: the tokens that stay are those in force
 * that the file still lists on a valid line, at the lower of the two roles
 * (api_auth_narrow), so a revoked token stops working even when the file
 * has a typo elsewhere.
 */
#ifndef JOBD_CLI_SERVER_RELOAD_H
#define JOBD_CLI_SERVER_RELOAD_H

#include <stddef.h>

#include "util/log.h"

struct api_auth;
struct api_metrics;

struct server_reload {
    int argc; /* the command line, read again (borrowed) */
    char **argv;
    enum log_format log_format;  /* as started; a reload keeps it */
    struct api_auth **auth;      /* the table the HTTP threads read (api_ctx's), swapped
                                   atomically; borrowed */
    struct api_metrics *metrics; /* borrowed; may be NULL */
    char *tokens_path;           /* the file the table in force came from, or NULL (owned) */
    struct api_auth **retired;   /* tables replaced by a reload: a request may still read
                                   one, so they are freed at stop (owned) */
    size_t n_retired;
    char status[600]; /* the STATUS= text after a failed reload */
};

/*
 * The SIGHUP handler for service_run (arg: a struct server_reload). Returns
 * NULL when everything applied, else a one-line status for systemd
 * (borrowed from arg, valid until the next call). Main thread only.
 */
const char *server_reload(void *arg);

/* Frees the retired tables and tokens_path (not *auth, the caller's). */
void server_reload_fini(struct server_reload *r);

#endif
