/*
 * test_store_url.c — the one URL-to-backend map (store.c): what each URL
 * names, without opening anything. Opening a store of each kind is
 * tests/integration/test_store_open.c.
 */
#include <stddef.h>

#include "store/store.h"
#include "test.h"

TEST(url_kinds)
{
    ASSERT_EQ(store_url_kind("postgres://u@h/db"), STORE_URL_DATABASE);
    ASSERT_EQ(store_url_kind("postgresql://u@h/db"), STORE_URL_DATABASE);
    ASSERT_EQ(store_url_kind("sqlite:jobs.db"), STORE_URL_DATABASE);
    ASSERT_EQ(store_url_kind("./jobs.db"), STORE_URL_DATABASE);
    ASSERT_EQ(store_url_kind("http://127.0.0.1:8080"), STORE_URL_SERVER);
    ASSERT_EQ(store_url_kind("https://jobs.example.org"), STORE_URL_SERVER);
    ASSERT_EQ(store_url_kind("mysql://h/db"), STORE_URL_INVALID);
    ASSERT_EQ(store_url_kind(""), STORE_URL_INVALID);
    ASSERT_EQ(store_url_kind(NULL), STORE_URL_INVALID);
}
