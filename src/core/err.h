/*
 * err.h — filling struct jobd_error (declared in include/jobd.h).
 *
 * Every fallible function in jobd returns an enum jobd_err and, when it
 * has a caller-provided struct jobd_error, says there what went wrong and
 * which field. jobd_error_set returns the code so call sites can write
 * `return jobd_error_set(err, JOBD_E_INVALID, "queue", "...")`.
 */
#ifndef JOBD_CORE_ERR_H
#define JOBD_CORE_ERR_H

#include "jobd.h"

/* Sets err (if not NULL) and returns code. field may be NULL. Thread-safe. */
int jobd_error_set(struct jobd_error *err, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Clears err (if not NULL) to "no error". */
void jobd_error_clear(struct jobd_error *err);

#endif
