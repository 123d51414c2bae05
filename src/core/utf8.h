/*
 * utf8.h — text that every store takes: valid UTF-8, no NUL, cut on a
 * character boundary.
 *
 * Handlers print whatever bytes they like; PostgreSQL refuses text that is
 * not UTF-8 (and any NUL byte), and SQLite stores it but then every JSON
 * answer that carries it fails. So every path that stores text a handler
 * made (errors, stderr tails) passes it through utf8_clean once, and a
 * result must pass utf8_valid to be one. Pure functions, no I/O.
 */
#ifndef JOBD_CORE_UTF8_H
#define JOBD_CORE_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Which end of an over-long text survives the cut. */
enum utf8_keep {
    UTF8_KEEP_HEAD, /* the first max bytes (a message) */
    UTF8_KEEP_TAIL, /* the last max bytes (stderr: the end says why) */
};

/* True if s[0..len) is well-formed UTF-8 (RFC 3629) without NUL bytes. */
bool utf8_valid(const char *s, size_t len);

/*
 * A clean copy of s[0..len): every byte that does not start a well-formed
 * sequence (a stray continuation byte, a truncated or overlong sequence, a
 * surrogate, anything past U+10FFFF, NUL) becomes U+FFFD; then the text is
 * cut to at most max bytes (max >= 3) on a character boundary, keeping the
 * end keep says. For UTF8_KEEP_TAIL, a character that the cut of the input
 * split at its start is dropped, not replaced. Returns a malloc'd,
 * NUL-terminated string owned by the caller; NULL only on out-of-memory.
 */
char *utf8_clean(const char *s, size_t len, size_t max, enum utf8_keep keep);

#endif
