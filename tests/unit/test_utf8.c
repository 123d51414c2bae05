/*
 * test_utf8.c — core/utf8: what is well-formed (RFC 3629 edge cases), bad
 * bytes replaced by U+FFFD, and cuts that never split a character at
 * either end.
 */
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "test.h"

#define FFFD "\xEF\xBF\xBD"

TEST(valid_and_invalid)
{
    ASSERT(utf8_valid("", 0));
    ASSERT(utf8_valid("plain", 5));
    ASSERT(utf8_valid("\xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", 14));
    ASSERT(!utf8_valid("a\0b", 3));             /* NUL */
    ASSERT(!utf8_valid("\xFF\xFE", 2));         /* never in UTF-8 */
    ASSERT(!utf8_valid("\x80", 1));             /* stray continuation */
    ASSERT(!utf8_valid("\xC0\xAF", 2));         /* overlong '/' */
    ASSERT(!utf8_valid("\xE0\x80\xAF", 3));     /* overlong */
    ASSERT(!utf8_valid("\xED\xA0\x80", 3));     /* surrogate U+D800 */
    ASSERT(!utf8_valid("\xF4\x90\x80\x80", 4)); /* past U+10FFFF */
    ASSERT(!utf8_valid("\xE2\x82", 2));         /* truncated */
    ASSERT(utf8_valid("\xF4\x8F\xBF\xBF", 4));  /* U+10FFFF */
}

TEST(bad_bytes_become_replacement_characters)
{
    const char in[] = "bad \xFF\xFE bytes\xE2\x82";
    char *s = utf8_clean(in, sizeof in - 1, 4096, UTF8_KEEP_TAIL);
    ASSERT_STR_EQ(s, "bad " FFFD FFFD " bytes" FFFD FFFD);
    ASSERT(utf8_valid(s, strlen(s)));
    free(s);
    s = utf8_clean("a\0b", 3, 100, UTF8_KEEP_HEAD);
    ASSERT_STR_EQ(s, "a" FFFD "b");
    free(s);
}

TEST(tail_cut_keeps_whole_characters)
{
    /* 2000 euro signs (3 bytes each): the last 4096 bytes start inside one. */
    size_t n = 2000 * 3;
    char *in = malloc(n);
    for (size_t i = 0; i < n; i += 3)
        memcpy(in + i, "\xE2\x82\xAC", 3);
    char *s = utf8_clean(in, n, 4096, UTF8_KEEP_TAIL);
    ASSERT(utf8_valid(s, strlen(s)));
    ASSERT_EQ(strlen(s), (size_t)4095); /* 1365 whole characters */
    ASSERT(strstr(s, FFFD) == NULL);    /* the split one was dropped, not replaced */
    free(s);
    s = utf8_clean(in, n, 4096, UTF8_KEEP_HEAD);
    ASSERT_EQ(strlen(s), (size_t)4095);
    ASSERT(strstr(s, FFFD) == NULL);
    free(s);
    free(in);
}

TEST(replacements_count_against_the_cap)
{
    /* 4096 bad bytes would become 12 KiB of U+FFFD: still at most 4096. */
    char in[4096];
    memset(in, 0xFF, sizeof in);
    char *s = utf8_clean(in, sizeof in, 4096, UTF8_KEEP_TAIL);
    ASSERT(strlen(s) <= 4096);
    ASSERT_EQ(strlen(s) % 3, (size_t)0);
    ASSERT(utf8_valid(s, strlen(s)));
    free(s);
}

TEST(short_text_is_unchanged)
{
    char *s = utf8_clean("exit status 1", 13, 4096, UTF8_KEEP_TAIL);
    ASSERT_STR_EQ(s, "exit status 1");
    free(s);
    s = utf8_clean("", 0, 4096, UTF8_KEEP_HEAD);
    ASSERT_STR_EQ(s, "");
    free(s);
}
