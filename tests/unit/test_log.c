/*
 * test_log.c — the one logger (util/log): the exact text and json lines,
 * escaping of everything a client could have sent (control characters,
 * ANSI escapes, forged newlines, quotes, invalid UTF-8), lines cut at
 * LOG_LINE_MAX that stay well formed, levels, and whole lines from many
 * threads through one pipe.
 */
#include <jansson.h>
#include <pthread.h>

#include "test.h"
#include "util/log.h"

#define T0 INT64_C(1796220197120000) /* 2026-12-02T14:03:17.120Z */

static char line[LOG_LINE_MAX];

static const char *
fmt_line(enum log_format f, const char *msg, const struct log_field *fs, size_t n)
{
    size_t len = log_format_line(line, f, T0, LOGL_INFO, "worker", msg, fs, n);
    ASSERT(len > 0 && len <= LOG_LINE_MAX && line[len - 1] == '\n');
    ASSERT(memchr(line, '\n', len) == line + len - 1); /* one line, always */
    line[len] = '\0';
    return line;
}

TEST(text_line_form)
{
    struct log_field f[] = {LF_INT("job", 12), LF_STR("queue", "default"), LF_DBL("ms", 1.5),
                            LF_STR("note", "two words"), LF_STR("empty", "")};
    ASSERT_STR_EQ(fmt_line(LOG_TEXT, "lost the lease", f, 5),
                  "2026-12-02T14:03:17.120Z info worker: lost the lease job=12 queue=default "
                  "ms=1.5 note=\"two words\" empty=\"\"\n");
}

TEST(json_line_form)
{
    struct log_field f[] = {LF_INT("job", 12), LF_STR("queue", "default"), LF_DBL("ms", 1.5)};
    ASSERT_STR_EQ(fmt_line(LOG_JSON, "lost the lease", f, 3),
                  "{\"ts\":\"2026-12-02T14:03:17.120Z\",\"level\":\"info\",\"component\":"
                  "\"worker\",\"msg\":\"lost the lease\",\"job\":12,\"queue\":\"default\","
                  "\"ms\":1.5}\n");
}

/* LF_TRACE (docs/API.md, Trace context): the trace id, or no field at all. */
TEST(trace_field_only_with_a_traceparent)
{
    struct log_field f[] = {LF_INT("job", 12),
                            LF_TRACE("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
                            LF_TRACE(NULL), LF_TRACE(""), LF_TRACE("00-short")};
    ASSERT_STR_EQ(fmt_line(LOG_TEXT, "job dead", f, 5),
                  "2026-12-02T14:03:17.120Z info worker: job dead job=12 "
                  "trace_id=4bf92f3577b34da6a3ce929d0e0e4736\n");
    ASSERT_STR_EQ(fmt_line(LOG_JSON, "job dead", f, 5),
                  "{\"ts\":\"2026-12-02T14:03:17.120Z\",\"level\":\"info\",\"component\":"
                  "\"worker\",\"msg\":\"job dead\",\"job\":12,"
                  "\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\"}\n");
}

/* What a client may put in a path or a queue name must not reach a terminal
 * or a log reader as anything but inert text. */
TEST(text_escapes_client_bytes)
{
    const char *evil = "a\nb\r\t\x1b[31mred\x7f\\\"=\xc2\x9b\xff\xc3\xa9";
    struct log_field f[] = {LF_STR("path", evil)};
    ASSERT_STR_EQ(fmt_line(LOG_TEXT, evil, f, 1),
                  "2026-12-02T14:03:17.120Z info worker: a\\nb\\r\\t\\x1b[31mred\\x7f\\\\\"="
                  "\\xc2\\x9b\\xff\xc3\xa9 path=\"a\\nb\\r\\t\\x1b[31mred\\x7f\\\\\\\"="
                  "\\xc2\\x9b\\xff\xc3\xa9\"\n");
}

TEST(json_escapes_and_parses_back)
{
    const char *evil = "a\nb\x01\x1b[0m\"\\\x7f\xc2\x9b\xff\xc3\xa9";
    struct log_field f[] = {LF_STR("path", evil), LF_STR("null", NULL), LF_DBL("nan", 0.0 / 0.0)};
    const char *l = fmt_line(LOG_JSON, evil, f, 3);
    for (const char *p = l; *p != '\n'; p++)
        ASSERT((unsigned char)*p >= 0x20 && *p != 0x7f);
    json_error_t je;
    json_t *o = json_loads(l, 0, &je);
    if (o == NULL)
        TEST_FAIL("not JSON: %s: %s", je.text, l);
    /* Valid characters survive exactly; the invalid byte becomes U+FFFD. */
    ASSERT_STR_EQ(json_string_value(json_object_get(o, "path")),
                  "a\nb\x01\x1b[0m\"\\\x7f\xc2\x9b\xef\xbf\xbd\xc3\xa9");
    ASSERT_STR_EQ(json_string_value(json_object_get(o, "msg")),
                  json_string_value(json_object_get(o, "path")));
    ASSERT_STR_EQ(json_string_value(json_object_get(o, "null")), "");
    ASSERT(json_is_null(json_object_get(o, "nan")));
    json_decref(o);
}

TEST(long_lines_are_cut_but_well_formed)
{
    static char big[3 * LOG_LINE_MAX];
    for (size_t cut = 0; cut < 300; cut += 7) {
        /* Vary the length so the cut lands inside the key, the value, an
         * escape and a multi-byte character in turn. */
        size_t n = LOG_LINE_MAX - 200 + cut;
        for (size_t i = 0; i < n; i++)
            big[i] = "ab\n\xc3\xa9\""[i % 6];
        big[n - (n % 6 == 4)] = '\0'; /* never end inside the two-byte é */
        struct log_field f[] = {LF_INT("n", 1), LF_STR("v", big), LF_INT("after", 2)};
        const char *t = fmt_line(LOG_TEXT, "m", f, 3);
        ASSERT(strstr(t, " truncated=true\n") != NULL);
        ASSERT(strstr(t, "after=") == NULL);
        const char *j = fmt_line(LOG_JSON, "m", f, 3);
        json_error_t je;
        json_t *o = json_loads(j, 0, &je);
        if (o == NULL)
            TEST_FAIL("cut line %zu not JSON: %s", n, je.text);
        ASSERT(json_is_true(json_object_get(o, "truncated")));
        json_decref(o);
        /* The message itself too long. */
        j = fmt_line(LOG_JSON, big, NULL, 0);
        o = json_loads(j, 0, &je);
        if (o == NULL)
            TEST_FAIL("cut message %zu not JSON: %s", n, je.text);
        json_decref(o);
    }
}

TEST(parse_and_levels)
{
    enum log_level l;
    enum log_format f;
    ASSERT(log_parse_level("warn", &l) && l == LOGL_WARN);
    ASSERT(log_parse_level("debug", &l) && l == LOGL_DEBUG);
    ASSERT(!log_parse_level("WARN", &l) && !log_parse_level("verbose", &l));
    ASSERT(log_parse_format("json", &f) && f == LOG_JSON);
    ASSERT(!log_parse_format("xml", &f));
    enum log_access a;
    ASSERT(log_parse_access("notable", &a) && a == LOG_ACCESS_NOTABLE);
    ASSERT(log_parse_access("all", &a) && a == LOG_ACCESS_ALL);
    ASSERT(log_parse_access("on", &a) && a == LOG_ACCESS_ALL); /* the older spelling */
    ASSERT(log_parse_access("off", &a) && a == LOG_ACCESS_OFF);
    ASSERT(!log_parse_access("maybe", &a) && !log_parse_access(NULL, &a));
    ASSERT(log_access_mode() == LOG_ACCESS_NOTABLE); /* the default */
    log_configure(LOG_TEXT, LOGL_WARN, LOG_ACCESS_OFF);
    ASSERT(!log_enabled(LOGL_INFO) && log_enabled(LOGL_WARN) && log_enabled(LOGL_ERROR));
    ASSERT(log_access_mode() == LOG_ACCESS_OFF);
}

static void *
spam(void *arg)
{
    char v[3000];
    memset(v, 'a' + (int)(intptr_t)arg, sizeof v - 1);
    v[sizeof v - 1] = '\0';
    for (int i = 0; i < 200; i++)
        log_at(LOGL_INFO, "t", "m", LF_STR("v", v));
    return NULL;
}

/* Lines of 3 KB from 4 threads through a pipe arrive whole: one write each. */
TEST(threads_never_interleave)
{
    int p[2];
    ASSERT(pipe(p) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 2);
        close(p[0]);
        log_configure(LOG_TEXT, LOGL_INFO, LOG_ACCESS_ALL);
        pthread_t th[4];
        for (intptr_t i = 0; i < 4; i++)
            pthread_create(&th[i], NULL, spam, (void *)i);
        for (int i = 0; i < 4; i++)
            pthread_join(th[i], NULL);
        _exit(0);
    }
    close(p[1]);
    FILE *in = fdopen(p[0], "r");
    static char buf[LOG_LINE_MAX * 2];
    int lines = 0;
    while (fgets(buf, sizeof buf, in) != NULL) {
        const char *v = strstr(buf, " v=");
        ASSERT(v != NULL && strlen(v) == 3 + 2999 + 1);
        for (int k = 0; k < 2999; k++)
            if (v[3 + k] != v[3])
                TEST_FAIL("line %d mixes two writers", lines);
        lines++;
    }
    fclose(in);
    int st;
    waitpid(pid, &st, 0);
    ASSERT_EQ(lines, 800);
}
