/*
 * conformance.h — what every file of the store conformance suite shares:
 * the fixture (struct fx: one test's store, manual clock and error buffer)
 * and its helpers, defined in conformance.c. Each conformance_*.c holds the
 * cases of one topic; CMake links them all into store_conformance, whose one
 * test registry (tests/test.h, TEST_SHARED) runs them against the backend
 * named on its command line.
 */
#ifndef JOBD_TESTS_STORE_CONFORMANCE_H
#define JOBD_TESTS_STORE_CONFORMANCE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/job.h"
#include "core/rules.h"
#include "store/store.h"
#define TEST_SHARED
#include "test.h"
#include "util/clock.h"

/* 2027-01-15T08:00:00Z: a fixed start so every time in a test is exact. */
#define T0 INT64_C(1800000000000000)
#define SEC INT64_C(1000000)
#define MS INT64_C(1000)

/* One test's store, clock and error buffer. Lives on the test's stack. */
struct fx {
    struct store *st;
    struct manual_clock mc;
    struct jobd_error err;
    char url[1200];
};

/* Ends a forked child, flushing what it wrote (stderr is a file here). */
void child_exit(int code);
/* The backend named on the command line: "sqlite", "pg", "pg_pooled",
 * "remote_sqlite" or "remote_pg". */
const char *backend(void);
/* Whether that backend is PostgreSQL (pooled, or under a remote store, or not). */
bool is_pg(void);
/*
 * Whether the worker's operations go through the remote store to a `jobd
 * server` on the database (remote_sqlite, remote_pg: tests/store/remote.c).
 * remote_attach, from fx_open, starts that server and routes f->st's worker
 * operations to it, or leaves the case out (TEST_NOT_HERE) when the routes
 * cannot express it; remote_detach, from fx_close, stops it.
 */
bool is_remote(void);
struct fx;
void remote_attach(struct fx *f);
void remote_detach(struct fx *f);
/*
 * store_complete_batch through the database store itself, also under a
 * remote store, whose reports are one request each (the API has no batch
 * of completions): for a case that completes thousands of jobs to reach
 * the state it checks, the last of them through the server.
 */
struct completion;
int db_complete_batch(struct fx *f, const struct completion *c, size_t n, int *outcome);
/* url as libpq takes it (without jobd's pooler=transaction), into buf. */
const char *libpq_url(const char *url, char *buf, size_t n);
/* PostgreSQL: points f->url at the run's database, without jobd's schema. */
void pg_fresh(struct fx *f);

/* Opens a fresh, migrated store on f with a manual clock at T0. */
void fx_open(struct fx *f);
/* Another connection to f's database, migrated, on f's clock (caller closes). */
struct store *fx_connect(struct fx *f);
void fx_close(struct fx *f);
/* The manual clock's now, in microseconds. */
int64_t now_of(struct fx *f);

/* Enqueues a job and returns its id (the test fails on error). */
int64_t enq(struct fx *f, const char *type, const char *queue, int32_t priority, int64_t run_at_us);
int64_t enq_spec(struct fx *f, const struct job_spec *s);
/* Claims up to limit jobs of any queue/type as worker "w1" into out. */
void claim(struct fx *f, int limit, int64_t lease_ms, struct job_list *out);
/* Claims exactly one job, which must be id, and returns its attempt. */
int32_t claim_one(struct fx *f, int64_t id);
/* The job id as the store has it (caller job_fini's it). */
struct job getj(struct fx *f, int64_t id);
enum job_status status_of(struct fx *f, int64_t id);

/*
 * SELECT count(*) ... run on the fixture's database directly, under the
 * interface: for promises about rows that no store_*() call can show.
 */
long raw_count(struct fx *f, const char *sql);
/* PostgreSQL: a libpq connection (PGconn) to f's database, kept for the
 * case (fx_close closes it): raw_count's, and the remote suites'. */
struct pg_conn;
struct pg_conn *fx_pg(struct fx *f);
/* The attempt history of job id into l (emptied first; caller finis it). */
struct attempt_list;
void attempts_of(struct fx *f, int64_t id, struct attempt_list *l);

#endif
