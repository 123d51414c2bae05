/*
 * jobd.h — the public C API of libjobd, the only public header.
 *
 * libjobd lets a C program enqueue jobs into a jobd store (also inside the
 * caller's own PostgreSQL transaction) and run the jobd worker loop with C
 * handlers in its own process. Everything here is jobd_ / JOBD_; handles are
 * opaque. Errors are negative enum jobd_err values (0 = success); a function
 * that can fail for a reason worth telling also fills a caller-provided
 * struct jobd_error, whose msg names what is wrong.
 *
 * Times are microseconds since the Unix epoch (int64_t, suffix _us);
 * durations carry their unit in the name (_ms, _s).
 */
#ifndef JOBD_H
#define JOBD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(JOBD_BUILDING_LIB)
#define JOBD_API __attribute__((visibility("default")))
#else
#define JOBD_API
#endif
#define JOBD_MUST_USE __attribute__((warn_unused_result))

/* Error codes: 0 is success, every error is negative. */
enum jobd_err {
    JOBD_OK = 0,
    JOBD_E_INVALID = -1,     /* bad input; jobd_error.field names the field */
    JOBD_E_NOTFOUND = -2,    /* no such job, schedule or queue */
    JOBD_E_CONFLICT = -3,    /* idempotency key reused with another request; name taken */
    JOBD_E_STALE = -4,       /* fenced: the report's attempt is not the live one */
    JOBD_E_STATE = -5,       /* transition not allowed from the current status */
    JOBD_E_UNAVAILABLE = -6, /* the store (or server) could not be reached */
    JOBD_E_NOMEM = -7,       /* out of memory */
    JOBD_E_TOOBIG = -8,      /* over a size limit */
    JOBD_E_STORE = -9,       /* the store failed otherwise (not a database, SQL error) */
    JOBD_E_IO = -10,         /* a file or socket operation failed */
    JOBD_E_UNAUTHORIZED = -11, /* missing or wrong token */
    JOBD_E_INTERNAL = -12,   /* a bug: an invariant did not hold */
};

/* Detail of an error. Caller-provided; zero-initialise before use. */
struct jobd_error {
    int code;        /* an enum jobd_err value */
    char field[64];  /* the offending field ("payload", "jobs[3].type"), or "" */
    char msg[256];   /* one human sentence naming what is wrong */
};

/* A static, never-NULL name for an error code ("stale attempt"). Thread-safe. */
JOBD_API const char *jobd_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif /* JOBD_H */
