/*
 * test_store_open.c — store_open on each kind of URL (store.c): an http://
 * URL opens the remote store (and fails as unreachable, not as an unknown
 * scheme, when nobody listens), an unknown scheme is refused by name, and a
 * SQLite file opens with the capabilities that tell its backend apart. Here
 * rather than in tests/unit/ because it opens a real store; the URL map
 * itself is tests/unit/test_store_url.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "test.h"

TEST(http_opens_the_remote_store)
{
    struct store *st = NULL;
    struct jobd_error err = {0};
    /* Port 1 on loopback: refused at once. */
    ASSERT_EQ(store_open("http://127.0.0.1:1", &st, &err), JOBD_E_UNAVAILABLE);
    ASSERT(st == NULL);
    ASSERT_EQ(store_open("ftp://x/y", &st, &err), JOBD_E_INVALID);
    ASSERT(strstr(err.msg, "unknown store URL scheme") != NULL);
}

TEST(sqlite_caps_say_what_differs)
{
    struct store *st = NULL;
    struct jobd_error err = {0};
    char url[1100]; /* in the case's own folder, which the harness removes */
    snprintf(url, sizeof url, "sqlite:%s", test_path("j.db"));
    ASSERT_EQ(store_open(url, &st, &err), JOBD_OK);
    const struct store_caps *c = store_caps(st);
    ASSERT(!c->push_wakeups);
    ASSERT(!c->parallel_writers);
    ASSERT(c->blind_poll_ms > 0 && c->watched_poll_ms >= c->blind_poll_ms);
    ASSERT_STR_EQ(c->label, "SQLite");
    store_close(st);
}
