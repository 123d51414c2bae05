/*
 * completer.c — see completer.h. A flat array used as a FIFO: a flush
 * writes from the front and moves what is left down once, so a large
 * backlog after a store outage drains in batch_max steps without
 * reallocating per item.
 */
#include "worker/completer.h"

#include <stdlib.h>
#include <string.h>

#include "core/err.h"

void
completer_init(struct completer *c)
{
    memset(c, 0, sizeof *c);
    c->batch_max = COMPLETER_BATCH_MAX;
}

void
completer_fini(struct completer *c)
{
    for (size_t i = 0; i < c->n; i++)
        free((char *)c->v[i].result);
    free(c->v);
    completer_init(c);
}

bool
completer_add(struct completer *c, int64_t id, int32_t attempt, char *result)
{
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 64;
        struct completion *v = realloc(c->v, ncap * sizeof *v);
        if (v == NULL) {
            free(result);
            return false;
        }
        c->v = v;
        c->cap = ncap;
    }
    c->v[c->n++] = (struct completion){.id = id, .attempt = attempt, .result = result};
    return true;
}

int
completer_flush(struct completer *c, struct store *st, struct jobd_error *err)
{
    size_t done = 0;
    int rc = JOBD_OK;
    int outcome[COMPLETER_BATCH_MAX];
    size_t max = c->batch_max > 0 && c->batch_max <= COMPLETER_BATCH_MAX ? c->batch_max
                                                                         : COMPLETER_BATCH_MAX;
    while (done < c->n) {
        size_t k = c->n - done < max ? c->n - done : max;
        rc = store_complete_batch(st, c->v + done, k, outcome, err);
        if (rc != JOBD_OK)
            break;
        c->batches++;
        for (size_t i = 0; i < k; i++) {
            if (outcome[i] == JOBD_OK)
                c->written++;
            else
                c->stale++;
            free((char *)c->v[done + i].result);
        }
        done += k;
    }
    if (done > 0) {
        memmove(c->v, c->v + done, (c->n - done) * sizeof *c->v);
        c->n -= done;
    }
    return rc;
}
