/*
 * fuzz_cron.c — libFuzzer target for the cron parser and the next-firing
 * search in time zones (core/cron.c), the code every schedule create and
 * every scheduler tick runs.
 *
 * Input: up to four lines, "EXPRESSION\nZONE\nSTART\nLATE POLICY", where
 * ZONE is an IANA name (empty: UTC), START is seconds since the epoch
 * (missing or unreadable: 2026-12-02T14:03:17Z) and the optional last line
 * asks for a catch-up plan (schedule_plan) LATE seconds after the first
 * firing with POLICY once, all or skip. Seeds are written that way, so
 * they read like test cases.
 *
 * Properties asserted (abort() is a libFuzzer crash):
 *   - parsing is deterministic, and a refusal names a cron field and says why;
 *   - for up to 4 successive firings: each is a whole second strictly after
 *     the previous instant; asking again from 1 µs before it gives it again
 *     (the search is a pure function of the instant: no skipped firing, no
 *     state carried in the zone's segment cache); a zone opened for the
 *     call (cron_next) agrees with the long-lived one (cron_next_in);
 *   - in UTC, the firing's civil fields (by gmtime, not jobd's calendar)
 *     match the expression under the Vixie day rule, and no earlier minute
 *     within three days of the start matches: the firing is the first;
 *   - in other zones, the firing's wall time (by a separate ICU calendar)
 *     matches the expression, except with a fixed hour field where it may
 *     instead be the first instant after a DST gap (docs/CRON.md);
 *   - a catch-up plan lists at most SCHEDULE_CATCHUP_MAX firings, ascending,
 *     each a real firing due by now; "all" lists the chain from the first
 *     missed one without a gap, "skip" lists no missed one, "once" only the
 *     first; and the schedule's new next_run_at is the first firing after now.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unicode/ucal.h>
#include <unicode/ustring.h>

#include "core/cron.h"
#include "core/err.h"
#include "core/schedule.h"
#include "fuzz_main.h"

#define DEFAULT_START INT64_C(1796220197) /* 2026-12-02T14:03:17Z */
#define US INT64_C(1000000)
#define LIMIT_S INT64_C(9000000000000) /* far outside years 1900-9999 */

static void
fail(const char *what, const char *expr, const char *zone, int64_t a, int64_t b)
{
    fprintf(stderr, "fuzz_cron: %s: expr '%s' zone '%s' (%lld, %lld)\n", what, expr, zone,
            (long long)a, (long long)b);
    abort();
}

/* Splits the next line off *p (NUL-terminated); returns it. */
static char *
next_line(char **p)
{
    char *s = *p;
    char *nl = strchr(s, '\n');
    if (nl) {
        *nl = '\0';
        *p = nl + 1;
    } else {
        *p = s + strlen(s);
    }
    return s;
}

static int
last_mday(int year, int mon)
{
    static const int n[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return mon == 2 && leap ? 29 : n[mon - 1];
}

/* Whether the UTC day of tm matches e (Vixie: AND if either day field is '*', else OR). */
static bool
day_matches(const struct cron_expr *e, const struct tm *tm)
{
    int y = tm->tm_year + 1900, m = tm->tm_mon + 1;
    bool dom = ((e->mdays >> tm->tm_mday) & 1U) || (e->mday_last && tm->tm_mday == last_mday(y, m));
    bool dow = (e->wdays >> tm->tm_wday) & 1U;
    if (!((e->months >> m) & 1U))
        return false;
    return e->mday_star || e->wday_star ? dom && dow : dom || dow;
}

static bool
utc_minute_matches(const struct cron_expr *e, int64_t t, struct tm *tm)
{
    time_t tt = (time_t)t;
    if (gmtime_r(&tt, tm) == NULL)
        abort();
    return day_matches(e, tm) && ((e->hours >> tm->tm_hour) & 1U) &&
           ((e->minutes >> tm->tm_min) & 1U);
}

/* The independent UTC oracle: next (seconds) matches, and nothing in (after, next) does. */
static void
check_utc(const struct cron_expr *e, const char *expr, int64_t after_s, int64_t next_s)
{
    struct tm tm;
    if (!utc_minute_matches(e, next_s, &tm) || !((e->seconds >> tm.tm_sec) & 1U))
        fail("UTC firing does not match the expression", expr, "UTC", after_s, next_s);
    /* Scan whole minutes between them (at most three days' worth). */
    int64_t end = next_s < after_s + 3 * 86400 ? next_s : after_s + 3 * 86400;
    for (int64_t m = after_s - ((after_s % 60) + 60) % 60; m < end; m += 60) {
        if (!utc_minute_matches(e, m, &tm))
            continue;
        for (int s = 0; s < 60; s++)
            if (((e->seconds >> s) & 1U) && m + s > after_s && m + s < next_s)
                fail("UTC firing skipped an earlier match", expr, "UTC", after_s, m + s);
    }
}

/* The wall time of instant t (seconds) in cal's zone, as a struct tm; false if ICU failed. */
static bool
wall_time(UCalendar *cal, int64_t t, struct tm *tm, int32_t *offset_ms)
{
    UErrorCode st = U_ZERO_ERROR;
    ucal_setMillis(cal, (UDate)t * 1000.0, &st);
    memset(tm, 0, sizeof *tm);
    tm->tm_year = ucal_get(cal, UCAL_YEAR, &st) - 1900;
    tm->tm_mon = ucal_get(cal, UCAL_MONTH, &st);
    tm->tm_mday = ucal_get(cal, UCAL_DAY_OF_MONTH, &st);
    tm->tm_hour = ucal_get(cal, UCAL_HOUR_OF_DAY, &st);
    tm->tm_min = ucal_get(cal, UCAL_MINUTE, &st);
    tm->tm_sec = ucal_get(cal, UCAL_SECOND, &st);
    tm->tm_wday = ucal_get(cal, UCAL_DAY_OF_WEEK, &st) - 1;
    *offset_ms = ucal_get(cal, UCAL_ZONE_OFFSET, &st) + ucal_get(cal, UCAL_DST_OFFSET, &st);
    return U_SUCCESS(st) && ucal_get(cal, UCAL_ERA, &st) == 1;
}

/* The zone oracle: the firing's wall time matches, or (fixed hour) it ends a gap. */
static void
check_zone(const struct cron_expr *e, UCalendar *cal, const char *expr, const char *zone,
           int64_t next_s)
{
    struct tm tm, before;
    int32_t off, off_before;
    if (!wall_time(cal, next_s, &tm, &off) || !wall_time(cal, next_s - 1, &before, &off_before))
        return; /* the fuzzer's ICU could not say; jobd's is checked elsewhere */
    bool match = day_matches(e, &tm) && ((e->hours >> tm.tm_hour) & 1U) &&
                 ((e->minutes >> tm.tm_min) & 1U) && ((e->seconds >> tm.tm_sec) & 1U);
    if (match)
        return;
    if (e->hour_wild)
        fail("firing's wall time does not match (wildcard hour)", expr, zone, next_s, 0);
    if (off <= off_before)
        fail("firing's wall time does not match and is not the end of a gap", expr, zone, next_s,
             off - off_before);
}

static UCalendar *
open_calendar(const char *zone)
{
    UChar id[CRON_ZONE_MAX + 1];
    u_uastrncpy(id, zone, CRON_ZONE_MAX);
    id[CRON_ZONE_MAX] = 0;
    UErrorCode st = U_ZERO_ERROR;
    UCalendar *cal = ucal_open(id, -1, "en_US_POSIX", UCAL_GREGORIAN, &st);
    if (U_FAILURE(st) && cal != NULL) {
        ucal_close(cal);
        cal = NULL;
    }
    return cal;
}

static void
check_plan(const struct cron_expr *e, struct cron_zone *z, const char *expr, const char *zone,
           int64_t first_us, const char *line)
{
    long long late = 0;
    char policy[8] = "";
    struct jobd_error err = {0};
    enum schedule_catchup c;
    if (sscanf(line, "%lld %7s", &late, policy) != 2 || late < 0 || late > 20LL * 366 * 86400 ||
        schedule_catchup_parse(policy, &c, &err) != 0)
        return;
    static int64_t f[SCHEDULE_CATCHUP_MAX];
    size_t n = 0;
    int64_t now = first_us + late * US, next = 0, want = 0;
    int rc = schedule_plan(e, z, c, first_us, now, 0, f, SCHEDULE_CATCHUP_MAX, &n, &next, &err);
    if (rc != 0) {
        if (rc != JOBD_E_INVALID || strcmp(err.field, "after") != 0)
            fail("schedule_plan failed other than out of range", expr, zone, rc, now);
        return;
    }
    if (cron_next_in(e, z, now, &want, &err) != 0 || next != want)
        fail("the new next_run_at is not the first firing after now", expr, zone, next, want);
    if (n > SCHEDULE_CATCHUP_MAX)
        fail("more firings than the cap", expr, zone, (int64_t)n, 0);
    int64_t missed_before = now - SCHEDULE_GRACE_US, again = 0;
    for (size_t i = 0; i < n; i++) {
        if (f[i] > now || (i > 0 && f[i] <= f[i - 1]))
            fail("plan not ascending or not due", expr, zone, f[i], now);
        if (cron_next_in(e, z, f[i] - 1, &again, &err) != 0 || again != f[i])
            fail("plan lists an instant that is not a firing", expr, zone, f[i], again);
        if (f[i] < missed_before &&
            (c == SCHEDULE_CATCHUP_SKIP || (c == SCHEDULE_CATCHUP_ONCE && i > 0)))
            fail("plan lists a missed firing the policy drops", expr, zone, f[i], c);
        if (c == SCHEDULE_CATCHUP_ALL && i + 1 < n &&
            (cron_next_in(e, z, f[i], &again, &err) != 0 || again != f[i + 1]))
            fail("catch-up all leaves a gap", expr, zone, f[i], again);
    }
    if (c != SCHEDULE_CATCHUP_SKIP && (n == 0 || f[0] != first_us))
        fail("the first due firing is not planned", expr, zone, first_us, n ? f[0] : 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > CRON_TEXT_MAX + CRON_ZONE_MAX + 64)
        return 0;
    char in[CRON_TEXT_MAX + CRON_ZONE_MAX + 65];
    memcpy(in, data, size);
    in[size] = '\0';
    char *p = in;
    const char *expr = next_line(&p);
    const char *zone = next_line(&p);
    const char *start = next_line(&p);
    const char *plan = next_line(&p);
    char *end = NULL;
    long long sv = strtoll(start, &end, 10);
    int64_t after_s = (*start != '\0' && end && *end == '\0') ? (int64_t)sv : DEFAULT_START;
    if (after_s < -LIMIT_S || after_s > LIMIT_S)
        after_s = DEFAULT_START; /* keeps after_s * US in int64 */

    struct jobd_error err = {0}, err2 = {0};
    struct cron_expr e, e2;
    memset(&e, 0, sizeof e);
    memset(&e2, 0, sizeof e2);
    int rc = cron_parse(expr, &e, &err);
    int rc2 = cron_parse(expr, &e2, &err2);
    if (rc != rc2 || (rc == 0 && memcmp(&e, &e2, sizeof e) != 0))
        fail("cron_parse is not deterministic", expr, zone, rc, rc2);
    if (rc != 0) {
        if (rc != JOBD_E_INVALID || strncmp(err.field, "cron", 4) != 0 || err.msg[0] == '\0')
            fail("cron refusal without a cron field or a message", expr, err.field, rc, 0);
        return 0;
    }
    if (e.seconds == 0 || e.minutes == 0 || e.hours == 0 || e.months == 0)
        fail("an accepted expression has an empty field", expr, zone, 0, 0);

    struct cron_zone *z = NULL;
    if (cron_zone_open(zone, &z, &err) != 0) {
        if (rc = err.code, rc != JOBD_E_INVALID || strcmp(err.field, "timezone") != 0)
            fail("zone refusal without field timezone", expr, zone, rc, 0);
        return 0;
    }
    bool utc = *zone == '\0' || strcmp(zone, "UTC") == 0;
    UCalendar *cal = utc ? NULL : open_calendar(zone);
    int64_t after_us = after_s * US;
    for (int i = 0; i < 4; i++) {
        int64_t next = 0, again = 0, fresh = 0;
        rc = cron_next_in(&e, z, after_us, &next, &err);
        rc2 = cron_next(&e, zone, after_us, &fresh, &err2);
        if (rc != rc2 || (rc == 0 && next != fresh))
            fail("a fresh zone and a used one disagree", expr, zone, next, fresh);
        if (rc != 0) {
            if (rc != JOBD_E_INVALID || strcmp(err.field, "after") != 0)
                fail("cron_next failed other than out of range", expr, zone, rc, after_us);
            break;
        }
        if (next <= after_us || next % US != 0)
            fail("firing not a whole second after the start", expr, zone, after_us, next);
        if (cron_next_in(&e, z, next - 1, &again, &err) != 0 || again != next)
            fail("asking from just before a firing gives another one", expr, zone, next, again);
        if (utc)
            check_utc(&e, expr, after_us / US, next / US);
        else if (cal != NULL)
            check_zone(&e, cal, expr, zone, next / US);
        if (i == 0 && *plan != '\0')
            check_plan(&e, z, expr, zone, next, plan);
        after_us = next;
    }
    if (cal != NULL)
        ucal_close(cal);
    cron_zone_free(z);
    return 0;
}
