/*
 * test_sqlite_procs.c — real concurrency on one SQLite file: four processes,
 * each with its own connection, claim in batches of 10 from 10,000 jobs and
 * complete what they claimed, all at once. Afterwards every job must have
 * been claimed by exactly one process exactly once (attempt == 1, its id in
 * exactly one claimer's log) and succeeded exactly once (every completion
 * acknowledged, none stale), with none missing.
 *
 * The clock is a manual one frozen at T0 in every process, so no lease can
 * expire and no job can legitimately be claimed twice.
 */
#include <stdbool.h>
#include <stdint.h>

#include "core/job.h"
#include "store/store.h"
#include "test.h"
#include "util/clock.h"

#define T0 INT64_C(1800000000000000)

/* Ends a forked child, flushing what it wrote (stderr is a file here). */
static void
child_exit(int code)
{
    fflush(NULL);
    _exit(code);
}

enum { NJOBS = 10000, NPROC = 4, BATCH = 10 };

#if defined(__SANITIZE_ADDRESS__)
/*
 * Under ASan: a smaller quarantine and no fill of fresh allocations. SQLite
 * (built by Debian without lookaside) drops and re-mallocs its page cache
 * at every transaction that follows another process's commit, which here
 * is nearly every transaction; with ASan's 256 MB quarantine each of those
 * pages is fresh memory and a page fault, and the run took 4x the time
 * (60 s instead of 15 s on a busy 2-core machine). Use-after-free in our
 * own code is still caught; ASAN_OPTIONS in the environment still wins.
 */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
    return "quarantine_size_mb=16:max_malloc_fill_size=0";
}
#endif

/* Completes the held attempts with one complete_batch; all must be live. */
static void
flush(struct store *st, int p, struct completion *c, size_t *n)
{
    struct jobd_error e = {0};
    int outcome[2 * BATCH];
    if (*n == 0)
        return;
    if (store_complete_batch(st, c, *n, outcome, &e) != JOBD_OK) {
        fprintf(stderr, "claimer %d: complete_batch: %s\n", p, e.msg);
        child_exit(5);
    }
    for (size_t i = 0; i < *n; i++) {
        if (outcome[i] != JOBD_OK) {
            fprintf(stderr, "claimer %d: job %lld stale\n", p, (long long)c[i].id);
            child_exit(6);
        }
    }
    *n = 0;
}

/*
 * One claimer: claims batches of 10 until the store is empty and logs each
 * claimed id. Its first batch is completed job by job; after that it holds
 * the attempts of two claims and completes them with one complete_batch (as
 * the worker's completer does), which keeps the number of fsync'd commits,
 * the cost that dominates here, low. Exit 0 only if every completion was
 * accepted.
 */
static void
claimer(const char *url, int p)
{
    struct manual_clock mc;
    manual_clock_init(&mc, T0);
    struct store *st = NULL;
    struct jobd_error e = {0};
    if (store_open(url, &st, &e) != JOBD_OK) {
        fprintf(stderr, "claimer %d: open: %s\n", p, e.msg);
        child_exit(2);
    }
    store_set_clock(st, &mc.clock);
    char logname[64];
    snprintf(logname, sizeof logname, "claimed.%d", p);
    FILE *log = fopen(test_path(logname), "w");
    if (log == NULL)
        child_exit(2);
    char wid[16];
    snprintf(wid, sizeof wid, "proc-%d", p);
    struct completion held[2 * BATCH];
    size_t n_held = 0;
    for (int round = 0;; round++) {
        struct job_list l = {0};
        struct claim_req r = {.worker_id = wid, .limit = BATCH};
        if (store_claim(st, &r, &l, &e) != JOBD_OK) {
            fprintf(stderr, "claimer %d: claim: %s\n", p, e.msg);
            child_exit(3);
        }
        /* Nothing returns to pending here, so one empty claim means done. */
        if (l.n == 0) {
            job_list_fini(&l);
            break;
        }
        for (size_t i = 0; i < l.n; i++) {
            fprintf(log, "%lld %d\n", (long long)l.v[i].id, (int)l.v[i].attempt);
            if (round == 0) {
                if (store_complete(st, l.v[i].id, l.v[i].attempt, "{\"ok\":true}", NULL, &e) !=
                    JOBD_OK) {
                    fprintf(stderr, "claimer %d: complete %lld: %s\n", p, (long long)l.v[i].id,
                            e.msg);
                    child_exit(4);
                }
                continue;
            }
            held[n_held++] = (struct completion){
                .id = l.v[i].id, .attempt = l.v[i].attempt, .result = "{\"ok\":true}"};
        }
        job_list_fini(&l);
        if (n_held + BATCH > 2 * BATCH)
            flush(st, p, held, &n_held);
    }
    flush(st, p, held, &n_held);
    fclose(log);
    store_close(st);
    child_exit(0);
}

/* Every id in exactly one claimer's log (claimed.P), with attempt 1; marks seen[id]. */
static void
check_claim_logs(unsigned char *seen)
{
    int per_proc[NPROC] = {0};
    int64_t total = 0;
    for (int p = 0; p < NPROC; p++) {
        char logname[64];
        snprintf(logname, sizeof logname, "claimed.%d", p);
        FILE *log = fopen(test_path(logname), "r");
        ASSERT(log != NULL);
        long long id;
        int attempt;
        while (fscanf(log, "%lld %d", &id, &attempt) == 2) {
            if (id < 1 || id > NJOBS)
                TEST_FAIL("claimer %d claimed unknown id %lld", p, id);
            if (seen[id])
                TEST_FAIL("job %lld claimed twice", id);
            if (attempt != 1)
                TEST_FAIL("job %lld claimed with attempt %d", id, attempt);
            seen[id] = 1;
            per_proc[p]++;
            total++;
        }
        fclose(log);
    }
    ASSERT_EQ(total, NJOBS);
    for (int p = 0; p < NPROC; p++) {
        printf("claimer %d: %d jobs\n", p, per_proc[p]);
        ASSERT(per_proc[p] > 0); /* all four really ran concurrently */
    }
}

/* The store agrees with the logs: every job succeeded, once, with attempt 1. */
static void
check_store_agrees(struct store *st, const unsigned char *seen)
{
    struct jobd_error e = {0};
    struct job_filter flt = {.status = STORE_ANY, .limit = 1000};
    int64_t listed = 0;
    for (;;) {
        struct job_list l = {0};
        int64_t next = 0;
        ASSERT_OK(store_list(st, &flt, &l, &next, &e), &e);
        for (size_t i = 0; i < l.n; i++) {
            ASSERT_EQ(l.v[i].status, JOB_SUCCEEDED);
            ASSERT_EQ(l.v[i].attempt, 1);
            ASSERT_STR_EQ(l.v[i].result, "{\"ok\":true}");
            ASSERT(seen[l.v[i].id]);
            listed++;
        }
        job_list_fini(&l);
        if (next == 0)
            break;
        flt.before_id = next;
    }
    ASSERT_EQ(listed, NJOBS);
    struct queue_stat *qs = NULL;
    size_t nq = 0;
    ASSERT_OK(store_queue_stats(st, &qs, &nq, &e), &e);
    ASSERT_EQ(nq, 1);
    ASSERT_EQ(qs[0].count[JOB_SUCCEEDED], NJOBS);
    ASSERT_EQ(qs[0].count[JOB_PENDING] + qs[0].count[JOB_RUNNING], 0);
    free(qs);
}

TEST(four_processes_claim_10000_jobs_exactly_once)
{
    char url[1100];
    snprintf(url, sizeof url, "sqlite:%s", test_path("procs.db"));
    struct manual_clock mc;
    manual_clock_init(&mc, T0);
    struct store *st = NULL;
    struct jobd_error e = {0};
    ASSERT_OK(store_open(url, &st, &e), &e);
    ASSERT_OK(store_migrate(st, &e), &e);
    store_set_clock(st, &mc.clock);
    static struct job_spec specs[1000];
    for (int i = 0; i < 1000; i++)
        specs[i] = (struct job_spec){.type = "work", .priority = i % 7};
    for (int k = 0; k < NJOBS / 1000; k++)
        ASSERT_OK(store_enqueue_batch(st, specs, 1000, NULL, NULL, &e), &e);

    int64_t t_claim = clock_mono_now_us();
    fflush(NULL); /* or the children repeat what is buffered */
    pid_t pids[NPROC];
    for (int p = 0; p < NPROC; p++) {
        pids[p] = fork();
        ASSERT(pids[p] >= 0);
        if (pids[p] == 0)
            claimer(url, p);
    }
    for (int p = 0; p < NPROC; p++) {
        int status = 0;
        ASSERT_EQ(waitpid(pids[p], &status, 0), pids[p]);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            TEST_FAIL("claimer %d failed (status 0x%x)", p, status);
    }

    static unsigned char seen[NJOBS + 1];
    check_claim_logs(seen);
    check_store_agrees(st, seen);
    store_close(st);
    printf("%d jobs claimed and completed by %d processes in %lld ms\n", NJOBS, NPROC,
           (long long)(clock_mono_now_us() - t_claim) / 1000);
}
