/*
 * privs.h — the capabilities a worker holds so that exec handlers can run
 * as another user (`user =`, docs/WORKER.md, Handlers as another user), and
 * the rule that none of them ever reaches a handler.
 *
 * Under the packaged unit the worker runs as `jobd` with CAP_SETUID and
 * CAP_SETGID granted as ambient capabilities. Ambient and inheritable
 * capabilities survive an exec, so left alone every handler would inherit
 * them and could become any user, root included. Hence: the spawning
 * thread clears both sets (privs_no_inherit), `jobd worker` keeps only
 * CAP_SETUID and CAP_SETGID and only if a handler needs them
 * (privs_limit), and a child switching user drops everything before its
 * exec (exec_user.c). Linux capabilities are per thread: each call acts on
 * the calling thread and on threads it creates afterwards.
 */
#ifndef JOBD_WORKER_PRIVS_H
#define JOBD_WORKER_PRIVS_H

#include <stdbool.h>

/* Clears the calling thread's ambient and inheritable capabilities, so no
 * program it starts inherits one. Keeps the permitted and effective sets. */
void privs_no_inherit(void);

/*
 * For a process that is not root: keeps CAP_SETUID and CAP_SETGID in the
 * calling thread's permitted and effective sets if keep_setid, drops every
 * other capability (and those too if !keep_setid), and clears the ambient
 * and inheritable sets. Call before starting threads. No-op as root (a
 * root worker's handlers are the operator's choice). 0, or -1 with errno.
 */
int privs_limit(bool keep_setid);

/* True if the calling thread may change its user and groups: it runs as
 * root or holds CAP_SETUID and CAP_SETGID (permitted and effective). */
bool privs_can_setid(void);

/* In a forked child, after its setresuid: drops every capability. Only
 * system calls, so it is safe between fork and exec. 0, or -1 with errno. */
int privs_drop_all(void);

#endif
