/*
 * test_json.c — the strict JSON rules and the canonical form: canonical
 * output table, idempotence, every refusal (with field, line and column),
 * the depth limit (including 100,000-deep nesting), size limits, invalid
 * UTF-8, and the result helpers the worker uses.
 */
#include <stdlib.h>

#include "core/err.h"
#include "core/job.h"
#include "core/json.h"
#include "test.h"

static char *
canon(const char *in)
{
    struct jobd_error e = {0};
    char *out = NULL;
    int rc = json_canonical(in, strlen(in), JOB_PAYLOAD_MAX, &out, "payload", &e);
    if (rc != JOBD_OK)
        TEST_FAIL("'%s' refused: %s", in, e.msg);
    return out;
}

TEST(canonical_table)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"{}", "{}"},
        {"[]", "[]"},
        {" { \"b\" : 1 , \"a\" : [ 1 , 2 ] }\n", "{\"a\":[1,2],\"b\":1}"},
        {"{\"b\":{\"d\":1,\"c\":2},\"a\":null}", "{\"a\":null,\"b\":{\"c\":2,\"d\":1}}"},
        {"{\"B\":1,\"a\":2,\"_\":3}", "{\"B\":1,\"_\":3,\"a\":2}"}, /* byte order */
        {"\"text\"", "\"text\""},
        {"42", "42"},
        {"-0", "0"},
        {"true", "true"},
        {"false", "false"},
        {"null", "null"},
        {"9223372036854775807", "9223372036854775807"},
        {"-9223372036854775808", "-9223372036854775808"},
        {"0.1", "0.1"},
        {"1.0", "1.0"},
        {"-0.0", "-0.0"},
        {"1.5", "1.5"},
        {"1e2", "100.0"},
        {"1E300", "1e300"},
        {"1e-7", "1e-7"},
        {"1.5e-6", "0.0000015"},
        {"-150.0", "-150.0"},
        {"1e20", "100000000000000000000.0"},
        {"1e21", "1e21"},
        {"-1.25e22", "-1.25e22"},
        {"0.000123", "0.000123"},
        {"1.7976931348623157e308", "1.7976931348623157e308"},
        {"5e-324", "5e-324"},
        {"123456789.125", "123456789.125"},
        {"0.30000000000000004", "0.30000000000000004"},
        {"2.5e-300", "2.5e-300"},
        {"\"\\u00e9\"", "\"\xc3\xa9\""}, /* escapes become UTF-8 */
        {"\"\xc3\xa9\"", "\"\xc3\xa9\""},
        {"\"\\ud83d\\ude00\"", "\"\xf0\x9f\x98\x80\""}, /* surrogate pair */
        {"\"\\/\"", "\"/\""},
        {"\"a\\\"b\\\\c\"", "\"a\\\"b\\\\c\""},
        {"\"\\b\\f\\n\\r\\t\"", "\"\\b\\f\\n\\r\\t\""},
        {"\"\\u0001\\u001f\\u007f\"", "\"\\u0001\\u001f\x7f\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *c = canon(cases[i].in);
        if (strcmp(c, cases[i].out) != 0)
            TEST_FAIL("'%s' -> '%s', want '%s'", cases[i].in, c, cases[i].out);
        /* Canonical form is a fixed point. */
        char *c2 = canon(c);
        ASSERT_STR_EQ(c2, c);
        free(c2);
        free(c);
    }
}

TEST(reals_round_trip)
{
    /* Random bit patterns (finite ones) printed with 17 digits come back
     * bit-identical through the shortest canonical form. */
    uint64_t state = 99;
    int tried = 0;
    while (tried < 3000) {
        uint64_t z = (state += UINT64_C(0x9E3779B97F4A7C15));
        z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
        z ^= z >> 31;
        double d;
        memcpy(&d, &z, sizeof d);
        if (d != d || d - d != 0) /* NaN or infinite */
            continue;
        tried++;
        char in[40];
        snprintf(in, sizeof in, "%.17g", d);
        if (strchr(in, '.') == NULL && strchr(in, 'e') == NULL)
            snprintf(in + strlen(in), sizeof in - strlen(in), ".0");
        char *c = canon(in);
        if (strtod(c, NULL) != d || strlen(c) > strlen(in) + 25)
            TEST_FAIL("%s -> %s", in, c);
        free(c);
    }
}

TEST(equal_documents_canonicalise_equal)
{
    char *a = canon("{\"to\": \"a@b.c\", \"n\": [1, 2.50, {\"y\": true, \"x\": false}]}");
    char *b = canon("{\"n\":[1,2.5,{\"x\":false,\"y\":true}],\"to\":\"a@b.c\"}");
    ASSERT_STR_EQ(a, b);
    free(a);
    free(b);
}

static void
expect_refused(const char *in, size_t len, size_t max, int code, const char *msg_part)
{
    struct jobd_error e = {0};
    char *out = (char *)"unchanged";
    int rc = json_canonical(in, len, max, &out, "payload", &e);
    if (rc != code)
        TEST_FAIL("'%.60s': rc %d (%s), want %d", in, rc, e.msg, code);
    ASSERT_NULL(out);
    ASSERT_STR_EQ(e.field, "payload");
    ASSERT(strncmp(e.msg, "payload: ", 9) == 0);
    if (msg_part != NULL && strstr(e.msg, msg_part) == NULL)
        TEST_FAIL("'%.60s': message '%s' lacks '%s'", in, e.msg, msg_part);
}

TEST(path_at_names_where)
{
    static const struct {
        const char *text, *path;
    } cases[] = {
        {"1", ""},
        {"{\"a\":1", "a"},
        {"{\"a\":1}", ""},
        {"{\"a\":{\"b\":[0,1,", "a.b[2]"},
        {"{\"jobs\":[{\"type\":\"t\"},{\"payload\":{\"s\":\"[,{\\\"\",\"n\":", "jobs[1].payload.n"},
        {"{\"a\":[1,2],\"b\":", "b"},
        {"[[1],[2,{\"x\":", "[1][1].x"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[64];
        const char *t = cases[i].text;
        json_path_at(t, strlen(t), strlen(t), buf, sizeof buf);
        if (strcmp(buf, cases[i].path) != 0)
            TEST_FAIL("%s: path '%s', want '%s'", t, buf, cases[i].path);
    }
    char small[8];
    json_path_at("{\"abcdefghij\":1", 15, 15, small, sizeof small);
    ASSERT_STR_EQ(small, "abcdefg");
}

TEST(refusals_say_line_and_column)
{
    static const struct {
        const char *in;
        const char *msg_part;
    } bad[] = {
        {"{\"a\":1,\"a\":2}", "duplicate"},
        {"{\"x\":{\"a\":1,\"b\":2,\"a\":3}}", "duplicate"},
        {"{\"a\":1,}", "line 1, column"},
        {"{\n  \"a\": tru\n}", "line 2, column"},
        {"[1, 2", "line 1"},
        {"{'a':1}", "invalid JSON"},
        {"01", "invalid JSON"},
        {"1.", "invalid JSON"},
        {"NaN", "invalid JSON"},
        {"Infinity", "invalid JSON"},
        {"[1] [2]", "invalid JSON"},
        {"{} x", "invalid JSON"},
        {"\"unterminated", "invalid JSON"},
        {"\"tab\tinside\"", "invalid JSON"},
        {"\"\\x41\"", "invalid JSON"},
        {"\"\\ud83d\"", "invalid JSON"}, /* lone surrogate */
        {"\"\\u0000\"", "invalid JSON"}, /* NUL in a string */
        {"{\"k\\u0000\":1}", "invalid JSON"},
        {"9223372036854775808", "does not fit"}, /* past int64 */
        {"1e400", "does not fit"},               /* real overflow */
        {"{\"a\":[1,99999999999999999999]}", "column 28 at a[1]"},
        {"\"\xff\"", "invalid JSON"},         /* invalid UTF-8 */
        {"\"\xc3\"", "invalid JSON"},         /* truncated sequence */
        {"\"\xc0\xaf\"", "invalid JSON"},     /* overlong */
        {"\"\xed\xa0\x80\"", "invalid JSON"}, /* encoded surrogate */
        {"", "empty"},
        {"  \n ", "empty"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_refused(bad[i].in, strlen(bad[i].in), 1024, JOBD_E_INVALID, bad[i].msg_part);
    /* A NUL byte inside the buffer is not the end of the text. */
    expect_refused("{}\0{}", 5, 1024, JOBD_E_INVALID, "invalid JSON");
    /* NULL text and NULL field. */
    struct jobd_error e = {0};
    char *out;
    ASSERT_EQ(json_canonical(NULL, 0, 10, &out, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "json");
}

static char *
nested(int depth, const char *open, const char *close, const char *inner)
{
    size_t lo = strlen(open), lc = strlen(close), li = strlen(inner);
    char *s = malloc((size_t)depth * (lo + lc) + li + 1), *p = s;
    for (int i = 0; i < depth; i++, p += lo)
        memcpy(p, open, lo);
    memcpy(p, inner, li);
    p += li;
    for (int i = 0; i < depth; i++, p += lc)
        memcpy(p, close, lc);
    *p = '\0';
    return s;
}

TEST(depth_limit)
{
    char *ok = nested(JSON_DEPTH_MAX, "[", "]", "1");
    char *c = canon(ok);
    ASSERT_STR_EQ(c, ok);
    free(c);
    free(ok);
    char *obj = nested(JSON_DEPTH_MAX, "{\"k\":", "}", "[]");
    /* 64 objects + the innermost array = 65 levels: one too many. */
    expect_refused(obj, strlen(obj), JOB_PAYLOAD_MAX, JOBD_E_INVALID, "deeper than 64");
    free(obj);
    char *over = nested(JSON_DEPTH_MAX + 1, "[", "]", "");
    expect_refused(over, strlen(over), JOB_PAYLOAD_MAX, JOBD_E_INVALID, "line 1, column 65");
    free(over);
    /* Brackets inside strings do not count, escaped quotes do not end them. */
    char *s = nested(1, "[\"", "\"]",
                     "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
                     "[[[[[[[[[[[[[[\\\"[[[[[[[[[[[[[");
    c = canon(s);
    free(c);
    free(s);
}

TEST(depth_100000_refused_cleanly)
{
    /* Deep enough to overflow the stack of a naive recursive parser; also
     * unbalanced (never closed), and as objects. */
    char *s = nested(100000, "[", "]", "0");
    expect_refused(s, strlen(s), SIZE_MAX, JOBD_E_INVALID, "deeper than 64");
    free(s);
    s = nested(100000, "{\"a\":", "}", "0");
    expect_refused(s, strlen(s), SIZE_MAX, JOBD_E_INVALID, "deeper than 64");
    free(s);
    s = nested(100000, "[", "", "");
    json_t *v = (json_t *)1;
    struct jobd_error e = {0};
    ASSERT_EQ(json_parse_strict(s, strlen(s), SIZE_MAX, &v, "body", &e), JOBD_E_INVALID);
    ASSERT_NULL(v);
    ASSERT_STR_EQ(e.field, "body");
    free(s);
}

TEST(size_limits)
{
    expect_refused("[1,2,3]", 7, 6, JOBD_E_TOOBIG, "over the limit of 6 bytes");
    struct jobd_error e = {0};
    char *out = NULL;
    ASSERT_OK(json_canonical("[1,2,3]", 7, 7, &out, "payload", &e), &e);
    ASSERT_STR_EQ(out, "[1,2,3]");
    free(out);
    /* The canonical form is checked too ("1e2" grows to "100.0"). */
    ASSERT_EQ(json_canonical("1e2", 3, 4, &out, "payload", &e), JOBD_E_TOOBIG);
    ASSERT_STR_EQ(e.field, "payload");
    ASSERT_NULL(out);
    /* The payload limit: a 256 KiB string value is fine at exactly the
     * limit, refused one byte over. */
    size_t n = JOB_PAYLOAD_MAX;
    char *big = malloc(n + 2);
    memset(big, 'x', n + 1);
    big[0] = '"';
    big[n - 1] = '"';
    ASSERT_OK(json_canonical(big, n, JOB_PAYLOAD_MAX, &out, "payload", &e), &e);
    ASSERT_EQ(strlen(out), n);
    free(out);
    big[n - 1] = 'x';
    big[n] = '"';
    expect_refused(big, n + 1, JOB_PAYLOAD_MAX, JOBD_E_TOOBIG, "262145 bytes");
    free(big);
}

TEST(parse_strict_and_value_canonical)
{
    struct jobd_error e = {0};
    json_t *v = NULL;
    const char *body = "{\"type\":\"t\",\"payload\":{\"z\":1,\"a\":[0.5,\"s\"]}}";
    ASSERT_OK(json_parse_strict(body, strlen(body), 1024, &v, "body", &e), &e);
    char *out = NULL;
    ASSERT_OK(json_value_canonical(json_object_get(v, "payload"), 1024, &out, "payload", &e), &e);
    ASSERT_STR_EQ(out, "{\"a\":[0.5,\"s\"],\"z\":1}");
    free(out);
    ASSERT_EQ(json_value_canonical(v, 10, &out, "payload", &e), JOBD_E_TOOBIG);
    ASSERT_NULL(out);
    ASSERT_STR_EQ(e.field, "payload");
    json_decref(v);

    /* Values built in code: too deep, not finite, NULL. */
    json_t *deep = json_array();
    json_t *cur = deep;
    for (int i = 0; i < JSON_DEPTH_MAX + 5; i++) {
        json_t *inner = json_array();
        json_array_append_new(cur, inner);
        cur = inner;
    }
    ASSERT_EQ(json_value_canonical(deep, JOB_PAYLOAD_MAX, &out, "p", &e), JOBD_E_INVALID);
    ASSERT_NULL(out);
    json_decref(deep);
    ASSERT_EQ(json_value_canonical(NULL, 100, &out, "p", &e), JOBD_E_INVALID);
}

TEST(result_helpers)
{
    static const struct {
        const char *in;
        bool ok;
        const char *canon;
    } cases[] = {
        {"{\"ok\": true}\n", true, "{\"ok\":true}"},
        {"42\n", true, "42"},
        {"\"done\"", true, "\"done\""},
        {"", false, NULL},
        {"\n", false, NULL},
        {"not json\n", false, NULL},
        {"{\"a\":1}\n{\"b\":2}\n", false, NULL}, /* JSON lines are not one value */
        {"{\"a\":1,\"a\":1}", false, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = strlen(cases[i].in);
        ASSERT_EQ(json_result_ok(cases[i].in, len), cases[i].ok);
        char *out = NULL;
        struct jobd_error e = {0};
        int rc = json_result_canonical(cases[i].in, len, &out, &e);
        if (cases[i].ok) {
            ASSERT_OK(rc, &e);
            ASSERT_STR_EQ(out, cases[i].canon);
        } else {
            ASSERT_NE(rc, JOBD_OK);
            ASSERT_NULL(out);
            ASSERT_STR_EQ(e.field, "result");
        }
        free(out);
    }
    /* 64 KiB is the limit for results. */
    size_t n = JOB_RESULT_MAX + 1;
    char *big = malloc(n);
    memset(big, ' ', n);
    big[0] = '1';
    ASSERT(!json_result_ok(big, n));
    ASSERT(json_result_ok(big, n - 1));
    ASSERT(!json_result_ok(NULL, 0));
    free(big);
}
