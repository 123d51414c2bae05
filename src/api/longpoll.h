/*
 * longpoll.h — POST /v1/claim with wait_s: answer as soon as a job is
 * claimable, or with an empty list when the wait is over.
 *
 * An HTTP thread must not sleep for 30 s (libmicrohttpd's thread pool
 * serves many connections per thread), so a claim that found nothing is
 * parked here: the HTTP layer suspends the connection and one long-poll
 * thread, with its own store connection, retries the parked claims when
 * there may be new work — the in-process wake-up (signalled after every
 * committed enqueue), PostgreSQL NOTIFY (other processes), the soonest
 * future run_at of what the waiters could claim, and a slow safety poll for
 * SQLite writers in other processes — and resumes each connection once its
 * answer is ready. Thread-safe.
 */
#ifndef JOBD_API_LONGPOLL_H
#define JOBD_API_LONGPOLL_H

#include <stdbool.h>
#include <stdint.h>

#include "api/api.h"
#include "api/lease.h"
#include "api/storepool.h"
#include "store/store.h"

struct api_metrics;
struct longpoll;

/*
 * Longest wait a claim may ask for, in seconds (docs/API.md, "POST
 * /v1/claim").
 */
#define LONGPOLL_MAX_WAIT_S 30

/* Called (from the long-poll thread) once the waiter's answer is ready. */
typedef void (*lp_resume_fn)(void *arg);
/* Called (from the long-poll thread) before each claim attempt: false once
 * the client has gone, so nothing is claimed for a closed connection. */
typedef bool (*lp_alive_fn)(void *arg);

/*
 * What a claim answer says of its leases (docs/API.md, Remote workers):
 * `held_ms`, how long the server held the request (from arrived_us, when
 * its handler began, to when the answer is written), and per job
 * `lease_remaining_ms`, the lease_ms the claim gave counted from
 * claimed_us, just before the claim's statement ran (the store's lease
 * began after it). Monotonic microseconds. A client that adds both to
 * when it sent the claim has a lease end that is never late: only the
 * request's own transit is lost, never the long poll's wait.
 */
struct claim_clock {
    int64_t arrived_us;
    int64_t claimed_us;
    int64_t lease_ms;
    const lease_token *tokens; /* each job's lease_token (api/lease.h), or NULL */
};

/*
 * A parked claim: a deep copy of req and a deadline wait_ms from now;
 * arrived_us as in claim_clock. NULL on out-of-memory. Owned by whoever
 * holds the api_response (freed by api_response_fini / lp_waiter_free).
 */
struct lp_waiter *lp_waiter_new(const struct claim_req *req, int wait_ms, int64_t arrived_us);
void lp_waiter_free(struct lp_waiter *w);
/* Moves the finished answer into out (status and body). */
void lp_waiter_take_response(struct lp_waiter *w, struct api_response *out);
/* Without a long-poll thread: answers at once with an empty job list. */
void lp_waiter_finish_empty(struct lp_waiter *w);

/* pool, wake (may be NULL) and metrics (may be NULL) are borrowed. */
int longpoll_start(struct store_pool *pool, struct wakeup *wake, struct api_metrics *metrics,
                   struct longpoll **out, struct jobd_error *err);
/*
 * Parks w (borrowed until resume(arg) is called; resume is called exactly
 * once, possibly before longpoll_add returns). alive (may be NULL) is asked
 * before every claim attempt; once it says the client has gone, w is
 * answered empty without claiming and resumed. If the long-poll thread is
 * stopping, w is answered empty and resumed at once.
 */
void longpoll_add(struct longpoll *lp, struct lp_waiter *w, lp_resume_fn resume, lp_alive_fn alive,
                  void *arg);
/*
 * Answers every parked claim (empty), resumes them and stops the thread.
 * Claims parked afterwards (HTTP threads may still run) are answered at
 * once. NULL-safe; idempotent.
 */
void longpoll_stop(struct longpoll *lp);
/* Frees; only once no HTTP thread can call longpoll_add any more. NULL-safe. */
void longpoll_free(struct longpoll *lp);

/*
 * The body of a claim answer {"jobs": [...], "held_ms"} for l (malloc'd;
 * NULL on out-of-memory), with the lease times of clk (NULL: none, for an
 * empty answer), and counts the jobs in metrics (may be NULL).
 */
char *longpoll_claim_body(const struct job_list *l, const struct claim_clock *clk,
                          struct api_metrics *metrics);
/* Notes in r which jobs of l (id, attempt) its answer hands out, so that an
 * answer that cannot be delivered gives them back. False on out-of-memory. */
bool api_response_note_claimed(struct api_response *r, const struct job_list *l);

#endif
