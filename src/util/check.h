/*
 * check.h — invariants written down where they live, the way SQLite does
 * (its ALWAYS and NEVER macros): a statement of what the code believes,
 * checked where the tests run and free in a release.
 *
 * Three forms, by what a release build should do if the belief is wrong:
 *
 *   assert(x)   x holds, full stop; the code after it relies on x and has no
 *               way out. Debug builds (the sanitizer build of `make test`)
 *               abort if it does not; NDEBUG builds (Release,
 *               RelWithDebInfo) drop it, x is not even evaluated.
 *   ALWAYS(x)   x should hold, but there is a safe way out if it does not:
 *               `if (ALWAYS(s != NULL)) use(s); else recover();`.
 *   NEVER(x)    x should not hold, same: `if (NEVER(n < 0)) return;`.
 *
 * ALWAYS and NEVER abort in a debug build when the belief is wrong (the test
 * that got there found a bug), and in a release build are just (x), so the
 * recovery branch runs instead of a crash in production. x is evaluated
 * exactly once in both builds: it may not be left out, unlike assert's.
 * The message names the condition, the file, the line and the function.
 *
 * Bad input is never checked this way: it gets an error naming what is
 * wrong. These are for what the code itself guarantees (a slot the loop
 * freed twice, a batch longer than its array, a transition the store
 * reported that the model does not have), so an assertion that fires is
 * always a bug here, not a user's mistake.
 */
#ifndef JOBD_UTIL_CHECK_H
#define JOBD_UTIL_CHECK_H

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef NDEBUG
/* Prints "FILE:LINE: FUNC: what is wrong" like assert, and aborts. */
_Noreturn static inline void
check_failed(const char *what, const char *file, int line, const char *func)
{
    fprintf(stderr, "%s:%d: %s: %s is wrong\n", file, line, func, what);
    fflush(stderr);
    abort();
}
#define ALWAYS(x) ((x) ? 1 : (check_failed("ALWAYS(" #x ")", __FILE__, __LINE__, __func__), 0))
#define NEVER(x) ((x) ? (check_failed("NEVER(" #x ")", __FILE__, __LINE__, __func__), 1) : 0)
#else
#define ALWAYS(x) (!!(x))
#define NEVER(x) (!!(x))
#endif

#endif
