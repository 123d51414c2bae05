/*
 * exec_user.c — exec handlers that run as another user (`user = NAME` in a
 * [handler] section; docs/WORKER.md, Handlers as another user).
 *
 * posix_spawn cannot change the child's user, so such a handler is started
 * with fork and execve doing what spawn_program's posix_spawnp does (its
 * own process group, stdin/stdout/stderr on the pipes, the signals a
 * handler expects at their defaults, an empty mask, the program found in
 * the worker's PATH, the exec error handed back as posix_spawn's return
 * value), plus, in between: the user's groups, its group, its user, and
 * no capability left. The user is resolved when the config is read, the
 * program's path before the fork: the child only makes system calls, which
 * is all a child of a threaded process may safely do.
 */
#define _GNU_SOURCE /* pipe2, getgrouplist */
#include "worker/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/err.h"
#include "util/errtext.h"
#include "worker/privs.h"

/* The 32-bit id calls where the architecture also has 16-bit ones. */
#ifdef SYS_setresuid32
#define SYS_SETRESUID SYS_setresuid32
#define SYS_SETRESGID SYS_setresgid32
#define SYS_SETGROUPS SYS_setgroups32
#else
#define SYS_SETRESUID SYS_setresuid
#define SYS_SETRESGID SYS_setresgid
#define SYS_SETGROUPS SYS_setgroups
#endif

/* The supplementary groups of pw into h (owned). */
static int
user_groups(struct handler_conf *h, const struct passwd *pw, struct jobd_error *err)
{
    int n = 32;
    for (int tries = 0; tries < 8; tries++) {
        gid_t *g = malloc((size_t)n * sizeof *g);
        if (g == NULL)
            return jobd_error_set(err, JOBD_E_NOMEM, "user", "out of memory");
        int want = n;
        if (getgrouplist(pw->pw_name, pw->pw_gid, g, &want) >= 0) {
            free(h->groups);
            h->groups = g;
            h->n_groups = (size_t)want;
            return JOBD_OK;
        }
        free(g);
        n = want > n ? want : n * 2;
    }
    return jobd_error_set(err, JOBD_E_INVALID, "user", "cannot list the groups of '%s'",
                          pw->pw_name);
}

int
exec_user_configure(struct handler_conf *h, const char *value, struct jobd_error *err)
{
    char buf[16384];
    struct passwd pwbuf, *pw = NULL;
    int e = getpwnam_r(value, &pwbuf, buf, sizeof buf, &pw);
    if (pw == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "user", "no such user '%.64s'%s%s", value,
                              e != 0 ? ": " : "", e != 0 ? errno_text(e) : "");
    free(h->user);
    free(h->home);
    h->user = strdup(pw->pw_name);
    h->home = strdup(pw->pw_dir != NULL && pw->pw_dir[0] ? pw->pw_dir : "/");
    if (h->user == NULL || h->home == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, "user", "out of memory");
    h->uid = pw->pw_uid;
    h->gid = pw->pw_gid;
    return user_groups(h, pw, err);
}

bool
exec_user_switches(const struct handler_conf *h)
{
    return h->user != NULL && (h->uid != geteuid() || h->gid != getegid());
}

int
exec_user_check(const struct handler_conf *h, struct jobd_error *err)
{
    if (!exec_user_switches(h) || privs_can_setid())
        return JOBD_OK;
    return jobd_error_set(err, JOBD_E_INVALID, "user",
                          "%s: [handler \"%s\"]: cannot run it as user '%s': this worker runs "
                          "as uid %u without CAP_SETUID and CAP_SETGID "
                          "(docs/WORKER.md, Handlers as another user)",
                          h->origin != NULL ? h->origin : "user", h->type, h->user,
                          (unsigned)geteuid());
}

/* Moves fd to target (0, 1, 2) for the exec: dup2, or clearing FD_CLOEXEC
 * when it is already there (dup2 would then do nothing). */
static int
move_fd(int fd, int target)
{
    if (fd == target)
        return fcntl(fd, F_SETFD, 0);
    return dup2(fd, target) < 0 ? -1 : 0;
}

/* The child's side: returns only on failure, with the errno. */
static int
child(const char *path, char **argv, char **env, const int fds[3], const struct handler_conf *h)
{
    static const int sigs[] = {SIGPIPE, SIGTERM, SIGINT,  SIGHUP, SIGQUIT,
                               SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM};
    if (setpgid(0, 0) != 0)
        return errno;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
    for (int i = 0; i < 3; i++)
        if (move_fd(fds[i], i) != 0)
            return errno;
    if (syscall(SYS_SETGROUPS, h->n_groups, h->groups) != 0 ||
        syscall(SYS_SETRESGID, h->gid, h->gid, h->gid) != 0 ||
        syscall(SYS_SETRESUID, h->uid, h->uid, h->uid) != 0 || privs_drop_all() != 0)
        return errno;
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(path, argv, env);
    return errno;
}

int
exec_spawn_as(pid_t *pid, char **argv, char **env, int in, int out, int errfd,
              const struct handler_conf *h)
{
    char path[4096];
    int e = exec_find_program(argv[0], path, sizeof path);
    if (e != 0)
        return e;
    int ep[2];
    if (pipe2(ep, O_CLOEXEC) != 0)
        return errno;
    const int fds[3] = {in, out, errfd};
    pid_t p = fork();
    if (p < 0) {
        e = errno;
        close(ep[0]);
        close(ep[1]);
        return e;
    }
    if (p == 0) {
        close(ep[0]);
        e = child(path, argv, env, fds, h);
        ssize_t n = write(ep[1], &e, sizeof e);
        (void)n;
        _exit(127);
    }
    close(ep[1]);
    ssize_t n;
    while ((n = read(ep[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(ep[0]);
    if (n == (ssize_t)sizeof e) { /* the exec failed: reap the child, report as posix_spawn */
        while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
            ;
        return e != 0 ? e : EINVAL;
    }
    *pid = p;
    return 0;
}
