/*
 * qlimits.h — queue limits where jobs are claimed (docs/API.md, "PUT
 * /v1/queues/{name}"), the part both backends share. Not for use outside
 * src/store.
 *
 * Why it is shaped so: the common case (no limited queue) must keep the
 * claim as it was, one statement. So the ordinary claim statement skips
 * limited queues the way it skips paused ones (it reads the queues row in
 * its own snapshot, so a limit set by any server holds at once), and each
 * connection caches which queues are limited, re-read at most every
 * QLIMITS_REFRESH_MS. Only when the cache names a queue the request covers
 * does the claim take the limited path: per limited queue, with the
 * queue's row locked (PostgreSQL: FOR UPDATE; SQLite: the claim's write
 * transaction already serializes claimers), count its running jobs, roll
 * its rate window, claim what the limits allow and record the count. A
 * stale cache can only delay a newly limited queue's jobs (by at most
 * QLIMITS_REFRESH_MS), never let a claim break a limit.
 */
#ifndef JOBD_STORE_QLIMITS_H
#define JOBD_STORE_QLIMITS_H

#include <stdbool.h>
#include <stdint.h>

#include "store/operator.h"

/* How stale a connection's list of limited queues may be. */
#define QLIMITS_REFRESH_MS 1000
/* How soon a claim held back by max_running looks again: a slot frees when
 * a job ends, which no signal announces across processes. */
#define QLIMITS_RECHECK_MS 50

/*
 * The queues predicate the ordinary claim skips: paused, limited, or
 * grouped (jobs with a group, or limits per group: docs/DESIGN.md, Groups),
 * which the limited path claims fairly.
 */
#define QLIMITS_HELD_PG                                                                            \
    "paused OR max_running IS NOT NULL OR rate_limit IS NOT NULL OR grouped"                       \
    " OR group_max_running IS NOT NULL OR group_rate_limit IS NOT NULL"
#define QLIMITS_HELD_SQ                                                                            \
    "paused = 1 OR max_running IS NOT NULL OR rate_limit IS NOT NULL OR grouped = 1"               \
    " OR group_max_running IS NOT NULL OR group_rate_limit IS NOT NULL"
/* The queues the limited path visits (QLIMITS_HELD_* but paused), and what each is. */
#define QLIMITS_PATH_WHERE                                                                         \
    "max_running IS NOT NULL OR rate_limit IS NOT NULL OR grouped"                                 \
    " OR group_max_running IS NOT NULL OR group_rate_limit IS NOT NULL"
#define QLIMITS_KIND_LIMITED 1       /* max_running or rate */
#define QLIMITS_KIND_GROUPED 2       /* claimed fairly by group (pg/groups.c, sqlite/groups.c) */
#define QLIMITS_KIND_GROUP_LIMITED 4 /* group_max_running or group_rate */
#define QLIMITS_KIND_ONE_GROUP 8     /* grouped, with a single group when last read */

/* A connection's cache of the limited and grouped queues' names (owned strings). */
struct qlimits_cache {
    char **names;
    unsigned char *kinds; /* QLIMITS_KIND_* of names[i] */
    /* Per grouped queue, the last group this connection's claim looked at
     * (the round robin's place, docs/DESIGN.md, Groups); kept across
     * refreshes, a new queue's begins at a random place. NULL on OOM. */
    char (*cursors)[JOB_GROUP_MAX + 1];
    size_t n;
    int64_t refreshed_us; /* monotonic; 0 = never read */
};

/* Whether the cache is due to be re-read. */
bool qlimits_cache_stale(const struct qlimits_cache *c);
/*
 * Whether the list was read more than QLIMITS_RECHECK_MS ago: a claim that
 * found nothing re-reads it then, so a queue that became grouped a moment
 * ago (docs/DESIGN.md, Groups), which the ordinary claim already skips, is
 * not left unclaimed for a whole QLIMITS_REFRESH_MS.
 */
bool qlimits_cache_recheck(const struct qlimits_cache *c);
/* Forgets the list so the next claim re-reads it (this connection changed a limit). */
void qlimits_cache_invalidate(struct qlimits_cache *c);
/* Replaces the list with names[0..n) and kinds[0..n) (both taken, malloc'd) and marks it fresh. */
void qlimits_cache_set(struct qlimits_cache *c, char **names, unsigned char *kinds, size_t n);
/* Frees the list. */
void qlimits_cache_fini(struct qlimits_cache *c);
/* The cursor of names[i] (writable), or NULL when there is none. */
char *qlimits_cursor(struct qlimits_cache *c, size_t i);
/* Whether req covers a limited queue of the cache (then the limited path runs). */
bool qlimits_cache_covers(const struct qlimits_cache *c, const struct claim_req *req);
/* Whether req's queue filter lets it claim from queue name. */
bool qlimits_req_covers(const struct claim_req *req, const char *name);

/* A limited queue's row, as the claim reads it (locked). */
struct qlimits_row {
    bool paused;
    int32_t max_running, rate_limit; /* 0 = none */
    int64_t rate_per_ms;
    int64_t window_us; /* the start of the window rate_count counts */
    int32_t rate_count;
    int64_t running; /* its running jobs (read when max_running is set) */
    bool grouped;    /* claimed fairly by group (QLIMITS_KIND_GROUPED) */
    int32_t group_max_running, group_rate_limit; /* 0 = none (docs/API.md) */
    int64_t group_rate_per_ms;
};

/*
 * What a backend does for the limited path, inside the transaction that
 * holds the queue's row. b is the backend's store; q the queue name.
 * read: locks and reads q's row (*found false when it has none), with
 * how many of its jobs run, and the claim's "now" after the lock. claim:
 * claims up to n due jobs of q (only req's types) onto out, by group when
 * row says so, within row's group limits (group_window_us: the start of
 * the group_rate window that holds now).
 * any_due: 1 if a due job of q (req's types) is left, 0 if not, or an
 * error. count: records rate_count = n for the window starting window_us.
 */
struct qlimits_backend {
    int (*read)(void *b, const char *q, struct qlimits_row *row, int64_t *now_us, bool *found,
                struct jobd_error *err);
    int (*claim)(void *b, const char *q, const struct claim_req *req, int n, int64_t now_us,
                 const struct qlimits_row *row, int64_t group_window_us, struct job_list *out,
                 struct jobd_error *err);
    int (*any_due)(void *b, const char *q, const struct claim_req *req, int64_t now_us,
                   struct jobd_error *err);
    int (*count)(void *b, const char *q, int64_t window_us, int32_t n, struct jobd_error *err);
};

/*
 * Claims up to wanted jobs of limited queue q within its limits (the
 * caller holds the transaction), appending to out. When a limit held back
 * a due job, lowers *held_until_us (0 = unset) to when it may let one go:
 * the window's end for the rate, now + QLIMITS_RECHECK_MS for max_running
 * (and likewise for the group limits).
 */
int qlimits_claim_queue(const struct qlimits_backend *be, void *b, const char *q,
                        const struct claim_req *req, int wanted, struct job_list *out,
                        int64_t *held_until_us, struct jobd_error *err);

/* The start of the window of per_ms that holds now_us (windows aligned to the epoch). */
int64_t qlimits_window_of(int64_t per_ms, int64_t now_us);

#endif
