/*
 * lazy_pq.c — libpq's functions that jobd calls, as stubs that load libpq
 * on first use (see lazylib.h for why). Each F/V row is one function: its
 * return type (F only), name, parameters and the arguments passed on; the
 * definitions must match <libpq-fe.h>'s prototypes, so the compiler checks
 * every row. A function jobd starts calling gets a row here (the link fails
 * without it: libpq is not linked).
 */
#include "util/lazylib.h"

#include <libpq-fe.h>

#define PQ_FUNCS(F, V)                                                                             \
    F(int, PQbackendPID, (const PGconn *c), (c))                                                   \
    V(PQclear, (PGresult * r), (r))                                                                \
    F(char *, PQcmdStatus, (PGresult * r), (r))                                                    \
    F(char *, PQcmdTuples, (PGresult * r), (r))                                                    \
    F(PGconn *, PQconnectdb, (const char *ci), (ci))                                               \
    V(PQconninfoFree, (PQconninfoOption * o), (o))                                                 \
    F(PQconninfoOption *, PQconninfoParse, (const char *ci, char **e), (ci, e))                    \
    F(int, PQconsumeInput, (PGconn * c), (c))                                                      \
    F(int, PQenterPipelineMode, (PGconn * c), (c))                                                 \
    F(char *, PQerrorMessage, (const PGconn *c), (c))                                              \
    F(PGresult *, PQexec, (PGconn * c, const char *q), (c, q))                                     \
    F(PGresult *, PQexecParams,                                                                    \
      (PGconn * c, const char *q, int n, const Oid *t, const char *const *v, const int *l,         \
       const int *f, int rf),                                                                      \
      (c, q, n, t, v, l, f, rf))                                                                   \
    F(PGresult *, PQexecPrepared,                                                                  \
      (PGconn * c, const char *s, int n, const char *const *v, const int *l, const int *f,         \
       int rf),                                                                                    \
      (c, s, n, v, l, f, rf))                                                                      \
    F(int, PQexitPipelineMode, (PGconn * c), (c))                                                  \
    V(PQfinish, (PGconn * c), (c))                                                                 \
    V(PQfreemem, (void *p), (p))                                                                   \
    F(PGresult *, PQgetResult, (PGconn * c), (c))                                                  \
    F(int, PQgetisnull, (const PGresult *r, int t, int f), (r, t, f))                              \
    F(char *, PQgetvalue, (const PGresult *r, int t, int f), (r, t, f))                            \
    F(char *, PQhost, (const PGconn *c), (c))                                                      \
    F(int, PQnfields, (const PGresult *r), (r))                                                    \
    F(PGnotify *, PQnotifies, (PGconn * c), (c))                                                   \
    F(int, PQntuples, (const PGresult *r), (r))                                                    \
    F(int, PQpipelineSync, (PGconn * c), (c))                                                      \
    F(char *, PQport, (const PGconn *c), (c))                                                      \
    F(PGresult *, PQprepare, (PGconn * c, const char *s, const char *q, int n, const Oid *t),      \
      (c, s, q, n, t))                                                                             \
    V(PQreset, (PGconn * c), (c))                                                                  \
    F(char *, PQresultErrorField, (const PGresult *r, int f), (r, f))                              \
    F(char *, PQresultErrorMessage, (const PGresult *r), (r))                                      \
    F(ExecStatusType, PQresultStatus, (const PGresult *r), (r))                                    \
    F(int, PQsendQueryParams,                                                                      \
      (PGconn * c, const char *q, int n, const Oid *t, const char *const *v, const int *l,         \
       const int *f, int rf),                                                                      \
      (c, q, n, t, v, l, f, rf))                                                                   \
    F(int, PQsendQueryPrepared,                                                                    \
      (PGconn * c, const char *s, int n, const char *const *v, const int *l, const int *f,         \
       int rf),                                                                                    \
      (c, s, n, v, l, f, rf))                                                                      \
    F(PQnoticeProcessor, PQsetNoticeProcessor, (PGconn * c, PQnoticeProcessor p, void *a),         \
      (c, p, a))                                                                                   \
    F(int, PQsocket, (const PGconn *c), (c))                                                       \
    F(ConnStatusType, PQstatus, (const PGconn *c), (c))                                            \
    F(PGTransactionStatusType, PQtransactionStatus, (const PGconn *c), (c))

static struct {
    PQ_FUNCS(LAZYLIB_MEMBER_F, LAZYLIB_MEMBER_V)
} api;

static const struct lazylib_sym syms[] = {PQ_FUNCS(LAZYLIB_SYM_F, LAZYLIB_SYM_V)};

struct lazylib lazylib_pq = {
    .soname = JOBD_SONAME_PQ,
    .needed_for = "PostgreSQL stores (postgres:// URLs)",
    .syms = syms,
    .nsyms = sizeof syms / sizeof syms[0],
    .once = PTHREAD_ONCE_INIT,
};

#define LAZYLIB lazylib_pq
PQ_FUNCS(LAZYLIB_STUB_F, LAZYLIB_STUB_V)
