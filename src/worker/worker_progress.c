/*
 * worker_progress.c — a running attempt's progress, from its runner to the
 * store (docs/WORKER.md, Progress).
 *
 * A runner (an exec handler's fd 3) hands over lines from its own thread;
 * they wait here, one per attempt, the newest replacing an older one not
 * yet written: a handler that writes a thousand lines a second costs the
 * store a few writes a second (PROGRESS_GAP_MS apart per job), and the one
 * that lands is always the newest. The loop thread, which owns the store
 * connection, writes them after its heartbeats (store_progress, which
 * extends the lease as a heartbeat does and says whether a cancel came).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "store/progress.h"
#include "worker/worker_int.h"

/* The least time between two progress writes of one job. */
#define PROGRESS_GAP_MS 250

struct progress_note {
    int64_t id;
    int32_t attempt;
    char *line;
    struct progress_note *next;
};

void
wk_progress_note(void *ctx, int64_t id, int32_t attempt, char *line)
{
    struct worker *w = ctx;
    pthread_mutex_lock(&w->pmu);
    struct progress_note *n = w->pnotes;
    while (n != NULL && !(n->id == id && n->attempt == attempt))
        n = n->next;
    bool added = false;
    if (n != NULL) {
        free(n->line); /* coalesced: only the newest is written */
        n->line = line;
    } else if ((n = calloc(1, sizeof *n)) != NULL) {
        n->id = id;
        n->attempt = attempt;
        n->line = line;
        n->next = w->pnotes;
        w->pnotes = n;
        added = true;
    } else {
        free(line); /* out of memory: a progress is a nicety */
    }
    pthread_mutex_unlock(&w->pmu);
    if (added)
        wakeup_signal(&w->wake);
}

/* The slot running (id, attempt), or NULL. */
static struct slot *
slot_of(struct worker *w, int64_t id, int32_t attempt)
{
    for (int i = 0; i < w->n_slots; i++)
        if (w->slots[i].used && w->slots[i].id == id && w->slots[i].attempt == attempt)
            return &w->slots[i];
    return NULL;
}

/*
 * Parses a line {percent?, message?, data?} into p (strings borrowed from
 * *v, which the caller frees; data in *data, malloc'd). False for a line
 * that is not such an object: it is dropped with a warning.
 */
static bool
parse_line(const char *line, json_t **v, struct progress_report *p, char **data)
{
    *data = NULL;
    *v = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(*v))
        return false;
    const char *k;
    json_t *x;
    json_object_foreach(*v, k, x) {
        if (strcmp(k, "percent") == 0 && json_is_number(x)) {
            p->has_percent = true;
            p->percent = json_number_value(x);
        } else if (strcmp(k, "message") == 0 && json_is_string(x)) {
            p->message = json_string_value(x);
        } else if (strcmp(k, "data") == 0) {
            if (!json_is_null(x) &&
                json_value_canonical(x, JOB_PROGRESS_DATA_MAX, data, "data", NULL) != JOBD_OK)
                return false;
        } else if (!json_is_null(x)) {
            return false;
        }
    }
    p->data = *data;
    return true;
}

/* Writes one note's progress; false if the store failed (and was dropped). */
static bool
write_note(struct worker *w, struct slot *s, const struct progress_note *n, int64_t now)
{
    struct progress_report p = {0};
    json_t *v = NULL;
    char *data = NULL;
    struct jobd_error err = {0};
    int rc = JOBD_E_INVALID;
    if (parse_line(n->line, &v, &p, &data)) {
        int64_t exp = 0;
        bool cancel = false;
        rc = store_progress(w->st, n->id, n->attempt, &p, w->cfg.lease_ms, &exp, &cancel, &err);
        if (rc == JOBD_OK && cancel)
            wk_stop_run(w, s, RUN_STOP_CANCEL);
    }
    json_decref(v);
    free(data);
    s->next_progress_us = now + PROGRESS_GAP_MS * 1000LL;
    if (rc == JOBD_E_INVALID)
        wlog(w, LOGL_WARN,
             "progress line dropped: not {\"percent\"?: 0..100, \"message\"?: text, \"data\"?: "
             "JSON} within its bounds",
             LF_INT("job", n->id), LF_INT("attempt", n->attempt),
             LF_STR("error", err.msg[0] ? err.msg : "not such a JSON object"),
             LF_TRACE(s->traceparent));
    else if (rc != JOBD_OK && rc != JOBD_E_STALE && rc != JOBD_E_NOTFOUND) {
        wk_store_trouble(w, rc, &err, "progress"); /* the heartbeat finds out about stale */
        return false;
    }
    return true;
}

void
wk_progress_flush(struct worker *w, int64_t now)
{
    pthread_mutex_lock(&w->pmu);
    struct progress_note *list = w->pnotes, *keep = NULL;
    w->pnotes = NULL;
    pthread_mutex_unlock(&w->pmu);
    bool ok = w->st != NULL;
    while (list != NULL) {
        struct progress_note *n = list;
        list = n->next;
        struct slot *s = slot_of(w, n->id, n->attempt);
        if (s != NULL && !s->lost && (!ok || now < s->next_progress_us)) {
            n->next = keep; /* its turn comes (or the store comes back) */
            keep = n;
            continue;
        }
        if (s != NULL && !s->lost)
            ok = write_note(w, s, n, now);
        free(n->line);
        free(n);
    }
    if (keep == NULL)
        return;
    pthread_mutex_lock(&w->pmu);
    struct progress_note **tail = &keep;
    while (*tail != NULL)
        tail = &(*tail)->next;
    *tail = w->pnotes; /* newer notes of the same attempts came meanwhile: those win */
    w->pnotes = keep;
    for (struct progress_note *a = w->pnotes; a != NULL; a = a->next)
        for (struct progress_note **b = &a->next; *b != NULL;)
            if ((*b)->id == a->id && (*b)->attempt == a->attempt) {
                struct progress_note *d = *b;
                *b = d->next;
                free(a->line); /* a is the older: it takes the newer text */
                a->line = d->line;
                free(d);
            } else {
                b = &(*b)->next;
            }
    pthread_mutex_unlock(&w->pmu);
}

int64_t
wk_progress_wake(struct worker *w)
{
    int64_t at = 0;
    pthread_mutex_lock(&w->pmu);
    for (struct progress_note *n = w->pnotes; n != NULL; n = n->next) {
        struct slot *s = slot_of(w, n->id, n->attempt);
        int64_t t = s != NULL ? s->next_progress_us : 1;
        if (at == 0 || t < at)
            at = t;
    }
    pthread_mutex_unlock(&w->pmu);
    return at;
}

void
wk_progress_fini(struct worker *w)
{
    while (w->pnotes != NULL) {
        struct progress_note *n = w->pnotes;
        w->pnotes = n->next;
        free(n->line);
        free(n);
    }
    pthread_mutex_destroy(&w->pmu);
}
