/*
 * limits.c — see limits.h. The reserve is a fixed part (store files and
 * sockets, the log, the listening socket, libcurl and libpq) plus an eighth
 * of the limit for an embedded worker's pipes (three per running handler).
 */
#include "cli/limits.h"

#include <sys/resource.h>

#define RESERVE_FIXED 256
#define CONNS_MAX 4096u /* each connection also costs libmicrohttpd's memory pool */
#define CONNS_MIN 16u

uint64_t
limits_reserve(uint64_t nofile)
{
    return RESERVE_FIXED + nofile / 8;
}

void
limits_size(struct conn_limits *l)
{
    struct rlimit rl;
    uint64_t nofile = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        if (rl.rlim_cur < rl.rlim_max) {
            struct rlimit up = {rl.rlim_max, rl.rlim_max};
            if (setrlimit(RLIMIT_NOFILE, &up) == 0)
                rl.rlim_cur = rl.rlim_max;
        }
        nofile = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
    }
    l->nofile = nofile;
    if (l->max_connections == 0) {
        uint64_t reserve = limits_reserve(nofile);
        uint64_t n = nofile > reserve ? nofile - reserve : 0;
        l->max_connections = n > CONNS_MAX ? CONNS_MAX : n < CONNS_MIN ? CONNS_MIN : (unsigned)n;
    }
    if (l->per_ip == 0)
        l->per_ip = l->max_connections / 4 > 0 ? l->max_connections / 4 : 1;
}
