/*
 * err.c — error names and struct jobd_error helpers. No I/O, no globals.
 */
#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *
jobd_strerror(int code)
{
    switch (code) {
    case JOBD_OK: return "success";
    case JOBD_E_INVALID: return "invalid input";
    case JOBD_E_NOTFOUND: return "not found";
    case JOBD_E_CONFLICT: return "conflict";
    case JOBD_E_STALE: return "stale attempt";
    case JOBD_E_STATE: return "transition not allowed";
    case JOBD_E_UNAVAILABLE: return "store unavailable";
    case JOBD_E_NOMEM: return "out of memory";
    case JOBD_E_TOOBIG: return "too large";
    case JOBD_E_STORE: return "store error";
    case JOBD_E_IO: return "I/O error";
    case JOBD_E_UNAUTHORIZED: return "unauthorized";
    case JOBD_E_INTERNAL: return "internal error";
    case JOBD_E_COMMIT_UNKNOWN: return "commit outcome unknown";
    }
    return "unknown error";
}

int
jobd_error_set(struct jobd_error *err, int code, const char *field, const char *fmt, ...)
{
    if (err == NULL)
        return code;
    err->code = code;
    snprintf(err->field, sizeof err->field, "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

void
jobd_error_clear(struct jobd_error *err)
{
    if (err != NULL)
        memset(err, 0, sizeof *err);
}
