/*
 * sqlite/open.c — the SQLite backend: the connection (WAL, synchronous=FULL,
 * busy_timeout), waiting for changes, and the operations table. The small
 * helpers every SQLite file shares are in sqlite/stmt.c (sqlite/internal.h).
 * The job operations live by concern in
 * sqlite/enqueue.c, sqlite/read.c, sqlite/report.c and
 * sqlite/admin.c, with their shared moves in sqlite/jobs.c; the
 * schema and its migrations in sqlite/schema.c.
 *
 * SQLite serializes writers, so each transition is one BEGIN IMMEDIATE
 * transaction: it takes the write lock before reading, which makes the
 * guarded UPDATE inside it exactly as atomic as PostgreSQL's single
 * conditional statement, and lets busy_timeout wait for the lock instead of
 * failing with SQLITE_BUSY_SNAPSHOT on a lock upgrade.
 */
#include "store/backends.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/backoff.h"
#include "core/err.h"
#include "store/sqlite/ckpt.h"
#include "store/sqlite/wake.h"
#include "store/sqlite/internal.h"
#include "store/operator_int.h"
#include "store/stats_int.h"
#include "util/errtext.h"
#include "util/lazylib.h"

/* How long a connection waits for another writer's lock before giving up. */
#define SQ_BUSY_TIMEOUT_MS 30000

/* ------------------------------------------------------------------ */
/* connection and migrations                                           */

static void
sq_close(struct store *st)
{
    struct sqlite_store *s = sq_of(st);
    for (size_t i = 0; i < s->n_cached; i++) {
        sqlite3_finalize(s->cache[i].stmt);
        free(s->cache[i].sql);
    }
    sq_wake_close(s->wake);
    sq_ckpt_stop(s->ckpt);
    sq_stats_free(s);
    sqlite3_close(s->db);
    qlimits_cache_fini(&s->qlim);
    free(s->path);
    free(s);
}

static int
sq_ping(struct store *st, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    int rc = sq_file_probe(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = sq_prepare(s, "SELECT count(*) FROM sqlite_schema", &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    rc = sq_step_row(s, stmt, "ping", err);
    sq_reset(stmt);
    return rc < 0 ? rc : JOBD_OK;
}

/*
 * store_wait on SQLite: inotify on the WAL (sqlite/wake.c) says that some
 * connection wrote frames; PRAGMA data_version says that a commit by
 * another connection is visible to us. Both are needed: a commit writes its
 * frames (the inotify event) before it fsyncs them and publishes them in
 * the wal-index (-shm, mmap: no event), so a claim made at the event alone
 * can miss the job and nothing would wake us again. So after a write is
 * seen, the version is re-read until it moves (then: woken); a version that
 * moved between two calls wakes at once, so nothing committed while the
 * caller was busy claiming is lost.
 *
 * A move does not settle every write seen before it: one drain can take
 * the frames of two commits, the first published and the second still in
 * its fsync (the worker's own completion, then an enqueue), and the move
 * of the first must not use up the second. Once that happened the second's
 * publication moved the version unseen, the next enqueue's event was taken
 * for a move that was not its own, and its job waited for the commit after
 * it: 10 % of due-now jobs one enqueue interval late (the benchmark's
 * p90-p99 of 11-12 ms). So the re-reads go on after a wake-up, for
 * SQ_SETTLE_MS after the last write seen (a rolled-back transaction that
 * spilled to the WAL, or a commit stuck in a very slow fsync: past that the
 * caller's poll covers it): every SQ_SETTLE_STEP_MS at first, then an
 * eighth of the write's age apart (a commit whose fsync takes T is seen
 * within T/8; ~50 reads of the version after a burst).
 */
#define SQ_SETTLE_STEP_MS 1
#define SQ_SETTLE_MS 2000

static int
sq_data_version(struct sqlite_store *s, int64_t *v, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, "PRAGMA data_version", &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    rc = sq_step_row(s, stmt, "read data_version", err);
    if (rc == 1)
        *v = sqlite3_column_int64(stmt, 0);
    sq_reset(stmt);
    if (rc == 0)
        return jobd_error_set(err, JOBD_E_STORE, "db", "PRAGMA data_version returned no row");
    return rc < 0 ? rc : JOBD_OK;
}

/*
 * A fingerprint of the running jobs with a cancel requested (how many, and
 * the sums of their ids and attempts) into sig: when it changes between
 * two wake-ups, a cancel was requested meanwhile (STORE_WAKE_CANCEL). One
 * read of the partial index jobs_cancel_requested (migration 12).
 */
static int
sq_cancel_sig(struct sqlite_store *s, char sig[64], struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT count(*), coalesce(sum(id), 0), coalesce(sum(attempt), 0)"
                        " FROM jobs"
                        " WHERE cancel_requested = 1",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    rc = sq_step_row(s, stmt, "read cancels", err);
    if (rc == 1)
        snprintf(sig, 64, "%lld/%lld/%lld", (long long)sqlite3_column_int64(stmt, 0),
                 (long long)sqlite3_column_int64(stmt, 1),
                 (long long)sqlite3_column_int64(stmt, 2));
    sq_reset(stmt);
    if (rc == 0)
        return jobd_error_set(err, JOBD_E_STORE, "db", "reading cancels returned no row");
    return rc < 0 ? rc : JOBD_OK;
}

/* Sets up the WAL watch once; true if store_wait has a real signal. */
static bool
sq_wait_ready(struct store *st)
{
    struct sqlite_store *s = sq_of(st);
    if (!s->wake_tried) {
        s->wake_tried = true;
        struct jobd_error err = {0};
        /* The watch first, then the version: a commit in between shows as
         * a moved version at the first wait. */
        if (sq_wake_open(sqlite3_db_filename(s->db, "main"), &s->wake) != 0) {
            s->wake = NULL; /* no inotify here: store_wait naps, the caller polls */
        } else if (sq_data_version(s, &s->wake_version, &err) != JOBD_OK ||
                   sq_cancel_sig(s, s->cancel_sig, &err) != JOBD_OK) {
            sq_wake_close(s->wake);
            s->wake = NULL;
        }
        s->last_write_us = 0;
    }
    return s->wake != NULL;
}

/* How long sq_wait_watched may sleep before it re-reads the version. */
static int
settle_step_ms(const struct sqlite_store *s, int64_t now)
{
    if (s->last_write_us == 0)
        return INT_MAX;
    int64_t step = (now - s->last_write_us) / 1000 / 8;
    return step < SQ_SETTLE_STEP_MS ? SQ_SETTLE_STEP_MS : (int)step;
}

static int
sq_wait_watched(struct sqlite_store *s, int timeout_ms, struct jobd_error *err)
{
    int64_t deadline = clock_mono_now_us() + (int64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000;
    for (;;) {
        int64_t v = 0;
        int rc = sq_data_version(s, &v, err);
        if (rc != JOBD_OK)
            return rc;
        int64_t now = clock_mono_now_us();
        if (v != s->wake_version) {
            s->wake_version = v; /* last_write_us stays: see above */
            char sig[64];
            if ((rc = sq_cancel_sig(s, sig, err)) != JOBD_OK)
                return rc;
            bool cancels = strcmp(sig, s->cancel_sig) != 0;
            memcpy(s->cancel_sig, sig, sizeof sig);
            return STORE_WAKE_JOBS | (cancels ? STORE_WAKE_CANCEL : 0);
        }
        if (s->last_write_us != 0 && now - s->last_write_us >= SQ_SETTLE_MS * 1000LL)
            s->last_write_us = 0; /* that write never became a visible commit */
        int64_t left_us = deadline - now;
        if (left_us <= 0)
            return 0;
        int ms = (int)((left_us + 999) / 1000);
        int step = settle_step_ms(s, now);
        int r = sq_wake_wait(s->wake, ms < step ? ms : step);
        if (r < 0)
            return jobd_error_set(err, JOBD_E_IO, "db", "watching the WAL of '%s': %s", s->path,
                                  errno_text(errno));
        if (r == 1)
            s->last_write_us = clock_mono_now_us();
    }
}

/* store_offload: the worker's loop connection; when no thread can start,
 * its checkpoints stay inline. */
static void
sq_offload(struct store *st)
{
    struct sqlite_store *s = sq_of(st);
    const char *file = sqlite3_db_filename(s->db, "main");
    if (s->ckpt == NULL && file != NULL && file[0] != '\0' && sq_ckpt_start(file, &s->ckpt) != 0)
        s->ckpt = NULL;
}

static int
sq_wait(struct store *st, int timeout_ms, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    if (sq_wait_ready(st)) {
        int rc = sq_wait_watched(s, timeout_ms, err);
        if (rc >= 0)
            return rc;
        sq_wake_close(s->wake);
        s->wake = NULL;
        s->wake_tried = false; /* the next call sets it up again */
        return rc;
    }
    /* No cross-process signal: a short nap is the poll interval. */
    int ms = timeout_ms < 50 ? timeout_ms : 50;
    if (ms > 0) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    return 1;
}

/*
 * The busy handler: waits for another connection's write lock. SQLite's own
 * (sqlite3_busy_timeout) sleeps up to 100 ms between polls, and a writer
 * that commits and at once begins its next transaction wins the lock again
 * before a sleeper wakes, so under steady contention a waiter can starve
 * for seconds. Short, jittered polls (0.1 .. 0.5 ms) give every waiter
 * many chances at the gap between two transactions of another process;
 * the polls slow down (to 0.1 .. 2 ms) when the wait is long, to spare CPU.
 */
static int
sq_busy(void *ctx, int count)
{
    struct sqlite_store *s = ctx;
    int64_t now = clock_mono_now_us();
    if (count == 0)
        s->busy_since_us = now;
    if (now - s->busy_since_us >= (int64_t)SQ_BUSY_TIMEOUT_MS * 1000)
        return 0;
    long us = 100 + (long)backoff_rand_splitmix(&s->rng, count < 10 ? 399 : 1899);
    struct timespec ts = {.tv_sec = 0, .tv_nsec = us * 1000L};
    nanosleep(&ts, NULL);
    return 1;
}

/*
 * Checkpoints, replacing SQLite's auto-checkpoint. That one runs after every
 * commit once the WAL holds over 1000 frames; with several processes taking
 * turns, some always hold a read mark when a writer could restart the WAL,
 * so the WAL stays over the mark and every commit pays a checkpoint (two
 * more fsyncs). Here a connection checkpoints (PASSIVE: never waits) only
 * after another SQ_CKPT_FRAMES frames were appended since its last one; a
 * worker's loop connection (store_offload) hands it to a thread (sqlite/ckpt.h).
 */
#define SQ_CKPT_FRAMES 1000
/*
 * Only a writer restarts the WAL, and only once a checkpoint has copied all
 * of it: a loop that keeps committing while its thread checkpoints always
 * leaves a few frames behind, so under steady load the WAL would only grow.
 * Past this size the loop's connection checkpoints inline again (cheap: the
 * thread has copied nearly everything), and its next commit restarts it.
 */
#define SQ_CKPT_INLINE_FRAMES (4 * SQ_CKPT_FRAMES)

static int
sq_wal_hook(void *ctx, sqlite3 *db, const char *name, int frames)
{
    struct sqlite_store *s = ctx;
    if (frames < s->ckpt_frames)
        s->ckpt_frames = 0; /* the WAL was restarted */
    if (frames - s->ckpt_frames >= SQ_CKPT_FRAMES) {
        s->ckpt_frames = frames;
        if (s->ckpt != NULL && frames < SQ_CKPT_INLINE_FRAMES)
            sq_ckpt_request(s->ckpt);
        else /* BUSY (another checkpointer) or an I/O error: the next one retries. */
            sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    }
    return SQLITE_OK;
}

/* The operator half of the vtable (store/operator.h). */
static const struct store_operator_ops sqlite_operator_ops = {
    .attempts = sq_op_attempts,
    .bulk_batch = sq_op_bulk_batch,
    .worker_announce = sq_op_worker_announce,
    .worker_seen = sq_op_worker_seen,
    .worker_withdraw = sq_op_worker_withdraw,
    .worker_list = sq_op_worker_list,
    .prune_status = sq_op_prune_status,
    .queue_limits = sq_op_queue_limits,
    .pending_queue_types = sq_op_pending_queue_types,
    .queue_groups = sq_op_queue_groups,
    .queue_group_counts = sq_op_queue_group_counts,
    .lease_set = sq_op_lease_set,
    .lease_check = sq_op_lease_check,
    .lease_replayed = sq_op_lease_replayed,
    .stats_series = sq_op_stats_series,
    .stats_throughput = sq_op_stats_throughput,
    .stats_prune = sq_op_stats_prune,
    .keys_expire = sq_op_keys_expire,
};

static const struct store_ops sqlite_ops = {
    .name = "sqlite",
    /* One writer at a time (a second connection queues behind the first);
     * other processes' commits are seen only through the WAL watch
     * (store_wait_ready), so a worker with no watch polls often. */
    .caps = {.watched_poll_ms = 1000, .blind_poll_ms = 100, .label = "SQLite"},
    .close = sq_close,
    .migrate = sq_migrate,
    .schema_status = sq_schema_status,
    .ping = sq_ping,
    .enqueue = sq_op_enqueue,
    .enqueue_batch = sq_op_enqueue_batch,
    .get = sq_op_get,
    .list = sq_op_list,
    .search = sq_op_search,
    .claim = sq_op_claim,
    .heartbeat = sq_op_heartbeat,
    .complete = sq_op_complete,
    .complete_batch = sq_op_complete_batch,
    .fail = sq_op_fail,
    .fail_batch = sq_op_fail_batch,
    .reap = sq_op_reap,
    .release = sq_op_release,
    .cancel = sq_op_cancel,
    .retry = sq_op_retry,
    .queue_pause = sq_op_queue_pause,
    .queue_stats = sq_op_queue_stats,
    .prune = sq_op_prune,
    .next_run_at = sq_op_next_run_at,
    .wait = sq_wait,
    .wait_ready = sq_wait_ready,
    .offload = sq_offload,
    .schedule_put = sq_op_schedule_put,
    .schedule_get = sq_op_schedule_get,
    .schedule_list = sq_op_schedule_list,
    .schedule_delete = sq_op_schedule_delete,
    .schedule_pause = sq_op_schedule_pause,
    .schedule_trigger = sq_op_schedule_trigger,
    .schedule_materialize = sq_op_schedule_materialize,
    .clock_went_back = sq_op_clock_went_back,
    .oper = &sqlite_operator_ops,
    .job_states = sq_op_job_states,
    .cancels_requested = sq_op_cancels_requested,
    .progress = sq_op_progress,
    .progress_attach = sq_op_progress_attach,
    .deps_attach = sq_op_deps_attach,
    .parents_attach = sq_op_parents_attach,
    .workflow_submit = sq_op_workflow_submit,
    .workflow_get = sq_op_workflow_get,
    .workflow_ids = sq_op_workflow_ids,
    .workflow_add = sq_op_workflow_add,
    .workflow_cancel = sq_op_workflow_cancel,
    .workflow_retry = sq_op_workflow_retry,
    .workflow_delete = sq_op_workflow_delete,
    .attempt_logs_put = sq_op_attempt_logs_put,
    .attempt_log_get = sq_op_attempt_log_get,
    .attempt_log_sizes = sq_op_attempt_log_sizes,
    .events_listen = sq_op_events_listen,
    .events_head = sq_op_events_head,
    .events_read = sq_op_events_read,
    .events_resumable = sq_op_events_resumable,
};

/* Runs a PRAGMA that returns at most one row; *value gets its text if asked. */
static int
sq_pragma(struct sqlite_store *s, const char *sql, char *value, size_t len, struct jobd_error *err)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &stmt, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(stmt);
        if (rc == SQLITE_ROW && value != NULL) {
            const unsigned char *t = sqlite3_column_text(stmt, 0);
            snprintf(value, len, "%s", t ? (const char *)t : "");
        }
        if (rc == SQLITE_ROW || rc == SQLITE_DONE)
            rc = SQLITE_OK;
    }
    sqlite3_finalize(stmt);
    if (rc == SQLITE_OK)
        return JOBD_OK;
    if ((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT)
        return jobd_error_set(err, JOBD_E_STORE, "db", "'%s' is not a SQLite database (%s)",
                              s->path, sqlite3_errmsg(s->db));
    return sq_error(s, rc, sql, err);
}

/*
 * Creates the database file, if there is none, with mode 0600 whatever the
 * umask: it holds every payload and result. SQLite gives its -wal and -shm
 * files the mode of the database file, so they are 0600 too. An existing
 * file keeps the mode its owner gave it (docs/OPERATIONS.md, Security).
 */
static int
create_private(const char *path, struct jobd_error *err)
{
    if (path[0] == ':' || strncmp(path, "file:", 5) == 0)
        return JOBD_OK; /* ":memory:" and URI names are SQLite's to make */
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno == EEXIST ? JOBD_OK
                               : jobd_error_set(err, JOBD_E_UNAVAILABLE, "db",
                                                "cannot create SQLite database '%s': %s", path,
                                                errno_text(errno));
    int rc = fchmod(fd, 0600) == 0 ? JOBD_OK
                                   : jobd_error_set(err, JOBD_E_IO, "db", "cannot chmod '%s': %s",
                                                    path, errno_text(errno));
    close(fd);
    return rc;
}

/*
 * Statement journals in memory up to this size. Every INSERT into jobs
 * fires triggers (queue counts, events, dependencies), so inside a
 * transaction SQLite journals each statement's pages for a statement-level
 * rollback; one job's insert changes a leaf of each of jobs' 14 indexes,
 * about 17 pages, just over SQLite's default of 64 KiB in memory. Past
 * that the journal spilled to a temporary file, created and unlinked in
 * every transaction, then a write() per page for the rest of it: a group
 * commit of 10 jobs wrote ~115 journal pages to a file (230 pwrite calls),
 * a quarter of the server's CPU at 10 connections (docs/BENCHMARKS.md,
 * "SQLite's statement journal"). SQLite keeps an in-memory journal in one
 * chunk of this size, allocated by each statement that journals a page
 * and freed when it ends, so the limit is also a malloc per such
 * statement: at 1 MiB (mmap'ed, and under ASan poisoned whole) a workflow
 * fan-out's thousands of statements took 20 times as long in the kernel.
 * 120 KiB stays under malloc's mmap threshold (128 KiB) and holds 29
 * pages, room for a job's insert with events and groups on; a larger
 * statement spills to a file as before.
 */
#define SQ_STMT_JOURNAL_MEM (120 * 1024)

static void
configure_library(void)
{
    /* Before the first open initialises SQLite; SQLITE_MISUSE after it (a
     * process that opened SQLite another way first) keeps the default. */
    (void)lazylib_sqlite_stmt_journal_spill(SQ_STMT_JOURNAL_MEM);
}

static pthread_once_t configured = PTHREAD_ONCE_INIT;

int
store_sqlite_open(const char *path, struct store **out, struct jobd_error *err)
{
    *out = NULL;
    if (path == NULL || *path == '\0')
        return jobd_error_set(err, JOBD_E_INVALID, "db", "empty SQLite database path");
    const char *why;
    if (!lazylib_load(&lazylib_sqlite, &why))
        return jobd_error_set(err, JOBD_E_UNAVAILABLE, "db", "%s", why);
    pthread_once(&configured, configure_library);
    struct sqlite_store *s = calloc(1, sizeof *s);
    if (s == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    s->base.ops = &sqlite_ops;
    s->path = strdup(path);
    if (s->path == NULL) {
        free(s);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    uint64_t seed = (uint64_t)clock_mono_now_us() ^ ((uint64_t)getpid() << 32);
    s->rng = seed ^ (uint64_t)(uintptr_t)s;

    int rc = sq_file_before_open(path, err);
    if (rc == JOBD_OK)
        rc = create_private(path, err);
    if (rc != JOBD_OK) {
        sq_close(&s->base);
        return rc;
    }
    rc = sqlite3_open_v2(path, &s->db,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        if (s->db == NULL) {
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory opening SQLite");
        } else {
            rc = jobd_error_set(
                err, (rc & 0xff) == SQLITE_CANTOPEN ? JOBD_E_UNAVAILABLE : JOBD_E_STORE, "db",
                "cannot open SQLite database '%s': %s", path, sqlite3_errmsg(s->db));
        }
        sq_close(&s->base);
        return rc;
    }
    if (sqlite3_db_readonly(s->db, "main") == 1) {
        /* SQLite falls back to read-only silently; every write would fail later. */
        rc = jobd_error_set(err, JOBD_E_UNAVAILABLE, "db",
                            "the SQLite database '%s' is read-only for this process (uid %ld): "
                            "jobd must write it; fix the permissions of the file and its "
                            "directory",
                            path, (long)getuid());
        sq_close(&s->base);
        return rc;
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_handler(s->db, sq_busy, s);
    sqlite3_wal_hook(s->db, sq_wal_hook, s);
    /*
     * WAL lets readers (job show, list, stats) run beside the one writer.
     * synchronous=FULL: in WAL mode NORMAL may lose the last commits on power
     * loss, and an enqueue we acknowledged (201) must survive that (claims
     * and heartbeats relax it per transaction: see sq_set_sync).
     */
    char mode[32] = "";
    if ((rc = sq_pragma(s, "PRAGMA journal_mode=WAL", mode, sizeof mode, err)) != JOBD_OK ||
        (rc = sq_set_sync(s, true, err)) != JOBD_OK ||
        (rc = sq_pragma(s, "PRAGMA foreign_keys=OFF", NULL, 0, err)) != JOBD_OK ||
        (rc = sq_pragma(s, "SELECT count(*) FROM sqlite_schema", NULL, 0, err)) != JOBD_OK) {
        sq_close(&s->base);
        return rc;
    }
    if (strcmp(mode, "wal") != 0)
        rc = jobd_error_set(err, JOBD_E_STORE, "db",
                            "cannot switch '%s' to WAL mode (journal_mode is '%s')", path, mode);
    else
        rc = sq_file_opened(s, err);
    if (rc != JOBD_OK) {
        sq_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return JOBD_OK;
}
