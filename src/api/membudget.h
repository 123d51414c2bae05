/*
 * membudget.h — how much memory request bodies being received may hold at
 * once, across all connections, and giving memory back after big ones.
 *
 * Each body may be up to 16 MiB (a batch) and is parsed into a tree a few
 * times its size; two dozen concurrent batches once took the server near a
 * gigabyte, and glibc kept most of it afterwards. So a body reserves its
 * buffer from one shared budget as it grows; a body that would overrun the
 * budget is dropped as it arrives and answered 503 with Retry-After, and
 * the reservation is held until its request is answered (the parse tree
 * lives until then). After a big request, freed memory is returned to the
 * system (malloc_trim), since glibc keeps freed pages of its per-thread
 * arenas otherwise. Thread-safe (atomics).
 */
#ifndef JOBD_API_MEMBUDGET_H
#define JOBD_API_MEMBUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* Default budget: four 16 MiB batches at once. */
#define MEMBUDGET_DEFAULT (64u * 1024 * 1024)
/* Requests that reserved at least this much trim the heap when done. */
#define MEMBUDGET_TRIM_AT (1024u * 1024)

struct membudget {
    _Atomic size_t used;
    size_t max;
};

/* Reserves n bytes; false (nothing reserved) if that would pass max. */
bool membudget_take(struct membudget *b, size_t n);
/* Gives back n bytes reserved earlier. */
void membudget_give(struct membudget *b, size_t n);
/* Returns freed heap memory to the system (after a big request). */
void membudget_trim(void);

#endif
