/*
 * test.h — jobd's tiny test harness (header-only).
 *
 *   TEST(name) { ASSERT_EQ(1 + 1, 2); }
 *
 * Tests register themselves (a constructor per TEST), run in registration
 * order, each in its own forked child with a fresh temporary directory as
 * its working directory and a timeout (TEST_TIMEOUT_S, default 120), so a
 * crash or a hang fails one test, not the run. A child's output is shown
 * only when it fails. Arguments: a substring filters test names; the rest of
 * argv is available as test_argv for suites that take parameters (the
 * store conformance suite takes the backend name). The last line is
 * "N passed, N failed", which CI reads.
 */
#ifndef JOBD_TEST_H
#define JOBD_TEST_H

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef void (*test_fn)(void);
struct test_entry {
    const char *name;
    test_fn fn;
};

#define TEST_MAX 1024
static struct test_entry test_registry[TEST_MAX];
static int test_count;
static int test_argc;
static char **test_argv;
static char test_tmpdir[512];

static inline void
test_register(const char *name, test_fn fn)
{
    if (test_count < TEST_MAX)
        test_registry[test_count++] = (struct test_entry){name, fn};
}

#define TEST(name)                                                                      \
    static void test_##name(void);                                                      \
    __attribute__((constructor)) static void test_reg_##name(void)                      \
    {                                                                                   \
        test_register(#name, test_##name);                                              \
    }                                                                                   \
    static void test_##name(void)

#define TEST_FAIL(...)                                                                  \
    do {                                                                                \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                 \
        fprintf(stderr, __VA_ARGS__);                                                   \
        fputc('\n', stderr);                                                            \
        exit(1);                                                                        \
    } while (0)

#define ASSERT(c)                                                                       \
    do {                                                                                \
        if (!(c))                                                                       \
            TEST_FAIL("assertion failed: %s", #c);                                      \
    } while (0)

#define ASSERT_EQ(a, b)                                                                 \
    do {                                                                                \
        long long a_ = (long long)(a), b_ = (long long)(b);                             \
        if (a_ != b_)                                                                   \
            TEST_FAIL("%s == %s: %lld != %lld", #a, #b, a_, b_);                        \
    } while (0)

#define ASSERT_NE(a, b)                                                                 \
    do {                                                                                \
        long long a_ = (long long)(a), b_ = (long long)(b);                             \
        if (a_ == b_)                                                                   \
            TEST_FAIL("%s != %s: both %lld", #a, #b, a_);                               \
    } while (0)

#define ASSERT_STR_EQ(a, b)                                                             \
    do {                                                                                \
        const char *a_ = (a), *b_ = (b);                                                \
        if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0)                            \
            TEST_FAIL("%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)",         \
                      b_ ? b_ : "(null)");                                              \
    } while (0)

#define ASSERT_NULL(p)                                                                  \
    do {                                                                                \
        if ((p) != NULL)                                                                \
            TEST_FAIL("%s is not NULL", #p);                                            \
    } while (0)

/* rc must be 0; on failure prints the struct jobd_error e (a pointer or NULL). */
#define ASSERT_OK(rc, e)                                                                \
    do {                                                                                \
        int rc_ = (rc);                                                                 \
        const struct jobd_error *e_ = (e);                                              \
        if (rc_ != 0)                                                                   \
            TEST_FAIL("%s failed: %d (%s) field=%s msg=%s", #rc, rc_, jobd_strerror(rc_), \
                      e_ ? e_->field : "", e_ ? e_->msg : "");                          \
    } while (0)

/* Path of a file inside this test's temporary directory (static buffer). */
static inline const char *
test_path(const char *name)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/%s", test_tmpdir, name);
    return buf;
}

static inline int
test_run_one(const struct test_entry *t)
{
    char dir[] = "/tmp/jobd-test.XXXXXX";
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 0;
    }
    char log[600];
    snprintf(log, sizeof log, "%s.log", dir);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        FILE *f = freopen(log, "w", stderr);
        (void)f;
        dup2(2, 1);
        snprintf(test_tmpdir, sizeof test_tmpdir, "%s", dir);
        if (chdir(dir) != 0)
            _exit(1);
        const char *to = getenv("TEST_TIMEOUT_S");
        alarm(to ? (unsigned)strtoul(to, NULL, 10) : 120);
        t->fn();
        fflush(NULL);
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    kill(-pid, SIGKILL); /* anything the test left behind */
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok) {
        printf("FAIL %s", t->name);
        if (WIFSIGNALED(status))
            printf(" (signal %d%s)", WTERMSIG(status),
                   WTERMSIG(status) == SIGALRM ? ", timeout" : "");
        printf("\n");
        FILE *f = fopen(log, "r");
        if (f != NULL) {
            char line[1024];
            while (fgets(line, sizeof line, f))
                printf("    %s", line);
            fclose(f);
        }
    } else {
        printf("ok   %s\n", t->name);
    }
    unlink(log);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) { /* best effort */
    }
    return ok;
}

#ifndef TEST_NO_MAIN
int
main(int argc, char **argv)
{
    test_argc = argc;
    test_argv = argv;
    const char *filter = getenv("TEST_FILTER");
    int passed = 0, failed = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 0; i < test_count; i++) {
        if (filter != NULL && strstr(test_registry[i].name, filter) == NULL)
            continue;
        if (test_run_one(&test_registry[i]))
            passed++;
        else
            failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
#endif

#endif
