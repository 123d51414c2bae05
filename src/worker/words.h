/*
 * words.h — splitting an exec handler's command line into argv.
 *
 * docs/WORKER.md, "exec handlers, in detail": the command line is split the
 * way a POSIX shell splits words (blanks separate; '…' is literal; "…" keeps
 * blanks and lets a backslash escape $ ` " \ and newline; a backslash outside
 * quotes escapes the next character), but no shell ever runs: there is no
 * expansion, no globbing, no redirection. $, *, > and friends are ordinary
 * characters.
 */
#ifndef JOBD_WORKER_WORDS_H
#define JOBD_WORKER_WORDS_H

#include <stddef.h>

#include "jobd.h"

/*
 * Splits line into a NULL-terminated argv (malloc'd; free with words_free).
 * *argc gets the word count (>= 1 on success). JOBD_E_INVALID for an
 * unterminated quote, a trailing backslash or a line with no words (err
 * says which, field is field); JOBD_E_NOMEM.
 */
JOBD_MUST_USE int words_split(const char *line, char ***argv, size_t *argc, const char *field,
                              struct jobd_error *err);
/* Frees an argv from words_split. NULL-safe. */
void words_free(char **argv);

#endif
