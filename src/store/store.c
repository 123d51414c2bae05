/*
 * store.c — URL dispatch to a backend, and the thin store_*() wrappers that
 * validate arguments once for both backends before calling the vtable.
 */
#include "store/store.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"
#include "core/utf8.h"
#include "store/stats.h"
#include "store/backends.h"
#include "store/deps.h"

/*
 * The one place that maps a URL to a backend. A row per scheme; a plain
 * path (no "://") is SQLite. skip: how much of the URL the opener does not
 * take (sqlite: takes a path).
 */
static const struct {
    const char *prefix;
    size_t skip;
    enum store_url_kind kind;
    bool notifies; /* can LISTEN on a session of its own (store_url_notifies) */
    int (*open)(const char *url, struct store **out, struct jobd_error *err);
} schemes[] = {
    {"postgres://", 0, STORE_URL_DATABASE, true, store_pg_open},
    {"postgresql://", 0, STORE_URL_DATABASE, true, store_pg_open},
    {"sqlite:", 7, STORE_URL_DATABASE, false, store_sqlite_open},
    {"http://", 0, STORE_URL_SERVER, false, remote_store_open},
    {"https://", 0, STORE_URL_SERVER, false, remote_store_open},
};
#define N_SCHEMES (sizeof schemes / sizeof schemes[0])

/*
 * Schemes written short of their "//" (postgres:/u:pw@h/db): a typo, never a
 * file name, so refused rather than opened as an SQLite path, which would
 * print the password in the error (docs/OPERATIONS.md, Security).
 */
static const char *const near_schemes[] = {"postgres:", "postgresql:", "http:", "https:"};

/* The scheme row of url, N_SCHEMES for a plain path, -1 for an unknown scheme. */
static int
scheme_of(const char *url)
{
    for (size_t i = 0; i < N_SCHEMES; i++)
        if (strncmp(url, schemes[i].prefix, strlen(schemes[i].prefix)) == 0)
            return (int)i;
    for (size_t i = 0; i < sizeof near_schemes / sizeof near_schemes[0]; i++)
        if (strncasecmp(url, near_schemes[i], strlen(near_schemes[i])) == 0)
            return -1;
    return strstr(url, "://") != NULL ? -1 : (int)N_SCHEMES;
}

/* Where the authority (user:password@host) of url begins, or NULL: after
 * "scheme://", or after "scheme:" and any slashes of a URL short of its "//". */
static const char *
authority_of(const char *url)
{
    const char *p = url;
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
        return NULL;
    p += strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-");
    if (*p != ':' || p - url < 2) /* "C:" is a drive, not a scheme */
        return NULL;
    p++;
    return p + strspn(p, "/");
}

enum store_url_kind
store_url_kind(const char *url)
{
    if (url == NULL || *url == '\0')
        return STORE_URL_INVALID;
    int i = scheme_of(url);
    return i < 0 ? STORE_URL_INVALID : i == (int)N_SCHEMES ? STORE_URL_DATABASE : schemes[i].kind;
}

bool
store_url_notifies(const char *url)
{
    if (url == NULL)
        return false;
    int i = scheme_of(url);
    return i >= 0 && i < (int)N_SCHEMES && schemes[i].notifies;
}

int
store_open(const char *url, struct store **out, struct jobd_error *err)
{
    *out = NULL;
    if (url == NULL || *url == '\0')
        return jobd_error_set(err, JOBD_E_INVALID, "db", "empty store URL");
    int i = scheme_of(url);
    if (i < 0) {
        char safe[512];
        return jobd_error_set(err, JOBD_E_INVALID, "db",
                              "unknown store URL scheme in '%s' (use postgres://, "
                              "postgresql://, sqlite:PATH, or http(s):// for a worker)",
                              store_url_redact(url, safe, sizeof safe));
    }
    if (i == (int)N_SCHEMES)
        return store_sqlite_open(url, out, err);
    return schemes[i].open(url + schemes[i].skip, out, err);
}

/* An operation the backend does not have (the remote store has only the worker's). */
static int
missing_op(const struct store *st, const char *op, struct jobd_error *err)
{
    return jobd_error_set(err, JOBD_E_INVALID, "db", "the %s store cannot %s", st->ops->name, op);
}
#define CALL(op, ...) (st->ops->op != NULL ? st->ops->op(__VA_ARGS__) : missing_op(st, #op, err))

void
store_close(struct store *st)
{
    if (st != NULL)
        st->ops->close(st);
}

void
store_set_clock(struct store *st, const struct jobd_clock *clock)
{
    st->clock = clock;
}

const char *
store_backend(const struct store *st)
{
    return st->ops->name;
}

/* Appends n bytes of s to buf at *at, keeping room for the terminator. */
static void
put(char *buf, size_t len, size_t *at, const char *s, size_t n)
{
    while (n-- > 0 && *at + 1 < len)
        buf[(*at)++] = *s++;
    buf[*at] = '\0';
}

const char *
store_url_redact(const char *url, char *buf, size_t len)
{
    if (len == 0)
        return buf;
    size_t at = 0;
    buf[0] = '\0';
    const char *p = url ? url : "";
    const char *auth = authority_of(p);
    if (auth != NULL) {
        /* userinfo ends at the last '@' before the path, query or fragment */
        const char *end = auth + strcspn(auth, "/?#");
        const char *at_sign = NULL, *colon = NULL;
        for (const char *q = auth; q < end; q++)
            if (*q == '@')
                at_sign = q;
        if (at_sign != NULL)
            colon = memchr(auth, ':', (size_t)(at_sign - auth));
        if (colon != NULL) {
            put(buf, len, &at, p, (size_t)(colon + 1 - p));
            put(buf, len, &at, "***", 3);
            p = at_sign;
        }
    }
    /* password=... in the query (key=value&...) */
    while (*p != '\0') {
        const char *k = strstr(p, "password=");
        if (k == NULL || (k != url && strchr("?& ", k[-1]) == NULL)) {
            size_t n = k == NULL ? strlen(p) : (size_t)(k + 1 - p);
            put(buf, len, &at, p, n);
            p += n;
            continue;
        }
        put(buf, len, &at, p, (size_t)(k + 9 - p));
        put(buf, len, &at, "***", 3);
        p = k + 9 + strcspn(k + 9, "&# ");
    }
    return buf;
}

const struct store_caps *
store_caps(const struct store *st)
{
    return &st->ops->caps;
}

int
store_migrate(struct store *st, struct jobd_error *err)
{
    return st->ops->migrate(st, err);
}

int
store_schema_status(struct store *st, int *current, int *newest, struct jobd_error *err)
{
    if (st->ops->schema_status == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "db", "the %s store has no schema of its own",
                              st->ops->name);
    return st->ops->schema_status(st, current, newest, err);
}

const char *
store_migration_name(const struct store *st, int version)
{
    return st->ops->migration_name != NULL ? st->ops->migration_name(version) : NULL;
}

int
store_ping(struct store *st, struct jobd_error *err)
{
    return st->ops->ping(st, err);
}

/*
 * The parents of n jobs just enqueued from specs (docs/MODEL.md,
 * Dependencies): as the specs say, or as stored for a replay. On an
 * error the jobs are the caller's still (job_fini).
 */
static int
with_parents(struct store *st, struct job *out, size_t n, const struct job_spec *specs,
             const bool *replayed, struct jobd_error *err)
{
    for (size_t i = 0; i < n; i++) {
        int rc = replayed[i] ? store_deps_attach(st, &out[i], 1, err)
                             : store_deps_from_spec(&out[i], &specs[i]);
        if (rc == JOBD_E_NOMEM)
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        if (rc != JOBD_OK)
            return rc;
    }
    return JOBD_OK;
}

/* The parents of the jobs of a read (rc its outcome), out NULL for none. */
static int
read_parents(struct store *st, int rc, struct job *out, size_t n, struct jobd_error *err)
{
    if (rc != JOBD_OK || out == NULL || n == 0)
        return rc;
    return store_deps_attach(st, out, n, err);
}

int
store_enqueue(struct store *st, const struct job_spec *spec, struct job *out, bool *replayed,
              struct jobd_error *err)
{
    int rc = job_spec_validate(spec, NULL, err);
    if (rc != JOBD_OK)
        return rc;
    if (replayed != NULL)
        *replayed = false;
    bool again = false;
    rc = CALL(enqueue, st, spec, out, replayed ? replayed : &again, err);
    if (rc == JOBD_OK && out != NULL)
        rc = with_parents(st, out, 1, spec, replayed ? replayed : &again, err);
    return rc;
}

int
store_enqueue_batch(struct store *st, const struct job_spec *specs, size_t n, struct job *out,
                    bool *replayed, struct jobd_error *err)
{
    for (size_t i = 0; i < n; i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "jobs[%zu].", i);
        int rc = job_spec_validate(&specs[i], prefix, err);
        if (rc != JOBD_OK)
            return rc;
        if (replayed != NULL)
            replayed[i] = false;
    }
    if (n == 0)
        return JOBD_OK;
    bool *again = NULL;
    if (out != NULL && replayed == NULL && (again = calloc(n, sizeof *again)) == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    int rc = CALL(enqueue_batch, st, specs, n, out, replayed ? replayed : again, err);
    if (rc == JOBD_OK && out != NULL)
        rc = with_parents(st, out, n, specs, replayed ? replayed : again, err);
    free(again);
    return rc;
}

int
store_get(struct store *st, int64_t id, struct job *out, struct jobd_error *err)
{
    return read_parents(st, CALL(get, st, id, out, err), out, 1, err);
}

int
store_list(struct store *st, const struct job_filter *f, struct job_list *out, int64_t *next_cursor,
           struct jobd_error *err)
{
    if (f->limit < 0 || f->limit > JOB_PAGE_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "limit", "limit must be between 1 and %d",
                              JOB_PAGE_MAX);
    *next_cursor = 0;
    if (f->due != JOB_DUE_ANY) {
        if (f->due != JOB_DUE_NOW && f->due != JOB_DUE_LATER)
            return jobd_error_set(err, JOBD_E_INVALID, "due", "unknown due filter %d", f->due);
        if (f->status != STORE_ANY && f->status != JOB_PENDING)
            return jobd_error_set(err, JOBD_E_INVALID, "due",
                                  "due applies to pending jobs only, not to status %s",
                                  job_status_name((enum job_status)f->status));
        struct job_filter pf = *f; /* only pending jobs are due or scheduled */
        pf.status = JOB_PENDING;
        int rc = CALL(list, st, &pf, out, next_cursor, err);
        return read_parents(st, rc, out->v, out->n, err);
    }
    int rc = CALL(list, st, f, out, next_cursor, err);
    return read_parents(st, rc, out->v, out->n, err);
}

int
store_search(struct store *st, const struct job_filter *f, struct job_list *out,
             int64_t *next_cursor, bool *partial, struct jobd_error *err)
{
    *next_cursor = 0;
    *partial = false;
    if (f->limit < 0 || f->limit > JOB_PAGE_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "limit", "limit must be between 1 and %d",
                              JOB_PAGE_MAX);
    if (f->search == NULL || *f->search == '\0' || strlen(f->search) > JOB_SEARCH_TEXT_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "q", "q must be 1 to %d bytes of text",
                              JOB_SEARCH_TEXT_MAX);
    if (f->scan < 0 || f->scan > JOB_SEARCH_SCAN_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "scan", "scan must be between 1 and %d",
                              JOB_SEARCH_SCAN_MAX);
    /* Backends compare with ASCII letters folded to lower case on both sides. */
    char text[JOB_SEARCH_TEXT_MAX + 1];
    size_t n = strlen(f->search);
    for (size_t i = 0; i <= n; i++) {
        char ch = f->search[i];
        text[i] = ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
    }
    struct job_filter folded = *f;
    folded.search = text;
    if (folded.scan == 0)
        folded.scan = JOB_SEARCH_SCAN_DEFAULT;
    int rc = CALL(search, st, &folded, out, next_cursor, partial, err);
    return read_parents(st, rc, out->v, out->n, err);
}

int
store_claim(struct store *st, const struct claim_req *req, struct job_list *out,
            struct jobd_error *err)
{
    if (req->limit < 1 || req->limit > JOB_PAGE_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "limit", "claim limit must be between 1 and %d",
                              JOB_PAGE_MAX);
    if (req->worker_id == NULL || *req->worker_id == '\0')
        return jobd_error_set(err, JOBD_E_INVALID, "worker_id", "worker_id is required");
    if (req->held_until_us != NULL)
        *req->held_until_us = 0;
    /* The defaults, here once for every backend, as store_heartbeat's. */
    struct claim_req r = *req;
    if (r.lease_ms <= 0)
        r.lease_ms = JOB_DEFAULT_LEASE_MS;
    size_t n0 = out->n;
    int rc = st->ops->claim(st, &r, out, err);
    /* Every backend: never more than asked, and each claim bumped the fencing
     * token (on in the test build; NDEBUG release builds drop it). */
    assert(rc != JOBD_OK || out->n - n0 <= (size_t)req->limit);
    for (size_t i = n0; rc == JOBD_OK && i < out->n; i++)
        assert(out->v[i].attempt >= 1);
    /* The parents their handlers see (docs/WORKER.md, Parents). Should this
     * fail, the jobs are not run: their leases run out and the reaper hands
     * them out again. */
    if (rc == JOBD_OK && out->n > n0 && st->ops->parents_attach != NULL)
        rc = st->ops->parents_attach(st, out->v + n0, out->n - n0, err);
    return rc;
}

int64_t
store_claim_timer(int64_t next_run_at_us, int64_t held_until_us, int64_t now_us)
{
    if (held_until_us == 0)
        return next_run_at_us;
    if (next_run_at_us == 0 || next_run_at_us <= now_us || held_until_us < next_run_at_us)
        return held_until_us;
    return next_run_at_us;
}

int
store_heartbeat(struct store *st, int64_t id, int32_t attempt, int64_t lease_ms,
                int64_t *lease_expires_at_us, bool *cancel_requested, struct jobd_error *err)
{
    if (lease_ms <= 0)
        lease_ms = JOB_DEFAULT_LEASE_MS;
    return st->ops->heartbeat(st, id, attempt, lease_ms, lease_expires_at_us, cancel_requested,
                              err);
}

int
store_complete(struct store *st, int64_t id, int32_t attempt, const char *result, struct job *out,
               struct jobd_error *err)
{
    if (result != NULL && strlen(result) > JOB_RESULT_MAX)
        return jobd_error_set(err, JOBD_E_TOOBIG, "result", "result is over %d bytes",
                              JOB_RESULT_MAX);
    if (result != NULL && !utf8_valid(result, strlen(result)))
        return jobd_error_set(err, JOBD_E_INVALID, "result", "result is not UTF-8");
    return read_parents(st, st->ops->complete(st, id, attempt, result, out, err), out, 1, err);
}

int
store_complete_batch(struct store *st, const struct completion *c, size_t n, int *outcome,
                     struct jobd_error *err)
{
    if (n == 0)
        return JOBD_OK;
    for (size_t i = 0; i < n; i++)
        if (c[i].result != NULL && !utf8_valid(c[i].result, strlen(c[i].result)))
            return jobd_error_set(err, JOBD_E_INVALID, "result",
                                  "the result of job %lld is not UTF-8", (long long)c[i].id);
    int rc = st->ops->complete_batch(st, c, n, outcome, err);
    for (size_t i = 0; rc == JOBD_OK && i < n; i++)
        assert(outcome[i] == JOBD_OK || outcome[i] == JOBD_E_STALE);
    return rc;
}

/* store_fail and store_fail_backoff: retry_delay_ms < 0 takes bp's delay. */
static int
fail_with(struct store *st, int64_t id, int32_t attempt, const char *error, bool retryable,
          int64_t retry_delay_ms, const struct backoff_policy *bp, struct job *out,
          struct jobd_error *err)
{
    /* Whoever sends it (a handler's stderr, a remote worker), the error is
     * stored as UTF-8 both backends take, cut on a character boundary. */
    char *clean = NULL;
    if (error != NULL &&
        (clean = utf8_clean(error, strlen(error), JOB_ERROR_MAX, UTF8_KEEP_TAIL)) == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    int rc = st->ops->fail(st, id, attempt, clean, retryable, retry_delay_ms, bp, out, err);
    free(clean);
    return read_parents(st, rc, out, 1, err);
}

int
store_fail(struct store *st, int64_t id, int32_t attempt, const char *error, bool retryable,
           int64_t retry_delay_ms, struct job *out, struct jobd_error *err)
{
    return fail_with(st, id, attempt, error, retryable, retry_delay_ms < 0 ? 0 : retry_delay_ms,
                     NULL, out, err);
}

int
store_fail_backoff(struct store *st, int64_t id, int32_t attempt, const char *error, bool retryable,
                   const struct backoff_policy *bp, struct job *out, struct jobd_error *err)
{
    return fail_with(st, id, attempt, error, retryable, -1, bp, out, err);
}

/* The fallback of store_fail_batch: one store_fail per report. */
static int
fail_one_by_one(struct store *st, const struct fail_report *f, size_t n, int *outcome,
                enum job_status *status, struct jobd_error *err)
{
    for (size_t i = 0; i < n; i++) {
        struct job after = {0};
        int rc = store_fail(st, f[i].id, f[i].attempt, f[i].error, f[i].retryable,
                            f[i].retry_delay_ms, status != NULL ? &after : NULL, err);
        if (rc != JOBD_OK && rc != JOBD_E_STALE && rc != JOBD_E_NOTFOUND)
            return rc;
        outcome[i] = rc == JOBD_OK ? JOBD_OK : JOBD_E_STALE;
        if (rc == JOBD_OK && status != NULL) {
            status[i] = after.status;
            job_fini(&after);
        }
    }
    return JOBD_OK;
}

int
store_fail_batch(struct store *st, const struct fail_report *f, size_t n, int *outcome,
                 enum job_status *status, struct jobd_error *err)
{
    if (n == 0)
        return JOBD_OK;
    if (st->ops->fail_batch == NULL)
        return fail_one_by_one(st, f, n, outcome, status, err);
    /* As store_fail: UTF-8 both backends take, cut on a character boundary. */
    struct fail_report *clean = calloc(n, sizeof *clean);
    int rc = clean != NULL ? JOBD_OK : jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < n && rc == JOBD_OK; i++) {
        clean[i] = f[i];
        if (clean[i].retry_delay_ms < 0)
            clean[i].retry_delay_ms = 0;
        if (f[i].error != NULL &&
            (clean[i].error =
                 utf8_clean(f[i].error, strlen(f[i].error), JOB_ERROR_MAX, UTF8_KEEP_TAIL)) == NULL)
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    if (rc == JOBD_OK)
        rc = st->ops->fail_batch(st, clean, n, outcome, status, err);
    /* A failure ends the attempt: pending, dead or cancelled
     * (docs/MODEL.md, Jobs and their states). */
    for (size_t i = 0; rc == JOBD_OK && i < n; i++)
        assert(outcome[i] == JOBD_E_STALE ||
               (outcome[i] == JOBD_OK && (status == NULL || status[i] == JOB_PENDING ||
                                          status[i] == JOB_DEAD || status[i] == JOB_CANCELLED)));
    for (size_t i = 0; clean != NULL && i < n; i++)
        if (clean[i].error != f[i].error)
            free((char *)clean[i].error);
    free(clean);
    return rc;
}

int
store_reap(struct store *st, int limit, const struct backoff_policy *bp, int *reaped,
           struct jobd_error *err)
{
    return store_reap_jobs(st, limit, bp, NULL, 0, reaped, err);
}

int
store_reap_jobs(struct store *st, int limit, const struct backoff_policy *bp,
                struct reaped_job *out, size_t cap, int *reaped, struct jobd_error *err)
{
    *reaped = 0;
    return CALL(reap, st, limit, bp, out, cap, reaped, err);
}

int
store_release(struct store *st, int64_t id, int32_t attempt, struct jobd_error *err)
{
    if (st->ops->release == NULL)
        return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "the %s store cannot release a job",
                              st->ops->name);
    return st->ops->release(st, id, attempt, err);
}

int
store_cancel(struct store *st, int64_t id, struct job *out, struct jobd_error *err)
{
    return read_parents(st, CALL(cancel, st, id, out, err), out, 1, err);
}

int
store_retry(struct store *st, int64_t id, struct job *out, struct jobd_error *err)
{
    return read_parents(st, CALL(retry, st, id, out, err), out, 1, err);
}

int
store_queue_pause(struct store *st, const char *queue, bool paused, struct jobd_error *err)
{
    int rc = job_validate_queue(queue, "queue", err);
    if (rc != JOBD_OK)
        return rc;
    return CALL(queue_pause, st, queue, paused, err);
}

int
store_prune(struct store *st, int64_t finished_before_us, int limit, int *deleted,
            struct jobd_error *err)
{
    *deleted = 0;
    return CALL(prune, st, finished_before_us, limit, deleted, err);
}

int
store_next_run_at(struct store *st, const struct claim_req *req, int64_t *run_at_us,
                  struct jobd_error *err)
{
    *run_at_us = 0;
    return st->ops->next_run_at(st, req, run_at_us, err);
}

int
store_wait(struct store *st, int timeout_ms, struct jobd_error *err)
{
    return st->ops->wait(st, timeout_ms, err);
}

int
store_cancels_requested(struct store *st, const int64_t *ids, size_t n, bool *requested,
                        struct jobd_error *err)
{
    if (st->ops->cancels_requested == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, NULL,
                              "the %s store cannot read requested cancels", st->ops->name);
    for (size_t i = 0; i < n; i++)
        requested[i] = false;
    if (n == 0)
        return JOBD_OK;
    return st->ops->cancels_requested(st, ids, n, requested, err);
}

int
store_wait_ends(struct store *st, int timeout_ms, struct jobd_error *err)
{
    if (st->ops->wait_ends != NULL)
        return st->ops->wait_ends(st, timeout_ms, err);
    return st->ops->wait(st, timeout_ms, err);
}

bool
store_wait_ready(struct store *st)
{
    return st->ops->wait_ready != NULL && st->ops->wait_ready(st);
}

void
store_offload(struct store *st)
{
    if (st->ops->offload != NULL)
        st->ops->offload(st);
}

/* ---- schedules ---- */

static int
no_schedules(const struct store *st, struct jobd_error *err)
{
    return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "the %s store has no schedules",
                          st->ops->name);
}

static int
check_schedule_name(const char *name, struct jobd_error *err)
{
    if (name == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "name", "name is required");
    return job_validate_type(name, "name", err);
}

int
store_schedule_put(struct store *st, const struct schedule_spec *spec, bool replace,
                   struct schedule *out, bool *created, struct jobd_error *err)
{
    return store_schedule_put_capped(st, spec, replace, 0, out, created, err);
}

int
store_schedule_put_capped(struct store *st, const struct schedule_spec *spec, bool replace,
                          int64_t max_schedules, struct schedule *out, bool *created,
                          struct jobd_error *err)
{
    int rc = schedule_spec_validate(spec, err);
    if (rc != JOBD_OK)
        return rc;
    if (st->ops->schedule_put == NULL)
        return no_schedules(st, err);
    bool c = false;
    rc = st->ops->schedule_put(st, spec, replace, max_schedules > 0 ? max_schedules : 0, out, &c,
                               err);
    if (created != NULL)
        *created = c;
    return rc;
}

int
store_schedule_get(struct store *st, const char *name, struct schedule *out, struct jobd_error *err)
{
    int rc = check_schedule_name(name, err);
    if (rc != JOBD_OK)
        return rc;
    if (st->ops->schedule_get == NULL)
        return no_schedules(st, err);
    return st->ops->schedule_get(st, name, out, err);
}

int
store_schedule_list(struct store *st, struct schedule_list *out, struct jobd_error *err)
{
    static const struct name_page all = {.payload = true};
    return store_schedule_page(st, &all, out, err);
}

int
store_schedule_page(struct store *st, const struct name_page *pg, struct schedule_list *out,
                    struct jobd_error *err)
{
    if (st->ops->schedule_list == NULL)
        return no_schedules(st, err);
    if (pg->limit < 0)
        return jobd_error_set(err, JOBD_E_INVALID, "limit", "limit must not be negative");
    return st->ops->schedule_list(st, pg, out, err);
}

int
store_schedule_delete(struct store *st, const char *name, struct jobd_error *err)
{
    int rc = check_schedule_name(name, err);
    if (rc != JOBD_OK)
        return rc;
    if (st->ops->schedule_delete == NULL)
        return no_schedules(st, err);
    return st->ops->schedule_delete(st, name, err);
}

int
store_schedule_pause(struct store *st, const char *name, bool paused, struct schedule *out,
                     struct jobd_error *err)
{
    int rc = check_schedule_name(name, err);
    if (rc != JOBD_OK)
        return rc;
    if (st->ops->schedule_pause == NULL)
        return no_schedules(st, err);
    return st->ops->schedule_pause(st, name, paused, out, err);
}

int
store_schedule_trigger(struct store *st, const char *name, struct job *out, struct jobd_error *err)
{
    int rc = check_schedule_name(name, err);
    if (rc != JOBD_OK)
        return rc;
    if (st->ops->schedule_trigger == NULL)
        return no_schedules(st, err);
    return st->ops->schedule_trigger(st, name, out, err);
}

int
store_schedule_materialize(struct store *st, int limit, int64_t grace_us, int *made,
                           int64_t *soonest_us, struct jobd_error *err)
{
    if (limit < 1 || limit > JOB_PAGE_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "limit", "limit must be 1-%d", JOB_PAGE_MAX);
    if (st->ops->schedule_materialize == NULL)
        return no_schedules(st, err);
    int m = 0;
    int64_t soon = 0;
    int rc = st->ops->schedule_materialize(st, limit, grace_us, &m, &soon, err);
    if (made != NULL)
        *made = m;
    if (soonest_us != NULL)
        *soonest_us = soon;
    return rc;
}

int
store_now(struct store *st, int64_t *now_us, struct jobd_error *err)
{
    if (st->clock != NULL) {
        *now_us = clock_now_us(st->clock);
        return JOBD_OK;
    }
    if (st->ops->now == NULL) {
        *now_us = clock_real_now_us();
        return JOBD_OK;
    }
    return st->ops->now(st, now_us, err);
}

int
store_clock_went_back(struct store *st, int64_t back_us, int *jobs, int *schedules,
                      struct jobd_error *err)
{
    if (back_us < 0)
        return jobd_error_set(err, JOBD_E_INVALID, "back_us", "back_us must not be negative");
    if (st->ops->clock_went_back == NULL)
        return no_schedules(st, err);
    int j = 0, s = 0;
    int rc = st->ops->clock_went_back(st, back_us, &j, &s, err);
    if (jobs != NULL)
        *jobs = j;
    if (schedules != NULL)
        *schedules = s;
    return rc;
}
