/*
 * test_store_redact.c — store_url_redact: the password of a store URL never
 * reaches a message (userinfo, password= parameters, keyword strings), and
 * everything else is kept.
 */
#include "store/store.h"
#include "test.h"

static const char *
red(const char *url)
{
    static char buf[256];
    return store_url_redact(url, buf, sizeof buf);
}

TEST(userinfo_password)
{
    ASSERT_STR_EQ(red("postgresql://jobd:s3cret@db.example:5432/jobs"),
                  "postgresql://jobd:***@db.example:5432/jobs");
    ASSERT_STR_EQ(red("postgres://u:p%40ss@h/d?sslmode=require"),
                  "postgres://u:***@h/d?sslmode=require");
    /* an '@' in the password itself: userinfo ends at the last one */
    ASSERT_STR_EQ(red("postgres://u:a@b@h/d"), "postgres://u:***@h/d");
}

TEST(password_parameter)
{
    ASSERT_STR_EQ(red("postgresql://h/d?user=u&password=s3cret&sslmode=require"),
                  "postgresql://h/d?user=u&password=***&sslmode=require");
    ASSERT_STR_EQ(red("postgresql://h/d?password=s3cret"), "postgresql://h/d?password=***");
    ASSERT_STR_EQ(red("host=h password=s3cret dbname=d"), "host=h password=*** dbname=d");
}

/* A URL short of its "//" still hides its password (issue 27, item 8). */
TEST(scheme_without_slashes)
{
    ASSERT_STR_EQ(red("postgres:/u:s3cret@h/d"), "postgres:/u:***@h/d");
    ASSERT_STR_EQ(red("postgresql:u:s3cret@h/d"), "postgresql:u:***@h/d");
    ASSERT_STR_EQ(red("mysql://u:s3cret@h/d"), "mysql://u:***@h/d");
    ASSERT_EQ(store_url_kind("postgres:/u:s3cret@h/d"), STORE_URL_INVALID);
    ASSERT_EQ(store_url_kind("Postgresql:u:s3cret@h/d"), STORE_URL_INVALID);
    ASSERT_EQ(store_url_kind("C:jobs.db"), STORE_URL_DATABASE);
}

TEST(nothing_to_hide)
{
    ASSERT_STR_EQ(red("postgresql://jobd@127.0.0.1:5432/postgres"),
                  "postgresql://jobd@127.0.0.1:5432/postgres");
    ASSERT_STR_EQ(red("sqlite:/var/lib/jobd/jobd.db"), "sqlite:/var/lib/jobd/jobd.db");
    ASSERT_STR_EQ(red("jobd.db"), "jobd.db");
    ASSERT_STR_EQ(red("postgresql://h/d?no_password=x"), "postgresql://h/d?no_password=x");
}

TEST(short_buffer_is_cut_not_overrun)
{
    char buf[12];
    ASSERT_STR_EQ(store_url_redact("postgresql://u:secret@h/d", buf, sizeof buf), "postgresql:");
}
