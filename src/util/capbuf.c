/*
 * capbuf.c — see capbuf.h. The memory is allocated lazily at its full cap
 * on the first byte, so a quiet handler costs nothing and a loud one costs
 * exactly the cap.
 */
#include "util/capbuf.h"

#include <stdlib.h>
#include <string.h>

void
headbuf_init(struct headbuf *b, size_t cap)
{
    memset(b, 0, sizeof *b);
    b->cap = cap;
}

bool
headbuf_add(struct headbuf *b, const char *p, size_t n)
{
    if (n == 0)
        return true;
    if (b->data == NULL) {
        b->data = malloc(b->cap + 1);
        if (b->data == NULL)
            return false;
        b->data[0] = '\0';
    }
    size_t room = b->cap - b->len;
    size_t take = n < room ? n : room;
    memcpy(b->data + b->len, p, take);
    b->len += take;
    b->data[b->len] = '\0';
    if (take < n)
        b->overflow = true;
    return true;
}

void
headbuf_fini(struct headbuf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void
tailbuf_init(struct tailbuf *b, size_t cap)
{
    memset(b, 0, sizeof *b);
    b->cap = cap;
}

bool
tailbuf_add(struct tailbuf *b, const char *p, size_t n)
{
    if (n == 0 || b->cap == 0)
        return true;
    if (b->ring == NULL) {
        b->ring = malloc(b->cap);
        if (b->ring == NULL)
            return false;
    }
    if (n > b->cap) { /* only the last cap bytes can survive */
        p += n - b->cap;
        b->total += n - b->cap;
        n = b->cap;
    }
    size_t pos = b->total % b->cap;
    size_t first = b->cap - pos < n ? b->cap - pos : n;
    memcpy(b->ring + pos, p, first);
    memcpy(b->ring, p + first, n - first);
    b->total += n;
    return true;
}

char *
tailbuf_take(const struct tailbuf *b)
{
    size_t len = b->total < b->cap ? b->total : b->cap;
    char *out = malloc(len + 1);
    if (out == NULL)
        return NULL;
    if (b->total <= b->cap) {
        if (len > 0)
            memcpy(out, b->ring, len);
    } else {
        size_t pos = b->total % b->cap;
        memcpy(out, b->ring + pos, b->cap - pos);
        memcpy(out + (b->cap - pos), b->ring, pos);
    }
    out[len] = '\0';
    return out;
}

void
tailbuf_fini(struct tailbuf *b)
{
    free(b->ring);
    memset(b, 0, sizeof *b);
}
