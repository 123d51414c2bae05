/*
 * errtext.h — the text of an errno value, safe where threads run.
 *
 * strerror may return a buffer that a call on another thread overwrites
 * (POSIX allows it), so jobd does not call it (scripts/lint-banned.sh);
 * errno_text is strerror_r into a buffer of the calling thread's own.
 */
#ifndef JOBD_UTIL_ERRTEXT_H
#define JOBD_UTIL_ERRTEXT_H

/*
 * The message for errnum ("No such file or directory"), or "error N" for an
 * unknown value. Thread-safe. The text lives in a per-thread buffer, valid
 * until this thread's next errno_text call: copy it to keep it, and do not
 * use two results in one expression.
 */
const char *errno_text(int errnum);

#endif
