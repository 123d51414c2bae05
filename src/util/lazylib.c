/*
 * lazylib.c — see lazylib.h. One pthread_once per library; RTLD_NOW so a
 * library with an unresolvable dependency fails here, at the entry point
 * that asked, not in the middle of a call; RTLD_LOCAL so its symbols do not
 * interpose on anything else in the process.
 */
#include "util/lazylib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* pthread_once takes no argument: the library being loaded is handed over
 * in a thread-local (each once-routine runs on the thread that called it). */
static _Thread_local struct lazylib *loading;

static void
load(void)
{
    struct lazylib *lib = loading;
    const char *file = lib->soname;
#ifdef JOBD_TEST_HOOKS
    /* Test seam: a library missing at run time (tests/integration/test_lazy_libs.sh). */
    const char *missing = getenv("JOBD_TEST_LAZYLIB_MISSING");
    if (missing != NULL && strcmp(missing, lib->soname) == 0)
        file = "libjobd-test-missing.so";
#endif
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *e = dlerror();
        snprintf(lib->why, sizeof lib->why, "cannot load %s (needed for %s): %s", lib->soname,
                 lib->needed_for, e != NULL ? e : "unknown dlopen error");
        return;
    }
    for (size_t i = 0; i < lib->nsyms; i++) {
        *lib->syms[i].slot = dlsym(h, lib->syms[i].name);
        if (*lib->syms[i].slot == NULL) {
            snprintf(lib->why, sizeof lib->why, "%s (needed for %s) has no %s: too old?",
                     lib->soname, lib->needed_for, lib->syms[i].name);
            return;
        }
    }
    atomic_store_explicit(&lib->loaded, true, memory_order_release);
}

bool
lazylib_load(struct lazylib *lib, const char **why)
{
    loading = lib;
    pthread_once(&lib->once, load);
    bool ok = atomic_load_explicit(&lib->loaded, memory_order_acquire);
    if (!ok && why != NULL)
        *why = lib->why;
    return ok;
}

void
lazylib_need(struct lazylib *lib)
{
    const char *why;
    if (!lazylib_load(lib, &why)) {
        fprintf(stderr, "jobd: %s\n", why);
        abort();
    }
}

bool
lazylib_is_loaded(const struct lazylib *lib)
{
    return atomic_load_explicit(&lib->loaded, memory_order_acquire);
}
