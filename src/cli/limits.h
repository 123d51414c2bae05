/*
 * limits.h — how many connections `jobd server` takes at once, sized from
 * its descriptor limit. Every open connection holds a descriptor, and so do
 * the store (SQLite's database, WAL and shared-memory files, or PostgreSQL
 * sockets per thread), the embedded worker's handler pipes and the log: if
 * clients could take them all, the worker could not start a handler and
 * jobs would burn attempts until dead. So part of the limit is kept back
 * for those, the rest is for clients, and one address may hold only a
 * share of it, so that clients from other addresses keep being served.
 */
#ifndef JOBD_CLI_LIMITS_H
#define JOBD_CLI_LIMITS_H

#include <stdint.h>

struct conn_limits {
    uint64_t nofile;          /* the descriptor limit in force */
    unsigned max_connections; /* open at once */
    unsigned per_ip;          /* open at once from one address */
};

/* Descriptors kept back from clients out of nofile. */
uint64_t limits_reserve(uint64_t nofile);

/*
 * Raises the soft RLIMIT_NOFILE to the hard limit (services usually start
 * with a soft limit of 1,024 and a much higher hard one) and fills l from
 * it: max_connections is what is left after limits_reserve (at most 4,096,
 * at least 16), per_ip a quarter of that. A non-zero max_connections or
 * per_ip in l (from flags) is kept as given.
 */
void limits_size(struct conn_limits *l);

#endif
