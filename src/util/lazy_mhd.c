/*
 * lazy_mhd.c — libmicrohttpd's functions that jobd calls, as stubs that load
 * it on first use: only `jobd server` (and a server embedding a worker)
 * starts a daemon (see lazylib.h for why; rows as in lazy_pq.c). The
 * variadic MHD_start_daemon goes through MHD_start_daemon_va; the info
 * getters are variadic only for future info types, and jobd's take no extra
 * argument.
 */
#include "util/lazylib.h"

#include <stdarg.h>
#include <stdint.h>
#include <sys/socket.h>

#include <microhttpd.h>

#define MHD_FUNCS(F, V)                                                                            \
    F(enum MHD_Result, MHD_add_response_header,                                                    \
      (struct MHD_Response * r, const char *h, const char *v), (r, h, v))                          \
    F(struct MHD_Response *, MHD_create_response_from_buffer,                                      \
      (size_t n, void *b, enum MHD_ResponseMemoryMode m), (n, b, m))                               \
    F(struct MHD_Response *, MHD_create_response_from_callback,                                    \
      (uint64_t n, size_t bs, MHD_ContentReaderCallback crc, void *cls,                            \
       MHD_ContentReaderFreeCallback crfc),                                                        \
      (n, bs, crc, cls, crfc))                                                                     \
    V(MHD_destroy_response, (struct MHD_Response * r), (r))                                        \
    F(int, MHD_get_connection_values,                                                              \
      (struct MHD_Connection * c, enum MHD_ValueKind k, MHD_KeyValueIterator it, void *cls),       \
      (c, k, it, cls))                                                                             \
    F(const char *, MHD_lookup_connection_value,                                                   \
      (struct MHD_Connection * c, enum MHD_ValueKind k, const char *key), (c, k, key))             \
    F(enum MHD_Result, MHD_queue_response,                                                         \
      (struct MHD_Connection * c, unsigned int s, struct MHD_Response *r), (c, s, r))              \
    F(MHD_socket, MHD_quiesce_daemon, (struct MHD_Daemon * d), (d))                                \
    V(MHD_resume_connection, (struct MHD_Connection * c), (c))                                     \
    V(MHD_stop_daemon, (struct MHD_Daemon * d), (d))                                               \
    V(MHD_suspend_connection, (struct MHD_Connection * c), (c))

static struct {
    MHD_FUNCS(LAZYLIB_MEMBER_F, LAZYLIB_MEMBER_V)
    __typeof__(&MHD_start_daemon_va) MHD_start_daemon_va;
    __typeof__(&MHD_get_connection_info) MHD_get_connection_info;
    __typeof__(&MHD_get_daemon_info) MHD_get_daemon_info;
} api;

static const struct lazylib_sym syms[] = {
    MHD_FUNCS(LAZYLIB_SYM_F, LAZYLIB_SYM_V){"MHD_start_daemon_va",
                                            (void **)&api.MHD_start_daemon_va},
    {"MHD_get_connection_info", (void **)&api.MHD_get_connection_info},
    {"MHD_get_daemon_info", (void **)&api.MHD_get_daemon_info},
};

struct lazylib lazylib_mhd = {
    .soname = JOBD_SONAME_MHD,
    .needed_for = "the HTTP API server (jobd server)",
    .syms = syms,
    .nsyms = sizeof syms / sizeof syms[0],
    .once = PTHREAD_ONCE_INIT,
};

#define LAZYLIB lazylib_mhd
MHD_FUNCS(LAZYLIB_STUB_F, LAZYLIB_STUB_V)

struct MHD_Daemon *
MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls,
                 MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
    lazylib_ready(&lazylib_mhd);
    va_list ap;
    va_start(ap, dh_cls);
    struct MHD_Daemon *d = api.MHD_start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
    va_end(ap);
    return d;
}

const union MHD_ConnectionInfo *
MHD_get_connection_info(struct MHD_Connection *c, enum MHD_ConnectionInfoType t, ...)
{
    lazylib_ready(&lazylib_mhd);
    return api.MHD_get_connection_info(c, t);
}

const union MHD_DaemonInfo *
MHD_get_daemon_info(struct MHD_Daemon *d, enum MHD_DaemonInfoType t, ...)
{
    lazylib_ready(&lazylib_mhd);
    return api.MHD_get_daemon_info(d, t);
}
