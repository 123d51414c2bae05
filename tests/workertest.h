/*
 * workertest.h — the two helpers every worker test wrote for itself
 * (header-only; needs test.h's ASSERT_OK):
 *
 *   struct store *st = test_store_open(url);   opened and migrated, or the
 *                                              test fails; store_close it
 *   pthread_create(&t, NULL, test_worker_run_thread, w);   runs
 *                                              jobd_worker_run(w) on a thread;
 *                                              its return value is the rc
 */
#ifndef JOBD_TESTS_WORKERTEST_H
#define JOBD_TESTS_WORKERTEST_H

#include <stdint.h>
#include <stdio.h>

#include "jobd.h"
#include "store/store.h"
#include "test.h"

static inline struct store *
test_store_open(const char *url)
{
    struct store *st = NULL;
    struct jobd_error err = {0};
    ASSERT_OK(store_open(url, &st, &err), &err);
    ASSERT_OK(store_migrate(st, &err), &err);
    return st;
}

/* A pthread start routine: arg is a jobd_worker *; returns its rc. */
static inline void *
test_worker_run_thread(void *arg)
{
    struct jobd_error err = {0};
    int rc = jobd_worker_run(arg, &err);
    if (rc != JOBD_OK)
        fprintf(stderr, "jobd_worker_run: %s\n", err.msg);
    return (void *)(intptr_t)rc;
}

#endif
