/*
 * remote/lease.c — the lease tokens a remote store was given (docs/API.md,
 * Remote workers), remembered for the attempt's heartbeats and reports.
 *
 * Process-wide, not per store: a worker reports over more than one
 * connection to the same server (its loop's, the completion flusher's, a
 * fresh one after an outage), and any of them must present the token of
 * the claim another one made. The store interface stays the same as on a
 * database (id and attempt), so the worker loop and libjobd need no change.
 * An entry goes when its attempt is reported (complete, fail, release, or
 * refused as stale); a bound keeps a worker that never reports (a crash of
 * its handler runner) from growing it without end.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/remote/internal.h"

/* More live attempts than any worker holds (concurrency + prefetch). */
#define RL_MAX 65536

struct rl_entry {
    const char *url; /* the store's base URL (compared by content) */
    int64_t id;
    int32_t attempt;
    char token[REMOTE_LEASE_TOKEN_MAX + 1];
};

static pthread_mutex_t rl_mu = PTHREAD_MUTEX_INITIALIZER;
static struct rl_entry *rl_v;
static size_t rl_n, rl_cap;
static char **rl_urls; /* interned URLs, freed never (a process talks to few servers) */
static size_t rl_nurls;

/* The interned copy of url (mu held); NULL on out-of-memory. */
static const char *
intern(const char *url)
{
    for (size_t i = 0; i < rl_nurls; i++)
        if (strcmp(rl_urls[i], url) == 0)
            return rl_urls[i];
    char **v = realloc(rl_urls, (rl_nurls + 1) * sizeof *v);
    if (v == NULL)
        return NULL;
    rl_urls = v;
    if ((v[rl_nurls] = strdup(url)) == NULL)
        return NULL;
    return v[rl_nurls++];
}

static struct rl_entry *
find(const char *url, int64_t id)
{
    for (size_t i = 0; i < rl_n; i++)
        if (rl_v[i].id == id && strcmp(rl_v[i].url, url) == 0)
            return &rl_v[i];
    return NULL;
}

void
remote_lease_put(const char *url, int64_t id, int32_t attempt, const char *token)
{
    if (token == NULL || strlen(token) > REMOTE_LEASE_TOKEN_MAX)
        return; /* a server without tokens, or one we cannot keep: reports go without */
    pthread_mutex_lock(&rl_mu);
    struct rl_entry *e = find(url, id);
    if (e == NULL && rl_n == RL_MAX) {
        memmove(rl_v, rl_v + 1, (rl_n - 1) * sizeof *rl_v); /* the oldest goes */
        rl_n--;
    }
    if (e == NULL && rl_n == rl_cap) {
        size_t cap = rl_cap ? rl_cap * 2 : 64;
        struct rl_entry *v = realloc(rl_v, cap * sizeof *v);
        if (v != NULL)
            rl_v = v, rl_cap = cap;
    }
    const char *u = intern(url);
    if (e == NULL && u != NULL && rl_n < rl_cap)
        e = &rl_v[rl_n++];
    if (e != NULL && u != NULL) {
        e->url = u;
        e->id = id;
        e->attempt = attempt;
        snprintf(e->token, sizeof e->token, "%s", token);
    }
    pthread_mutex_unlock(&rl_mu);
}

bool
remote_lease_get(const char *url, int64_t id, int32_t attempt,
                 char token[REMOTE_LEASE_TOKEN_MAX + 1])
{
    pthread_mutex_lock(&rl_mu);
    struct rl_entry *e = find(url, id);
    bool ok = e != NULL && e->attempt == attempt;
    if (ok)
        snprintf(token, REMOTE_LEASE_TOKEN_MAX + 1, "%s", e->token);
    pthread_mutex_unlock(&rl_mu);
    return ok;
}

void
remote_lease_drop(const char *url, int64_t id, int32_t attempt)
{
    pthread_mutex_lock(&rl_mu);
    struct rl_entry *e = find(url, id);
    if (e != NULL && e->attempt == attempt) {
        *e = rl_v[rl_n - 1];
        rl_n--;
    }
    pthread_mutex_unlock(&rl_mu);
}

size_t
remote_lease_held(const char *url, int64_t *ids, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&rl_mu);
    for (size_t i = 0; i < rl_n && n < max; i++)
        if (strcmp(rl_v[i].url, url) == 0)
            ids[n++] = rl_v[i].id;
    pthread_mutex_unlock(&rl_mu);
    return n;
}
