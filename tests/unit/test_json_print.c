/*
 * test_json_print.c — json_print, the printer behind every JSON text jobd
 * writes: reals in their shortest round-trip form and still reals, integers
 * exact, members in insertion order (or sorted on request), strings escaped
 * exactly as json_dumps escapes them, and a NULL rather than a cut text.
 * Values are built with jansson's constructors, not parsed, so the printer
 * is tested on its own. Also json_load_stored, which reads what
 * PostgreSQL's jsonb writes (1e300 as its 301 digits) back as reals.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/err.h"
#include "core/json.h"
#include "test.h"

/* Prints v (taken) and compares with want. */
static void
expect(json_t *v, size_t flags, const char *want)
{
    ASSERT(v != NULL);
    char *got = json_print(v, flags);
    ASSERT(got != NULL);
    ASSERT_STR_EQ(got, want);
    free(got);
    json_decref(v);
}

TEST(awkward_reals_print_as_sent)
{
    static const struct {
        double d;
        const char *want;
    } cases[] = {
        {0.1, "0.1"},
        {0.6, "0.6"},
        {1e300, "1e300"},
        {5e-324, "5e-324"},
        {-0.0, "-0.0"},
        {0.0, "0.0"},
        {1.5e-7, "1.5e-7"},
        {1.7976931348623157e308, "1.7976931348623157e308"},
        {-1.7976931348623157e308, "-1.7976931348623157e308"},
        {2.2250738585072014e-308, "2.2250738585072014e-308"},
        {1.0, "1.0"},
        {-2.0, "-2.0"},
        {100.0, "100.0"},
        {0.30000000000000004, "0.30000000000000004"},
        {0.007, "0.007"},
        {123456789.125, "123456789.125"},
        {1e21, "1e21"},
        {9007199254740993.0, "9007199254740992.0"}, /* a double cannot hold 2^53+1 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect(json_real(cases[i].d), 0, cases[i].want);
    /* The example, in the order it was sent. */
    expect(json_pack("{s:f, s:f, s:f}", "a", 0.6, "b", 1e300, "c", 0.1), 0,
           "{\"a\":0.6,\"b\":1e300,\"c\":0.1}");
}

TEST(integers_print_exactly)
{
    expect(json_integer(INT64_C(9007199254740993)), 0, "9007199254740993"); /* 2^53+1 */
    expect(json_integer(INT64_MAX), 0, "9223372036854775807");
    expect(json_integer(INT64_MIN), 0, "-9223372036854775808");
    expect(json_integer(0), 0, "0");
    expect(json_pack("[I,f]", (json_int_t)1, 1.0), 0, "[1,1.0]");
}

TEST(reals_round_trip_as_reals_and_shortest)
{
    /* Random finite bit patterns: the text reads back as the same double,
     * parses as a real (not an integer), and no shorter digit string
     * (%.*e with one digit fewer) would have read back. */
    uint64_t state = 7;
    int tried = 0;
    while (tried < 5000) {
        uint64_t z = (state += UINT64_C(0x9E3779B97F4A7C15));
        z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
        z ^= z >> 31;
        double d;
        memcpy(&d, &z, sizeof d);
        if (!isfinite(d))
            continue;
        tried++;
        json_t *v = json_real(d);
        char *s = json_print(v, 0);
        ASSERT(s != NULL);
        json_t *back = json_loads(s, JSON_DECODE_ANY, NULL);
        if (back == NULL || !json_is_real(back) || json_real_value(back) != d ||
            signbit(json_real_value(back)) != signbit(d))
            TEST_FAIL("%.17g printed %s, which does not read back as itself", d, s);
        /* Significant digits: the mantissa's digits less leading and
         * trailing zeros ("100.0" has 1, "0.0000015" has 2). */
        char dig[48];
        size_t k = 0;
        for (const char *p = s; *p != '\0' && *p != 'e'; p++)
            if (*p >= '0' && *p <= '9' && (k > 0 || *p != '0'))
                dig[k++] = *p;
        while (k > 1 && dig[k - 1] == '0')
            k--;
        int digits = (int)k;
        if (digits > 1) {
            char shorter[48];
            snprintf(shorter, sizeof shorter, "%.*e", digits - 2, d);
            if (strtod(shorter, NULL) == d)
                TEST_FAIL("%s is not shortest: %s reads back too", s, shorter);
        }
        json_decref(back);
        json_decref(v);
        free(s);
    }
}

TEST(order_kept_or_sorted)
{
    json_t *o =
        json_pack("{s:i, s:{s:n, s:[i, f, s]}, s:b}", "z", 1, "a", "y", "x", 2, 0.5, "s", "m", 1);
    ASSERT(o != NULL);
    char *kept = json_print(o, 0);
    char *sorted = json_print(o, JSON_SORT_KEYS);
    ASSERT_STR_EQ(kept, "{\"z\":1,\"a\":{\"y\":null,\"x\":[2,0.5,\"s\"]},\"m\":true}");
    ASSERT_STR_EQ(sorted, "{\"a\":{\"x\":[2,0.5,\"s\"],\"y\":null},\"m\":true,\"z\":1}");
    free(kept);
    free(sorted);
    json_decref(o);
    expect(json_object(), 0, "{}");
    expect(json_array(), 0, "[]");
    expect(json_pack("[[[]],{s:{}}]", "k"), 0, "[[[]],{\"k\":{}}]");
}

TEST(strings_escape_as_json_dumps)
{
    /* Every control character, the two mandatory escapes, '/', DEL and
     * non-ASCII (2-, 3- and 4-byte UTF-8): byte for byte what json_dumps
     * writes, in values and in keys. */
    char all[64];
    size_t n = 0;
    for (int c = 1; c < 0x20; c++)
        all[n++] = (char)c;
    memcpy(all + n, "\"\\/\x7f", 4);
    n += 4;
    all[n] = '\0';
    static const char *const texts[] = {
        "plain",
        "",
        "caf\xc3\xa9",
        "\xe6\x97\xa5\xe6\x9c\xac",
        "\xf0\x9f\x98\x80 ok",
        "tab\there \"quoted\" back\\slash",
        "line\nbreak\r\n",
    };
    json_t *arr = json_array();
    json_t *obj = json_object();
    ASSERT(arr != NULL && obj != NULL);
    ASSERT(json_array_append_new(arr, json_string(all)) == 0);
    ASSERT(json_object_set_new(obj, all, json_string("k")) == 0);
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        ASSERT(json_array_append_new(arr, json_string(texts[i])) == 0);
        ASSERT(json_object_set_new(obj, texts[i], json_integer((json_int_t)i)) == 0);
    }
    json_t *both[] = {arr, obj};
    for (size_t i = 0; i < 2; i++) {
        char *mine = json_print(both[i], 0);
        char *theirs = json_dumps(both[i], JSON_COMPACT | JSON_ENCODE_ANY);
        ASSERT(mine != NULL && theirs != NULL);
        ASSERT_STR_EQ(mine, theirs);
        free(mine);
        free(theirs);
    }
    json_decref(arr);
    json_decref(obj);
    expect(json_string("\x01\x1f"), 0, "\"\\u0001\\u001F\"");
    expect(json_string("\xc3\xa9\n"), 0, "\"\xc3\xa9\\n\"");
}

TEST(scalars_at_the_top)
{
    expect(json_null(), 0, "null");
    expect(json_true(), 0, "true");
    expect(json_false(), 0, "false");
    expect(json_string("s"), 0, "\"s\"");
}

/* An array nested depth levels deep (new reference). */
static json_t *
nest(int depth)
{
    json_t *v = json_array();
    for (int i = 1; i < depth && v != NULL; i++) {
        json_t *outer = json_array();
        ASSERT(outer != NULL && json_array_append_new(outer, v) == 0);
        v = outer;
    }
    return v;
}

TEST(nothing_printed_is_null_not_a_cut_text)
{
    ASSERT_NULL(json_print(NULL, 0));
    json_t *ok = nest(JSON_PRINT_DEPTH_MAX);
    char *s = json_print(ok, 0);
    ASSERT(s != NULL && strlen(s) == 2 * (size_t)JSON_PRINT_DEPTH_MAX);
    free(s);
    json_decref(ok);
    json_t *deep = nest(JSON_PRINT_DEPTH_MAX + 1);
    ASSERT_NULL(json_print(deep, 0));
    json_decref(deep);
}

TEST(stored_jsonb_text_reads_back_as_reals)
{
    /* What jsonb writes for {"b": 1e300, ...}: 1 and 300 zeros. */
    char text[600];
    int n = snprintf(text, sizeof text, "{\"b\": 1");
    for (int i = 0; i < 300; i++)
        text[n++] = '0';
    snprintf(text + n, sizeof text - (size_t)n,
             ", \"m\": -99999999999999999999, \"h\": 9007199254740993, \"a\": 0.6, "
             "\"s\": \"12345678901234567890 \\\" 99999999999999999999\", \"l\": [1e300, 1]}");
    json_t *v = NULL;
    ASSERT_EQ(json_load_stored(text, &v), JOBD_OK);
    expect(v, 0,
           "{\"b\":1e300,\"m\":-100000000000000000000.0,\"h\":9007199254740993,\"a\":0.6,"
           "\"s\":\"12345678901234567890 \\\" 99999999999999999999\",\"l\":[1e300,1]}");
    /* Canonical text parses as is; what does not parse is refused. */
    ASSERT_EQ(json_load_stored("{\"a\":-0.0}", &v), JOBD_OK);
    expect(v, 0, "{\"a\":-0.0}");
    ASSERT_EQ(json_load_stored("{\"a\":", &v), JOBD_E_INVALID);
    ASSERT_NULL(v);
    ASSERT_EQ(json_load_stored("[1e400]", &v), JOBD_E_INVALID);
    ASSERT_NULL(v);
}
