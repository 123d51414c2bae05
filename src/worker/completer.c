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
#include "util/log.h"

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

/*
 * The store refused a whole batch for its content (not an outage): write
 * the attempts one at a time; one refused with its result is written
 * without it (the work succeeded; its result cannot be stored), and one
 * refused even so is dropped with an error logged, so that one bad
 * completion never holds the others back nor makes the loop retry for
 * ever. Returns an outage if one happens meanwhile (nothing is lost: the
 * caller keeps the batch and the written ones answer stale next time).
 */
static int
one_by_one(struct completer *c, struct store *st, struct completion *v, size_t k, int *outcome,
           struct jobd_error *err)
{
    for (size_t i = 0; i < k; i++) {
        struct jobd_error e = {0};
        int rc = store_complete_batch(st, &v[i], 1, &outcome[i], &e);
        if (rc != JOBD_OK && !store_error_is_outage(rc) && v[i].result != NULL) {
            log_at(LOGL_WARN, "worker", "completion refused with its result; storing it without",
                   LF_INT("job", v[i].id), LF_STR("error", e.msg));
            struct completion bare = {.id = v[i].id, .attempt = v[i].attempt, .result = NULL};
            rc = store_complete_batch(st, &bare, 1, &outcome[i], &e);
        }
        if (rc != JOBD_OK && store_error_is_outage(rc)) {
            if (err != NULL)
                *err = e;
            return rc;
        }
        if (rc != JOBD_OK) {
            log_at(LOGL_ERROR, "worker", "completion refused; leaving the job to its lease",
                   LF_INT("job", v[i].id), LF_STR("error", e.msg));
            outcome[i] = rc;
            c->refused++;
        }
    }
    return JOBD_OK;
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
        if (rc != JOBD_OK && !store_error_is_outage(rc))
            rc = one_by_one(c, st, c->v + done, k, outcome, err);
        if (rc != JOBD_OK)
            break;
        c->batches++;
        for (size_t i = 0; i < k; i++) {
            if (outcome[i] == JOBD_OK)
                c->written++;
            else if (outcome[i] == JOBD_E_STALE)
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
