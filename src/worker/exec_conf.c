/*
 * exec_conf.c — an exec handler's configuration and environment: the
 * `exec =` command line, the check that its program exists (done once when
 * a worker starts, so a typo fails the start with the file and line, not
 * every job's attempts), and the clean environment a child gets.
 *
 * The environment is built from an allow-list, never by copying the
 * worker's: the worker holds secrets (JOBD_TOKEN, the database URL with its
 * password in JOBD_DB, whatever else its service manager set) that a
 * handler has no business seeing. A handler gets PATH, HOME, LANG, LC_*,
 * TZ, the job's JOBD_* variables (docs/WORKER.md), and the names its section
 * lists in `env =`; with `user =`, HOME is that user's home directory.
 */
#define _GNU_SOURCE /* asprintf */
#include "util/errtext.h"
#include "worker/exec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/timefmt.h"
#include "worker/words.h"

extern char **environ;

int
exec_configure(struct handler_conf *h, const char *value, const char *dir, struct jobd_error *err)
{
    size_t argc = 0;
    int rc = words_split(value, &h->argv, &argc, "exec", err);
    if (rc != JOBD_OK)
        return rc;
    /* A relative program with a '/' is relative to the config file, so a
     * config and its handler scripts can move together; a bare name is
     * looked up in PATH. */
    char *prog = h->argv[0];
    if (strchr(prog, '/') == NULL || prog[0] == '/' || dir == NULL || dir[0] == '\0')
        return JOBD_OK;
    char *full = NULL;
    if (asprintf(&full, "%s/%s", dir, prog) < 0)
        return jobd_error_set(err, JOBD_E_NOMEM, "exec", "out of memory");
    free(prog);
    h->argv[0] = full;
    return JOBD_OK;
}

/* 0 if path is a regular file we may execute, else an errno. */
static int
executable(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return errno;
    if (!S_ISREG(sb.st_mode))
        return EACCES;
    return access(path, X_OK) == 0 ? 0 : errno;
}

/* The worker's PATH, or what posix_spawnp searches without one. */
static const char *
search_path(void)
{
    const char *path = getenv("PATH");
    return path != NULL && *path != '\0' ? path : "/usr/local/bin:/usr/bin:/bin";
}

int
exec_find_program(const char *prog, char *out, size_t len)
{
    if (strchr(prog, '/') != NULL) {
        snprintf(out, len, "%s", prog);
        return executable(prog);
    }
    for (const char *p = search_path(); *p != '\0';) {
        size_t n = strcspn(p, ":");
        snprintf(out, len, "%.*s/%s", (int)n, n > 0 ? p : ".", prog);
        if (executable(out) == 0)
            return 0;
        p += n + (p[n] == ':');
    }
    return ENOENT;
}

int
exec_check(const struct handler_conf *h, struct jobd_error *err)
{
    const char *prog = h->argv[0];
    const char *where = h->origin != NULL ? h->origin : "exec";
    char full[4096];
    int e = exec_find_program(prog, full, sizeof full);
    if (e != 0 && strchr(prog, '/') != NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "exec", "%s: key 'exec': cannot run %s: %s",
                              where, prog, errno_text(e));
    if (e != 0)
        return jobd_error_set(err, JOBD_E_INVALID, "exec",
                              "%s: key 'exec': program '%s' not found in PATH (%s)", where, prog,
                              search_path());
    return exec_user_check(h, err);
}

/* ---- the child's environment ---- */

/* True if NAME=... is passed to every handler from the worker's environment
 * (HOME but to a handler with `user =`, which gets that user's). */
static bool
always_passed(const char *entry, const struct handler_conf *h)
{
    static const char *const names[] = {"PATH=", "HOME=", "LANG=", "TZ=", "LC_"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strncmp(entry, names[i], strlen(names[i])) == 0)
            return i != 1 || h->user == NULL;
    return false;
}

/* True if entry is NAME=... for a name h's `env =` lists. */
static bool
listed(const struct handler_conf *h, const char *entry)
{
    for (char **n = h->env; n != NULL && *n != NULL; n++) {
        size_t len = strlen(*n);
        if (strncmp(entry, *n, len) == 0 && entry[len] == '=')
            return true;
    }
    return false;
}

/*
 * The job's own variables (JOBD_*, and TRACEPARENT: docs/WORKER.md, Trace
 * context), which win over any inherited ones: an inherited TRACEPARENT
 * (the worker's own, say) never reaches a job that has none.
 */
static bool
job_variable(const char *entry)
{
    static const char *const ours[] = {
        "JOBD_JOB_ID=",          "JOBD_ATTEMPT=",       "JOBD_TYPE=",    "JOBD_QUEUE=",
        "JOBD_IDEMPOTENCY_KEY=", "JOBD_SCHEDULED_FOR=", "JOBD_PARENTS=", "TRACEPARENT="};
    for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++)
        if (strncmp(entry, ours[i], strlen(ours[i])) == 0)
            return true;
    return false;
}

/* Adds the job's variables at env[*k...]; false on out-of-memory. */
static bool
add_job_vars(char **env, size_t *k, const struct run *run)
{
    char *add[8] = {0};
    int ok = asprintf(&add[0], "JOBD_JOB_ID=%" PRId64, run->id) >= 0;
    ok = ok && asprintf(&add[1], "JOBD_ATTEMPT=%" PRId32, run->attempt) >= 0;
    ok = ok && asprintf(&add[2], "JOBD_TYPE=%s", run->type) >= 0;
    ok = ok && asprintf(&add[3], "JOBD_QUEUE=%s", run->queue) >= 0;
    ok = ok && asprintf(&add[4], "JOBD_IDEMPOTENCY_KEY=%s", run->idempotency_key) >= 0;
    if (ok && run->scheduled_for_us != 0) {
        char when[TIME_RFC3339_LEN];
        time_format_rfc3339(run->scheduled_for_us, when, sizeof when);
        ok = asprintf(&add[5], "JOBD_SCHEDULED_FOR=%s", when) >= 0;
    }
    if (ok && run->parents_path != NULL)
        ok = asprintf(&add[6], "JOBD_PARENTS=%s", run->parents_path) >= 0;
    if (ok && run->traceparent != NULL)
        ok = asprintf(&add[7], "TRACEPARENT=%s", run->traceparent) >= 0;
    for (size_t i = 0; i < 8; i++) {
        if (!ok)
            free(add[i]);
        else if (add[i] != NULL)
            env[(*k)++] = add[i];
    }
    return ok;
}

bool
exec_env_build(const struct run *run, struct exec_env *out)
{
    size_t n = 0;
    while (environ != NULL && environ[n] != NULL)
        n++;
    out->vars = calloc(n + 10, sizeof *out->vars); /* + 8 of the job's, HOME, NULL */
    if (out->vars == NULL)
        return false;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!job_variable(environ[i]) &&
            (always_passed(environ[i], run->handler) || listed(run->handler, environ[i])))
            out->vars[k++] = environ[i];
    out->first_ours = k;
    bool ok = add_job_vars(out->vars, &k, run);
    if (ok && run->handler->home != NULL) {
        char *home = NULL;
        ok = asprintf(&home, "HOME=%s", run->handler->home) >= 0;
        if (ok)
            out->vars[k++] = home;
    }
    out->vars[k] = NULL;
    if (!ok) {
        exec_env_free(out);
        return false;
    }
    return true;
}

void
exec_env_free(struct exec_env *e)
{
    if (e->vars == NULL)
        return;
    for (char **p = e->vars + e->first_ours; *p != NULL; p++)
        free(*p);
    free(e->vars);
    e->vars = NULL;
}

bool
exec_parents_file(struct run *run, char *msg, size_t len)
{
    if (run->parents == NULL || run->parents_path != NULL)
        return true; /* no parents, or written already */
    const char *dir = getenv("TMPDIR");
    char *path = NULL;
    if (asprintf(&path, "%s/jobd-parents-XXXXXX", dir != NULL && *dir ? dir : "/tmp") < 0) {
        snprintf(msg, len, "out of memory starting the handler");
        return false;
    }
    int fd = mkstemp(path);
    if (fd < 0) {
        snprintf(msg, len, "cannot create the JOBD_PARENTS file %s: %s", path, errno_text(errno));
        free(path);
        return false;
    }
    size_t n = strlen(run->parents), off = 0;
    bool ok = true;
    while (ok && off < n) {
        ssize_t w = write(fd, run->parents + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        ok = w > 0;
        off += ok ? (size_t)w : 0;
    }
    /* A handler running as another user (`user =`) must be able to read it. */
    if (ok && run->handler->user != NULL && geteuid() == 0)
        ok = fchown(fd, run->handler->uid, run->handler->gid) == 0;
    if (close(fd) != 0)
        ok = false;
    if (!ok) {
        snprintf(msg, len, "cannot write the JOBD_PARENTS file %s: %s", path, errno_text(errno));
        unlink(path);
        free(path);
        return false;
    }
    run->parents_path = path;
    return true;
}
