/*
 * test_cron_parse.c — the cron syntax of docs/CRON.md: what is accepted,
 * which bits it sets, and that every refusal names its field and the text.
 */
#include "core/cron.h"
#include "core/err.h"
#include "test.h"

static struct cron_expr
parse_ok(const char *text)
{
    struct cron_expr e;
    struct jobd_error err = {0};
    int rc = cron_parse(text, &e, &err);
    if (rc != 0)
        TEST_FAIL("cron_parse(\"%s\") failed: %s (%s)", text, err.msg, err.field);
    return e;
}

/* Asserts text is refused with field `field` and a message containing `needle`. */
static void
parse_bad(const char *text, const char *field, const char *needle)
{
    struct cron_expr e;
    struct jobd_error err = {0};
    int rc = cron_parse(text, &e, &err);
    if (rc != JOBD_E_INVALID)
        TEST_FAIL("cron_parse(\"%s\") = %d, want JOBD_E_INVALID", text, rc);
    if (strcmp(err.field, field) != 0)
        TEST_FAIL("cron_parse(\"%s\"): field \"%s\", want \"%s\" (%s)", text, err.field, field,
                  err.msg);
    if (needle != NULL && strstr(err.msg, needle) == NULL)
        TEST_FAIL("cron_parse(\"%s\"): message \"%s\" lacks \"%s\"", text, err.msg, needle);
    /* The message starts with the field's name as users know it. */
    const char *dot = strchr(field, '.');
    const char *name = dot ? dot + 1 : field;
    if (strncmp(err.msg, name, strlen(name)) != 0)
        TEST_FAIL("cron_parse(\"%s\"): message \"%s\" does not start with \"%s\"", text, err.msg,
                  name);
}

static uint64_t
bits(int lo, int hi, int step)
{
    uint64_t m = 0;
    for (int v = lo; v <= hi; v += step)
        m |= 1ULL << v;
    return m;
}

TEST(five_fields_and_wildcards)
{
    struct cron_expr e = parse_ok("* * * * *");
    ASSERT_EQ(e.seconds, 1);
    ASSERT_EQ(e.minutes, bits(0, 59, 1));
    ASSERT_EQ(e.hours, bits(0, 23, 1));
    ASSERT_EQ(e.mdays, bits(1, 31, 1));
    ASSERT_EQ(e.months, bits(1, 12, 1));
    ASSERT_EQ(e.wdays, 0x7f);
    ASSERT(e.mday_star && e.wday_star && e.hour_wild && !e.mday_last);
}

TEST(six_fields_seconds_first)
{
    struct cron_expr e = parse_ok("*/20 30 4 * * *");
    ASSERT_EQ(e.seconds, bits(0, 40, 20));
    ASSERT_EQ(e.minutes, 1ULL << 30);
    ASSERT_EQ(e.hours, 1U << 4);
    ASSERT(!e.hour_wild);
    e = parse_ok("59 59 23 31 12 6");
    ASSERT_EQ(e.seconds, 1ULL << 59);
    parse_bad("60 * * * * *", "cron.second", "60 is out of range 0-59");
}

TEST(field_bounds)
{
    ASSERT_EQ(parse_ok("0 * * * *").minutes, 1);
    ASSERT_EQ(parse_ok("59 * * * *").minutes, 1ULL << 59);
    parse_bad("60 * * * *", "cron.minute", "60 is out of range 0-59");
    ASSERT_EQ(parse_ok("* 0 * * *").hours, 1);
    ASSERT_EQ(parse_ok("* 23 * * *").hours, 1U << 23);
    parse_bad("* 24 * * *", "cron.hour", "24 is out of range 0-23");
    ASSERT_EQ(parse_ok("* * 1 * *").mdays, 2);
    ASSERT_EQ(parse_ok("* * 31 * *").mdays, 1U << 31);
    parse_bad("* * 0 * *", "cron.day-of-month", "0 is out of range 1-31");
    parse_bad("* * 32 * *", "cron.day-of-month", "day-of-month: 32 is out of range 1-31");
    ASSERT_EQ(parse_ok("* * * 1 *").months, 2);
    ASSERT_EQ(parse_ok("* * * 12 *").months, 1U << 12);
    parse_bad("* * * 0 *", "cron.month", "0 is out of range 1-12");
    parse_bad("* * * 13 *", "cron.month", "13 is out of range 1-12");
    ASSERT_EQ(parse_ok("* * * * 0").wdays, 1);
    ASSERT_EQ(parse_ok("* * * * 7").wdays, 1); /* 7 is Sunday too */
    ASSERT_EQ(parse_ok("* * * * 6").wdays, 1U << 6);
    parse_bad("* * * * 8", "cron.day-of-week", "8 is out of range 0-7");
    parse_bad("99999999999999999999 * * * *", "cron.minute", "out of range");
}

TEST(names_case_insensitive)
{
    ASSERT_EQ(parse_ok("0 0 * JAN *").months, 2);
    ASSERT_EQ(parse_ok("0 0 * jan,Dec *").months, 2 | (1U << 12));
    ASSERT_EQ(parse_ok("0 0 * mar-MAY *").months, bits(3, 5, 1));
    ASSERT_EQ(parse_ok("0 0 * * MON-FRI").wdays, bits(1, 5, 1));
    ASSERT_EQ(parse_ok("0 0 * * sun").wdays, 1);
    ASSERT_EQ(parse_ok("0 0 * * Sat,sun").wdays, 1 | (1U << 6));
    ASSERT_EQ(parse_ok("0 0 * * FRI-SUN").wdays, 1 | (1U << 5) | (1U << 6));
    ASSERT_EQ(parse_ok("0 0 * * 5-7").wdays, 1 | (1U << 5) | (1U << 6));
    parse_bad("0 0 * FOO *", "cron.month", "unknown name \"FOO\"");
    parse_bad("0 0 * * MON-XYZ", "cron.day-of-week", "unknown name \"XYZ\"");
    parse_bad("0 0 * MON *", "cron.month", "unknown name \"MON\"");
    parse_bad("0 0 * * JAN", "cron.day-of-week", "unknown name \"JAN\"");
    parse_bad("0 0 * * MONDAY", "cron.day-of-week", "MONDAY");
    parse_bad("abc * * * *", "cron.minute", "\"abc\"");
    parse_bad("* * * JAN/2 *", "cron.month", "step");
}

TEST(lists_ranges_steps)
{
    ASSERT_EQ(parse_ok("1,2,3 * * * *").minutes, bits(1, 3, 1));
    ASSERT_EQ(parse_ok("10-40/5 * * * *").minutes, bits(10, 40, 5));
    ASSERT_EQ(parse_ok("*/15 * * * *").minutes, bits(0, 45, 15));
    ASSERT_EQ(parse_ok("1-59/2 * * * *").minutes, bits(1, 59, 2));
    ASSERT_EQ(parse_ok("0,10-20/5,*/30 * * * *").minutes, 1 | bits(10, 20, 5) | (1ULL << 30));
    ASSERT_EQ(parse_ok("* */6 * * *").hours, bits(0, 18, 6));
    ASSERT_EQ(parse_ok("* * */10 * *").mdays, 2 | (1U << 11) | (1U << 21) | (1U << 31));
    ASSERT_EQ(parse_ok("* * * */3 *").months, bits(1, 10, 3));
    ASSERT_EQ(parse_ok("* * * * */2").wdays, bits(0, 6, 2));
    ASSERT_EQ(parse_ok("* * * * 0-7/7").wdays, 1);
    ASSERT_EQ(parse_ok("*/60 * * * *").minutes, 1);
    ASSERT_EQ(parse_ok("5-5 * * * *").minutes, 1ULL << 5);
    parse_bad("*/0 * * * *", "cron.minute", "step 0");
    parse_bad("*/61 * * * *", "cron.minute", "step 61");
    parse_bad("5/15 * * * *", "cron.minute", "a step needs a range or *");
    parse_bad("30-10 * * * *", "cron.minute", "range \"30-10\" is reversed");
    parse_bad("* * * * 6-1", "cron.day-of-week", "reversed");
    parse_bad("1-2-3 * * * *", "cron.minute", "unexpected");
    parse_bad("5- * * * *", "cron.minute", "missing in \"5-\"");
    parse_bad("-5 * * * *", "cron.minute", "unexpected \"-\"");
    parse_bad("*/ * * * *", "cron.minute", "not a number");
    parse_bad("*/x * * * *", "cron.minute", "not a number");
    parse_bad("1,,2 * * * *", "cron.minute", "empty item");
    parse_bad("1, * * * *", "cron.minute", "empty item");
    parse_bad(",1 * * * *", "cron.minute", "empty item");
    parse_bad("** * * * *", "cron.minute", "unexpected");
    parse_bad("? * * * *", "cron.minute", "unexpected \"?\"");
    parse_bad("* * ? * *", "cron.day-of-month", "unexpected");
    parse_bad("* * * * 1#2", "cron.day-of-week", "unexpected \"#2\"");
    parse_bad("+1 * * * *", "cron.minute", "unexpected");
    parse_bad("0 1.5 * * *", "cron.hour", "unexpected \".5\"");
}

TEST(whitespace_tolerated)
{
    struct cron_expr a = parse_ok("0 12 * * 1");
    struct cron_expr b = parse_ok("  \t0   12\t\t*  *  1 \t\n");
    ASSERT(memcmp(&a, &b, sizeof a) == 0);
    parse_bad("", "cron", "empty");
    parse_bad("   \t ", "cron", "empty");
    parse_bad("* * * *", "cron", "expected 5 or 6 fields, got 4");
    parse_bad("* * * * * * *", "cron", "expected 5 or 6 fields");
    parse_bad("* * * * * * * * * *", "cron", "expected 5 or 6 fields");
}

TEST(macros)
{
    static const char *const pairs[][2] = {
        {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
        {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
        {"@hourly", "0 * * * *"}, {" @DAILY ", "0 0 * * *"},  {"@Hourly", "0 * * * *"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        struct cron_expr a = parse_ok(pairs[i][0]);
        struct cron_expr b = parse_ok(pairs[i][1]);
        if (memcmp(&a, &b, sizeof a) != 0)
            TEST_FAIL("%s differs from %s", pairs[i][0], pairs[i][1]);
    }
    ASSERT(parse_ok("@hourly").hour_wild);
    ASSERT(!parse_ok("@daily").hour_wild);
    parse_bad("@reboot", "cron", "unknown macro \"@reboot\"");
    parse_bad("@daily 5", "cron", "expected 5 or 6 fields");
    parse_bad("@", "cron", "unknown macro");
}

TEST(last_day_of_month)
{
    struct cron_expr e = parse_ok("0 0 L * *");
    ASSERT(e.mday_last);
    ASSERT_EQ(e.mdays, 0);
    ASSERT(!e.mday_star);
    e = parse_ok("0 0 1,15,l * *");
    ASSERT(e.mday_last);
    ASSERT_EQ(e.mdays, 2 | (1U << 15));
    parse_bad("0 0 L-2 * *", "cron.day-of-month", "L takes no range or step");
    parse_bad("0 0 L/2 * *", "cron.day-of-month", "L takes no range or step");
    parse_bad("0 L * * *", "cron.hour", "L is only allowed in day-of-month");
    parse_bad("0 0 * * L", "cron.day-of-week", "L is only allowed in day-of-month");
    parse_bad("0 0 * * 5L", "cron.day-of-week", "unexpected");
    parse_bad("0 0 LW * *", "cron.day-of-month", "LW");
}

TEST(day_field_flags)
{
    struct cron_expr e = parse_ok("0 0 */2 * 1");
    ASSERT(e.mday_star && !e.wday_star);
    e = parse_ok("0 0 1-31 * 1");
    ASSERT(!e.mday_star && !e.wday_star);
    e = parse_ok("0 0 13 * */1");
    ASSERT(!e.mday_star && e.wday_star);
}

TEST(hour_rule_flags)
{
    ASSERT(parse_ok("0 * * * *").hour_wild);
    ASSERT(parse_ok("0 */2 * * *").hour_wild);
    ASSERT(parse_ok("0 1-23/2 * * *").hour_wild);
    ASSERT(!parse_ok("30 2 * * *").hour_wild);
    ASSERT(!parse_ok("0 1,13 * * *").hour_wild);
    ASSERT(!parse_ok("0 1-5 * * *").hour_wild);
    ASSERT(!parse_ok("*/15 2 * * *").hour_wild);
}

TEST(never_firing_refused)
{
    parse_bad("0 0 30 2 *", "cron.day-of-month", "never");
    parse_bad("0 0 31 4 *", "cron.day-of-month", "\"31\" never occurs in month \"4\"");
    parse_bad("0 0 31 2,4,6,9,11 *", "cron.day-of-month", "never");
    parse_bad("0 0 30,31 FEB *", "cron.day-of-month", "never");
    parse_bad("0 0 0 31 9 *", "cron.day-of-month", "never");
    parse_ok("0 0 31 4,5 *");
    parse_ok("0 0 29 2 *");
    parse_ok("0 0 30 2 1"); /* both restricted: Mondays in February fire */
    parse_ok("0 0 L 2 *");
    parse_ok("0 0 29 2 */7"); /* a Feb 29 that is a Sunday: rare, but exists */
    parse_ok("0 0 */30 2 *"); /* days 1 and 31; Feb 1 exists */
}

TEST(limits_and_garbage)
{
    char big[CRON_TEXT_MAX + 10];
    memset(big, ' ', sizeof big);
    memcpy(big, "* * * * *", 9);
    big[sizeof big - 1] = '\0';
    parse_bad(big, "cron", "longer than");
    parse_bad("\x01 * * * *", "cron.minute", "unexpected");
    parse_bad("é * * * *", "cron.minute", "unexpected byte 0xc3");
    struct jobd_error err = {0};
    struct cron_expr e;
    ASSERT_EQ(cron_parse(NULL, &e, &err), JOBD_E_INVALID);
    ASSERT_STR_EQ(err.field, "cron");
}

TEST(zone_names)
{
    struct jobd_error err = {0};
    ASSERT_OK(cron_zone_check("Europe/Berlin", &err), &err);
    ASSERT_OK(cron_zone_check("UTC", &err), &err);
    ASSERT_OK(cron_zone_check(NULL, &err), &err);
    ASSERT_OK(cron_zone_check("Australia/Lord_Howe", &err), &err);
    ASSERT_OK(cron_zone_check("America/Argentina/Buenos_Aires", &err), &err);
    const char *bad[] = {"Mars/Olympus", "Europe/Berlin ", "../etc/passwd",
                         "GMT+05:00",    "Europe/Berlinx", "x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        jobd_error_clear(&err);
        ASSERT_EQ(cron_zone_check(bad[i], &err), JOBD_E_INVALID);
        ASSERT_STR_EQ(err.field, "timezone");
        ASSERT(strstr(err.msg, "timezone") == err.msg);
        struct cron_zone *z = NULL;
        ASSERT_EQ(cron_zone_open(bad[i], &z, &err), JOBD_E_INVALID);
        ASSERT_NULL(z);
    }
}

/*
 * Random input: fields built from random items (values, ranges, steps,
 * names, L, junk) and sometimes free token soup never crash the parser
 * (ASan/UBSan builds run this), every refusal names a cron field, and every
 * accepted expression really fires (the never-fires check is exact).
 */
static uint64_t
xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void
random_item(uint64_t *rng, int lo, int hi, char *buf, size_t len)
{
    static const char *const junk[] = {"?",   "#",    "x",   "L",           "l", "JAN",
                                       "feb", "MON",  "sun", "99999999999", "",  "-",
                                       "/",   "*\t*", "1-",  "@daily"};
    /* Mostly in range, now and then one past either end. */
    int span = hi - lo + 1;
    int a = lo - 1 + (int)(xorshift(rng) % (uint64_t)(span + 2));
    int b = a + (int)(xorshift(rng) % (uint64_t)(hi - a > 0 ? hi - a + 2 : 2));
    int step = 1 + (int)(xorshift(rng) % (uint64_t)span);
    uint64_t r = xorshift(rng) % 16;
    switch (r == 15 ? 5 : r % 5) {
    case 0: snprintf(buf, len, "%d", a); break;
    case 1: snprintf(buf, len, "*"); break;
    case 2: snprintf(buf, len, "*/%d", step); break;
    case 3: snprintf(buf, len, "%d-%d", a, b); break;
    case 4: snprintf(buf, len, "%d-%d/%d", a, b, step); break;
    default: snprintf(buf, len, "%s", junk[xorshift(rng) % (sizeof junk / sizeof junk[0])]);
    }
}

TEST(random_input_never_crashes_and_accepted_ones_fire)
{
    uint64_t rng = 0x9e3779b97f4a7c15ULL;
    int accepted = 0, refused = 0;
    for (int i = 0; i < 20000; i++) {
        char text[256] = "";
        size_t len = 0;
        static const int lo[] = {0, 0, 0, 1, 1, 0, 0}, hi[] = {59, 59, 23, 31, 12, 7, 7};
        int fields = 4 + (int)(xorshift(&rng) % 4); /* 4..7 fields */
        int f0 = fields == 5 ? 1 : 0;               /* five fields start at the minute */
        for (int fi = 0; fi < fields; fi++) {
            int items = 1 + (int)(xorshift(&rng) % 3);
            for (int k = 0; k < items; k++) {
                char item[32];
                int fd = f0 + fi < 7 ? f0 + fi : 6;
                random_item(&rng, lo[fd], hi[fd], item, sizeof item);
                len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", k ? "," : "", item);
            }
            len += (size_t)snprintf(text + len, sizeof text - len, "%s",
                                    xorshift(&rng) % 8 ? " " : " \t ");
        }
        struct cron_expr e;
        struct jobd_error err = {0};
        int rc = cron_parse(text, &e, &err);
        if (rc != 0) {
            ASSERT_EQ(rc, JOBD_E_INVALID);
            if (strncmp(err.field, "cron", 4) != 0 || err.msg[0] == '\0')
                TEST_FAIL("\"%s\": field \"%s\" msg \"%s\"", text, err.field, err.msg);
            refused++;
            continue;
        }
        accepted++;
        int64_t next;
        if (cron_next(&e, "UTC", 1767225600000000, &next, &err) != 0)
            TEST_FAIL("\"%s\" was accepted but never fires: %s", text, err.msg);
    }
    fprintf(stderr, "accepted %d, refused %d\n", accepted, refused);
    ASSERT(accepted > 100);
    ASSERT(refused > 100);
}
