/*
 * claimpresence.h — a claim counts as presence (docs/API.md, "A minimal
 * remote worker"): a client that only calls POST /v1/claim and the job
 * routes is listed in GET /v1/workers, and the types it claims count as
 * handled, without ever announcing itself.
 *
 * Writing presence on every claim would cost a store write per claim, so
 * each server remembers, in a fixed table, which worker ids it refreshed
 * lately and writes at most once per CLAIM_PRESENCE_TOUCH_MS per id. The
 * table is bounded whatever the clients send: an id that collides with
 * another only costs an extra refresh.
 */
#ifndef JOBD_API_CLAIMPRESENCE_H
#define JOBD_API_CLAIMPRESENCE_H

#include <stdint.h>

struct claim_req;
struct store;

/* The presence interval of a worker known only by its claims: "gone" after
 * three of them (3 minutes) without a claim. */
#define CLAIM_PRESENCE_INTERVAL_MS 60000
/* At most one store write per worker id per this long, per server. */
#define CLAIM_PRESENCE_TOUCH_MS 15000

struct claim_presence;

/* A new table (NULL when out of memory); claim_presence_free frees it. */
struct claim_presence *claim_presence_new(void);
/* NULL-safe. */
void claim_presence_free(struct claim_presence *cp);

/*
 * Notes that req->worker_id claimed at now_us (monotonic) through st
 * (borrowed; a connection of the caller's, outside any transaction). When
 * this server has not refreshed that id for CLAIM_PRESENCE_TOUCH_MS, writes
 * it: a worker the store knows only has last_seen_at refreshed; an unknown
 * one is announced with the claim's queues and types, unless max_workers
 * (0 = no bound) live workers are kept already. Presence is for operators:
 * a failure to write it is logged at debug level and never fails the claim.
 * cp NULL: nothing is done. Thread-safe.
 */
void claim_presence_note(struct claim_presence *cp, struct store *st, const struct claim_req *req,
                         int64_t max_workers, int64_t now_us);

#endif
