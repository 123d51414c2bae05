/*
 * wait.h — internal to src/api: the pieces of `?wait=` (h_wait.c) that the
 * job routes share (docs/API.md, Waiting for a result). See api/jobwait.h
 * for the waiting itself.
 */
#ifndef JOBD_API_WAIT_H
#define JOBD_API_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "api/handlers.h"
#include "api/jobwait.h"

/* Reads ?wait= into *wait_ms (0 when absent); false after answering 400
 * invalid_query naming `wait` (not a duration, or over 60s). */
bool api_wait_query(struct api_call *c, int64_t *wait_ms);
/* Whether this server can park a request (a waits thread, and a caller
 * that takes deferred answers); if not, a wait ends at once. */
bool api_wait_can_park(const struct api_call *c);
/* Takes a place for a wait (jobwait_reserve); false after answering 429
 * too_many_waits with Retry-After. */
bool api_wait_reserve(struct api_call *c);
/* Fills e and parks it (on a place taken with api_wait_reserve). */
void api_wait_park(struct api_ctx *ctx, struct jw_entry *e, int64_t id, int64_t deadline_mono_us,
                   void (*resume)(void *arg), bool (*alive)(void *arg), void *arg);
/* Reads job id through a pooled connection (out is the caller's to job_fini). */
int api_wait_read(struct api_ctx *ctx, int64_t id, struct job *out, struct jobd_error *err);
/*
 * GET /v1/jobs/{id}?wait=: j (borrowed) was just read. True if c->resp is
 * taken care of (a deferred answer that waits, or 429); false when the
 * caller answers with j now (no wait asked, j terminal, no parking here).
 */
bool api_wait_get(struct api_call *c, const struct job *j, int64_t wait_ms);

#endif
