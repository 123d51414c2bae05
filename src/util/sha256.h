/*
 * sha256.h — SHA-256 (FIPS 180-4), self-contained, for what jobd keeps only
 * hashed: the lease tokens of remote workers (docs/API.md, Remote workers).
 * No library is linked for it: libcurl, jansson and GnuTLS are loaded
 * lazily and the server must not need one of them for this.
 */
#ifndef JOBD_UTIL_SHA256_H
#define JOBD_UTIL_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32
/* The hex form's length, without its NUL. */
#define SHA256_HEX_LEN 64

/* The digest of the n bytes at p into out. */
void sha256(const void *p, size_t n, uint8_t out[SHA256_LEN]);
/* The digest of the NUL-terminated s as lowercase hex into out (65 bytes). */
void sha256_hex(const char *s, char out[SHA256_HEX_LEN + 1]);
/* n bytes as lowercase hex into out (2n + 1 bytes). */
void hex_encode(const uint8_t *p, size_t n, char *out);

/*
 * n cryptographically random bytes from the kernel (getrandom, else
 * /dev/urandom). False if neither gives them: the caller must not make a
 * secret of what it got.
 */
bool random_bytes(void *buf, size_t n);

#endif
