/*
 * lazylib.h — shared libraries jobd loads on first use instead of linking.
 *
 * Linking libpq, libcurl and libmicrohttpd costs every jobd process the
 * pages their start-up touches (relocations, .data, OpenSSL's and GnuTLS's
 * initialisers, GSSAPI, LDAP...): ~6 MB of a worker's 10.5 MB resident set,
 * although a SQLite worker with exec handlers calls none of them. SQLite
 * is the same the other way round: ~0.25 MB of a process on PostgreSQL or
 * on a jobd server, which never opens a SQLite file, and ~0.3 MB more for
 * libm, which only SQLite loads now (jobd does not use it: core/num.h). So
 * the binary is linked against small stubs (lazy_pq.c, lazy_curl.c,
 * lazy_mhd.c, lazy_sqlite.c) that carry the libraries' own function names
 * and forward each call to the real library, dlopen'ed (by the soname the
 * build found) the first time one is needed. The callers do not change:
 * they include the libraries' headers and call PQexec() or sqlite3_step()
 * as before.
 *
 * The entry points that need a library (a postgres:// or sqlite: store, an
 * http(s):// store, an http handler, the HTTP client, the API server) call
 * lazylib_load() first, so a library missing at run time is a clear error
 * there; a stub reached without it prints the same reason and aborts.
 */
#ifndef JOBD_UTIL_LAZYLIB_H
#define JOBD_UTIL_LAZYLIB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* One function a stub file needs: its name, and where its address goes. */
struct lazylib_sym {
    const char *name;
    void **slot;
};

/* One library. The stub file owns it (a static object) and fills every
 * field but the last three, which lazylib_load() owns. */
struct lazylib {
    const char *soname;     /* e.g. "libpq.so.5", from the build (cmake/lazylibs.cmake) */
    const char *needed_for; /* finishes "... is needed for ": "PostgreSQL stores" */
    const struct lazylib_sym *syms;
    size_t nsyms;
    pthread_once_t once;
    atomic_bool loaded; /* set (release) after every slot is filled */
    char why[320];
};

/*
 * Loads lib once per process (thread-safe; the handle stays open for good).
 * true when the library and every symbol were found; false with *why (if
 * why is not NULL) pointing at lib's own sentence naming the library, what
 * needs it and dlopen's reason.
 */
bool lazylib_load(struct lazylib *lib, const char **why);

/* lazylib_load() for a stub: prints the reason on stderr and aborts when the
 * library cannot be loaded (an entry point should have reported it first). */
void lazylib_need(struct lazylib *lib);

/* What a stub calls before each forwarded call: one acquire load once the
 * library is in (the slots were filled before it was set). */
static inline void
lazylib_ready(struct lazylib *lib)
{
    if (!atomic_load_explicit(&lib->loaded, memory_order_acquire))
        lazylib_need(lib);
}

/* Whether lib is loaded already (tests: what a process has pulled in). */
bool lazylib_is_loaded(const struct lazylib *lib);

/* The four libraries (defined in their stub files). */
extern struct lazylib lazylib_pq;
extern struct lazylib lazylib_curl;
extern struct lazylib lazylib_mhd;
extern struct lazylib lazylib_sqlite;

/*
 * sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, bytes) (variadic, so not a
 * stub): statement journals up to bytes stay in memory. SQLite's result:
 * SQLITE_MISUSE once the library was initialised (the first open does it).
 * lazylib_sqlite must be loaded.
 */
int lazylib_sqlite_stmt_journal_spill(int bytes);

/*
 * For the stub files only (lazy_*.c). Each lists its library's functions once, as rows F(ret, name, params, args) and
 * V(name, params, args) (void), and expands the list three times with these:
 * the table of pointers (a static struct named api), the symbol list
 * lazylib_load fills it from, and the stubs themselves. The stubs name the
 * library object through LAZYLIB, which the file defines before expanding
 * them (e.g. #define LAZYLIB lazylib_pq).
 */
#define LAZYLIB_MEMBER_F(ret, name, params, args) __typeof__(&name) name;
#define LAZYLIB_MEMBER_V(name, params, args) __typeof__(&name) name;
#define LAZYLIB_SYM_F(ret, name, params, args) {#name, (void **)&api.name},
#define LAZYLIB_SYM_V(name, params, args) {#name, (void **)&api.name},
#define LAZYLIB_STUB_F(ret, name, params, args)                                                    \
    ret name params                                                                                \
    {                                                                                              \
        lazylib_ready(&LAZYLIB);                                                                   \
        return api.name args;                                                                      \
    }
#define LAZYLIB_STUB_V(name, params, args)                                                         \
    void name params                                                                               \
    {                                                                                              \
        lazylib_ready(&LAZYLIB);                                                                   \
        api.name args;                                                                             \
    }

#endif
