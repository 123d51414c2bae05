/*
 * cron.h — cron expressions (docs/CRON.md): parsing into per-field bitsets
 * and computing the next firing instant in an IANA time zone.
 *
 * The next firing is a pure function of (expression, zone, instant): no
 * clock reads, no process-wide TZ, no state carried between calls. That is
 * what lets any number of schedulers agree on a schedule's next_run_at and
 * lets the DST rules be plain table tests. Time zones come from ICU; a
 * struct cron_zone wraps one ICU calendar and belongs to one thread.
 */
#ifndef JOBD_CORE_CRON_H
#define JOBD_CORE_CRON_H

#include <stdbool.h>
#include <stdint.h>

#include "jobd.h"

#define CRON_TEXT_MAX 1024 /* longer expressions are refused */
#define CRON_ZONE_MAX 64   /* longer zone names are refused */

/*
 * A parsed expression. Bit n of a field set means "value n matches".
 * Plain data: copy it, compare it with memcmp, keep it on the stack.
 */
struct cron_expr {
    uint64_t seconds; /* bits 0-59 (a 5-field expression fires at second 0) */
    uint64_t minutes; /* bits 0-59 */
    uint32_t hours;   /* bits 0-23 */
    uint32_t mdays;   /* bits 1-31 */
    uint16_t months;  /* bits 1-12 */
    uint8_t wdays;    /* bits 0-6, Sunday = 0 (7 is folded into 0) */
    bool mday_last;   /* `L`: the last day of the month also matches */
    bool mday_star;   /* the day-of-month field starts with '*' */
    bool wday_star;   /* the day-of-week field starts with '*' */
    bool hour_wild;   /* hour field is a wildcard or a step: DST "real time" rule */
    /* wday_days[w]: days 1-31 of a month whose 1st is weekday w that match wdays. */
    uint32_t wday_days[7];
};

/*
 * Parses text (5 or 6 whitespace-separated fields, or a macro such as
 * @daily) into *out. On error returns JOBD_E_INVALID with err->field set to
 * "cron" or "cron.<field>" (cron.second, cron.minute, cron.hour,
 * cron.day-of-month, cron.month, cron.day-of-week) and err->msg naming the
 * field and the offending text ("day-of-month: 32 is out of range 1-31").
 * An expression that can never fire (`0 0 30 2 *`) is refused too.
 * text is borrowed; out is caller-owned and untouched on error. Thread-safe.
 */
int cron_parse(const char *text, struct cron_expr *out, struct jobd_error *err) JOBD_MUST_USE;

/* An opened time zone. Not thread-safe: one per thread (or per call). */
struct cron_zone;

/*
 * Opens the IANA zone name (NULL or "" mean UTC). On success *out is owned
 * by the caller (cron_zone_free). An unknown zone gives JOBD_E_INVALID with
 * err->field = "timezone"; JOBD_E_NOMEM if ICU cannot allocate.
 */
int cron_zone_open(const char *name, struct cron_zone **out, struct jobd_error *err) JOBD_MUST_USE;
/* Frees a zone; NULL-safe. */
void cron_zone_free(struct cron_zone *z);
/*
 * The UTC offset of zone z (NULL = UTC) at instant at_us, in seconds east
 * of UTC, into *offset_s: what a clock there shows minus UTC. Returns 0, or
 * JOBD_E_INTERNAL if ICU fails. z is used as by cron_next_in.
 */
int cron_zone_offset(struct cron_zone *z, int64_t at_us, int32_t *offset_s,
                     struct jobd_error *err) JOBD_MUST_USE;
/* True if z is UTC (opened from NULL, "", "UTC" or "Etc/UTC"), or NULL. */
bool cron_zone_is_utc(const struct cron_zone *z);
/* Checks that name is a known IANA zone (same errors as cron_zone_open). Thread-safe. */
int cron_zone_check(const char *name, struct jobd_error *err) JOBD_MUST_USE;

/*
 * The first firing of e strictly after after_us, in microseconds since the
 * epoch (always a whole second), in zone z (NULL = UTC). Wall times are
 * mapped to instants by the DST rules of docs/CRON.md, "Time zones and DST":
 * with a wildcard or stepped hour field every matching instant of real time
 * fires (skipped wall times never, repeated ones twice); with a fixed hour
 * field a skipped wall time fires once at the end of the gap and a repeated
 * one once, at its first occurrence. Returns 0, or JOBD_E_INVALID (field
 * "after") when after_us is outside years 1900-9999 or no firing exists
 * before year 10000, or JOBD_E_INTERNAL if ICU fails. z is used (its calendar
 * is moved), so it must not be shared between threads; e is borrowed.
 */
int cron_next_in(const struct cron_expr *e, struct cron_zone *z, int64_t after_us, int64_t *next_us,
                 struct jobd_error *err) JOBD_MUST_USE;

/*
 * Same as cron_next_in with a zone opened (and closed) for this call only:
 * thread-safe; errors of cron_zone_open too. For hot loops keep a zone.
 */
int cron_next(const struct cron_expr *e, const char *tz, int64_t after_us, int64_t *next_us,
              struct jobd_error *err) JOBD_MUST_USE;

#endif
