/*
 * cron.c — cron expression parser and next-firing search (docs/CRON.md).
 *
 * Each field becomes a bitset, so matching is a mask test and the search
 * jumps field by field (year, month, day, hour, minute, second) to the next
 * set bit instead of stepping through time: a sparse expression such as
 * `0 0 29 2 *` answers in microseconds. The search runs on wall time (civil
 * seconds, proleptic Gregorian) and maps wall time to real instants through
 * ICU, using the zone's offset and transitions only; see cron_next_in for
 * the two DST rules. An expression that can never fire is refused when it is
 * parsed, so the search always ends (it is bounded anyway).
 */
#include "core/cron.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/num.h"
#include "core/timefmt.h"
#include "util/icu.h"

/* ---- civil time: core/timefmt.h (proleptic Gregorian, days since 1970-01-01) ---- */

/* 0 = Sunday; 1970-01-01 was a Thursday. */
static unsigned
weekday_of_days(int64_t days)
{
    return (unsigned)(((days % 7) + 7 + 4) % 7);
}

/* Supported instants: 1900-01-01T00:00:00Z up to 9999-12-31T23:59:59Z (seconds). */
#define CRON_MIN_S (-2208988800LL)
#define CRON_MAX_S (253402300799LL)
/* The Gregorian calendar repeats every 400 years, so a firing exists within that span. */
#define CRON_SEARCH_YEARS 400

/* ---- matching ---- */

/* Bits 1..n of the days of month (y, m) that match the day fields (Vixie rule). */
static uint64_t
day_mask(const struct cron_expr *e, int64_t y, unsigned m)
{
    unsigned n = time_days_in_month(y, m);
    uint64_t full = ((1ULL << (n + 1)) - 1) & ~1ULL;
    uint64_t dom = (uint64_t)e->mdays;
    if (e->mday_last)
        dom |= 1ULL << n;
    dom &= full;
    unsigned w1 = weekday_of_days(time_days_from_civil(y, m, 1));
    uint64_t dow = (uint64_t)e->wday_days[w1] & full;
    if (e->mday_star || e->wday_star)
        return dom & dow;
    return dom | dow;
}

/*
 * The smallest wall time (civil seconds) >= from that matches e, into *out.
 * Returns false if none exists within CRON_SEARCH_YEARS (cannot happen for
 * an expression cron_parse accepted). Every pass of the loop either returns
 * or moves to a strictly later candidate, and moves at least one day once
 * per at most four passes, so it is bounded by years * 12 * 31 * 4.
 */
static bool
civil_next(const struct cron_expr *e, int64_t from, int64_t *out)
{
    int64_t days = time_floor_div(from, 86400);
    int64_t sod = from - days * 86400;
    int64_t y;
    unsigned m, d;
    time_civil_from_days(days, &y, &m, &d);
    unsigned h = (unsigned)(sod / 3600), mi = (unsigned)(sod / 60 % 60), s = (unsigned)(sod % 60);
    int64_t ylimit = y + CRON_SEARCH_YEARS;

    for (;;) {
        if (y > ylimit)
            return false;
        if (!((e->months >> m) & 1U)) {
            uint32_t rest = (uint32_t)e->months & (~0U << m);
            if (rest == 0) {
                y++;
                m = (unsigned)__builtin_ctz(e->months);
            } else {
                m = (unsigned)__builtin_ctz(rest);
            }
            d = 1, h = mi = s = 0;
            continue;
        }
        uint64_t dm = day_mask(e, y, m) & (~0ULL << d);
        if (dm == 0) {
            if (++m > 12) {
                m = 1;
                y++;
            }
            d = 1, h = mi = s = 0;
            continue;
        }
        unsigned nd = (unsigned)__builtin_ctzll(dm);
        if (nd != d) {
            d = nd;
            h = mi = s = 0;
        }
        uint64_t hm = (uint64_t)e->hours & (~0ULL << h);
        if (hm == 0) {
            d++;
            h = mi = s = 0;
            continue;
        }
        unsigned nh = (unsigned)__builtin_ctzll(hm);
        if (nh != h) {
            h = nh;
            mi = s = 0;
        }
        uint64_t mm = e->minutes & (~0ULL << mi);
        if (mm == 0) {
            h++;
            mi = s = 0;
            continue;
        }
        unsigned nmi = (unsigned)__builtin_ctzll(mm);
        if (nmi != mi) {
            mi = nmi;
            s = 0;
        }
        uint64_t sm = e->seconds & (~0ULL << s);
        if (sm == 0) {
            mi++;
            s = 0;
            continue;
        }
        s = (unsigned)__builtin_ctzll(sm);
        *out = time_days_from_civil(y, m, d) * 86400 + (int64_t)h * 3600 + (int64_t)mi * 60 + s;
        return true;
    }
}

/* ---- parsing ---- */

struct field_def {
    const char *name;      /* as users read it: "day-of-month" */
    const char *err_field; /* struct jobd_error.field: "cron.day-of-month" */
    int min, max;
    const char *const *names; /* names[i] is the value names_base + i, or NULL */
    int names_base;
    int n_names;
};

static const char *const month_names[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                          "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
static const char *const wday_names[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

enum { F_SECOND, F_MINUTE, F_HOUR, F_MDAY, F_MONTH, F_WDAY, F_COUNT };

static const struct field_def fields[F_COUNT] = {
    {"second", "cron.second", 0, 59, NULL, 0, 0},
    {"minute", "cron.minute", 0, 59, NULL, 0, 0},
    {"hour", "cron.hour", 0, 23, NULL, 0, 0},
    {"day-of-month", "cron.day-of-month", 1, 31, NULL, 0, 0},
    {"month", "cron.month", 1, 12, month_names, 1, 12},
    {"day-of-week", "cron.day-of-week", 0, 7, wday_names, 0, 7},
};

static const struct {
    const char *name;
    const char *expansion;
} macros[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

/*
 * Reads one value (digits or a name) at *pp, advancing *pp. *is_name tells
 * which it was. Errors name the field and the text.
 */
static int
parse_value(const struct field_def *f, const char *item, const char **pp, int *out, bool *is_name,
            struct jobd_error *err)
{
    const char *p = *pp;
    const char *start = p;
    if (isdigit((unsigned char)*p)) {
        long v = 0;
        while (isdigit((unsigned char)*p)) {
            if (v < 1000000)
                v = v * 10 + (*p - '0');
            p++;
        }
        if (v < f->min || v > f->max)
            return jobd_error_set(err, JOBD_E_INVALID, f->err_field,
                                  "%s: %.*s is out of range %d-%d", f->name, (int)(p - start),
                                  start, f->min, f->max);
        *out = (int)v;
        *is_name = false;
        *pp = p;
        return 0;
    }
    if (isalpha((unsigned char)*p)) {
        while (isalpha((unsigned char)*p))
            p++;
        size_t len = (size_t)(p - start);
        for (int i = 0; i < f->n_names; i++) {
            if (len == 3 && strncasecmp(start, f->names[i], 3) == 0) {
                *out = f->names_base + i;
                *is_name = true;
                *pp = p;
                return 0;
            }
        }
        if (f->n_names == 0)
            return jobd_error_set(err, JOBD_E_INVALID, f->err_field,
                                  "%s: \"%.*s\" is not a number (names are not allowed here)",
                                  f->name, (int)len > 32 ? 32 : (int)len, start);
        return jobd_error_set(err, JOBD_E_INVALID, f->err_field, "%s: unknown name \"%.*s\"",
                              f->name, (int)len > 32 ? 32 : (int)len, start);
    }
    if (*p == '\0')
        return jobd_error_set(err, JOBD_E_INVALID, f->err_field,
                              "%s: a value is missing in \"%.40s\"", f->name, item);
    if (!isprint((unsigned char)*p))
        return jobd_error_set(err, JOBD_E_INVALID, f->err_field, "%s: unexpected byte 0x%02x",
                              f->name, (unsigned char)*p);
    return jobd_error_set(err, JOBD_E_INVALID, f->err_field, "%s: unexpected \"%c\" in \"%.40s\"",
                          f->name, *p, item);
}

/*
 * Parses one list item ("*", "*\/5", "7", "1-5", "10-40/5", "MON-FRI", "L")
 * of field f and ORs its values into *mask; `L` sets *last.
 */
static int
parse_item(const struct field_def *f, const char *item, uint64_t *mask, bool *last,
           struct jobd_error *err)
{
    const char *p = item;
    int lo, hi, step = 1;
    bool star = false, range = false;
    int rc;

    if (f == &fields[F_MDAY] && (strcmp(item, "L") == 0 || strcmp(item, "l") == 0)) {
        *last = true;
        return 0;
    }
    if ((item[0] == 'L' || item[0] == 'l') && !isalpha((unsigned char)item[1])) {
        if (f == &fields[F_MDAY])
            return jobd_error_set(err, JOBD_E_INVALID, f->err_field,
                                  "%s: L takes no range or step (\"%s\")", f->name, item);
        return jobd_error_set(err, JOBD_E_INVALID, f->err_field,
                              "%s: L is only allowed in day-of-month", f->name);
    }
    if (*p == '*') {
        star = true;
        lo = f->min;
        hi = f->max;
        p++;
    } else {
        bool lo_name, hi_name;
        if ((rc = parse_value(f, item, &p, &lo, &lo_name, err)) != 0)
            return rc;
        hi = lo;
        if (*p == '-') {
            p++;
            range = true;
            if ((rc = parse_value(f, item, &p, &hi, &hi_name, err)) != 0)
                return rc;
            /* MON-SUN: a Sunday named as the upper end means 7. */
            if (f == &fields[F_WDAY] && hi_name && hi == 0 && lo > 0)
                hi = 7;
            if (lo > hi)
                return jobd_error_set(err, JOBD_E_INVALID, f->err_field,
                                      "%s: range \"%s\" is reversed", f->name, item);
        }
    }
    if (*p == '/') {
        p++;
        if (!star && !range)
            return jobd_error_set(err, JOBD_E_INVALID, f->err_field,
                                  "%s: a step needs a range or * (\"%s\")", f->name, item);
        if (!isdigit((unsigned char)*p))
            return jobd_error_set(err, JOBD_E_INVALID, f->err_field,
                                  "%s: step in \"%s\" is not a number", f->name, item);
        long v = 0;
        while (isdigit((unsigned char)*p)) {
            if (v < 1000000)
                v = v * 10 + (*p - '0');
            p++;
        }
        if (v < 1 || v > f->max - f->min + 1)
            return jobd_error_set(err, JOBD_E_INVALID, f->err_field,
                                  "%s: step %ld in \"%s\" is out of range 1-%d", f->name, v, item,
                                  f->max - f->min + 1);
        step = (int)v;
    }
    if (*p != '\0')
        return jobd_error_set(err, JOBD_E_INVALID, f->err_field,
                              "%s: unexpected \"%.40s\" in \"%.40s\"", f->name, p, item);
    for (int v = lo; v <= hi; v += step)
        *mask |= 1ULL << v;
    return 0;
}

/* Parses the comma list text of field f into *mask (and *last for `L`). */
static int
parse_field(const struct field_def *f, char *text, uint64_t *mask, bool *last,
            struct jobd_error *err)
{
    char *p = text;
    *mask = 0;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma != NULL)
            *comma = '\0';
        if (*p == '\0')
            return jobd_error_set(err, JOBD_E_INVALID, f->err_field, "%s: empty item in the list",
                                  f->name);
        int rc = parse_item(f, p, mask, last, err);
        if (rc != 0)
            return rc;
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}

/* True if some day of a full 28-year cycle without a skipped leap year matches. */
static bool
days_exist(const struct cron_expr *e)
{
    /*
     * 2001-2028: every (month, day, weekday, is-last-day) combination that
     * the Gregorian calendar has at all occurs in these years, Feb 29 on
     * every weekday included.
     */
    for (int64_t y = 2001; y <= 2028; y++)
        for (unsigned m = 1; m <= 12; m++)
            if (((e->months >> m) & 1U) && day_mask(e, y, m) != 0)
                return true;
    return false;
}

/* Cuts text into at most max words in place; returns how many (max = too many). */
static int
split_words(char *text, char **tok, int max)
{
    int n = 0;
    for (char *p = text; *p != '\0';) {
        while (*p != '\0' && isspace((unsigned char)*p))
            p++;
        if (*p == '\0' || n == max)
            break;
        tok[n++] = p;
        while (*p != '\0' && !isspace((unsigned char)*p))
            p++;
        if (*p != '\0')
            *p++ = '\0';
    }
    return n;
}

/* Fills e's masks from the parsed fields, and the weekday table the search uses. */
static void
expr_from_masks(const uint64_t *mask, bool last, struct cron_expr *e)
{
    e->seconds = mask[F_SECOND];
    e->minutes = mask[F_MINUTE];
    e->hours = (uint32_t)mask[F_HOUR];
    e->mdays = (uint32_t)mask[F_MDAY];
    e->months = (uint16_t)mask[F_MONTH];
    uint64_t wd = mask[F_WDAY];
    if (wd & (1ULL << 7))
        wd = (wd | 1ULL) & 0x7f;
    e->wdays = (uint8_t)wd;
    e->mday_last = last;
    for (unsigned w = 0; w < 7; w++) {
        uint32_t days = 0;
        for (unsigned day = 1; day <= 31; day++)
            if ((e->wdays >> ((w + day - 1) % 7)) & 1U)
                days |= 1U << day;
        e->wday_days[w] = days;
    }
}

static int
parse_fields(char *text, const char *orig, struct cron_expr *out, struct jobd_error *err)
{
    char *tok[7];
    int n = split_words(text, tok, 7);
    if (n == 0)
        return jobd_error_set(err, JOBD_E_INVALID, "cron", "cron: the expression is empty");
    if (n == 1 && tok[0][0] == '@') {
        for (size_t i = 0; i < sizeof macros / sizeof macros[0]; i++) {
            if (strcasecmp(tok[0], macros[i].name) == 0) {
                char buf[32];
                snprintf(buf, sizeof buf, "%s", macros[i].expansion);
                return parse_fields(buf, orig, out, err);
            }
        }
        return jobd_error_set(err, JOBD_E_INVALID, "cron", "cron: unknown macro \"%.40s\"", tok[0]);
    }
    if (n != 5 && n != 6)
        return jobd_error_set(err, JOBD_E_INVALID, "cron",
                              "cron: expected 5 or 6 fields, got %s%d in \"%.80s\"",
                              n == 7 ? "more than " : "", n == 7 ? 6 : n, orig);

    struct cron_expr e;
    memset(&e, 0, sizeof e);
    char zero[] = "0";
    char *ftext[F_COUNT];
    ftext[F_SECOND] = n == 6 ? tok[0] : zero;
    for (int i = 0; i < 5; i++)
        ftext[F_MINUTE + i] = tok[n - 5 + i];

    e.hour_wild = strpbrk(ftext[F_HOUR], "*/") != NULL;
    e.mday_star = ftext[F_MDAY][0] == '*';
    e.wday_star = ftext[F_WDAY][0] == '*';
    /* Keep the texts for the never-fires message before parse_field splits them. */
    char mday_text[48], month_text[48];
    snprintf(mday_text, sizeof mday_text, "%s", ftext[F_MDAY]);
    snprintf(month_text, sizeof month_text, "%s", ftext[F_MONTH]);

    uint64_t mask[F_COUNT];
    bool last = false, no_last = false;
    for (int i = 0; i < F_COUNT; i++) {
        int rc = parse_field(&fields[i], ftext[i], &mask[i], i == F_MDAY ? &last : &no_last, err);
        if (rc != 0)
            return rc;
    }
    expr_from_masks(mask, last, &e);
    if (!days_exist(&e))
        return jobd_error_set(err, JOBD_E_INVALID, "cron.day-of-month",
                              "day-of-month: \"%s\" never occurs in month \"%s\", so the "
                              "expression never fires",
                              mday_text, month_text);
    *out = e;
    return 0;
}

int
cron_parse(const char *text, struct cron_expr *out, struct jobd_error *err)
{
    if (text == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "cron", "cron: the expression is missing");
    size_t len = strlen(text);
    if (len > CRON_TEXT_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "cron",
                              "cron: the expression is longer than %d characters", CRON_TEXT_MAX);
    char buf[CRON_TEXT_MAX + 1];
    memcpy(buf, text, len + 1);
    return parse_fields(buf, text, out, err);
}

/* ---- time zones ---- */

/* A stretch of time [start, end) (seconds) with one UTC offset. */
struct zone_segment {
    int64_t start;  /* INT64_MIN: no earlier transition */
    int64_t end;    /* INT64_MAX: no later transition */
    int64_t offset; /* seconds east of UTC */
};

struct cron_zone {
    bool utc;                     /* no ICU needed: the offset is always 0 */
    UCalendar *cal;               /* used only for offsets and transitions */
    struct zone_segment cache[2]; /* the last segments looked up */
    int n_cached;
    int victim; /* the cache slot replaced last */
};

static bool
is_utc_name(const char *name)
{
    return name == NULL || name[0] == '\0' || strcmp(name, "UTC") == 0 ||
           strcmp(name, "Etc/UTC") == 0;
}

/* Validates name and converts it to ICU's UTF-16 into id (CRON_ZONE_MAX units). */
static int
zone_id(const char *name, UChar *id, struct jobd_error *err)
{
    size_t len = strlen(name);
    bool ok = len > 0 && len < CRON_ZONE_MAX;
    for (size_t i = 0; ok && i < len; i++)
        ok = isalnum((unsigned char)name[i]) || strchr("/_+-", name[i]) != NULL;
    if (ok) {
        const char *why = NULL;
        const struct icu_api *icu = icu_get(&why);
        if (icu == NULL)
            return jobd_error_set(err, JOBD_E_INTERNAL, "timezone", "timezone: %s", why);
        icu->u_charsToUChars(name, id, (int32_t)len + 1);
        UChar canon[128];
        UBool system = 0;
        UErrorCode st = U_ZERO_ERROR;
        icu->ucal_getCanonicalTimeZoneID(id, -1, canon, 128, &system, &st);
        ok = U_SUCCESS(st) && system;
    }
    if (!ok)
        return jobd_error_set(err, JOBD_E_INVALID, "timezone",
                              "timezone: unknown time zone \"%.64s\"", name);
    return 0;
}

int
cron_zone_check(const char *name, struct jobd_error *err)
{
    UChar id[CRON_ZONE_MAX];
    if (is_utc_name(name))
        return 0;
    return zone_id(name, id, err);
}

int
cron_zone_open(const char *name, struct cron_zone **out, struct jobd_error *err)
{
    UChar id[CRON_ZONE_MAX];
    struct cron_zone *z = calloc(1, sizeof *z);
    if (z == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, "timezone", "out of memory");
    if (is_utc_name(name)) {
        z->utc = true;
        *out = z;
        return 0;
    }
    int rc = zone_id(name, id, err);
    if (rc != 0) {
        free(z);
        return rc;
    }
    const struct icu_api *icu = icu_get(NULL); /* loaded by zone_id */
    UErrorCode st = U_ZERO_ERROR;
    z->cal = icu->ucal_open(id, -1, "en_US_POSIX", UCAL_GREGORIAN, &st);
    if (U_FAILURE(st) || z->cal == NULL) {
        if (z->cal != NULL)
            icu->ucal_close(z->cal);
        free(z);
        return jobd_error_set(err, st == U_MEMORY_ALLOCATION_ERROR ? JOBD_E_NOMEM : JOBD_E_INTERNAL,
                              "timezone", "timezone: ICU cannot open \"%s\": %s", name,
                              icu->u_errorName(st));
    }
    *out = z;
    return 0;
}

void
cron_zone_free(struct cron_zone *z)
{
    if (z == NULL)
        return;
    if (z->cal != NULL)
        icu_get(NULL)->ucal_close(z->cal); /* a zone with a calendar had ICU loaded */
    free(z);
}

/*
 * The segment of time around instant t (seconds) during which the UTC offset
 * is constant, from ICU's offset and neighbouring transitions. The last two
 * segments are cached in the zone: consecutive calls nearly always fall in
 * the same one, and a cache hit costs no ICU call. NULL if ICU failed. The
 * pointer is valid until the next call.
 */
static const struct zone_segment *
zone_segment_at(struct cron_zone *z, int64_t t)
{
    for (int i = 0; i < z->n_cached; i++)
        if (z->cache[i].start <= t && t < z->cache[i].end)
            return &z->cache[i];
    struct zone_segment seg;
    const struct icu_api *icu = icu_get(NULL); /* loaded: z->cal exists */
    UErrorCode st = U_ZERO_ERROR;
    UDate when = 0;
    icu->ucal_setMillis(z->cal, (UDate)t * 1000.0, &st);
    int32_t zo = icu->ucal_get(z->cal, UCAL_ZONE_OFFSET, &st);
    int32_t dst = icu->ucal_get(z->cal, UCAL_DST_OFFSET, &st);
    seg.offset = time_floor_div((int64_t)zo + dst, 1000);
    if (icu->ucal_getTimeZoneTransitionDate(z->cal, UCAL_TZ_TRANSITION_NEXT, &when, &st))
        seg.end = -time_floor_div(num_floor_i64(-when), 1000); /* ceil(when / 1000) */
    else
        seg.end = INT64_MAX;
    if (icu->ucal_getTimeZoneTransitionDate(z->cal, UCAL_TZ_TRANSITION_PREVIOUS_INCLUSIVE, &when,
                                            &st))
        seg.start = time_floor_div(num_floor_i64(when), 1000); /* floor(when / 1000) */
    else
        seg.start = INT64_MIN;
    if (U_FAILURE(st))
        return NULL;
    if (seg.start > t)
        seg.start = t;
    if (seg.end <= t)
        seg.end = t + 1;
    int slot = z->n_cached < 2 ? z->n_cached++ : (z->victim ^= 1);
    z->cache[slot] = seg;
    return &z->cache[slot];
}

/*
 * The first instant whose wall time is >= wall time w, into *out: the
 * instant itself for a normal wall time, the first occurrence for a
 * repeated one, the end of the gap for a skipped one. Walks the segments
 * forward from a day before w (no offset reaches a day, so nothing earlier
 * can qualify) to the first one whose wall times reach w.
 */
static bool
zone_first_instant(struct cron_zone *z, int64_t w, int64_t *out)
{
    int64_t t = w - 86400;
    for (int i = 0; i < 8; i++) {
        const struct zone_segment *seg = zone_segment_at(z, t);
        if (seg == NULL)
            return false;
        if (seg->end == INT64_MAX || seg->end - 1 + seg->offset >= w) {
            *out = seg->start > w - seg->offset ? seg->start : w - seg->offset;
            return true;
        }
        t = seg->end;
    }
    return false;
}

static int
no_firing(struct jobd_error *err)
{
    return jobd_error_set(err, JOBD_E_INVALID, "after", "cron: no firing before the year 10000");
}

static int
icu_failed(struct jobd_error *err)
{
    return jobd_error_set(err, JOBD_E_INTERNAL, "timezone", "timezone: ICU failed");
}

/*
 * Hour field wildcard or step: fire at every instant whose wall time
 * matches. Between two transitions the offset is constant, so within such
 * a segment wall time is instant + offset and the civil search applies
 * directly; a candidate past the segment's end restarts at the transition
 * with the new offset. Gaps are thus skipped and repeated hours searched twice.
 */
static int
next_real_time(const struct cron_expr *e, struct cron_zone *z, int64_t a, int64_t *out,
               struct jobd_error *err)
{
    int64_t t0 = a + 1;
    /* About two transitions a year over the 400-year search span, with room. */
    for (int iter = 0; iter < 4 * CRON_SEARCH_YEARS; iter++) {
        const struct zone_segment *seg = zone_segment_at(z, t0);
        if (seg == NULL)
            return icu_failed(err);
        int64_t off = seg->offset, tr = seg->end, w;
        if (!civil_next(e, t0 + off, &w))
            return no_firing(err);
        if (w - off < tr) {
            *out = w - off;
            return 0;
        }
        if (tr > CRON_MAX_S)
            return no_firing(err);
        t0 = tr;
    }
    return no_firing(err);
}

/*
 * Hour field fixed: each matching wall time w fires once, at the first
 * instant whose wall time is >= w (zone_first_instant). That map is
 * monotone, so the answer is the smallest matching w above the highest wall
 * time already reached at instant a; right after a fall-back that high-water
 * mark is the wall time just before the transition, not the current one.
 */
static int
next_fixed_hour(const struct cron_expr *e, struct cron_zone *z, int64_t a, int64_t *out,
                struct jobd_error *err)
{
    const struct zone_segment *seg = zone_segment_at(z, a);
    if (seg == NULL)
        return icu_failed(err);
    int64_t wmin = a + seg->offset + 1;
    int64_t tr = seg->start, after = seg->offset;
    /* Backward transitions of the last two days may have reached later wall times. */
    for (int k = 0; k < 4 && tr != INT64_MIN && tr >= a - 2 * 86400; k++) {
        seg = zone_segment_at(z, tr - 1);
        if (seg == NULL)
            return icu_failed(err);
        if (seg->offset > after && tr + seg->offset > wmin)
            wmin = tr + seg->offset;
        tr = seg->start;
        after = seg->offset;
    }
    for (int iter = 0; iter < 8; iter++) {
        int64_t w, t;
        if (!civil_next(e, wmin, &w))
            return no_firing(err);
        if (!zone_first_instant(z, w, &t))
            return icu_failed(err);
        if (t > a) {
            *out = t;
            return 0;
        }
        wmin = w + 1;
    }
    return jobd_error_set(err, JOBD_E_INTERNAL, "timezone",
                          "timezone: wall time does not advance in this zone");
}

int
cron_zone_offset(struct cron_zone *z, int64_t at_us, int32_t *offset_s, struct jobd_error *err)
{
    *offset_s = 0;
    if (z == NULL || z->utc)
        return 0;
    const struct zone_segment *seg = zone_segment_at(z, time_floor_div(at_us, 1000000));
    if (seg == NULL)
        return icu_failed(err);
    *offset_s = (int32_t)seg->offset;
    return 0;
}

bool
cron_zone_is_utc(const struct cron_zone *z)
{
    return z == NULL || z->utc;
}

int
cron_next_in(const struct cron_expr *e, struct cron_zone *z, int64_t after_us, int64_t *next_us,
             struct jobd_error *err)
{
    int64_t a = time_floor_div(after_us, 1000000);
    if (a < CRON_MIN_S || a > CRON_MAX_S)
        return jobd_error_set(err, JOBD_E_INVALID, "after",
                              "cron: the start time is outside the years 1900-9999");
    int64_t t = 0;
    int rc;
    if (z == NULL || z->utc) {
        if (!civil_next(e, a + 1, &t))
            return no_firing(err);
        rc = 0;
    } else if (e->hour_wild) {
        rc = next_real_time(e, z, a, &t, err);
    } else {
        rc = next_fixed_hour(e, z, a, &t, err);
    }
    if (rc != 0)
        return rc;
    if (t > CRON_MAX_S)
        return no_firing(err);
    *next_us = t * 1000000;
    return 0;
}

int
cron_next(const struct cron_expr *e, const char *tz, int64_t after_us, int64_t *next_us,
          struct jobd_error *err)
{
    struct cron_zone *z = NULL;
    int rc = cron_zone_open(tz, &z, err);
    if (rc != 0)
        return rc;
    rc = cron_next_in(e, z, after_us, next_us, err);
    cron_zone_free(z);
    return rc;
}
