/*
 * privs.c — see privs.h. The capability sets are read and written with the
 * raw capget/capset system calls (no libcap): three 64-bit masks, each
 * split in two 32-bit words by the kernel's version 3 ABI.
 */
#include "worker/privs.h"

#include <errno.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SETID_MASK ((1u << CAP_SETUID) | (1u << CAP_SETGID)) /* both in word 0 */

static int
caps_get(struct __user_cap_data_struct d[2])
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    memset(d, 0, 2 * sizeof *d);
    return (int)syscall(SYS_capget, &h, d);
}

static int
caps_set(struct __user_cap_data_struct d[2])
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    return (int)syscall(SYS_capset, &h, d);
}

static void
clear_ambient(void)
{
    /* EINVAL on kernels before 4.3, which have no ambient set: nothing to clear. */
    (void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
}

void
privs_no_inherit(void)
{
    struct __user_cap_data_struct d[2];
    clear_ambient();
    if (caps_get(d) == 0 && (d[0].inheritable != 0 || d[1].inheritable != 0)) {
        d[0].inheritable = d[1].inheritable = 0;
        (void)caps_set(d); /* lowering a set is always allowed */
    }
}

int
privs_limit(bool keep_setid)
{
    if (geteuid() == 0)
        return 0;
    struct __user_cap_data_struct d[2];
    clear_ambient();
    if (caps_get(d) != 0)
        return -1;
    d[0].permitted &= keep_setid ? SETID_MASK : 0;
    d[1].permitted = 0;
    d[0].effective = d[0].permitted;
    d[1].effective = 0;
    d[0].inheritable = d[1].inheritable = 0;
    return caps_set(d);
}

bool
privs_can_setid(void)
{
    if (geteuid() == 0)
        return true;
    struct __user_cap_data_struct d[2];
    return caps_get(d) == 0 && (d[0].effective & SETID_MASK) == SETID_MASK;
}

int
privs_drop_all(void)
{
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof d);
    clear_ambient();
    return caps_set(d);
}
