/*
 * operator.h — the operator's store operations (attempt history, and the other
 * operator routes as they come): what an operator needs to see and act on
 * jobs without SQL.
 *
 * They live in their own vtable, struct store_operator_ops, reached through one
 * pointer in struct store_ops, so the hot-path vtable of store.h stays as it
 * is and a backend without them (the remote store of a --server worker)
 * simply leaves the pointer NULL: the wrappers then answer JOBD_E_INTERNAL
 * naming the backend.
 *
 * Attempt history costs nothing in the common case: the job row already
 * carries its current attempt (attempt, worker_id, started_at, finished_at,
 * status). A row of the history table job_attempts is written only when an
 * attempt ends other than in success (failed, dead, reaped, cancelled,
 * released), in the same statement or transaction that ends it. Reading the
 * history merges those rows with the current attempt of the job row, in one
 * statement (one snapshot).
 *
 * Ownership as in store.h: out-structs are caller-provided; the strings put
 * in them are heap-owned by the caller afterwards (attempt_list_fini).
 */
#ifndef JOBD_STORE_OPERATOR_H
#define JOBD_STORE_OPERATOR_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* How an attempt ended (CONTRACT §7), or ATT_RUNNING while it runs. */
enum attempt_outcome {
    ATT_RUNNING = 0,
    ATT_SUCCEEDED,
    ATT_FAILED,     /* retryable failure or timeout: the job goes back to pending */
    ATT_DEAD,       /* permanent failure or the last attempt */
    ATT_REAPED,     /* its lease expired */
    ATT_CANCELLED,  /* a cancel was requested and the worker stopped it */
    ATT_RELEASED,   /* handed back at shutdown */
};
#define ATT_OUTCOME_COUNT 7

/* One attempt. worker_id and error are heap-owned (attempt_list_fini). */
struct job_attempt {
    int32_t attempt;
    char *worker_id;         /* NULL if unknown */
    int64_t started_at_us;   /* 0 = unknown */
    int64_t finished_at_us;  /* 0 while running */
    enum attempt_outcome outcome;
    char *error;             /* that attempt's error text, or NULL */
};

/* A growable array of attempts, oldest first. Zero-initialise. */
struct attempt_list {
    struct job_attempt *v;
    size_t n, cap;
};

/* The operator vtable (implementations only; callers use store_*()). */
struct store_operator_ops {
    /* The job's attempts, oldest first; JOBD_E_NOTFOUND for no such job. */
    int (*attempts)(struct store *st, int64_t id, struct attempt_list *out,
                    struct jobd_error *err);
};

/* "running", "succeeded", ...; "?" for a value out of range. */
const char *attempt_outcome_name(enum attempt_outcome o);
/* Parses an outcome name; JOBD_E_INVALID for an unknown one. */
int attempt_outcome_parse(const char *name, enum attempt_outcome *out);
/* Appends a zeroed attempt and returns it, or NULL when memory ran out. */
struct job_attempt *attempt_list_push(struct attempt_list *l);
/* Frees every attempt's strings and the array; leaves l zeroed. NULL-safe. */
void attempt_list_fini(struct attempt_list *l);

/*
 * Every attempt of job id that started, oldest first (also those a reaper
 * or a cancel ended). JOBD_E_NOTFOUND if the job does not exist (also when
 * it was pruned: its history goes with it). *out must be zeroed; on success
 * the caller owns its contents (attempt_list_fini), on error it is empty.
 */
JOBD_MUST_USE int store_job_attempts(struct store *st, int64_t id, struct attempt_list *out,
                                     struct jobd_error *err);

#endif
