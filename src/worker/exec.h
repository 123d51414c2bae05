/*
 * exec.h — the exec handler runner: each run is a child process.
 *
 * docs/WORKER.md, "exec handlers, in detail": the command (already split into
 * argv by config.c) runs without a shell via posix_spawn, in its own process
 * group, with the payload JSON (and a newline) on stdin and JOBD_* variables
 * in its environment. One reactor thread watches every child at once with
 * poll(): stdin/stdout/stderr pipes and a pidfd per child, so a thousand
 * running children cost one thread. Output is held in bounded buffers (64 KiB
 * of stdout, the last 4 KiB of stderr). A timeout or a stop request sends
 * SIGTERM to the whole group, SIGKILL 5 s later; when the leader exits, any
 * process left in its group is killed so nothing outlives its job.
 */
#ifndef JOBD_WORKER_EXEC_H
#define JOBD_WORKER_EXEC_H

#include <stddef.h>
#include <sys/types.h>

#include "worker/run.h"

/*
 * SIGKILL follows SIGTERM after this long (docs/WORKER.md, "exec handlers, in
 * detail").
 */
#define EXEC_KILL_GRACE_MS 5000

struct exec_runner;

/* ---- configuration (exec_conf.c) ---- */

/* The runner table's configure for `exec = COMMAND LINE` (runner.h). */
JOBD_MUST_USE int exec_configure(struct handler_conf *h, const char *value, const char *dir,
                                 struct jobd_error *err);
/* The runner table's check: the program exists and may be executed (a bare
 * name: somewhere in PATH). err names h->origin (file:line). */
JOBD_MUST_USE int exec_check(const struct handler_conf *h, struct jobd_error *err);

/* ---- `user =`: handlers as another user (exec_user.c) ---- */

/* Resolves value (a user name) into h's user, uid, gid, groups and home.
 * JOBD_E_INVALID "no such user '...'" (the caller adds file:line:key). */
JOBD_MUST_USE int exec_user_configure(struct handler_conf *h, const char *value,
                                      struct jobd_error *err);
/* True if h's children must change user or group (h->user is not us). */
bool exec_user_switches(const struct handler_conf *h);
/* At start: JOBD_E_INVALID naming h->origin if h needs a switch this
 * process cannot make (not root, no CAP_SETUID and CAP_SETGID). */
JOBD_MUST_USE int exec_user_check(const struct handler_conf *h, struct jobd_error *err);
/*
 * Starts argv as spawn_program does (exec.c: own process group, the fds on
 * 0/1/2, default signals, empty mask, env as the environment), as h's user
 * with its groups and no capability. Returns 0 or an errno (the exec's,
 * as posix_spawn would). Call from a thread holding CAP_SETUID/CAP_SETGID.
 */
int exec_spawn_as(pid_t *pid, char **argv, char **env, int in, int out, int errfd,
                  const struct handler_conf *h);
/* The path prog runs from (as posix_spawnp would find it in $PATH) into
 * out; 0, or an errno if it cannot be run. */
int exec_find_program(const char *prog, char *out, size_t len);

/*
 * A child's environment: vars is NULL-terminated; vars[0 .. first_ours) are
 * borrowed from the worker's environ (PATH, HOME, LANG, LC_*, TZ and the
 * names run->handler->env lists), the rest (the job's JOBD_* variables, and
 * HOME for a handler with `user =`) are owned. exec_env_free frees what is owned.
 */
struct exec_env {
    char **vars;
    size_t first_ours;
};
/* False on out-of-memory (out->vars NULL). */
bool exec_env_build(const struct run *run, struct exec_env *out);
/*
 * Writes run->parents (if any, and not yet) to a new file in $TMPDIR (else
 * /tmp), readable by the handler's user only, and sets run->parents_path,
 * which the environment names as JOBD_PARENTS and run_free removes
 * (docs/WORKER.md, Parents). False with a reason in msg when it cannot.
 */
bool exec_parents_file(struct run *run, char *msg, size_t len);
/* NULL-safe on a zeroed or freed env. */
void exec_env_free(struct exec_env *e);

/* ---- the runner (exec.c) ---- */

/*
 * Starts the reactor thread. Results go to sink (called on the reactor
 * thread). *out is owned by the caller (exec_runner_free). JOBD_E_NOMEM /
 * JOBD_E_IO with err set.
 */
JOBD_MUST_USE int exec_runner_new(struct run_sink sink, struct exec_runner **out,
                                  struct jobd_error *err);
/*
 * Queues run (ownership passes to the runner, whatever happens): exactly one
 * result for it will be delivered, also when the program cannot be started.
 * Thread-safe.
 */
void exec_runner_start(struct exec_runner *x, struct run *run);
/* Asks the run (id, attempt) to stop: SIGTERM now, SIGKILL 5 s later. Thread-safe. */
void exec_runner_stop(struct exec_runner *x, int64_t id, int32_t attempt, enum run_stop why);
/*
 * Kills every child still running (SIGKILL to each group), reaps them and
 * joins the thread; no result is delivered after it returns. NULL-safe.
 */
void exec_runner_free(struct exec_runner *x);

#endif
