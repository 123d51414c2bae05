/*
 * words.c — shell-style word splitting without a shell (see words.h).
 *
 * A small state machine over the bytes of the line: each word is built in a
 * buffer as long as the line (a word can never be longer), so no growth is
 * needed. Quotes may join parts of one word ('a'"b"c is "abc") and an empty
 * quoted string is a word of its own ('' is ""), as in sh.
 */
#include "worker/words.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

void
words_free(char **argv)
{
    if (argv == NULL)
        return;
    for (char **p = argv; *p != NULL; p++)
        free(*p);
    free(argv);
}

static bool
is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Appends a copy of word[0..len) to *argv; returns false on out-of-memory. */
static bool
push_word(char ***argv, size_t *n, const char *word, size_t len)
{
    char **v = realloc(*argv, (*n + 2) * sizeof *v);
    if (v == NULL)
        return false;
    *argv = v;
    v[*n] = malloc(len + 1);
    if (v[*n] == NULL) {
        v[*n] = NULL;
        return false;
    }
    memcpy(v[*n], word, len);
    v[*n][len] = '\0';
    (*n)++;
    v[*n] = NULL;
    return true;
}

int
words_split(const char *line, char ***out, size_t *argc, const char *field, struct jobd_error *err)
{
    *out = NULL;
    *argc = 0;
    size_t linelen = strlen(line);
    char *word = malloc(linelen + 1);
    char **argv = NULL;
    size_t n = 0;
    int rc = JOBD_OK;
    if (word == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, field, "out of memory");

    const char *p = line;
    while (*p != '\0') {
        while (is_blank(*p))
            p++;
        if (*p == '\0')
            break;
        size_t len = 0;
        while (*p != '\0' && !is_blank(*p)) {
            if (*p == '\'') {
                const char *end = strchr(p + 1, '\'');
                if (end == NULL) {
                    rc = jobd_error_set(err, JOBD_E_INVALID, field,
                                        "unterminated single quote in command line");
                    goto out;
                }
                memcpy(word + len, p + 1, (size_t)(end - p - 1));
                len += (size_t)(end - p - 1);
                p = end + 1;
            } else if (*p == '"') {
                p++;
                while (*p != '"') {
                    if (*p == '\0') {
                        rc = jobd_error_set(err, JOBD_E_INVALID, field,
                                            "unterminated double quote in command line");
                        goto out;
                    }
                    if (*p == '\\' && p[1] == '\n') {
                        p += 2; /* line continuation: both vanish */
                        continue;
                    }
                    if (*p == '\\' && strchr("$`\"\\", p[1]) != NULL && p[1] != '\0')
                        p++;
                    word[len++] = *p++;
                }
                p++;
            } else if (*p == '\\') {
                if (p[1] == '\0') {
                    rc = jobd_error_set(err, JOBD_E_INVALID, field,
                                        "command line ends with a backslash");
                    goto out;
                }
                if (p[1] != '\n')
                    word[len++] = p[1];
                p += 2;
            } else {
                word[len++] = *p++;
            }
        }
        if (!push_word(&argv, &n, word, len)) {
            rc = jobd_error_set(err, JOBD_E_NOMEM, field, "out of memory");
            goto out;
        }
    }
    if (n == 0) {
        rc = jobd_error_set(err, JOBD_E_INVALID, field, "the command line is empty");
        goto out;
    }
    *out = argv;
    *argc = n;
    argv = NULL;
out:
    free(word);
    words_free(argv);
    return rc;
}
