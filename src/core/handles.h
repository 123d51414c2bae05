/*
 * handles.h — the one rule for "does this worker take jobs of type T from
 * queue Q" (docs/API.md, "GET /v1/workers"): T is among the worker's types,
 * and its queues are empty (every queue) or hold Q. The server's
 * unhandled_types of GET /v1/queues and the CLI's warning after a submit
 * both ask it, so they cannot disagree. Whether the worker is active (not
 * draining, not gone) is the caller's to check: each reads it from its own
 * source.
 *
 * Pure: no I/O, no allocation; thread-safe.
 */
#ifndef JOBD_CORE_HANDLES_H
#define JOBD_CORE_HANDLES_H

#include <jansson.h>
#include <stdbool.h>

/*
 * True if a worker with these types and queues (JSON arrays of strings,
 * borrowed; NULL or a non-array counts as empty) claims jobs of type from
 * queue.
 */
bool worker_handles(const json_t *types, const json_t *queues, const char *type, const char *queue);

#endif
