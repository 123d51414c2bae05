/*
 * events.c — the backend-independent half of store/events.h: a backend
 * without an event log (remote) says so. The SQL is in pg/events.c and
 * sqlite/events.c.
 */
#include "store/events.h"

#include <stdlib.h>

#include "core/err.h"

static int
none(struct store *st, struct jobd_error *err)
{
    return jobd_error_set(err, JOBD_E_INVALID, NULL, "the %s store keeps no event log",
                          st->ops->name);
}

int
store_events_listen(struct store *st, struct events_head *head, struct jobd_error *err)
{
    *head = (struct events_head){0};
    return st->ops->events_listen != NULL ? st->ops->events_listen(st, head, err) : none(st, err);
}

int
store_events_head(struct store *st, struct events_head *head, struct jobd_error *err)
{
    *head = (struct events_head){0};
    return st->ops->events_head != NULL ? st->ops->events_head(st, head, err) : none(st, err);
}

int
store_events_read(struct store *st, int64_t after, int64_t upto, int limit,
                  struct store_event **out, size_t *n, struct jobd_error *err)
{
    *out = NULL;
    *n = 0;
    if (st->ops->events_read == NULL)
        return none(st, err);
    if (upto <= after || limit <= 0)
        return JOBD_OK;
    return st->ops->events_read(st, after, upto, limit, out, n, err);
}

int
store_events_resumable(struct store *st, int64_t after, bool *ok, struct jobd_error *err)
{
    *ok = false;
    return st->ops->events_resumable != NULL ? st->ops->events_resumable(st, after, ok, err)
                                             : none(st, err);
}
