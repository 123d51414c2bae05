/*
 * exec.c — the exec handler runner (see exec.h).
 *
 * Threads: callers only append to two mutex-protected lists (new runs, stop
 * requests) and poke an eventfd; everything else — spawning, pipes, timers,
 * signals, reaping — happens on the reactor thread, so no child state is
 * shared. Each reactor turn: take requests, fire due timers (timeout ->
 * SIGTERM, +5 s -> SIGKILL), poll every fd with the soonest timer as the
 * timeout, move bytes, and finish the children that have exited and whose
 * pipes are drained.
 *
 * Reaping: a pidfd per child says "exited" without a SIGCHLD handler (which
 * would be process-wide and clash with an embedding program). We look with
 * waitid(WNOWAIT) first and kill the group while the leader is still a
 * zombie, so the group id cannot have been reused when the signal goes out.
 * The child's environment and the command line are exec_conf.c's.
 */
#define _GNU_SOURCE /* pipe2, asprintf */
#include "worker/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/err.h"
#include "core/job.h"
#include "core/utf8.h"
#include "util/clock.h"
#include "util/capbuf.h"
#include "worker/privs.h"
#include "util/errtext.h"

/* After the leader exits, how long its pipes may stay open (a process that
 * left the group with setsid could hold them forever). */
#define DRAIN_MS 1000
/* Without pidfd (old kernels), how often to look for exited children. */
#define REAP_POLL_MS 20

/* The longest progress line read from fd 3 (docs/WORKER.md, Progress):
 * room for the largest message and data; a longer line is skipped. */
#define PROGRESS_LINE_MAX (JOB_PROGRESS_DATA_MAX + JOB_PROGRESS_MESSAGE_MAX * 6 + 1024)

struct child {
    struct run *run;
    pid_t pid;
    int pidfd; /* -1 if the kernel has none */
    int in_fd, out_fd, err_fd;
    int prog_fd;     /* the read end of the handler's fd 3, -1 when closed */
    char *prog_line; /* the line being read (PROGRESS_LINE_MAX), NULL until used */
    size_t prog_len;
    bool prog_skip; /* the current line is too long: dropped up to its newline */
    char *in_data;  /* payload + "\n" */
    size_t in_len, in_off;
    struct headbuf out;
    struct tailbuf errb;
    int64_t deadline_us;    /* monotonic; 0 = no timeout */
    int64_t kill_at_us;     /* monotonic; 0 = no SIGKILL pending */
    int64_t drain_until_us; /* set when the leader exits */
    enum run_stop stopped;
    bool exited;
    int status; /* waitpid status once exited */
    struct child *next;
};

struct stop_req {
    int64_t id;
    int32_t attempt;
    enum run_stop why;
    struct stop_req *next;
};

struct pending {
    struct run *run;
    struct pending *next;
};

struct exec_runner {
    struct run_sink sink;
    pthread_t thread;
    int evfd;
    pthread_mutex_t mu; /* guards the three fields below */
    struct pending *new_runs;
    struct stop_req *stops;
    bool quit;
    struct child *children; /* reactor thread only */
};

static void
poke(struct exec_runner *x)
{
    uint64_t one = 1;
    ssize_t n = write(x->evfd, &one, sizeof one);
    (void)n; /* a full counter still wakes the reactor */
}

void
exec_runner_start(struct exec_runner *x, struct run *run)
{
    struct pending *p = calloc(1, sizeof *p);
    if (p == NULL) {
        struct run_result *r = run_result_new(run, RUN_RELEASE, "out of memory");
        run_free(run);
        if (r != NULL)
            x->sink.deliver(x->sink.ctx, r);
        return;
    }
    p->run = run;
    pthread_mutex_lock(&x->mu);
    struct pending **tail = &x->new_runs;
    while (*tail != NULL)
        tail = &(*tail)->next;
    *tail = p;
    pthread_mutex_unlock(&x->mu);
    poke(x);
}

void
exec_runner_stop(struct exec_runner *x, int64_t id, int32_t attempt, enum run_stop why)
{
    struct stop_req *s = calloc(1, sizeof *s);
    if (s == NULL)
        return; /* out of memory: the run goes on to its own end or timeout;
                 * a late report is fenced by attempt */
    s->id = id;
    s->attempt = attempt;
    s->why = why;
    pthread_mutex_lock(&x->mu);
    s->next = x->stops;
    x->stops = s;
    pthread_mutex_unlock(&x->mu);
    poke(x);
}

/* ---- spawning ---- */

static void
set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void
close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void
deliver_error(struct exec_runner *x, struct run *run, enum run_outcome outcome, const char *msg)
{
    struct run_result *r = run_result_new(run, outcome, msg);
    run_free(run);
    if (r != NULL)
        x->sink.deliver(x->sink.ctx, r);
}

/*
 * posix_spawnp of argv with env, stdin/stdout/stderr on the given fds, in
 * a process group of its own, with an empty signal mask and default
 * dispositions; exec_spawn_as (exec_user.c) for a handler with `user =`.
 * Returns 0 or an errno.
 */
static int
spawn_program(pid_t *pid, char **argv, char **env, int in, int out, int errfd, int prog,
              const struct handler_conf *h)
{
    if (exec_user_switches(h))
        return exec_spawn_as(pid, argv, env, in, out, errfd, h);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in, 0);
    posix_spawn_file_actions_adddup2(&fa, out, 1);
    posix_spawn_file_actions_adddup2(&fa, errfd, 2);
    posix_spawn_file_actions_adddup2(&fa, prog, 3); /* docs/WORKER.md, Progress */
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t none, deflt;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    sigemptyset(&deflt);
    static const int sigs[] = {SIGPIPE, SIGTERM, SIGINT,  SIGHUP, SIGQUIT,
                               SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(&deflt, sigs[i]);
    posix_spawnattr_setsigdefault(&attr, &deflt);
    int rc = posix_spawnp(pid, argv[0], &fa, &attr, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    return rc;
}

/* Spawns run's program; on failure delivers a result (RUN_RELEASE for a
 * local shortage, else RUN_RETRY) and frees run. */
static void
spawn_child(struct exec_runner *x, struct run *run)
{
    int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1}, pprog[2] = {-1, -1};
    char msg[512];
    /* Out of descriptors, processes or memory is this host's trouble, not
     * the job's: the job goes back unused. A program that cannot run
     * (gone since the start's check, not executable) is the job's failure. */
    enum run_outcome outcome = RUN_RELEASE;
    struct child *c = calloc(1, sizeof *c);
    struct exec_env env = {0};
    snprintf(msg, sizeof msg, "out of memory starting the handler");
    if (c == NULL || !exec_parents_file(run, msg, sizeof msg) || !exec_env_build(run, &env)) {
        free(c);
        exec_env_free(&env);
        deliver_error(x, run, RUN_RELEASE, msg);
        return;
    }
    if (pipe2(pin, O_CLOEXEC) != 0 || pipe2(pout, O_CLOEXEC) != 0 || pipe2(perr, O_CLOEXEC) != 0 ||
        pipe2(pprog, O_CLOEXEC) != 0) {
        snprintf(msg, sizeof msg, "cannot create pipes: %s", errno_text(errno));
        goto fail;
    }
    char **argv = run->handler->argv;
    int rc =
        spawn_program(&c->pid, argv, env.vars, pin[0], pout[1], perr[1], pprog[1], run->handler);
    exec_env_free(&env);
    if (rc != 0) {
        snprintf(msg, sizeof msg, "cannot run %s: %s", argv[0], errno_text(rc));
        if (rc != EAGAIN && rc != ENOMEM && rc != EMFILE && rc != ENFILE)
            outcome = RUN_RETRY;
        goto fail;
    }
    close(pin[0]);
    close(pout[1]);
    close(perr[1]);
    close(pprog[1]);
    c->prog_fd = pprog[0];
    set_nonblock(c->prog_fd);
    c->in_fd = pin[1];
    c->out_fd = pout[0];
    c->err_fd = perr[0];
    set_nonblock(c->in_fd);
    set_nonblock(c->out_fd);
    set_nonblock(c->err_fd);
    c->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
    c->run = run;
    headbuf_init(&c->out, JOB_RESULT_MAX);
    /* One ring for both: last_error is its last JOB_ERROR_MAX bytes, the
     * attempt's log its last log_bytes (docs/WORKER.md, Attempt logs). */
    int64_t log_bytes = handler_log_bytes(run->handler);
    tailbuf_init(&c->errb, log_bytes > JOB_ERROR_MAX ? (size_t)log_bytes : JOB_ERROR_MAX);
    size_t plen = strlen(run->payload);
    c->in_data = malloc(plen + 1);
    if (c->in_data != NULL) {
        memcpy(c->in_data, run->payload, plen);
        c->in_data[plen] = '\n';
        c->in_len = plen + 1;
    } else {
        close_fd(&c->in_fd); /* the handler sees an empty stdin; better than no run */
    }
    if (run->timeout_ms > 0)
        c->deadline_us = clock_mono_now_us() + run->timeout_ms * 1000;
    c->next = x->children;
    x->children = c;
    return;
fail:
    exec_env_free(&env);
    for (int i = 0; i < 2; i++) {
        if (pin[i] >= 0)
            close(pin[i]);
        if (pout[i] >= 0)
            close(pout[i]);
        if (perr[i] >= 0)
            close(perr[i]);
        if (pprog[i] >= 0)
            close(pprog[i]);
    }
    free(c);
    deliver_error(x, run, outcome, msg);
}

/* ---- the reactor ---- */

static void
signal_group(struct child *c, int sig)
{
    if (!c->exited)
        kill(-c->pid, sig);
}

static void
request_stop(struct child *c, enum run_stop why, int64_t now)
{
    if (c->exited || c->stopped != RUN_STOP_NONE)
        return;
    c->stopped = why;
    signal_group(c, SIGTERM);
    c->kill_at_us = now + (int64_t)EXEC_KILL_GRACE_MS * 1000;
}

/* Looks whether the leader has exited; if so kills its group, then reaps it. */
static void
check_exit(struct child *c, int64_t now)
{
    if (c->exited)
        return;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == 0)
        return;
    kill(-c->pid, SIGKILL); /* stragglers in the group; the zombie keeps the id ours */
    int status = 0;
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
        ;
    c->exited = true;
    c->status = status;
    c->drain_until_us = now + (int64_t)DRAIN_MS * 1000;
    close_fd(&c->pidfd);
    close_fd(&c->in_fd);
}

static void
read_pipe(int *fd, struct headbuf *hb, struct tailbuf *tb)
{
    char buf[16384];
    for (;;) {
        ssize_t n = read(*fd, buf, sizeof buf);
        if (n > 0) {
            if (hb != NULL)
                headbuf_add(hb, buf, (size_t)n);
            else
                tailbuf_add(tb, buf, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        close_fd(fd); /* EOF or error */
        return;
    }
}

/* One complete progress line of c: to the sink (blank lines are skipped). */
static void
progress_line(struct exec_runner *x, struct child *c)
{
    c->prog_line[c->prog_len] = '\0';
    size_t n = c->prog_len;
    c->prog_len = 0;
    if (c->prog_skip || x->sink.progress == NULL || strspn(c->prog_line, " \t\r") == n)
        return;
    char *line = strdup(c->prog_line);
    if (line != NULL)
        x->sink.progress(x->sink.ctx, c->run->id, c->run->attempt, line);
}

/* Reads what the handler wrote to its fd 3, line by line (docs/WORKER.md,
 * Progress); at EOF closes it. */
static void
read_progress(struct exec_runner *x, struct child *c)
{
    if (c->prog_line == NULL && (c->prog_line = malloc(PROGRESS_LINE_MAX + 1)) == NULL) {
        close_fd(&c->prog_fd); /* no room: progress is a nicety, the run goes on */
        return;
    }
    char buf[4096];
    for (;;) {
        ssize_t n = read(c->prog_fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            close_fd(&c->prog_fd); /* EOF or error; an unfinished line is dropped */
            return;
        }
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] == '\n') {
                progress_line(x, c);
                c->prog_skip = false;
            } else if (c->prog_len < PROGRESS_LINE_MAX) {
                c->prog_line[c->prog_len++] = buf[i];
            } else {
                c->prog_skip = true;
            }
        }
    }
}

static void
write_stdin(struct child *c)
{
    while (c->in_fd >= 0 && c->in_off < c->in_len) {
        ssize_t n = write(c->in_fd, c->in_data + c->in_off, c->in_len - c->in_off);
        if (n > 0) {
            c->in_off += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        } else {
            close_fd(&c->in_fd); /* EPIPE: the handler does not read its input */
        }
    }
    if (c->in_off >= c->in_len)
        close_fd(&c->in_fd);
}

static void
describe_status(const struct child *c, char *buf, size_t len)
{
    if (WIFEXITED(c->status))
        snprintf(buf, len, "exit status %d", WEXITSTATUS(c->status));
    else if (WIFSIGNALED(c->status))
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(c->status),
                 strsignal(WTERMSIG(c->status)));
    else
        snprintf(buf, len, "ended with status %d", c->status);
}

static struct run_result *
make_result(struct child *c)
{
    char *tail = tailbuf_take(&c->errb);
    char status[128], msg[256];
    describe_status(c, status, sizeof status);
    struct run_result *r = NULL;
    if (c->stopped != RUN_STOP_NONE) {
        if (c->stopped == RUN_STOP_TIMEOUT)
            snprintf(msg, sizeof msg, "timed out after %" PRId64 "ms (%s)", c->run->timeout_ms,
                     status);
        else
            snprintf(msg, sizeof msg, "%s (%s)", run_stop_text(c->stopped), status);
        r = run_result_new(c->run, RUN_RETRY, msg);
        if (r != NULL)
            r->stopped = c->stopped;
    } else if (WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0) {
        r = run_result_new(c->run, RUN_SUCCEEDED, NULL);
        if (r != NULL && !c->out.overflow && c->out.len > 0)
            r->result = run_result_json(c->out.data, c->out.len);
    } else {
        enum run_outcome o =
            WIFEXITED(c->status) && WEXITSTATUS(c->status) == 65 ? RUN_DEAD : RUN_RETRY;
        r = run_result_new(c->run, o, tail != NULL && tail[0] != '\0' ? tail : status);
    }
    int64_t log_bytes = handler_log_bytes(c->run->handler);
    size_t kept = c->errb.total < c->errb.cap ? c->errb.total : c->errb.cap;
    if (r != NULL && tail != NULL && log_bytes > 0 && kept > 0)
        r->log = utf8_clean(tail, kept, log_bytes < 3 ? 3 : (size_t)log_bytes, /* its least */
                            UTF8_KEEP_TAIL); /* NULL (out of memory): no log */
    free(tail);
    return r;
}

static void
child_free(struct child *c)
{
    close_fd(&c->in_fd);
    close_fd(&c->out_fd);
    close_fd(&c->err_fd);
    close_fd(&c->prog_fd);
    free(c->prog_line);
    close_fd(&c->pidfd);
    headbuf_fini(&c->out);
    tailbuf_fini(&c->errb);
    free(c->in_data);
    run_free(c->run);
    free(c);
}

/* Applies queued stop requests; returns whether quit was asked. */
static bool
take_requests(struct exec_runner *x, int64_t now)
{
    pthread_mutex_lock(&x->mu);
    struct pending *runs = x->new_runs;
    struct stop_req *stops = x->stops;
    bool quit = x->quit;
    x->new_runs = NULL;
    x->stops = NULL;
    pthread_mutex_unlock(&x->mu);
    while (runs != NULL) {
        struct pending *p = runs;
        runs = p->next;
        if (quit)
            run_free(p->run);
        else
            spawn_child(x, p->run);
        free(p);
    }
    while (stops != NULL) {
        struct stop_req *s = stops;
        stops = s->next;
        for (struct child *c = x->children; c != NULL; c = c->next)
            if (c->run->id == s->id && c->run->attempt == s->attempt)
                request_stop(c, s->why, now);
        free(s);
    }
    return quit;
}

static void
fire_timers(struct exec_runner *x, int64_t now)
{
    for (struct child *c = x->children; c != NULL; c = c->next) {
        if (c->deadline_us != 0 && now >= c->deadline_us)
            request_stop(c, RUN_STOP_TIMEOUT, now);
        if (c->kill_at_us != 0 && now >= c->kill_at_us) {
            signal_group(c, SIGKILL);
            c->kill_at_us = 0;
        }
        if (c->exited && c->drain_until_us != 0 && now >= c->drain_until_us) {
            close_fd(&c->out_fd);
            close_fd(&c->err_fd);
        }
    }
}

static int64_t
min_nonzero(int64_t a, int64_t b)
{
    if (a == 0)
        return b;
    if (b == 0)
        return a;
    return a < b ? a : b;
}

/* Delivers and frees every child that exited and has no open pipe left. */
static void
finish_children(struct exec_runner *x)
{
    struct child **pp = &x->children;
    while (*pp != NULL) {
        struct child *c = *pp;
        if (c->exited && c->out_fd < 0 && c->err_fd < 0) {
            close_fd(&c->prog_fd); /* what it said last is moot once it is done */
            *pp = c->next;
            struct run_result *r = make_result(c);
            child_free(c);
            if (r != NULL)
                x->sink.deliver(x->sink.ctx, r);
        } else {
            pp = &c->next;
        }
    }
}

static void
kill_all(struct exec_runner *x)
{
    while (x->children != NULL) {
        struct child *c = x->children;
        x->children = c->next;
        if (!c->exited) {
            kill(-c->pid, SIGKILL);
            int status;
            while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
                ;
        }
        child_free(c);
    }
}

/* After a poll: moves the bytes each child's fds are ready for (pfd[1..]
 * holds five entries per child, in list order) and notes exits. */
static void
move_bytes(struct exec_runner *x, const struct pollfd *pfd, int64_t now)
{
    size_t i = 1;
    for (struct child *c = x->children; c != NULL; c = c->next, i += 5) {
        if (pfd[i].revents != 0)
            write_stdin(c);
        if (pfd[i + 1].revents != 0)
            read_pipe(&c->out_fd, &c->out, NULL);
        if (pfd[i + 2].revents != 0)
            read_pipe(&c->err_fd, NULL, &c->errb);
        if (pfd[i + 3].revents != 0 || (c->pidfd < 0 && !c->exited))
            check_exit(c, now);
        if (pfd[i + 4].revents != 0 || (c->exited && c->prog_fd >= 0))
            read_progress(x, c);
        if (c->exited) { /* what is left in the pipes is there now */
            if (c->out_fd >= 0)
                read_pipe(&c->out_fd, &c->out, NULL);
            if (c->err_fd >= 0)
                read_pipe(&c->err_fd, NULL, &c->errb);
        }
    }
}

static void *
reactor(void *arg)
{
    struct exec_runner *x = arg;
    /* A handler that does not read its stdin makes our write fail with
     * EPIPE; the SIGPIPE that comes with it must not kill the worker. */
    sigset_t pipe_sig;
    sigemptyset(&pipe_sig);
    sigaddset(&pipe_sig, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_sig, NULL);
    privs_no_inherit(); /* children start from this thread: they inherit no capability */
    struct pollfd *pfd = NULL;
    size_t pcap = 0;
    for (;;) {
        int64_t now = clock_mono_now_us();
        if (take_requests(x, now))
            break;
        fire_timers(x, now);
        size_t n = 1, nchild = 0;
        bool need_reap_poll = false;
        int64_t wake = 0;
        for (struct child *c = x->children; c != NULL; c = c->next) {
            nchild++;
            wake = min_nonzero(
                wake, c->deadline_us != 0 && c->stopped == RUN_STOP_NONE ? c->deadline_us : 0);
            wake = min_nonzero(wake, c->kill_at_us);
            wake = min_nonzero(wake, c->exited ? c->drain_until_us : 0);
            if (!c->exited && c->pidfd < 0)
                need_reap_poll = true;
        }
        if (5 * nchild + 1 > pcap) {
            size_t ncap = 5 * nchild + 16;
            struct pollfd *np = realloc(pfd, ncap * sizeof *np);
            if (np == NULL) { /* try again shortly; nothing is lost */
                usleep(10000);
                continue;
            }
            pfd = np;
            pcap = ncap;
        }
        pfd[0] = (struct pollfd){.fd = x->evfd, .events = POLLIN};
        for (struct child *c = x->children; c != NULL; c = c->next) {
            pfd[n++] = (struct pollfd){.fd = c->in_fd, .events = POLLOUT};
            pfd[n++] = (struct pollfd){.fd = c->out_fd, .events = POLLIN};
            pfd[n++] = (struct pollfd){.fd = c->err_fd, .events = POLLIN};
            pfd[n++] = (struct pollfd){.fd = c->exited ? -1 : c->pidfd, .events = POLLIN};
            pfd[n++] = (struct pollfd){.fd = c->prog_fd, .events = POLLIN};
        }
        int timeout = -1;
        if (wake != 0)
            timeout = wake <= now ? 0 : (int)((wake - now + 999) / 1000);
        if (need_reap_poll && (timeout < 0 || timeout > REAP_POLL_MS))
            timeout = REAP_POLL_MS;
        int pr = poll(pfd, (nfds_t)n, timeout);
        if (pr < 0 && errno != EINTR)
            usleep(1000);
        if (pfd[0].revents != 0) {
            uint64_t v;
            ssize_t r = read(x->evfd, &v, sizeof v);
            (void)r;
        }
        move_bytes(x, pfd, clock_mono_now_us());
        finish_children(x);
    }
    free(pfd);
    kill_all(x);
    return NULL;
}

int
exec_runner_new(struct run_sink sink, struct exec_runner **out, struct jobd_error *err)
{
    *out = NULL;
    struct exec_runner *x = calloc(1, sizeof *x);
    if (x == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    x->sink = sink;
    x->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (x->evfd < 0) {
        int rc = jobd_error_set(err, JOBD_E_IO, NULL, "eventfd: %s", errno_text(errno));
        free(x);
        return rc;
    }
    pthread_mutex_init(&x->mu, NULL);
    int rc = pthread_create(&x->thread, NULL, reactor, x);
    if (rc != 0) {
        close(x->evfd);
        pthread_mutex_destroy(&x->mu);
        free(x);
        return jobd_error_set(err, JOBD_E_IO, NULL, "cannot start a thread: %s", errno_text(rc));
    }
    *out = x;
    return JOBD_OK;
}

void
exec_runner_free(struct exec_runner *x)
{
    if (x == NULL)
        return;
    pthread_mutex_lock(&x->mu);
    x->quit = true;
    pthread_mutex_unlock(&x->mu);
    poke(x);
    pthread_join(x->thread, NULL);
    struct pending *p = x->new_runs;
    while (p != NULL) {
        struct pending *nx = p->next;
        run_free(p->run);
        free(p);
        p = nx;
    }
    struct stop_req *s = x->stops;
    while (s != NULL) {
        struct stop_req *nx = s->next;
        free(s);
        s = nx;
    }
    close(x->evfd);
    pthread_mutex_destroy(&x->mu);
    free(x);
}
