/*
 * traceparent.h — a W3C Trace Context `traceparent` (issue 28 item 7;
 * docs/API.md, Trace context): the one check every way in shares (the
 * enqueue header and field, batch items: job_spec_validate), and the trace
 * id that log lines about a job carry. Only version 00's exact shape is
 * taken: 00-<32 hex>-<16 hex>-<2 hex>, lowercase, neither id all zeros.
 * Pure; no I/O.
 */
#ifndef JOBD_CORE_TRACEPARENT_H
#define JOBD_CORE_TRACEPARENT_H

#include <stdbool.h>

#include "jobd.h"

/* The length of a version-00 traceparent, and of its trace id. */
#define TRACEPARENT_LEN 55
#define TRACE_ID_LEN 32

/*
 * 0 when s is such a traceparent; else JOBD_E_INVALID with err naming field
 * (e.g. "traceparent" or "jobs[3].traceparent") and saying what is wrong.
 */
int traceparent_validate(const char *s, const char *field, struct jobd_error *err);

/* The trace id of a valid traceparent s into out (TRACE_ID_LEN + 1 bytes). */
void traceparent_trace_id(const char *s, char out[TRACE_ID_LEN + 1]);

#endif
