/*
 * icu.c — see icu.h. pthread_once + dlopen of the two libraries of the ICU
 * version the headers came from (libicuuc.so.N, libicui18n.so.N); the
 * handles stay open for the life of the process.
 */
#include "util/icu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <unicode/uvernum.h>


#define ICU_STR(x) #x
#define ICU_XSTR(x) ICU_STR(x)
/* The versioned symbol of f, after the ICU headers' renaming macro. */
#define ICU_SYM(f) ICU_XSTR(f)
#define ICU_SONAME(lib) "lib" lib ".so." ICU_XSTR(U_ICU_VERSION_MAJOR_NUM)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct icu_api api;
static bool loaded;
static char why[256];

static bool
load_sym(void *h, const char *name, void **slot)
{
    *slot = dlsym(h, name);
    if (*slot == NULL)
        snprintf(why, sizeof why, "ICU has no %s", name);
    return *slot != NULL;
}

static void
load(void)
{
    void *uc = dlopen(ICU_SONAME("icuuc"), RTLD_NOW | RTLD_LOCAL);
    void *i18n = uc != NULL ? dlopen(ICU_SONAME("icui18n"), RTLD_NOW | RTLD_LOCAL) : NULL;
    if (uc == NULL || i18n == NULL) {
        const char *e = dlerror();
        snprintf(why, sizeof why, "cannot load ICU (%s): %s",
                 uc == NULL ? ICU_SONAME("icuuc") : ICU_SONAME("icui18n"), e ? e : "?");
        return;
    }
    /* dlsym returns void *; the members are function pointers of the same
     * representation on every platform jobd builds on (POSIX requires it). */
    loaded = load_sym(uc, ICU_SYM(u_charsToUChars), (void **)&api.u_charsToUChars) &&
             load_sym(uc, ICU_SYM(u_errorName), (void **)&api.u_errorName) &&
             load_sym(i18n, ICU_SYM(ucal_getCanonicalTimeZoneID),
                      (void **)&api.ucal_getCanonicalTimeZoneID) &&
             load_sym(i18n, ICU_SYM(ucal_open), (void **)&api.ucal_open) &&
             load_sym(i18n, ICU_SYM(ucal_close), (void **)&api.ucal_close) &&
             load_sym(i18n, ICU_SYM(ucal_setMillis), (void **)&api.ucal_setMillis) &&
             load_sym(i18n, ICU_SYM(ucal_get), (void **)&api.ucal_get) &&
             load_sym(i18n, ICU_SYM(ucal_getTimeZoneTransitionDate),
                      (void **)&api.ucal_getTimeZoneTransitionDate);
}

const struct icu_api *
icu_get(const char **why_out)
{
    pthread_once(&once, load);
    if (!loaded) {
        if (why_out != NULL)
            *why_out = why;
        return NULL;
    }
    return &api;
}
