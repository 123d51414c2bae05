/*
 * lazy_sqlite.c — SQLite's functions that jobd calls, as stubs that load
 * libsqlite3 on first use: only a SQLite store (sqlite: URLs and plain
 * paths, the default) needs it, so a process on PostgreSQL or on a jobd
 * server (a libjobd C worker, `jobd worker --db postgres://...`) does not
 * map it (see lazylib.h for why; rows as in lazy_pq.c: each must match
 * <sqlite3.h>'s prototype, and a function jobd starts calling gets a row).
 */
#include "util/lazylib.h"

#include <sqlite3.h>

#define SQLITE_FUNCS(F, V)                                                                         \
    F(int, sqlite3_bind_int, (sqlite3_stmt * s, int i, int v), (s, i, v))                          \
    F(int, sqlite3_bind_double, (sqlite3_stmt * s, int i, double v), (s, i, v))                    \
    F(int, sqlite3_bind_int64, (sqlite3_stmt * s, int i, sqlite3_int64 v), (s, i, v))              \
    F(int, sqlite3_bind_null, (sqlite3_stmt * s, int i), (s, i))                                   \
    F(int, sqlite3_bind_parameter_count, (sqlite3_stmt * s), (s))                                  \
    F(int, sqlite3_bind_text, (sqlite3_stmt * s, int i, const char *v, int n, void (*d)(void *)),  \
      (s, i, v, n, d))                                                                             \
    F(int, sqlite3_busy_handler, (sqlite3 * db, int (*h)(void *, int), void *a), (db, h, a))       \
    F(int, sqlite3_busy_timeout, (sqlite3 * db, int ms), (db, ms))                                 \
    F(int, sqlite3_changes, (sqlite3 * db), (db))                                                  \
    F(int, sqlite3_clear_bindings, (sqlite3_stmt * s), (s))                                        \
    F(int, sqlite3_close, (sqlite3 * db), (db))                                                    \
    F(int, sqlite3_column_bytes, (sqlite3_stmt * s, int c), (s, c))                                \
    F(int, sqlite3_column_count, (sqlite3_stmt * s), (s))                                          \
    F(double, sqlite3_column_double, (sqlite3_stmt * s, int c), (s, c))                            \
    F(int, sqlite3_column_int, (sqlite3_stmt * s, int c), (s, c))                                  \
    F(sqlite3_int64, sqlite3_column_int64, (sqlite3_stmt * s, int c), (s, c))                      \
    F(const unsigned char *, sqlite3_column_text, (sqlite3_stmt * s, int c), (s, c))               \
    F(int, sqlite3_column_type, (sqlite3_stmt * s, int c), (s, c))                                 \
    F(sqlite3_filename, sqlite3_db_filename, (sqlite3 * db, const char *name), (db, name))         \
    F(int, sqlite3_db_readonly, (sqlite3 * db, const char *name), (db, name))                      \
    F(const char *, sqlite3_errmsg, (sqlite3 * db), (db))                                          \
    F(const char *, sqlite3_errstr, (int rc), (rc))                                                \
    F(int, sqlite3_exec,                                                                           \
      (sqlite3 * db, const char *sql, int (*cb)(void *, int, char **, char **), void *a,           \
       char **errmsg),                                                                             \
      (db, sql, cb, a, errmsg))                                                                    \
    F(int, sqlite3_extended_result_codes, (sqlite3 * db, int on), (db, on))                        \
    F(int, sqlite3_finalize, (sqlite3_stmt * s), (s))                                              \
    V(sqlite3_free, (void *p), (p))                                                                \
    F(int, sqlite3_get_autocommit, (sqlite3 * db), (db))                                           \
    F(sqlite3_int64, sqlite3_last_insert_rowid, (sqlite3 * db), (db))                              \
    F(int, sqlite3_open_v2, (const char *f, sqlite3 **db, int flags, const char *vfs),             \
      (f, db, flags, vfs))                                                                         \
    F(int, sqlite3_prepare_v2,                                                                     \
      (sqlite3 * db, const char *sql, int n, sqlite3_stmt **s, const char **tail),                 \
      (db, sql, n, s, tail))                                                                       \
    F(int, sqlite3_prepare_v3,                                                                     \
      (sqlite3 * db, const char *sql, int n, unsigned int flags, sqlite3_stmt **s,                 \
       const char **tail),                                                                         \
      (db, sql, n, flags, s, tail))                                                                \
    F(int, sqlite3_reset, (sqlite3_stmt * s), (s))                                                 \
    F(int, sqlite3_step, (sqlite3_stmt * s), (s))                                                  \
    F(int, sqlite3_wal_checkpoint_v2,                                                              \
      (sqlite3 * db, const char *name, int mode, int *log, int *ckpt),                             \
      (db, name, mode, log, ckpt))                                                                 \
    F(void *, sqlite3_wal_hook,                                                                    \
      (sqlite3 * db, int (*h)(void *, sqlite3 *, const char *, int), void *a), (db, h, a))

static struct {
    SQLITE_FUNCS(LAZYLIB_MEMBER_F, LAZYLIB_MEMBER_V)
} api;

/* sqlite3_config is variadic, so it has no stub row: its one use has a
 * function of its own below (lazylib_sqlite_stmt_journal_spill). */
static int (*config_fn)(int op, ...);

static const struct lazylib_sym syms[] = {
    SQLITE_FUNCS(LAZYLIB_SYM_F, LAZYLIB_SYM_V){"sqlite3_config", (void **)&config_fn}};

struct lazylib lazylib_sqlite = {
    .soname = JOBD_SONAME_SQLITE,
    .needed_for = "SQLite stores (sqlite: URLs and plain paths)",
    .syms = syms,
    .nsyms = sizeof syms / sizeof syms[0],
    .once = PTHREAD_ONCE_INIT,
};

#define LAZYLIB lazylib_sqlite
SQLITE_FUNCS(LAZYLIB_STUB_F, LAZYLIB_STUB_V)

int
lazylib_sqlite_stmt_journal_spill(int bytes)
{
    lazylib_ready(&LAZYLIB);
    return config_fn(SQLITE_CONFIG_STMTJRNL_SPILL, bytes);
}
