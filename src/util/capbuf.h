/*
 * capbuf.h — bounded output buffers for handler output.
 *
 * A handler may print gigabytes; the worker must never hold more than the
 * documented caps in memory (curl's dynbuf rule: every growing buffer has a
 * hard limit). A headbuf keeps the FIRST cap bytes (stdout: a result longer
 * than 64 KiB is not a result, so only "did it overflow" matters past the
 * cap); a tailbuf keeps the LAST cap bytes (stderr: the end says why). Not
 * thread-safe; one owner each.
 */
#ifndef JOBD_UTIL_CAPBUF_H
#define JOBD_UTIL_CAPBUF_H

#include <stdbool.h>
#include <stddef.h>

struct headbuf {
    char *data; /* cap + 1 bytes once anything arrived (NUL-terminated) */
    size_t len; /* <= cap */
    size_t cap;
    bool overflow; /* more than cap bytes were offered */
};

struct tailbuf {
    char *ring; /* cap bytes */
    size_t cap;
    size_t total; /* bytes ever offered */
};

void headbuf_init(struct headbuf *b, size_t cap);
/* Keeps what fits; returns false only on out-of-memory. */
bool headbuf_add(struct headbuf *b, const char *p, size_t n);
void headbuf_fini(struct headbuf *b);

void tailbuf_init(struct tailbuf *b, size_t cap);
bool tailbuf_add(struct tailbuf *b, const char *p, size_t n);
/* The kept bytes in order, NUL-terminated, malloc'd (caller frees); NULL on OOM. */
char *tailbuf_take(const struct tailbuf *b);
void tailbuf_fini(struct tailbuf *b);

#endif
