/*
 * test_worker_words.c — shell-style word splitting (worker/words.c) and the
 * bounded output buffers (worker/capbuf.c), table-driven.
 */
#include "test.h"

#include "util/capbuf.h"
#include "worker/words.h"

struct split_case {
    const char *line;
    const char *words[6];
};

static const struct split_case cases[] = {
    {"/bin/cat", {"/bin/cat"}},
    {"  a   b\tc  ", {"a", "b", "c"}},
    {"send --from 'a b' \"c d\"", {"send", "--from", "a b", "c d"}},
    {"a\\ b c", {"a b", "c"}},
    {"'a'\"b\"c", {"abc"}},
    {"x '' y", {"x", "", "y"}},
    {"\"a \\\"q\\\" \\$x \\n\"", {"a \"q\" $x \\n"}},
    {"'no \\ escape'", {"no \\ escape"}},
    {"echo $HOME *.c >out", {"echo", "$HOME", "*.c", ">out"}},
};

TEST(split_table)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char **argv = NULL;
        size_t argc = 0;
        struct jobd_error err = {0};
        ASSERT_OK(words_split(cases[i].line, &argv, &argc, "exec", &err), &err);
        size_t want = 0;
        while (cases[i].words[want] != NULL)
            want++;
        ASSERT_EQ(argc, want);
        for (size_t k = 0; k < want; k++)
            ASSERT_STR_EQ(argv[k], cases[i].words[k]);
        ASSERT_NULL(argv[argc]);
        words_free(argv);
    }
}

TEST(split_errors)
{
    const char *bad[] = {"a 'b", "a \"b", "a\\", "", "   "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char **argv = NULL;
        size_t argc = 0;
        struct jobd_error err = {0};
        ASSERT_EQ(words_split(bad[i], &argv, &argc, "exec", &err), JOBD_E_INVALID);
        ASSERT_NULL(argv);
        ASSERT_STR_EQ(err.field, "exec");
        ASSERT(err.msg[0] != '\0');
    }
}

TEST(headbuf_keeps_first_bytes)
{
    struct headbuf b;
    headbuf_init(&b, 8);
    ASSERT(headbuf_add(&b, "hello", 5));
    ASSERT(!b.overflow);
    ASSERT(headbuf_add(&b, " world", 6));
    ASSERT(b.overflow);
    ASSERT_EQ(b.len, 8);
    ASSERT_STR_EQ(b.data, "hello wo");
    headbuf_fini(&b);
}

TEST(tailbuf_keeps_last_bytes)
{
    struct tailbuf b;
    tailbuf_init(&b, 5);
    char *s = tailbuf_take(&b);
    ASSERT_STR_EQ(s, "");
    free(s);
    ASSERT(tailbuf_add(&b, "abc", 3));
    s = tailbuf_take(&b);
    ASSERT_STR_EQ(s, "abc");
    free(s);
    ASSERT(tailbuf_add(&b, "defg", 4));
    s = tailbuf_take(&b);
    ASSERT_STR_EQ(s, "cdefg");
    free(s);
    ASSERT(tailbuf_add(&b, "0123456789", 10));
    s = tailbuf_take(&b);
    ASSERT_STR_EQ(s, "56789");
    free(s);
    /* many small writes wrapping around */
    for (int i = 0; i < 1000; i++) {
        char c = (char)('a' + i % 26);
        ASSERT(tailbuf_add(&b, &c, 1));
    }
    s = tailbuf_take(&b);
    ASSERT_STR_EQ(s, "hijkl"); /* i = 995..999 -> 995%26=7 'h' */
    free(s);
    tailbuf_fini(&b);
}
