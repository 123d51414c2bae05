/*
 * test_worker_fence.c — the lease watchdog (src/worker/fence.c): an entry
 * fires once its lease end has passed, with its (id, attempt, tag), and not
 * before; extend/disarm tell the loop that it fired; re-arming resets it;
 * nothing fires after fence_free. Expired entries use a lease end in the
 * past, so the tests wait for the watchdog's answer (an event, bounded),
 * not for time to pass; the one timed wake-up asked for is 20 ms away.
 */
#include <pthread.h>
#include <time.h>

#include "test.h"
#include "util/clock.h"
#include "worker/fence.h"

struct fired {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int n;
    int64_t id[16];
    int32_t attempt[16];
    const void *tag[16];
};

static void
on_fire(void *arg, int64_t id, int32_t attempt, const void *tag)
{
    struct fired *f = arg;
    pthread_mutex_lock(&f->mu);
    if (f->n < 16) {
        f->id[f->n] = id;
        f->attempt[f->n] = attempt;
        f->tag[f->n] = tag;
    }
    f->n++;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

/* Waits (at most 10 s) until n entries fired; returns how many did. */
static int
wait_fired(struct fired *f, int n)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&f->mu);
    while (f->n < n && pthread_cond_timedwait(&f->cv, &f->mu, &until) == 0)
        ;
    int got = f->n;
    pthread_mutex_unlock(&f->mu);
    return got;
}

static void
fired_init(struct fired *f)
{
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
}

static const int TAG_A = 1, TAG_B = 2;

TEST(an_expired_lease_fires_once_and_a_live_one_does_not)
{
    struct fired got;
    fired_init(&got);
    struct fence *f = NULL;
    struct jobd_error e = {0};
    ASSERT_OK(fence_new(3, on_fire, &got, &f, &e), &e);
    int64_t now = clock_mono_now_us();
    fence_arm(f, 0, 10, 1, now + 3600 * 1000000LL, &TAG_A);
    fence_arm(f, 1, 11, 2, now - 1, &TAG_B);
    ASSERT_EQ(wait_fired(&got, 1), 1);
    ASSERT_EQ(got.id[0], 11);
    ASSERT_EQ(got.attempt[0], 2);
    ASSERT(got.tag[0] == &TAG_B);
    ASSERT(fence_fired(f, 1));
    ASSERT(!fence_fired(f, 0));
    /* The loop's answer came too late: extend says so, disarm too (once). */
    ASSERT(!fence_extend(f, 1, now + 3600 * 1000000LL));
    ASSERT(fence_disarm(f, 1));
    ASSERT(!fence_disarm(f, 1));
    ASSERT(!fence_fired(f, 1));
    /* A live lease extends and disarms quietly. */
    ASSERT(fence_extend(f, 0, now + 7200 * 1000000LL));
    ASSERT(!fence_disarm(f, 0));
    ASSERT(!fence_extend(f, 0, now + 7200 * 1000000LL)); /* not armed any more */
    fence_free(f);
    ASSERT_EQ(got.n, 1);
}

TEST(a_lease_end_that_passes_while_the_watchdog_sleeps_fires)
{
    struct fired got;
    fired_init(&got);
    struct fence *f = NULL;
    struct jobd_error e = {0};
    ASSERT_OK(fence_new(2, on_fire, &got, &f, &e), &e);
    /* The watchdog sleeps with nothing armed; an entry 20 ms away must wake
     * it, and it must fire on its own timed wake-up. */
    int64_t armed_at = clock_mono_now_us();
    fence_arm(f, 1, 42, 3, armed_at + 20000, &TAG_A);
    ASSERT_EQ(wait_fired(&got, 1), 1);
    ASSERT(clock_mono_now_us() >= armed_at + 20000); /* not before its end */
    ASSERT_EQ(got.id[0], 42);
    /* Re-arming the slot (a new run) clears "fired". */
    fence_arm(f, 1, 43, 1, clock_mono_now_us() + 3600 * 1000000LL, &TAG_A);
    ASSERT(!fence_fired(f, 1));
    ASSERT(!fence_disarm(f, 1));
    fence_free(f);
    ASSERT_EQ(got.n, 1);
}

TEST(an_extended_lease_does_not_fire_at_its_old_end)
{
    struct fired got;
    fired_init(&got);
    struct fence *f = NULL;
    struct jobd_error e = {0};
    ASSERT_OK(fence_new(2, on_fire, &got, &f, &e), &e);
    int64_t now = clock_mono_now_us();
    fence_arm(f, 0, 7, 1, now + 30000, &TAG_A);
    ASSERT(fence_extend(f, 0, now + 3600 * 1000000LL));
    /* A second entry, due after the first's old end, fires; the first not. */
    fence_arm(f, 1, 8, 1, now + 60000, &TAG_B);
    ASSERT_EQ(wait_fired(&got, 1), 1);
    ASSERT_EQ(got.id[0], 8);
    ASSERT(!fence_fired(f, 0));
    fence_free(f);
    ASSERT_EQ(got.n, 1);
}

/*
 * A claim arms hundreds of entries whose leases all end after the one the
 * watchdog already sleeps towards: none of them may wake it (each wake-up
 * was a futex call, a context switch and a scan of every entry, per job).
 * An entry that ends sooner still wakes it, and a firing is counted.
 */
TEST(arming_a_later_lease_does_not_wake_the_watchdog)
{
    struct fired got;
    fired_init(&got);
    struct fence *f = NULL;
    struct jobd_error e = {0};
    ASSERT_OK(fence_new(16, on_fire, &got, &f, &e), &e);
    int64_t now = clock_mono_now_us();
    fence_arm(f, 0, 1, 1, now + 3600 * 1000000LL, &TAG_A);
    usleep(20000); /* the watchdog now sleeps until slot 0's end */
    uint64_t scans = fence_scans(f);
    for (int i = 1; i <= 10; i++) {
        fence_arm(f, i, 1 + i, 1, now + (3600 + i) * 1000000LL, &TAG_A);
        usleep(5000); /* time enough to wake, were it signalled */
    }
    ASSERT(fence_scans(f) - scans <= 1); /* 1: a spurious wake-up, at most */
    ASSERT_EQ(fence_fired_count(f), 0);
    fence_arm(f, 11, 99, 2, clock_mono_now_us() + 20000, &TAG_B);
    ASSERT_EQ(wait_fired(&got, 1), 1);
    ASSERT_EQ(got.id[0], 99);
    ASSERT_EQ(fence_fired_count(f), 1);
    fence_free(f);
    ASSERT_EQ(got.n, 1);
}
