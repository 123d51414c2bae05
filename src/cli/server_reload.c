/*
 * server_reload.c — see server_reload.h. The old table is kept until stop
 * because a request that read the pointer before the swap may still be
 * checking against it (reloads are rare; a table is a few hundred bytes).
 */
#include "cli/server_reload.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/auth.h"
#include "api/metrics.h"
#include "cli/cli.h"
#include "cli/server_opts.h"
#include "core/err.h"

/* Swaps fresh in for the HTTP threads; false (fresh freed) on out-of-memory. */
static bool
swap_in(struct server_reload *r, struct api_auth *fresh, const char *path)
{
    struct api_auth **grown = realloc(r->retired, (r->n_retired + 1) * sizeof *grown);
    char *copy = strdup(path);
    if (grown != NULL)
        r->retired = grown;
    if (grown == NULL || copy == NULL) {
        free(copy);
        api_auth_free(fresh);
        return false;
    }
    free(r->tokens_path);
    r->tokens_path = copy;
    r->retired[r->n_retired++] = __atomic_exchange_n(r->auth, fresh, __ATOMIC_ACQ_REL);
    return true;
}

/* Logs a table's warning (a file other users may read), as at start. */
static void
warn_mode(const struct api_auth *a)
{
    if (api_auth_warning(a) != NULL)
        log_writef(LOGL_WARN, "server", NULL, 0, "SIGHUP: %s", api_auth_warning(a));
}

/* The whole reload failed (why): narrows the tokens in force against path. */
static void
narrow(struct server_reload *r, const char *path, const char *why)
{
    struct jobd_error err = {0};
    struct api_auth *cur = __atomic_load_n(r->auth, __ATOMIC_ACQUIRE);
    size_t before = api_auth_count(cur);
    struct api_auth *fresh = NULL;
    const char *what = why;
    if (path != NULL && api_auth_narrow(cur, path, &fresh, &err) == JOBD_OK &&
        swap_in(r, fresh, path)) {
        warn_mode(fresh);
        if (what == NULL)
            what = err.msg[0] ? err.msg : "the tokens file does not load";
        log_at(LOGL_ERROR, "server",
               "SIGHUP: reload failed; only the tokens in force that the file still lists on "
               "a valid line stay, none is added (docs/OPERATIONS.md, Reloading)",
               LF_STR("error", what), LF_INT("tokens", api_auth_count(fresh)),
               LF_INT("before", before));
        snprintf(r->status, sizeof r->status,
                 "serving; reload failed: %s (%zu of %zu tokens "
                 "stay)",
                 what, api_auth_count(fresh), before);
        return;
    }
    if (what == NULL)
        what = "out of memory";
    log_at(LOGL_ERROR, "server", "SIGHUP: reload failed", LF_STR("error", what),
           LF_INT("tokens", before));
    snprintf(r->status, sizeof r->status, "serving; reload failed: %s", what);
}

/* The tokens of a reload whose options loaded. False if the reload fails. */
static bool
reload_tokens(struct server_reload *r, const char *path)
{
    if (path == NULL) {
        if (r->tokens_path == NULL)
            return true; /* no tokens, before or now */
        narrow(r, r->tokens_path,
               "the options name no tokens file; removing the tokens "
               "needs a restart");
        return false;
    }
    struct jobd_error err = {0};
    struct api_auth *fresh = NULL;
    if (api_auth_load(path, &fresh, &err) != JOBD_OK) {
        narrow(r, path, err.msg[0] ? err.msg : jobd_strerror(err.code));
        return false;
    }
    if (!swap_in(r, fresh, path)) {
        narrow(r, path, "out of memory");
        return false;
    }
    warn_mode(fresh);
    log_at(LOGL_INFO, "server", "SIGHUP: reloaded the tokens", LF_STR("file", path),
           LF_INT("tokens", api_auth_count(fresh)));
    return true;
}

const char *
server_reload(void *arg)
{
    struct server_reload *r = arg;
    struct server_opts o;
    bool ok;
    r->status[0] = '\0';
    if (server_opts_load(r->argc, r->argv, "", &o) != CLI_OK) {
        narrow(r, r->tokens_path, "the options do not load (the line above says why)");
        ok = false;
    } else {
        ok = reload_tokens(r, o.tokens);
        enum log_level level = LOGL_INFO;
        if (o.log_level != NULL)
            (void)log_parse_level(o.log_level, &level); /* checked by server_opts_load */
        /* Said before it applies, so that a rise to warn still shows in the log. */
        log_at(LOGL_INFO, "server", "SIGHUP: log level",
               LF_STR("level", o.log_level != NULL ? o.log_level : "info"));
        log_configure(r->log_format, level, log_access_mode());
    }
    server_opts_fini(&o);
    api_metrics_reload_failed(r->metrics, !ok);
    return ok ? NULL : r->status;
}

void
server_reload_fini(struct server_reload *r)
{
    for (size_t i = 0; i < r->n_retired; i++)
        api_auth_free(r->retired[i]);
    free(r->retired);
    free(r->tokens_path);
    r->retired = NULL;
    r->n_retired = 0;
    r->tokens_path = NULL;
}
