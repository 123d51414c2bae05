/*
 * groups.h — the reads of a queue's groups (docs/MODEL.md, Groups): the
 * busiest groups of a queue (GET /v1/queues/{name}/groups, jobd queues
 * groups, the dashboard) and how many groups of each queue have due jobs
 * (the jobd_queue_groups gauge of /metrics). The fair claim itself is the
 * backends' (pg/groups.c, sqlite/groups.c).
 */
#ifndef JOBD_STORE_GROUPS_H
#define JOBD_STORE_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* The most groups store_queue_groups returns: a bound on its answer. */
#define STORE_QUEUE_GROUPS_MAX 1000

/* A group of a queue and its jobs; group NULL for the jobs without one. */
struct queue_group {
    char *group;
    int64_t pending, running;
};
/* A queue and how many of its groups have due jobs. */
struct queue_group_count {
    char *queue;
    int64_t groups;
};

/*
 * The groups of queue with pending or running jobs, busiest first (pending
 * + running, then by name, no group first), at most limit (1 ..
 * STORE_QUEUE_GROUPS_MAX, else JOBD_E_INVALID naming "limit"). Reads the
 * queue's pending and running jobs. On success *out (malloc'd, n entries)
 * is the caller's: queue_groups_free. Store errors as store_queue_stats.
 */
JOBD_MUST_USE int store_queue_groups(struct store *st, const char *queue, int limit,
                                     struct queue_group **out, size_t *n, struct jobd_error *err);
void queue_groups_free(struct queue_group *v, size_t n);
/*
 * Per grouped queue, how many of its groups have a due job (one probe of
 * the group's claim index each): *out (malloc'd) is the caller's,
 * queue_group_counts_free. Queues the claim does not handle by group are
 * left out.
 */
JOBD_MUST_USE int store_queue_group_counts(struct store *st, struct queue_group_count **out,
                                           size_t *n, struct jobd_error *err);
void queue_group_counts_free(struct queue_group_count *v, size_t n);

#endif
