/*
 * test_worker_config.c — the worker's INI file (worker/config.c): values,
 * defaults, handlers, and errors that name file, line and key.
 */
#include "test.h"

#include "worker/config.h"

static const char *
write_file(const char *name, const char *text)
{
    const char *path = test_path(name);
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fputs(text, f);
    fclose(f);
    return path;
}

TEST(full_example)
{
    const char *path =
        write_file("w.ini", "; comment\n"
                            "[worker]\n"
                            "concurrency = 8            ; jobs run at once\n"
                            "queues = default,mail\n"
                            "lease = 60s\n"
                            "heartbeat = 20s\n"
                            "backoff_base = 250ms\n"
                            "backoff_cap = 15m\n"
                            "shutdown_grace = 1m30s\n"
                            "poll_interval = 2s\n"
                            "id = w-1\n"
                            "\n"
                            "[handler \"email.send\"]\n"
                            "exec = /usr/local/bin/send-email --from 'noreply@example.org'\n"
                            "timeout = 30s\n"
                            "\n"
                            "[handler \"thumbnail\"]\n"
                            "http = http://127.0.0.1:9000/thumbnail\n"
                            "timeout = 2m\n"
                            "[handler \"rel\"]\n"
                            "exec = handlers/x.sh a\n");
    struct worker_config cfg;
    worker_config_init(&cfg);
    struct jobd_error err = {0};
    ASSERT_OK(worker_config_load(&cfg, path, &err), &err);
    ASSERT_OK(worker_config_check(&cfg, &err), &err);
    ASSERT_EQ(cfg.concurrency, 8);
    ASSERT_EQ(cfg.n_queues, 2);
    ASSERT_STR_EQ(cfg.queues[1], "mail");
    ASSERT_EQ(cfg.lease_ms, 60000);
    ASSERT_EQ(cfg.heartbeat_ms, 20000);
    ASSERT_EQ(cfg.backoff_base_ms, 250);
    ASSERT_EQ(cfg.backoff_cap_ms, 900000);
    ASSERT_EQ(cfg.shutdown_grace_ms, 90000);
    ASSERT_EQ(cfg.poll_ms, 2000);
    ASSERT_STR_EQ(cfg.worker_id, "w-1");
    ASSERT_EQ(cfg.n_handlers, 3);
    const struct handler_conf *h = worker_config_handler(&cfg, "email.send");
    ASSERT(h != NULL);
    ASSERT_EQ(h->kind, HANDLER_EXEC);
    ASSERT_STR_EQ(h->argv[0], "/usr/local/bin/send-email");
    ASSERT_STR_EQ(h->argv[2], "noreply@example.org");
    ASSERT_NULL(h->argv[3]);
    ASSERT_EQ(h->timeout_ms, 30000);
    h = worker_config_handler(&cfg, "thumbnail");
    ASSERT_EQ(h->kind, HANDLER_HTTP);
    ASSERT_STR_EQ(h->url, "http://127.0.0.1:9000/thumbnail");
    ASSERT_EQ(h->timeout_ms, 120000);
    h = worker_config_handler(&cfg, "rel");
    char want[1100];
    snprintf(want, sizeof want, "%s/handlers/x.sh", test_tmpdir);
    ASSERT_STR_EQ(h->argv[0], want);
    ASSERT_NULL(worker_config_handler(&cfg, "nope"));

    struct worker_config copy;
    worker_config_init(&copy);
    ASSERT_OK(worker_config_copy(&copy, &cfg), NULL);
    ASSERT_STR_EQ(worker_config_handler(&copy, "email.send")->argv[1], "--from");
    worker_config_fini(&copy);
    worker_config_fini(&cfg);
}

TEST(defaults)
{
    const char *path = write_file("w.ini", "[handler \"a\"]\nexec = /bin/true\n");
    struct worker_config cfg;
    worker_config_init(&cfg);
    struct jobd_error err = {0};
    ASSERT_OK(worker_config_load(&cfg, path, &err), &err);
    ASSERT_EQ(cfg.concurrency, 8);
    ASSERT_NULL(cfg.queues);
    ASSERT_EQ(cfg.lease_ms, 60000);
    ASSERT_EQ(cfg.heartbeat_ms, 20000);
    ASSERT_EQ(cfg.backoff_base_ms, 5000);
    ASSERT_EQ(cfg.backoff_cap_ms, 900000);
    ASSERT_EQ(cfg.shutdown_grace_ms, 30000);
    ASSERT_EQ(worker_config_handler(&cfg, "a")->timeout_ms, 0);
    ASSERT_EQ(cfg.db_connections, 3);
    ASSERT_NULL(cfg.notify_db);
    worker_config_fini(&cfg);
}

TEST(connection_budget_and_notify_db)
{
    const char *path = write_file("nb.ini", "[worker]\ndb_connections = 1\n"
                                            "notify_db = postgres://jobd@db1/jobd\n"
                                            "[handler \"a\"]\nexec = /bin/true\n");
    struct worker_config cfg, copy;
    worker_config_init(&cfg);
    struct jobd_error err = {0};
    ASSERT_OK(worker_config_load(&cfg, path, &err), &err);
    ASSERT_EQ(cfg.db_connections, 1);
    ASSERT_STR_EQ(cfg.notify_db, "postgres://jobd@db1/jobd");
    ASSERT_OK(worker_config_copy(&copy, &cfg), &err);
    ASSERT_STR_EQ(copy.notify_db, "postgres://jobd@db1/jobd");
    ASSERT(copy.notify_db != cfg.notify_db);
    worker_config_fini(&copy);
    worker_config_fini(&cfg);
}

struct bad_case {
    const char *text;
    const char *want; /* substring of the message after "PATH:" */
};

static const struct bad_case bad[] = {
    {"[worker]\nconcurrency = 0\n", ":2: key 'concurrency'"},
    {"[worker]\nconcurrency = lots\n", ":2: key 'concurrency'"},
    {"[worker]\n\nlease = 5 minutes\n", ":3: key 'lease'"},
    {"[worker]\nheartbeat = 0s\n", ":2: key 'heartbeat'"},
    {"[worker]\nqueues = Bad Queue\n", ":2: key 'queues'"},
    {"[worker]\ncolour = blue\n", ":2: key 'colour': unknown key"},
    {"[worker]\nlease = 1s\nlease = 2s\n", ":3: key 'lease': given twice"},
    {"[workers]\nlease = 1s\n", ":2: key 'lease': unknown section"},
    {"[handler \"a\"]\nexec = 'unterminated\n", ":2: key 'exec': unterminated single quote"},
    {"[handler \"a\"]\nexec = /bin/true\nhttp = http://x/\n", ":3: key 'http': a handler takes"},
    {"[handler \"a\"]\nhttp = ftp://x/\n", ":2: key 'http': the URL must start"},
    {"[handler \"a\"]\nexec = /bin/true\ntimeout = soon\n", ":3: key 'timeout'"},
    {"[handler \"a\"]\nexec = /bin/true\nretries = 3\n", ":3: key 'retries': unknown key"},
    {"[handler \"bad type!\"]\nexec = /bin/true\n", ":2: key 'exec'"},
    {"[handler \"a\"]\nexec = /bin/true\n[handler \"a\"]\nexec = /bin/false\n",
     ":4: key 'exec': a second [handler]"},
    {"\n[handler \"a\"]\ntimeout = 1s\n", ":3: key 'exec': [handler \"a\"] needs exec= or http="},
    {"[worker]\nthis line has no equals sign\n", ":2: not a key = value line"},
    {"[handler \"a\"]\nexec = /bin/true\nenv = A, 1B\n", ":3: key 'env': '1B' is not a variable"},
    {"[handler \"a\"]\nexec = /bin/true\nenv = ,\n", ":3: key 'env': names no variable"},
    {"[handler \"a\"]\nhttp = http://x/\nenv = A\n",
     ":2: key 'env': [handler \"a\"]: env= is for exec"},
    {"[handler \"a\"]\nexec = /bin/true\nexec = /bin/false\n", ":3: key 'exec': given twice"},
    {"[worker]\ndb_connections = 4\n", ":2: key 'db_connections'"},
    {"[worker]\ndb_connections = 0\n", ":2: key 'db_connections'"},
    {"[worker]\nnotify_db = sqlite:x.db\n", ":2: key 'notify_db': notify_db must be a postgres://"},
};

TEST(errors_name_file_line_and_key)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *path = write_file("bad.ini", bad[i].text);
        struct worker_config cfg;
        worker_config_init(&cfg);
        struct jobd_error err = {0};
        int rc = worker_config_load(&cfg, path, &err);
        worker_config_fini(&cfg);
        if (rc != JOBD_E_INVALID)
            TEST_FAIL("case %zu: rc %d, want invalid", i, rc);
        if (strncmp(err.msg, path, strlen(path)) != 0 || strstr(err.msg, bad[i].want) == NULL)
            TEST_FAIL("case %zu: message \"%s\" lacks \"%s\"", i, err.msg, bad[i].want);
    }
}

TEST(missing_file_and_checks)
{
    struct worker_config cfg;
    worker_config_init(&cfg);
    struct jobd_error err = {0};
    ASSERT_EQ(worker_config_load(&cfg, test_path("nope.ini"), &err), JOBD_E_IO);
    ASSERT(strstr(err.msg, "nope.ini") != NULL);
    ASSERT_EQ(worker_config_check(&cfg, &err), JOBD_E_INVALID); /* no handlers */
    ASSERT_OK(worker_config_set(&cfg, "lease", "10s", &err), &err);
    ASSERT_OK(worker_config_set(&cfg, "heartbeat", "10s", &err), &err);
    ASSERT_OK(worker_config_add_c(&cfg, "c.type", (worker_c_fn)1, NULL, 0, &err), &err);
    ASSERT_EQ(worker_config_check(&cfg, &err), JOBD_E_INVALID);
    ASSERT_STR_EQ(err.field, "heartbeat");
    ASSERT_EQ(worker_config_set(&cfg, "bogus", "1", &err), JOBD_E_INVALID);
    ASSERT_EQ(worker_config_add_c(&cfg, "bad type", (worker_c_fn)1, NULL, 0, &err), JOBD_E_INVALID);
    worker_config_fini(&cfg);
}

TEST(example_config_loads)
{
    const char *src = getenv("JOBD_SRC");
    if (src == NULL)
        return;
    char path[1024];
    snprintf(path, sizeof path, "%s/examples/worker.ini", src);
    struct worker_config cfg;
    worker_config_init(&cfg);
    struct jobd_error err = {0};
    ASSERT_OK(worker_config_load(&cfg, path, &err), &err);
    ASSERT_OK(worker_config_check(&cfg, &err), &err);
    ASSERT(worker_config_handler(&cfg, "hello") != NULL);
    worker_config_fini(&cfg);
}
