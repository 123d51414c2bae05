/*
 * test_api_roles.c — token roles through a real `jobd server`: every route
 * of the route table under every role (read, worker, write, admin), no
 * token and a wrong token. A role below the route's need gets 403
 * forbidden; at or above it, the request reaches its handler (whatever it
 * answers, it is neither 401 nor 403). The expected needs are written out
 * here, not read from the table, and the test fails if the table has a
 * route this list does not name, so a new route must be given its role.
 */
#include <sys/stat.h>

#include "api/handlers.h"
#include "apitest.h"

enum { READ = 1, WORKER, WRITE, ADMIN };

static const struct {
    const char *method, *pattern;
    int need;
} needs[] = {
    {"POST", "/v1/jobs", WRITE},
    {"POST", "/v1/jobs/batch", WRITE},
    {"GET", "/v1/jobs/{id}", READ},
    {"GET", "/v1/jobs", READ},
    {"POST", "/v1/jobs/{id}/cancel", WRITE},
    {"POST", "/v1/jobs/{id}/retry", WRITE},
    {"GET", "/v1/jobs/{id}/attempts", READ},
    {"GET", "/v1/jobs/{id}/attempts/{attempt}/log", READ},
    {"POST", "/v1/jobs/{id}/attempts/{attempt}/log", WORKER},
    {"DELETE", "/v1/jobs/{id}", ADMIN},
    {"POST", "/v1/jobs/bulk", WRITE},
    {"POST", "/v1/workflows", WRITE},
    {"GET", "/v1/workflows/{id}", READ},
    {"GET", "/v1/workflows", READ},
    {"POST", "/v1/workflows/{id}/steps", WRITE},
    {"POST", "/v1/workflows/{id}/cancel", WRITE},
    {"POST", "/v1/workflows/{id}/retry", WRITE},
    {"DELETE", "/v1/workflows/{id}", ADMIN},
    {"GET", "/v1/workers", READ},
    {"GET", "/v1/stats", READ},
    {"POST", "/v1/workers", WORKER},
    {"POST", "/v1/workers/{name}/presence", WORKER},
    {"POST", "/v1/workers/{name}/withdraw", WORKER},
    {"GET", "/v1/queues", READ},
    {"POST", "/v1/queues/{name}/pause", WRITE},
    {"POST", "/v1/queues/{name}/resume", WRITE},
    {"PUT", "/v1/queues/{name}", ADMIN},
    {"POST", "/v1/schedules", WRITE},
    {"PUT", "/v1/schedules/{name}", WRITE},
    {"GET", "/v1/schedules", READ},
    {"GET", "/v1/schedules/{name}", READ},
    {"DELETE", "/v1/schedules/{name}", ADMIN},
    {"POST", "/v1/schedules/{name}/pause", WRITE},
    {"POST", "/v1/schedules/{name}/resume", WRITE},
    {"POST", "/v1/schedules/{name}/trigger", WRITE},
    {"GET", "/v1/schedules/{name}/next", READ},
    {"GET", "/v1/whoami", 0},
    {"POST", "/v1/claim", WORKER},
    {"POST", "/v1/jobs/{id}/heartbeat", WORKER},
    {"POST", "/v1/jobs/{id}/progress", WORKER},
    {"POST", "/v1/jobs/{id}/complete", WORKER},
    {"POST", "/v1/jobs/{id}/fail", WORKER},
    {"POST", "/v1/jobs/{id}/release", WORKER},
    {"GET", "/v1/cancels", WORKER},
    {"GET", "/v1/events", READ},
    {"GET", "/healthz", 0},
    {"GET", "/metrics", READ},
};
#define N_NEEDS (sizeof needs / sizeof needs[0])

static const char *const tokens[] = {NULL, "role-read-0123456789", "role-worker-0123456789",
                                     "role-write-0123456789", "role-admin-0123456789"};

/* The pattern with {id}, {attempt} and {name} filled in. */
static void
concrete(const char *pattern, char *out, size_t len)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", pattern);
    char *p = strstr(buf, "{attempt}");
    if (p != NULL) { /* after {id}: fill it in, then {id} */
        memmove(p + 1, p + 9, strlen(p + 9) + 1);
        *p = '1';
    }
    p = strstr(buf, "{id}");
    if (p != NULL) {
        *p = '\0';
        snprintf(out, len, "%s1%s", buf, p + 4);
        return;
    }
    p = strstr(buf, "{name}");
    if (p != NULL) {
        *p = '\0';
        snprintf(out, len, "%ss1%s", buf, p + 6);
        return;
    }
    snprintf(out, len, "%s", buf);
}

static long
call_as(const struct srv *s, const char *method, const char *path, const char *token, char *code,
        size_t codelen)
{
    char hdr[128];
    snprintf(hdr, sizeof hdr, "Authorization: Bearer %s", token);
    const char *hdrs[] = {hdr, NULL};
    struct resp r;
    bool body = strcmp(method, "GET") != 0 && strcmp(method, "DELETE") != 0;
    http_req(s, method, path, body ? "{}" : NULL, body ? 2 : 0, token ? hdrs : NULL, &r);
    code[0] = '\0';
    json_t *v = json_loadb(r.body, r.len, 0, NULL);
    const char *c = json_string_value(json_object_get(json_object_get(v, "error"), "code"));
    snprintf(code, codelen, "%s", c ? c : "");
    json_decref(v);
    long st = r.status;
    resp_fini(&r);
    return st;
}

TEST(every_route_under_every_role)
{
    for (size_t i = 0; i < api_n_routes; i++) {
        bool named = false;
        for (size_t k = 0; k < N_NEEDS; k++)
            named |= strcmp(needs[k].method, api_routes[i].method) == 0 &&
                     strcmp(needs[k].pattern, api_routes[i].pattern) == 0;
        if (!named)
            TEST_FAIL("route %s %s has no expected role in this test", api_routes[i].method,
                      api_routes[i].pattern);
    }
    FILE *f = fopen(test_path("tokens"), "w");
    fprintf(f, "# one token per role\n%s read\n%s worker\n%s write\n%s\n", tokens[READ],
            tokens[WORKER], tokens[WRITE], tokens[ADMIN]);
    fclose(f);
    chmod(test_path("tokens"), 0600);
    char tokpath[600];
    snprintf(tokpath, sizeof tokpath, "%s", test_path("tokens"));
    const char *extra[] = {"--tokens", tokpath, NULL};
    struct srv s;
    srv_start(&s, "sqlite", extra);
    {
        char hdr[128];
        snprintf(hdr, sizeof hdr, "Authorization: Bearer %s", tokens[ADMIN]);
        const char *hdrs[] = {hdr, NULL};
        struct resp r;
        http_req(&s, "POST", "/v1/jobs", "{\"type\":\"t\"}", 12, hdrs, &r);
        ASSERT_EQ(r.status, 201);
        resp_fini(&r);
    }
    char code[64], path[256];
    for (size_t k = 0; k < N_NEEDS; k++) {
        concrete(needs[k].pattern, path, sizeof path);
        if (strcmp(needs[k].pattern, "/v1/events") == 0)
            snprintf(path, sizeof path, "/v1/events?job=x"); /* a 400 past the role, not a stream */
        long st = call_as(&s, needs[k].method, path, NULL, code, sizeof code);
        if (needs[k].need == 0 ? (st == 401 || st == 403) : st != 401)
            TEST_FAIL("%s %s without a token: %ld %s", needs[k].method, path, st, code);
        st = call_as(&s, needs[k].method, path, "role-none-0123456789", code, sizeof code);
        if (needs[k].need != 0 && st != 401)
            TEST_FAIL("%s %s with a wrong token: %ld %s", needs[k].method, path, st, code);
        for (int role = READ; role <= ADMIN; role++) {
            st = call_as(&s, needs[k].method, path, tokens[role], code, sizeof code);
            bool allowed = role >= needs[k].need;
            if (allowed && (st == 401 || st == 403))
                TEST_FAIL("%s %s as %s: %ld %s, want it allowed", needs[k].method, path,
                          tokens[role], st, code);
            if (!allowed && (st != 403 || strcmp(code, "forbidden") != 0))
                TEST_FAIL("%s %s as %s: %ld %s, want 403 forbidden", needs[k].method, path,
                          tokens[role], st, code);
        }
    }
    /* An unknown route: 401 without a valid token, 404 with one of any role. */
    ASSERT_EQ(call_as(&s, "GET", "/v1/nope", NULL, code, sizeof code), 401);
    ASSERT_EQ(call_as(&s, "GET", "/v1/nope", tokens[READ], code, sizeof code), 404);
    srv_stop(&s);
}

/* Bulk retry and cancel need write; bulk delete needs admin (the body decides). */
TEST(bulk_delete_needs_admin)
{
    FILE *f = fopen(test_path("tokens"), "w");
    fprintf(f, "%s write\n%s admin\n", tokens[WRITE], tokens[ADMIN]);
    fclose(f);
    chmod(test_path("tokens"), 0600);
    char tokpath[600];
    snprintf(tokpath, sizeof tokpath, "%s", test_path("tokens"));
    const char *extra[] = {"--tokens", tokpath, NULL};
    struct srv s;
    srv_start(&s, "sqlite", extra);
    static const char *const bodies[] = {
        "{\"action\":\"retry\",\"filter\":{\"queue\":\"q\"}}",
        "{\"action\":\"cancel\",\"filter\":{\"queue\":\"q\"}}",
        "{\"action\":\"delete\",\"filter\":{\"queue\":\"q\"}}",
    };
    for (int role = WRITE; role <= ADMIN; role++) {
        char hdr[128];
        snprintf(hdr, sizeof hdr, "Authorization: Bearer %s", tokens[role]);
        const char *hdrs[] = {hdr, NULL};
        for (size_t i = 0; i < 3; i++) {
            struct resp r;
            http_req(&s, "POST", "/v1/jobs/bulk", bodies[i], strlen(bodies[i]), hdrs, &r);
            long want = (i == 2 && role == WRITE) ? 403 : 200;
            if (r.status != want)
                TEST_FAIL("bulk %s as %s: %ld, want %ld", bodies[i], tokens[role], r.status, want);
            resp_fini(&r);
        }
    }
    srv_stop(&s);
}

TEST(bad_tokens_files_refused_at_start)
{
    const char *files[][2] = {
        {"# ok\nab#cdefgh\n", ":2:"}, /* under 16 characters */
        {"role-read-0123456789 reader\n", ":1: unknown role 'reader'"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        FILE *f = fopen(test_path("tokens"), "w");
        fputs(files[i][0], f);
        fclose(f);
        char tokpath[600], out[512], err[2048];
        snprintf(tokpath, sizeof tokpath, "%s", test_path("tokens"));
        const char *args[] = {"server",      "--db",     "sqlite:x.db", "--listen",
                              "127.0.0.1:0", "--tokens", tokpath,       NULL};
        int rc = cli_run(NULL, args, out, sizeof out);
        cli_last_err(err, sizeof err);
        if (rc == 0 || strstr(err, files[i][1]) == NULL || strstr(err, tokpath) == NULL)
            TEST_FAIL("tokens %s: exit %d, stderr %s", files[i][0], rc, err);
    }
    /* Readable by others: it starts, with a warning. */
    FILE *f = fopen(test_path("tokens"), "w");
    fputs("role-read-0123456789\n", f);
    fclose(f);
    chmod(test_path("tokens"), 0644);
    char tokpath[600];
    snprintf(tokpath, sizeof tokpath, "%s", test_path("tokens"));
    const char *extra[] = {"--tokens", tokpath, NULL};
    struct srv s;
    srv_start(&s, "sqlite", extra);
    char line[512];
    bool warned = false;
    f = fopen(s.log, "r");
    while (f && fgets(line, sizeof line, f))
        warned |= strstr(line, "warn") != NULL && strstr(line, "chmod 600") != NULL;
    if (f)
        fclose(f);
    ASSERT(warned);
    srv_stop(&s);
}
