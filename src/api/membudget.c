/*
 * membudget.c — see membudget.h. A compare-and-swap loop, so concurrent
 * reservations never together pass the maximum.
 */
#include "api/membudget.h"

#include <malloc.h>

bool
membudget_take(struct membudget *b, size_t n)
{
    size_t cur = atomic_load(&b->used);
    do {
        if (n > b->max || cur > b->max - n)
            return false;
    } while (!atomic_compare_exchange_weak(&b->used, &cur, cur + n));
    return true;
}

void
membudget_give(struct membudget *b, size_t n)
{
    atomic_fetch_sub(&b->used, n);
}

void
membudget_trim(void)
{
    malloc_trim(0);
}
