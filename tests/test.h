/*
 * test.h — jobd's tiny test harness (header-only).
 *
 *   TEST(name) { ASSERT_EQ(1 + 1, 2); }
 *
 * Tests register themselves (a constructor per TEST), run in registration
 * order, each in its own forked child with a fresh temporary directory as
 * its working directory and a timeout (TEST_TIMEOUT_S, default 120), so a
 * crash or a hang fails one test, not the run. A child's output is shown
 * only when it fails, and each case's line says its seconds (the
 * conformance suites' slowest cases are read off them). TEST_FILTER=SUBSTRING in the environment runs only
 * the tests whose names contain it; argv is available as test_argv for
 * suites that take parameters (the store conformance suite takes the
 * backend name). The last line is "N passed, N failed, N skipped".
 *
 * A test that cannot run here says so with TEST_SKIP(why): it counts as
 * skipped, not passed, and the executable then exits 77, which CMake
 * registers as SKIP_RETURN_CODE, so CTest reports it as skipped. A test
 * that needs PostgreSQL calls TEST_NEED_PG(): it skips without
 * JOBD_TEST_PG_URL, and FAILS instead when JOBD_TEST_REQUIRE_PG is set
 * (`make test` sets it), so no PostgreSQL test passes by not running.
 *
 * Cases run one after the other, unless the program defines
 * TEST_PARALLEL_SAFE and TEST_JOBS=N is set: then up to N at once, each
 * told its slot (test_slot, 0 .. N-1) to keep a database of its own, and
 * each reported when it ends. The store conformance suite does (its cases
 * wait on a server or on PostgreSQL much of their time).
 *
 * A suite run against several backends (the store conformance suite) may
 * leave out a case that does not apply to one of them with
 * TEST_NOT_HERE(why): it is listed as "n/a" with its reason, counted apart
 * ("N not here" on the last line), and does not make the run skipped.
 * test_current names the test running (in its child).
 */
#ifndef JOBD_TEST_H
#define JOBD_TEST_H

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef void (*test_fn)(void);
struct test_entry {
    const char *name;
    test_fn fn;
};

/*
 * One test program is one file, and everything here is static to it. A
 * program built from several files (tests/store/: one file per topic)
 * defines TEST_SHARED in each before including this header, and
 * TEST_SHARED_MAIN in exactly one of them: that file holds the registry
 * and main(), the others register into it.
 */
#if defined(TEST_SHARED) && !defined(TEST_SHARED_MAIN)
#define TEST_NO_MAIN
#define TEST_GLOBAL extern
#elif defined(TEST_SHARED)
#define TEST_GLOBAL
#else
#define TEST_GLOBAL static
#endif

#define TEST_MAX 1024
TEST_GLOBAL struct test_entry test_registry[TEST_MAX];
TEST_GLOBAL int test_count;
TEST_GLOBAL int test_argc;
TEST_GLOBAL char **test_argv;
TEST_GLOBAL char test_tmpdir[512];
TEST_GLOBAL const char *test_current;
/* Which of the test_jobs cases running at once this is (0 ..), in a case's
 * child: a program whose cases run side by side (TEST_PARALLEL_SAFE) keeps
 * what they cannot share (a database) apart by it. */
TEST_GLOBAL int test_slot;
TEST_GLOBAL int test_jobs;
/* Run once in the harness process, after test_argv is set and before the
 * first case is forked: what every case would otherwise make for itself
 * (the conformance suite's migrated template store). Set from a
 * constructor; NULL: nothing. */
TEST_GLOBAL void (*test_before_all)(void);
#define TEST_MAX_JOBS 16

static inline void
test_register(const char *name, test_fn fn)
{
    if (test_count < TEST_MAX)
        test_registry[test_count++] = (struct test_entry){name, fn};
}

#define TEST(name)                                                                                 \
    static void test_##name(void);                                                                 \
    __attribute__((constructor)) static void test_reg_##name(void)                                 \
    {                                                                                              \
        test_register(#name, test_##name);                                                         \
    }                                                                                              \
    static void test_##name(void)

#define TEST_FAIL(...)                                                                             \
    do {                                                                                           \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                            \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        exit(1);                                                                                   \
    } while (0)

#define TEST_SKIP_CODE 77

#define TEST_SKIP(...)                                                                             \
    do {                                                                                           \
        fprintf(stderr, "skip: ");                                                                 \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        fflush(NULL);                                                                              \
        _exit(TEST_SKIP_CODE);                                                                     \
    } while (0)

#define TEST_NOT_HERE_CODE 78

#define TEST_NOT_HERE(...)                                                                         \
    do {                                                                                           \
        fprintf(stderr, "n/a: ");                                                                  \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        fflush(NULL);                                                                              \
        _exit(TEST_NOT_HERE_CODE);                                                                 \
    } while (0)

/* Skips (or, under JOBD_TEST_REQUIRE_PG, fails) unless PostgreSQL is there. */
#define TEST_NEED_PG()                                                                             \
    do {                                                                                           \
        const char *u_ = getenv("JOBD_TEST_PG_URL");                                               \
        if ((u_ == NULL || *u_ == '\0') && getenv("JOBD_TEST_REQUIRE_PG") != NULL)                 \
            TEST_FAIL("JOBD_TEST_PG_URL is not set but JOBD_TEST_REQUIRE_PG is: "                  \
                      "a PostgreSQL test must run (scripts/with-pg.sh)");                          \
        if (u_ == NULL || *u_ == '\0')                                                             \
            TEST_SKIP("JOBD_TEST_PG_URL is not set (run under scripts/with-pg.sh)");               \
    } while (0)

#define ASSERT(c)                                                                                  \
    do {                                                                                           \
        if (!(c))                                                                                  \
            TEST_FAIL("assertion failed: %s", #c);                                                 \
    } while (0)

#define ASSERT_EQ(a, b)                                                                            \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_)                                                                              \
            TEST_FAIL("%s == %s: %lld != %lld", #a, #b, a_, b_);                                   \
    } while (0)

#define ASSERT_NE(a, b)                                                                            \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ == b_)                                                                              \
            TEST_FAIL("%s != %s: both %lld", #a, #b, a_);                                          \
    } while (0)

#define ASSERT_STR_EQ(a, b)                                                                        \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0)                                       \
            TEST_FAIL("%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)",                    \
                      b_ ? b_ : "(null)");                                                         \
    } while (0)

#define ASSERT_NULL(p)                                                                             \
    do {                                                                                           \
        if ((p) != NULL)                                                                           \
            TEST_FAIL("%s is not NULL", #p);                                                       \
    } while (0)

/* rc must be 0; on failure prints the struct jobd_error e (a pointer or NULL). */
#define ASSERT_OK(rc, e)                                                                           \
    do {                                                                                           \
        int rc_ = (rc);                                                                            \
        const struct jobd_error *e_ = (e);                                                         \
        if (rc_ != 0)                                                                              \
            TEST_FAIL("%s failed: %d (%s) field=%s msg=%s", #rc, rc_, jobd_strerror(rc_),          \
                      e_ ? e_->field : "", e_ ? e_->msg : "");                                     \
    } while (0)

/* Path of a file inside this test's temporary directory (static buffer). */
static inline const char *
test_path(const char *name)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/%s", test_tmpdir, name);
    return buf;
}

/* One case running in its forked child: where its files and output are. */
struct test_child {
    const struct test_entry *t;
    pid_t pid;
    struct timespec started; /* CLOCK_MONOTONIC: each case's time is reported */
    char dir[400];
    char log[600];
};

/* Forks the case into c (its own temporary directory, process group and
 * alarm); slot is what test_slot says in the child. 0, or -1 if it could
 * not start (counted as a failure). */
static inline int
test_start(const struct test_entry *t, int slot, struct test_child *c)
{
    c->t = t;
    /* $TMPDIR as mktemp(1) takes it: scripts/with-pg.sh points it at memory. */
    const char *tmp = getenv("TMPDIR");
    snprintf(c->dir, sizeof c->dir, "%s/jobd-test.XXXXXX",
             tmp != NULL && *tmp == '/' ? tmp : "/tmp");
    if (mkdtemp(c->dir) == NULL) {
        perror("mkdtemp");
        return -1;
    }
    /* not snprintf from c->dir: GCC -O3 then warns that source and
     * destination may overlap (both in the caller's array of children) */
    size_t dn = strlen(c->dir);
    memcpy(c->log, c->dir, dn);
    memcpy(c->log + dn, ".log", sizeof ".log"); /* log is larger than dir */
    fflush(stdout);
    clock_gettime(CLOCK_MONOTONIC, &c->started);
    c->pid = fork();
    if (c->pid < 0) {
        perror("fork");
        return -1;
    }
    if (c->pid == 0) {
        setpgid(0, 0);
        FILE *f = freopen(c->log, "w", stderr);
        (void)f;
        dup2(2, 1);
        snprintf(test_tmpdir, sizeof test_tmpdir, "%s", c->dir);
        test_current = t->name;
        test_slot = slot;
        if (chdir(c->dir) != 0)
            _exit(1);
        const char *to = getenv("TEST_TIMEOUT_S");
        alarm(to ? (unsigned)strtoul(to, NULL, 10) : 120);
        t->fn();
        fflush(NULL);
        _exit(0);
    }
    return 0;
}

/* Reports the case c that ended with status and removes its files; returns
 * 1 passed, 0 failed, -1 skipped, -2 not here. */
static inline int
test_finish(struct test_child *c, int status)
{
    const struct test_entry *t = c->t;
    kill(-c->pid, SIGKILL); /* anything the test left behind */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double secs =
        (double)(now.tv_sec - c->started.tv_sec) + (double)(now.tv_nsec - c->started.tv_nsec) / 1e9;
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    bool skipped = WIFEXITED(status) && WEXITSTATUS(status) == TEST_SKIP_CODE;
    bool not_here = WIFEXITED(status) && WEXITSTATUS(status) == TEST_NOT_HERE_CODE;
    if (skipped || not_here) {
        const char *tag = skipped ? "skip: " : "n/a: ";
        printf("%s %s:", skipped ? "skip" : "n/a ", t->name);
        FILE *f = fopen(c->log, "r");
        char line[1024];
        while (f != NULL && fgets(line, sizeof line, f))
            if (strncmp(line, tag, 5) == 0)
                printf(" %s", line + 5);
        if (f != NULL)
            fclose(f);
    } else if (!ok) {
        printf("FAIL %s", t->name);
        if (WIFSIGNALED(status))
            printf(" (signal %d%s)", WTERMSIG(status),
                   WTERMSIG(status) == SIGALRM ? ", timeout" : "");
        printf(" %.2f s\n", secs);
        FILE *f = fopen(c->log, "r");
        if (f != NULL) {
            char line[1024];
            while (fgets(line, sizeof line, f))
                printf("    %s", line);
            fclose(f);
        }
    } else {
        printf("ok   %s %.2f s\n", t->name, secs);
    }
    unlink(c->log);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->dir);
    if (system(cmd) != 0) { /* best effort */
    }
    return not_here ? -2 : skipped ? -1 : ok;
}

#ifndef TEST_NO_MAIN
/* How many cases run at once: TEST_JOBS, in a program that defines
 * TEST_PARALLEL_SAFE (its cases share nothing but what test_slot keeps
 * apart); 1 anywhere else. */
static inline int
test_jobs_wanted(void)
{
#ifdef TEST_PARALLEL_SAFE
    const char *j = getenv("TEST_JOBS");
    long n = j != NULL ? strtol(j, NULL, 10) : 1;
    return n < 1 ? 1 : n > TEST_MAX_JOBS ? TEST_MAX_JOBS : (int)n;
#else
    return 1;
#endif
}

int
main(int argc, char **argv)
{
    test_argc = argc;
    test_argv = argv;
    const char *filter = getenv("TEST_FILTER");
    int passed = 0, failed = 0, skipped = 0, not_here = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_jobs = test_jobs_wanted();
    if (test_before_all != NULL)
        test_before_all();
    struct test_child running[TEST_MAX_JOBS];
    bool busy[TEST_MAX_JOBS] = {false};
    int n_busy = 0, next = 0;
    for (;;) {
        /* Start cases while a slot is free, in registration order. */
        while (n_busy < test_jobs && next < test_count) {
            const struct test_entry *t = &test_registry[next++];
            if (filter != NULL && strstr(t->name, filter) == NULL)
                continue;
            int slot = 0;
            while (busy[slot])
                slot++;
            if (test_start(t, slot, &running[slot]) != 0) {
                printf("FAIL %s (could not start it)\n", t->name);
                failed++;
                continue;
            }
            busy[slot] = true;
            n_busy++;
        }
        if (n_busy == 0)
            break;
        int status = 0;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            perror("waitpid");
            return 1;
        }
        int slot = 0;
        while (slot < test_jobs && !(busy[slot] && running[slot].pid == pid))
            slot++;
        if (slot == test_jobs)
            continue; /* not a case's child (none other is forked here) */
        busy[slot] = false;
        n_busy--;
        int r = test_finish(&running[slot], status);
        if (r == -2)
            not_here++;
        else if (r < 0)
            skipped++;
        else if (r)
            passed++;
        else
            failed++;
    }
    printf("%d passed, %d failed, %d skipped", passed, failed, skipped);
    if (not_here > 0)
        printf(", %d not here", not_here);
    printf("\n");
    return failed ? 1 : skipped ? TEST_SKIP_CODE : 0;
}
#endif

#endif
