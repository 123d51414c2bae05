/*
 * duration.h — durations as docs/MODEL.md, "Durations, times, ids" writes
 * them: an integer with a unit (250ms, 2s, 5m, 1h, 1d) or a sum of such
 * (1h30m). Pure.
 */
#ifndef JOBD_CORE_DURATION_H
#define JOBD_CORE_DURATION_H

#include <stddef.h>
#include <stdint.h>

#include "jobd.h"

/*
 * Parses s into milliseconds. Units: ms, s, m, h, d; each unit at most once,
 * largest first ("1h30m", not "30m1h"); no sign, no spaces, no bare number.
 * Overflow past ~292 million years is an error. Returns 0 or JOBD_E_INVALID
 * with err naming field and saying what is wrong.
 */
int duration_parse_ms(const char *s, int64_t *out_ms, const char *field, struct jobd_error *err);

/* Formats ms canonically ("1h30m", "250ms", "0s") into buf; returns buf. */
char *duration_format_ms(int64_t ms, char *buf, size_t len);

#endif
