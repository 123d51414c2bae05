/*
 * utf8.c — see utf8.h. One decoder decides what a well-formed sequence is
 * (RFC 3629, table 3-7 of the Unicode standard); validation and cleaning
 * both use it, so they can never disagree.
 */
#include "core/utf8.h"

#include <stdlib.h>
#include <string.h>

static const char REPLACEMENT[] = "\xEF\xBF\xBD"; /* U+FFFD */

/* Length (1..4) of the well-formed sequence at p (n bytes left), or 0. */
static size_t
seq_len(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    if (c >= 0x01 && c <= 0x7F)
        return 1;
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF; /* bounds of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0)
            lo = 0xA0; /* no overlong forms */
        else if (c == 0xED)
            hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F; /* nothing past U+10FFFF */
    } else {
        return 0; /* NUL, a continuation byte, C0, C1, F5..FF */
    }
    if (n < need || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < need; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return need;
}

bool
utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t k = seq_len(p + i, len - i);
        if (k == 0)
            return false;
        i += k;
    }
    return true;
}

static bool
is_continuation(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

char *
utf8_clean(const char *s, size_t len, size_t max, enum utf8_keep keep)
{
    const unsigned char *p = (const unsigned char *)s;
    /* Only what can survive the cut is looked at: cleaning never makes a
     * text shorter, so at most max bytes of the input matter. */
    if (len > max) {
        if (keep == UTF8_KEEP_TAIL) {
            p += len - max;
            len = max;
            for (int i = 0; i < 3 && len > 0 && is_continuation(*p); i++) {
                p++; /* the rest of a character cut at its start */
                len--;
            }
        } else if (len > max + 3) {
            len = max + 3; /* a character across the cut stays whole, then goes */
        }
    }
    /* Each bad byte becomes 3: the worst case is three times the input. */
    char *out = malloc(len * 3 + 1);
    if (out == NULL)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t k = seq_len(p + i, len - i);
        if (k == 0) {
            memcpy(out + o, REPLACEMENT, 3);
            o += 3;
            i++;
        } else {
            memcpy(out + o, p + i, k);
            o += k;
            i += k;
        }
    }
    /* Cut to max on a character boundary (out is well-formed now). */
    if (o > max) {
        if (keep == UTF8_KEEP_TAIL) {
            size_t from = o - max;
            while (from < o && is_continuation((unsigned char)out[from]))
                from++;
            memmove(out, out + from, o - from);
            o -= from;
        } else {
            size_t to = max;
            while (to > 0 && is_continuation((unsigned char)out[to]))
                to--;
            o = to;
        }
    }
    out[o] = '\0';
    return out;
}
