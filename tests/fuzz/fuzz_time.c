/*
 * fuzz_time.c — libFuzzer target for durations (core/duration.c) and RFC
 * 3339 instants (core/timefmt.c), the two small grammars every request
 * with run_at, in or timeout goes through.
 *
 * Beyond "no crash, no sanitizer report", it asserts the round trips that
 * the API relies on when it echoes a value back:
 *   - duration: parse -> format -> parse gives the same milliseconds, and
 *     formatting that again gives the same text (one canonical spelling);
 *   - time: parse -> format (UTC, milliseconds) -> parse gives the instant
 *     truncated to the millisecond, and formatting it again is stable;
 *   - the input's first 8 bytes read as an int64 go the other way: any
 *     in-range value formats to text that parses back to itself.
 * A violated property abort()s, which libFuzzer reports as a crash.
 *
 * Input: the whole input as one string (NUL bytes end it). Without
 * libFuzzer (JOBD_FUZZ_STANDALONE) main() replays the files it is given.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/duration.h"
#include "core/err.h"
#include "core/timefmt.h"
#include "fuzz_main.h"

static void
fail(const char *what, const char *a, const char *b)
{
    fprintf(stderr, "fuzz_time: %s: '%s' vs '%s'\n", what, a, b);
    abort();
}

static void
check_duration(const char *s)
{
    struct jobd_error err = {0};
    int64_t ms = 0, ms2 = -1;
    if (duration_parse_ms(s, &ms, "timeout", &err) != JOBD_OK) {
        if (err.code != JOBD_E_INVALID || strcmp(err.field, "timeout") != 0 || err.msg[0] == '\0')
            fail("duration error without field or message", s, err.msg);
        return;
    }
    if (ms < 0)
        fail("duration parsed negative", s, "");
    char f1[64], f2[64];
    duration_format_ms(ms, f1, sizeof f1);
    if (duration_parse_ms(f1, &ms2, "timeout", &err) != JOBD_OK)
        fail("formatted duration does not parse", s, f1);
    if (ms2 != ms)
        fail("duration round trip changed the value", s, f1);
    duration_format_ms(ms2, f2, sizeof f2);
    if (strcmp(f1, f2) != 0)
        fail("duration format not stable", f1, f2);
}

static void
check_time_text(const char *s)
{
    struct jobd_error err = {0};
    int64_t us = -1, us2 = -1;
    if (time_parse_rfc3339(s, &us, "run_at", &err) != JOBD_OK) {
        if (err.code != JOBD_E_INVALID || strcmp(err.field, "run_at") != 0 || err.msg[0] == '\0')
            fail("time error without field or message", s, err.msg);
        return;
    }
    if (us < 0 || us > TIME_MAX_US)
        fail("parsed time out of the supported range", s, "");
    char f1[TIME_RFC3339_LEN], f2[TIME_RFC3339_LEN];
    time_format_rfc3339(us, f1, sizeof f1);
    if (time_parse_rfc3339(f1, &us2, "run_at", &err) != JOBD_OK)
        fail("formatted time does not parse", s, f1);
    if (us2 != us - us % 1000)
        fail("time round trip changed the instant", s, f1);
    time_format_rfc3339(us2, f2, sizeof f2);
    if (strcmp(f1, f2) != 0)
        fail("time format not stable", f1, f2);
}

/* The other direction: a number formats to text that reads back to it. */
static void
check_numbers(const uint8_t *data, size_t size)
{
    if (size < 8)
        return;
    uint64_t u = 0;
    memcpy(&u, data, 8);
    int64_t v = (int64_t)(u & INT64_MAX);
    struct jobd_error err = {0};
    char buf[64];
    int64_t back = -1;
    duration_format_ms(v, buf, sizeof buf);
    if (duration_parse_ms(buf, &back, NULL, &err) != JOBD_OK || back != v)
        fail("duration_format_ms output does not read back", buf, err.msg);
    int64_t us = v % (TIME_MAX_US + 1);
    us -= us % 1000;
    time_format_rfc3339(us, buf, sizeof buf);
    if (time_parse_rfc3339(buf, &back, NULL, &err) != JOBD_OK || back != us)
        fail("time_format_rfc3339 output does not read back", buf, err.msg);
    /* Any int64 (negative too) must format without overflow or a cut-off. */
    duration_format_ms((int64_t)u, buf, sizeof buf);
    time_format_rfc3339((int64_t)u, buf, sizeof buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256)
        return 0; /* both grammars are short; long inputs only slow the search */
    char s[257];
    memcpy(s, data, size);
    s[size] = '\0';
    check_duration(s);
    check_time_text(s);
    check_numbers(data, size);
    return 0;
}
