/*
 * timefmt.h — RFC 3339 instants (docs/MODEL.md, "Durations, times, ids").
 * Responses are UTC with milliseconds ("2026-12-02T14:03:17.120Z"); requests
 * may carry any offset and any number of fraction digits (kept to
 * microseconds). Pure: no TZ, no localtime; thread-safe.
 */
#ifndef JOBD_CORE_TIMEFMT_H
#define JOBD_CORE_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

#include "jobd.h"

#define TIME_RFC3339_LEN 32 /* buffer size enough for time_format_rfc3339 */
/*
 * The last instant jobd accepts, 9999-12-31T23:59:59.999999Z: the last one
 * whose UTC form has a four-digit year, so every time jobd prints reads
 * back (a far offset like -23:59 must not carry it into year 10000).
 */
#define TIME_MAX_US INT64_C(253402300799999999)

/*
 * Parses an RFC 3339 date-time ("2026-12-02T15:03:17+01:00", 'T' or 't' or
 * ' ', 'Z' or 'z' or ±hh:mm) into microseconds since the epoch. Checks the
 * calendar (no Feb 30) and ranges; leap second 60 is refused; the instant
 * must lie in 1970-01-01T00:00:00Z .. TIME_MAX_US. Returns 0 or
 * JOBD_E_INVALID with err naming field.
 */
int time_parse_rfc3339(const char *s, int64_t *out_us, const char *field, struct jobd_error *err);

/* Formats us as UTC with milliseconds into buf (>= TIME_RFC3339_LEN); returns buf. */
char *time_format_rfc3339(int64_t us, char *buf, size_t len);

/*
 * Formats us as the wall time at UTC offset offset_s (seconds east; whole
 * minutes are printed, as RFC 3339 has no seconds in offsets), to the whole
 * second, with the offset: "2026-03-29T03:00:00+02:00". For instants that
 * are whole seconds, such as cron firings. buf >= TIME_RFC3339_LEN.
 */
char *time_format_rfc3339_offset(int64_t us, int32_t offset_s, char *buf, size_t len);

/*
 * jobd's one calendar: civil date helpers on the proleptic Gregorian
 * calendar (no time zones), days counted from 1970-01-01. cron.c searches
 * on these too, so there is one place where a leap year is decided.
 */
int64_t time_days_from_civil(int64_t y, unsigned m, unsigned d);
void time_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);
/* Days in month m (1..12) of year y. */
unsigned time_days_in_month(int64_t y, unsigned m);

/* a / b rounded toward minus infinity (b != 0), for instants before 1970.
 * Inline: the cron search calls it in its inner loop. */
static inline int64_t
time_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

#endif
