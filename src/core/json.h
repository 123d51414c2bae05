/*
 * json.h — the JSON rules jobd applies to payloads and results, on jansson.
 *
 * Payloads are stored as canonical text (compact, keys sorted, UTF-8), so an
 * idempotent replay compares byte for byte on both backends. Pure (no I/O);
 * thread-safe.
 */
#ifndef JOBD_CORE_JSON_H
#define JOBD_CORE_JSON_H

#include <stddef.h>

#include "jobd.h"

/* Maximum nesting depth accepted in any JSON jobd parses (arrays+objects). */
#define JSON_DEPTH_MAX 64

/*
 * Parses text (of length len) as any JSON value, enforcing max_bytes and
 * JSON_DEPTH_MAX, and returns its canonical form in *out (malloc'd, caller
 * frees). JOBD_E_INVALID (err names field, says line/column) or
 * JOBD_E_TOOBIG.
 */
int json_canonical(const char *text, size_t len, size_t max_bytes, char **out,
                   const char *field, struct jobd_error *err);

#endif
