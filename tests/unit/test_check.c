/*
 * test_check.c — util/check.h: ALWAYS and NEVER give the condition's truth
 * and evaluate it exactly once; in a debug build (this one, unless built
 * with NDEBUG) a wrong belief aborts with the condition named, the way
 * assert does, so a test that reaches one fails loudly.
 */
#include "util/check.h"

#include <fcntl.h>

#include "test.h"

static int evaluated;

static int
count(int v)
{
    evaluated++;
    return v;
}

TEST(true_beliefs_pass_through_once)
{
    evaluated = 0;
    ASSERT_EQ(ALWAYS(count(7) == 7), 1);
    ASSERT_EQ(NEVER(count(7) != 7), 0);
    ASSERT_EQ(evaluated, 2);
    int taken = 0;
    if (ALWAYS(count(1)))
        taken++;
    if (NEVER(count(0)))
        taken += 10;
    ASSERT_EQ(taken, 1);
    ASSERT_EQ(evaluated, 4);
}

#ifndef NDEBUG /* the helpers of the debug-build case below */
/* Runs fn in a child with stderr in a file; true if it died of SIGABRT
 * having printed want. */
static bool
aborts_saying(void (*fn)(void), const char *want)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("stderr.txt", O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, 2);
        fn();
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    char buf[1024] = {0};
    FILE *f = fopen("stderr.txt", "r");
    if (f != NULL) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
    }
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && strstr(buf, want) != NULL;
}

static void
wrong_always(void)
{
    int slots_used = -1;
    if (ALWAYS(slots_used >= 0))
        _exit(0);
    _exit(3);
}

static void
wrong_never(void)
{
    int queued = 5;
    if (NEVER(queued > 4))
        _exit(3);
    _exit(0);
}

#endif

TEST(a_wrong_belief_aborts_in_a_debug_build)
{
#ifdef NDEBUG
    TEST_SKIP("NDEBUG build: ALWAYS and NEVER are plain conditions");
#else
    ASSERT(aborts_saying(wrong_always, "ALWAYS(slots_used >= 0)"));
    ASSERT(aborts_saying(wrong_never, "NEVER(queued > 4)"));
#endif
}
