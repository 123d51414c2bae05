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

/* The queues predicate the ordinary claim skips (paused or limited). */
#define QLIMITS_HELD_PG "paused OR max_running IS NOT NULL OR rate_limit IS NOT NULL"
#define QLIMITS_HELD_SQ "paused = 1 OR max_running IS NOT NULL OR rate_limit IS NOT NULL"

/* A connection's cache of the limited queues' names (owned strings). */
struct qlimits_cache {
    char **names;
    size_t n;
    int64_t refreshed_us; /* monotonic; 0 = never read */
};

/* Whether the cache is due to be re-read. */
bool qlimits_cache_stale(const struct qlimits_cache *c);
/* Forgets the list so the next claim re-reads it (this connection changed a limit). */
void qlimits_cache_invalidate(struct qlimits_cache *c);
/* Replaces the list with names[0..n) (taken, malloc'd) and marks it fresh. */
void qlimits_cache_set(struct qlimits_cache *c, char **names, size_t n);
/* Frees the list. */
void qlimits_cache_fini(struct qlimits_cache *c);
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
};

/*
 * What a backend does for the limited path, inside the transaction that
 * holds the queue's row. b is the backend's store; q the queue name.
 * read: locks and reads q's row (*found false when it has none), with
 * how many of its jobs run, and the claim's "now" after the lock. claim: claims up to n due jobs of q (only req's types) onto out.
 * any_due: 1 if a due job of q (req's types) is left, 0 if not, or an
 * error. count: records rate_count = n for the window starting window_us.
 */
struct qlimits_backend {
    int (*read)(void *b, const char *q, struct qlimits_row *row, int64_t *now_us, bool *found,
                struct jobd_error *err);
    int (*claim)(void *b, const char *q, const struct claim_req *req, int n, int64_t now_us,
                 struct job_list *out, struct jobd_error *err);
    int (*any_due)(void *b, const char *q, const struct claim_req *req, int64_t now_us,
                   struct jobd_error *err);
    int (*count)(void *b, const char *q, int64_t window_us, int32_t n, struct jobd_error *err);
};

/*
 * Claims up to wanted jobs of limited queue q within its limits (the
 * caller holds the transaction), appending to out. When a limit held back
 * a due job, lowers *held_until_us (0 = unset) to when it may let one go:
 * the window's end for the rate, now + QLIMITS_RECHECK_MS for max_running.
 */
int qlimits_claim_queue(const struct qlimits_backend *be, void *b, const char *q,
                        const struct claim_req *req, int wanted, struct job_list *out,
                        int64_t *held_until_us, struct jobd_error *err);

#endif
