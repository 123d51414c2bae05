/*
 * runner.h — the table of handler kinds: one row per kind (exec, http, C).
 *
 * The worker loop and the config parser never switch on a kind: they look
 * its row up here. A new kind is one enum value (config.h), one row in
 * runner.c, and one file with its runner; nothing else names it. Every row
 * is complete (no NULL but where a field says so).
 */
#ifndef JOBD_WORKER_RUNNER_H
#define JOBD_WORKER_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/config.h"
#include "worker/run.h"

struct runner_kind {
    /* The [handler] key that selects the kind ("exec"); NULL for a kind
     * registered only in code (C handlers). */
    const char *key;
    /*
     * Fills h's kind-specific fields from the key's value. dir: the config
     * file's directory ("" = none), for relative paths. On error, err->msg
     * says what is wrong with the value (the caller adds file:line:key).
     */
    int (*configure)(struct handler_conf *h, const char *value, const char *dir,
                     struct jobd_error *err);
    /* Checks, when a worker starts, that h can run here (the program
     * exists); err->msg says what is wrong. NULL: nothing to check. */
    int (*check)(const struct handler_conf *h, struct jobd_error *err);
    /* Starts a runner delivering results to sink; *out owned by the caller (destroy). */
    int (*create)(struct run_sink sink, int concurrency, void **out, struct jobd_error *err);
    /* Hands n runs over (each run's ownership passes; runs[] stays the caller's);
     * exactly one result comes back for each. Thread-safe. */
    void (*start_many)(void *runner, struct run **runs, size_t n);
    /* Asks run (id, attempt) to stop; a no-op if it is not there. Thread-safe. */
    void (*stop)(void *runner, int64_t id, int32_t attempt, enum run_stop why);
    /* Answers every run not yet started as stopped by why; how many. NULL for
     * kinds that start each run at once (no queue, so no prefetch). */
    size_t (*drop_queued)(void *runner, enum run_stop why);
    /* Stops everything and frees; no result after it returns. NULL-safe. */
    void (*destroy)(void *runner);
};

/* Indexed by enum handler_kind; runner_kinds[HANDLER_NONE] is all NULL. */
extern const struct runner_kind runner_kinds[HANDLER_KIND_COUNT];

/* The kind whose key is name ("exec"), or HANDLER_NONE. */
enum handler_kind runner_kind_by_key(const char *name);

/* Writes "exec=<sep>http=" (every kind's key) into buf, for messages. */
void runner_kind_keys(char *buf, size_t len, const char *sep);

#endif
