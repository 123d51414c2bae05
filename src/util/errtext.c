/*
 * errtext.c — see errtext.h. The XSI strerror_r (what glibc declares
 * without _GNU_SOURCE, as this build is compiled) fills the buffer and
 * returns 0, or an error number for a value it does not know.
 */
#include "util/errtext.h"

#include <stdio.h>
#include <string.h>

const char *
errno_text(int errnum)
{
    static _Thread_local char buf[256];
    if (strerror_r(errnum, buf, sizeof buf) != 0 || buf[0] == '\0')
        snprintf(buf, sizeof buf, "error %d", errnum);
    return buf;
}
