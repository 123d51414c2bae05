/*
 * qlimits.c — see qlimits.h: the limited-queue cache and the arithmetic of
 * one limited queue's claim, written once for both backends (which supply
 * the statements through struct qlimits_backend).
 */
#include "store/qlimits.h"

#include <stdlib.h>
#include <string.h>

#include "util/clock.h"

bool
qlimits_cache_stale(const struct qlimits_cache *c)
{
    return c->refreshed_us == 0 ||
           clock_mono_now_us() - c->refreshed_us >= (int64_t)QLIMITS_REFRESH_MS * 1000;
}

bool
qlimits_cache_recheck(const struct qlimits_cache *c)
{
    return c->refreshed_us == 0 ||
           clock_mono_now_us() - c->refreshed_us >= (int64_t)QLIMITS_RECHECK_MS * 1000;
}

void
qlimits_cache_invalidate(struct qlimits_cache *c)
{
    c->refreshed_us = 0;
}

void
qlimits_cache_fini(struct qlimits_cache *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->names[i]);
    free(c->names);
    free(c->kinds);
    free(c->cursors);
    c->names = NULL;
    c->kinds = NULL;
    c->cursors = NULL;
    c->n = 0;
}

void
qlimits_cache_set(struct qlimits_cache *c, char **names, unsigned char *kinds, size_t n)
{
    /* Cursors carry over by name; a new one starts at a letter picked from
     * the clock, so that many connections do not all begin at the same group. */
    char(*cur)[JOB_GROUP_MAX + 1] = calloc(n > 0 ? n : 1, sizeof *cur);
    int64_t seed = clock_mono_now_us();
    for (size_t i = 0; cur != NULL && i < n; i++) {
        cur[i][0] = (char)('a' + (seed / 7 + (int64_t)i * 11) % 26);
        for (size_t k = 0; k < c->n && c->cursors != NULL; k++)
            if (strcmp(c->names[k], names[i]) == 0)
                memcpy(cur[i], c->cursors[k], sizeof cur[i]);
    }
    qlimits_cache_fini(c);
    c->names = names;
    c->kinds = kinds;
    c->cursors = cur;
    c->n = n;
    c->refreshed_us = clock_mono_now_us();
}

char *
qlimits_cursor(struct qlimits_cache *c, size_t i)
{
    return c->cursors != NULL && i < c->n ? c->cursors[i] : NULL;
}

bool
qlimits_req_covers(const struct claim_req *req, const char *name)
{
    if (req->queues == NULL || req->n_queues == 0)
        return true;
    for (size_t i = 0; i < req->n_queues; i++)
        if (strcmp(req->queues[i], name) == 0)
            return true;
    return false;
}

bool
qlimits_cache_covers(const struct qlimits_cache *c, const struct claim_req *req)
{
    for (size_t i = 0; i < c->n; i++)
        if (qlimits_req_covers(req, c->names[i]))
            return true;
    return false;
}

int64_t
qlimits_window_of(int64_t per_ms, int64_t now_us)
{
    int64_t per_us = per_ms * 1000;
    int64_t r = now_us % per_us;
    return now_us - (r < 0 ? r + per_us : r);
}

int
qlimits_claim_queue(const struct qlimits_backend *be, void *b, const char *q,
                    const struct claim_req *req, int wanted, struct job_list *out,
                    int64_t *held_until_us, struct jobd_error *err)
{
    struct qlimits_row row = {0};
    int64_t now = 0;
    bool found = false;
    int rc = be->read(b, q, &row, &now, &found, err);
    if (rc != JOBD_OK || !found || row.paused)
        return rc;
    int allow = wanted;
    bool by_rate = false;
    int64_t win = 0;
    int32_t used = 0;
    if (row.rate_limit > 0) {
        win = qlimits_window_of(row.rate_per_ms, now);
        /* A claimer whose clock lags the one that rolled the window counts
         * into the newer window: the count never moves back. */
        if (row.window_us > win)
            win = row.window_us;
        used = row.window_us == win ? row.rate_count : 0;
        int left = used >= row.rate_limit ? 0 : row.rate_limit - used;
        if (left <= allow) {
            allow = left;
            by_rate = true;
        }
    }
    if (row.max_running > 0 && allow > 0) {
        int64_t left = row.running >= row.max_running ? 0 : row.max_running - row.running;
        if (left < allow) {
            allow = (int)left;
            by_rate = false;
        }
    }
    size_t before = out->n;
    int64_t gwin = row.group_rate_limit > 0 ? qlimits_window_of(row.group_rate_per_ms, now) : 0;
    if (allow > 0 && (rc = be->claim(b, q, req, allow, now, &row, gwin, out, err)) != JOBD_OK)
        return rc;
    int got = (int)(out->n - before);
    if (got > 0 && row.rate_limit > 0 && (rc = be->count(b, q, win, used + got, err)) != JOBD_OK)
        return rc;
    bool group_limited = row.group_max_running > 0 || row.group_rate_limit > 0;
    /* A queue limit held jobs back when it allowed fewer than wanted and all
     * of them were taken; a group limit may hold some back whenever fewer
     * than allowed were taken. */
    bool queue_held = got == allow && allow < wanted;
    if (!queue_held && !(group_limited && got < allow))
        return JOBD_OK;
    int due = be->any_due(b, q, req, now, err);
    if (due < 0)
        return due;
    if (due == 1) {
        int64_t recheck = now + (int64_t)QLIMITS_RECHECK_MS * 1000;
        int64_t until = queue_held && by_rate ? win + row.rate_per_ms * 1000 : recheck;
        if (!queue_held && row.group_max_running == 0)
            until = gwin + row.group_rate_per_ms * 1000; /* only the group rate holds */
        if (*held_until_us == 0 || until < *held_until_us)
            *held_until_us = until;
    }
    return JOBD_OK;
}
