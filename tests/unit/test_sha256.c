/*
 * test_sha256.c — util/sha256.c against the FIPS 180-4 examples and
 * lengths around the padding's block boundary (55, 56, 64 bytes), whose
 * digests were taken from sha256sum; and random_bytes.
 */
#include <string.h>

#include "test.h"
#include "util/sha256.h"

static void
expect(const char *in, size_t n, const char *want)
{
    uint8_t d[SHA256_LEN];
    char hex[SHA256_HEX_LEN + 1];
    sha256(in, n, d);
    hex_encode(d, sizeof d, hex);
    ASSERT_STR_EQ(hex, want);
}

TEST(fips_examples)
{
    expect("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    expect(two, strlen(two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex("abc", hex);
    ASSERT_STR_EQ(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(block_boundaries)
{
    char a[130];
    memset(a, 'a', sizeof a);
    expect(a, 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
    expect(a, 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
    expect(a, 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
    expect(a, 119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb");
}

TEST(random_bytes_differ)
{
    uint8_t x[16], y[16];
    ASSERT(random_bytes(x, sizeof x));
    ASSERT(random_bytes(y, sizeof y));
    ASSERT(memcmp(x, y, sizeof x) != 0);
}
