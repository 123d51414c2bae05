/*
 * test_schedules.c — schedules in both stores (SQLite file, PostgreSQL
 * database of its own) and the scheduling plane: CRUD, on-time firings,
 * catch-up once/all/skip, pause/resume, trigger, the unique firing guard,
 * concurrent materializers making each firing exactly once, and the plane
 * thread materializing on a manual clock. Every test runs per backend
 * (sqlite_* and pg_*); the pg ones need JOBD_TEST_PG_URL (scripts/with-pg.sh).
 */
#include <pthread.h>

#include "core/err.h"
#include "core/schedule.h"
#include "cron_time.h"
#include "pgtemplate.h"
#include "pgtest.h"
#include "sched/plane.h"
#include "store/store.h"
#include "test.h"
#include "util/clock.h"

#define SEC INT64_C(1000000)

struct fx {
    char url[1100];
    bool pg;
    struct manual_clock mc;
    struct store *st;
    struct jobd_error err;
};

static int64_t
at(const char *s)
{
    int64_t us;
    if (ct_parse(s, &us) != 0)
        TEST_FAIL("bad time %s", s);
    return us;
}

static void
fx_open(struct fx *f, bool pg, const char *start)
{
    memset(f, 0, sizeof *f);
    f->pg = pg;
    if (pg) {
        /* jobd's schema in it already (tests/pgtemplate.h): what is tested
         * here is the schedules, not the migrations from nothing. */
        if (pgtemplate_fresh_db(f->url, sizeof f->url) != 0)
            TEST_FAIL("no PostgreSQL database (JOBD_TEST_PG_URL)");
    } else {
        snprintf(f->url, sizeof f->url, "sqlite:%s", test_path("sched.db"));
    }
    manual_clock_init(&f->mc, at(start));
    ASSERT_OK(store_open(f->url, &f->st, &f->err), &f->err);
    ASSERT_OK(store_migrate(f->st, &f->err), &f->err);
    store_set_clock(f->st, &f->mc.clock);
}

static void
fx_close(struct fx *f)
{
    store_close(f->st);
    if (f->pg)
        pgtest_drop_db(f->url);
}

static void
put(struct fx *f, const char *name, const char *cron, const char *tz, enum schedule_catchup catchup)
{
    struct schedule_spec spec = {.name = name,
                                 .cron = cron,
                                 .timezone = tz,
                                 .type = "t.run",
                                 .payload = "{\"a\":1}",
                                 .catchup = catchup};
    ASSERT_OK(store_schedule_put(f->st, &spec, false, NULL, NULL, &f->err), &f->err);
}

static int
materialize(struct fx *f, int64_t *soonest)
{
    int made = -1;
    int64_t s = -1;
    ASSERT_OK(store_schedule_materialize(f->st, 100, 0, &made, &s, &f->err), &f->err);
    if (soonest != NULL)
        *soonest = s;
    return made;
}

/* The jobs of schedule name, oldest first, into l (caller finalises). */
static void
jobs_of(struct fx *f, const char *name, struct job_list *l)
{
    struct job_filter jf = {.status = STORE_ANY, .schedule = name, .limit = 1000};
    int64_t cursor = 0;
    ASSERT_OK(store_list(f->st, &jf, l, &cursor, &f->err), &f->err);
    for (size_t i = 0; i < l->n / 2; i++) { /* newest first -> oldest first */
        struct job t = l->v[i];
        l->v[i] = l->v[l->n - 1 - i];
        l->v[l->n - 1 - i] = t;
    }
}

#define BOTH(name)                                                                                 \
    static void body_##name(bool pg);                                                              \
    TEST(sqlite_##name)                                                                            \
    {                                                                                              \
        body_##name(false);                                                                        \
    }                                                                                              \
    TEST(pg_##name)                                                                                \
    {                                                                                              \
        body_##name(true);                                                                         \
    }                                                                                              \
    static void body_##name(bool pg)

BOTH(crud)
{
    struct fx f;
    fx_open(&f, pg, "2026-01-01T09:59:00Z");
    struct schedule_spec spec = {.name = "nightly",
                                 .cron = "30 2 * * *",
                                 .timezone = "Europe/Berlin",
                                 .type = "report.build",
                                 .queue = "reports",
                                 .priority = 5,
                                 .max_attempts = 3,
                                 .catchup = SCHEDULE_CATCHUP_ALL};
    struct schedule s = {0};
    bool created = false;
    ASSERT_OK(store_schedule_put(f.st, &spec, false, &s, &created, &f.err), &f.err);
    ASSERT(created);
    ASSERT_STR_EQ(s.name, "nightly");
    ASSERT_STR_EQ(s.cron, "30 2 * * *");
    ASSERT_STR_EQ(s.timezone, "Europe/Berlin");
    ASSERT_STR_EQ(s.queue, "reports");
    ASSERT_STR_EQ(s.payload, "{}");
    ASSERT_EQ(s.priority, 5);
    ASSERT_EQ(s.max_attempts, 3);
    ASSERT_EQ(s.catchup, SCHEDULE_CATCHUP_ALL);
    ASSERT(!s.paused);
    ASSERT_EQ(s.next_run_at_us, at("2026-01-02T01:30:00Z"));
    ASSERT_EQ(s.last_fired_at_us, 0);
    ASSERT_EQ(s.created_at_us, at("2026-01-01T09:59:00Z"));
    schedule_fini(&s);

    /* the name is taken */
    ASSERT_EQ(store_schedule_put(f.st, &spec, false, NULL, NULL, &f.err), JOBD_E_CONFLICT);
    ASSERT_STR_EQ(f.err.field, "name");

    /* replace: new definition, next_run_at from now, created_at kept */
    manual_clock_advance(&f.mc, 3600 * SEC);
    spec.cron = "0 * * * *";
    spec.timezone = NULL;
    ASSERT_OK(store_schedule_put(f.st, &spec, true, &s, &created, &f.err), &f.err);
    ASSERT(!created);
    ASSERT_STR_EQ(s.timezone, "UTC");
    ASSERT_EQ(s.next_run_at_us, at("2026-01-01T11:00:00Z"));
    ASSERT_EQ(s.created_at_us, at("2026-01-01T09:59:00Z"));
    schedule_fini(&s);

    /* bad input is refused before the store */
    spec.cron = "0 0 32 * *";
    ASSERT_EQ(store_schedule_put(f.st, &spec, true, NULL, NULL, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "cron.day-of-month");
    spec.cron = "@daily";
    spec.timezone = "Atlantis/Capital";
    ASSERT_EQ(store_schedule_put(f.st, &spec, true, NULL, NULL, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "timezone");

    put(&f, "a.first", "@hourly", NULL, SCHEDULE_CATCHUP_ONCE);
    struct schedule_list l = {0};
    ASSERT_OK(store_schedule_list(f.st, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 2);
    ASSERT_STR_EQ(l.v[0].name, "a.first");
    ASSERT_STR_EQ(l.v[1].name, "nightly");
    schedule_list_fini(&l);

    ASSERT_OK(store_schedule_get(f.st, "a.first", &s, &f.err), &f.err);
    ASSERT_STR_EQ(s.cron, "@hourly");
    schedule_fini(&s);
    ASSERT_OK(store_schedule_delete(f.st, "a.first", &f.err), &f.err);
    ASSERT_EQ(store_schedule_get(f.st, "a.first", &s, &f.err), JOBD_E_NOTFOUND);
    ASSERT_EQ(store_schedule_delete(f.st, "a.first", &f.err), JOBD_E_NOTFOUND);
    ASSERT_EQ(store_schedule_pause(f.st, "nope", true, NULL, &f.err), JOBD_E_NOTFOUND);
    ASSERT_EQ(store_schedule_trigger(f.st, "nope", NULL, &f.err), JOBD_E_NOTFOUND);
    ASSERT_EQ(store_schedule_get(f.st, "bad name", &s, &f.err), JOBD_E_INVALID);
    fx_close(&f);
}

/* Replacing with the same cron and zone keeps next_run_at: re-applying a
 * definition must not skip the firing that is due but not yet made; a new
 * cron or a new zone computes it again from now. */
BOTH(replace_keeps_next_run_at)
{
    struct fx f;
    fx_open(&f, pg, "2026-01-01T09:59:00Z");
    struct schedule_spec spec = {.name = "h", .cron = "0 * * * *", .type = "t.run"};
    struct schedule s = {0};
    bool created = false;
    ASSERT_OK(store_schedule_put(f.st, &spec, true, &s, &created, &f.err), &f.err);
    ASSERT(created);
    ASSERT_EQ(s.next_run_at_us, at("2026-01-01T10:00:00Z"));
    schedule_fini(&s);

    /* 10:00 is due but not made; the same cron and zone again, new payload */
    manual_clock_advance(&f.mc, 31 * 60 * SEC);
    spec.payload = "{\"v\":2}";
    spec.priority = 7;
    spec.timezone = "UTC";
    ASSERT_OK(store_schedule_put(f.st, &spec, true, &s, &created, &f.err), &f.err);
    ASSERT(!created);
    ASSERT_EQ(s.next_run_at_us, at("2026-01-01T10:00:00Z"));
    ASSERT_STR_EQ(s.payload, "{\"v\":2}");
    ASSERT_EQ(s.priority, 7);
    schedule_fini(&s);
    ASSERT_EQ(materialize(&f, NULL), 1); /* the 10:00 firing is still made */

    /* another zone: from now (10:30Z) in Kolkata (+05:30), :00 there is :30 UTC */
    spec.timezone = "Asia/Kolkata";
    ASSERT_OK(store_schedule_put(f.st, &spec, true, &s, &created, &f.err), &f.err);
    ASSERT_EQ(s.next_run_at_us, at("2026-01-01T11:30:00Z"));
    schedule_fini(&s);
    /* another cron: from now too */
    spec.cron = "45 * * * *";
    ASSERT_OK(store_schedule_put(f.st, &spec, true, &s, &created, &f.err), &f.err);
    ASSERT_EQ(s.next_run_at_us, at("2026-01-01T11:15:00Z")); /* 16:45 IST */
    schedule_fini(&s);
    fx_close(&f);
}

BOTH(on_time_firing)
{
    struct fx f;
    fx_open(&f, pg, "2026-01-01T09:59:00Z");
    put(&f, "every5", "*/5 * * * *", NULL, SCHEDULE_CATCHUP_ONCE);
    int64_t soonest;
    ASSERT_EQ(materialize(&f, &soonest), 0);
    ASSERT_EQ(soonest, at("2026-01-01T10:00:00Z"));
    manual_clock_set(&f.mc, at("2026-01-01T10:00:00.250Z"));
    ASSERT_EQ(materialize(&f, &soonest), 1);
    ASSERT_EQ(soonest, at("2026-01-01T10:05:00Z"));
    ASSERT_EQ(materialize(&f, NULL), 0); /* nothing twice */

    struct job_list l = {0};
    jobs_of(&f, "every5", &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_STR_EQ(l.v[0].schedule, "every5");
    ASSERT_EQ(l.v[0].scheduled_for_us, at("2026-01-01T10:00:00Z"));
    ASSERT_EQ(l.v[0].run_at_us, at("2026-01-01T10:00:00Z"));
    ASSERT_STR_EQ(l.v[0].type, "t.run");
    ASSERT_STR_EQ(l.v[0].queue, "default");
    ASSERT_EQ(l.v[0].status, JOB_PENDING);
    job_list_fini(&l);

    struct schedule s = {0};
    ASSERT_OK(store_schedule_get(f.st, "every5", &s, &f.err), &f.err);
    ASSERT_EQ(s.last_fired_at_us, at("2026-01-01T10:00:00Z"));
    ASSERT_EQ(s.next_run_at_us, at("2026-01-01T10:05:00Z"));
    schedule_fini(&s);

    /* the job is claimable like any other */
    struct claim_req req = {.worker_id = "w1", .limit = 10};
    ASSERT_OK(store_claim(f.st, &req, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    job_list_fini(&l);
    fx_close(&f);
}

BOTH(catchup_policies)
{
    struct fx f;
    fx_open(&f, pg, "2026-01-01T09:30:00Z");
    put(&f, "once", "0 * * * *", NULL, SCHEDULE_CATCHUP_ONCE);
    put(&f, "all", "0 * * * *", NULL, SCHEDULE_CATCHUP_ALL);
    put(&f, "skip", "0 * * * *", NULL, SCHEDULE_CATCHUP_SKIP);
    /* every scheduler down from 09:30 to 15:20: 10:00 ... 15:00 missed */
    manual_clock_set(&f.mc, at("2026-01-01T15:20:00Z"));
    int64_t soonest;
    ASSERT_EQ(materialize(&f, &soonest), 1 + 6 + 0);
    ASSERT_EQ(soonest, at("2026-01-01T16:00:00Z"));
    struct job_list l = {0};
    jobs_of(&f, "once", &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].scheduled_for_us, at("2026-01-01T10:00:00Z"));
    job_list_fini(&l);
    jobs_of(&f, "all", &l);
    ASSERT_EQ(l.n, 6);
    for (size_t i = 0; i < l.n; i++)
        ASSERT_EQ(l.v[i].scheduled_for_us, at("2026-01-01T10:00:00Z") + (int64_t)i * 3600 * SEC);
    job_list_fini(&l);
    jobs_of(&f, "skip", &l);
    ASSERT_EQ(l.n, 0);
    job_list_fini(&l);
    const char *names[] = {"once", "all", "skip"};
    for (int i = 0; i < 3; i++) {
        struct schedule s = {0};
        ASSERT_OK(store_schedule_get(f.st, names[i], &s, &f.err), &f.err);
        ASSERT_EQ(s.next_run_at_us, at("2026-01-01T16:00:00Z"));
        schedule_fini(&s);
    }
    fx_close(&f);
}

BOTH(catchup_all_capped)
{
    struct fx f;
    fx_open(&f, pg, "2026-01-01T00:00:00Z");
    put(&f, "minutely", "* * * * *", NULL, SCHEDULE_CATCHUP_ALL);
    manual_clock_set(&f.mc, at("2026-01-03T00:00:30Z")); /* 2,880 missed */
    ASSERT_EQ(materialize(&f, NULL), SCHEDULE_CATCHUP_MAX);
    struct schedule s = {0};
    ASSERT_OK(store_schedule_get(f.st, "minutely", &s, &f.err), &f.err);
    ASSERT_EQ(s.next_run_at_us, at("2026-01-03T00:01:00Z"));
    schedule_fini(&s);
    fx_close(&f);
}

BOTH(pause_resume_trigger)
{
    struct fx f;
    fx_open(&f, pg, "2026-01-01T09:30:00Z");
    put(&f, "hourly", "0 * * * *", NULL, SCHEDULE_CATCHUP_ALL);
    struct schedule s = {0};
    ASSERT_OK(store_schedule_pause(f.st, "hourly", true, &s, &f.err), &f.err);
    ASSERT(s.paused);
    schedule_fini(&s);
    manual_clock_set(&f.mc, at("2026-01-01T12:10:00Z"));
    int64_t soonest;
    ASSERT_EQ(materialize(&f, &soonest), 0);
    ASSERT_EQ(soonest, 0); /* no unpaused schedule */

    /* trigger works while paused and leaves next_run_at alone */
    struct job j = {0};
    ASSERT_OK(store_schedule_trigger(f.st, "hourly", &j, &f.err), &f.err);
    ASSERT_STR_EQ(j.schedule, "hourly");
    ASSERT_EQ(j.scheduled_for_us, at("2026-01-01T12:10:00Z"));
    ASSERT_EQ(j.run_at_us, at("2026-01-01T12:10:00Z"));
    ASSERT_EQ(j.status, JOB_PENDING);
    job_fini(&j);
    /* the same instant twice is one firing */
    ASSERT_EQ(store_schedule_trigger(f.st, "hourly", NULL, &f.err), JOBD_E_CONFLICT);

    /* resume: from now on, the paused hours are not caught up */
    ASSERT_OK(store_schedule_pause(f.st, "hourly", false, &s, &f.err), &f.err);
    ASSERT(!s.paused);
    ASSERT_EQ(s.next_run_at_us, at("2026-01-01T13:00:00Z"));
    ASSERT_EQ(s.last_fired_at_us, at("2026-01-01T12:10:00Z"));
    schedule_fini(&s);
    ASSERT_EQ(materialize(&f, NULL), 0);
    manual_clock_set(&f.mc, at("2026-01-01T13:00:01Z"));
    ASSERT_EQ(materialize(&f, NULL), 1);
    fx_close(&f);
}

/* A job already holding (schedule, scheduled_for) blocks a second one. */
BOTH(unique_firing_guard)
{
    struct fx f;
    fx_open(&f, pg, "2026-01-01T09:59:00Z");
    put(&f, "guarded", "0 10 * * *", NULL, SCHEDULE_CATCHUP_ONCE);
    struct job_spec js = {
        .type = "t.run", .schedule = "guarded", .scheduled_for_us = at("2026-01-01T10:00:00Z")};
    ASSERT_OK(store_enqueue(f.st, &js, NULL, NULL, &f.err), &f.err);
    manual_clock_set(&f.mc, at("2026-01-01T10:00:01Z"));
    ASSERT_EQ(materialize(&f, NULL), 0);
    struct job_list l = {0};
    jobs_of(&f, "guarded", &l);
    ASSERT_EQ(l.n, 1);
    job_list_fini(&l);
    struct schedule s = {0};
    ASSERT_OK(store_schedule_get(f.st, "guarded", &s, &f.err), &f.err);
    ASSERT_EQ(s.next_run_at_us, at("2026-01-02T10:00:00Z")); /* advanced anyway */
    schedule_fini(&s);
    fx_close(&f);
}

struct racer {
    const char *url;
    struct manual_clock *mc;
    _Atomic int *stop;
    int made;
    int rc;
};

static void *
racer_main(void *p)
{
    struct racer *r = p;
    struct store *st = NULL;
    struct jobd_error err = {0};
    r->rc = store_open(r->url, &st, &err);
    if (r->rc != 0)
        return NULL;
    store_set_clock(st, &r->mc->clock);
    while (!*r->stop) {
        int made = 0;
        int rc = store_schedule_materialize(st, 100, 0, &made, NULL, &err);
        if (rc == JOBD_OK)
            r->made += made;
        else if (rc != JOBD_E_UNAVAILABLE) /* SQLite busy under contention is fine */
            r->rc = rc;
    }
    store_close(st);
    return NULL;
}

/*
 * Four materializers, each on its own connection, race while the clock
 * moves a second at a time: every firing of an every-second schedule must
 * become exactly one job.
 */
BOTH(concurrent_materializers_make_each_firing_once)
{
    struct fx f;
    fx_open(&f, pg, "2026-01-01T00:00:00Z");
    put(&f, "tick", "* * * * * *", NULL, SCHEDULE_CATCHUP_ALL);
    put(&f, "tock", "*/2 * * * * *", NULL, SCHEDULE_CATCHUP_ALL);
    _Atomic int stop = 0;
    struct racer r[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        r[i] = (struct racer){.url = f.url, .mc = &f.mc, .stop = &stop};
        ASSERT_EQ(pthread_create(&th[i], NULL, racer_main, &r[i]), 0);
    }
    for (int s = 0; s < 60; s++) {
        manual_clock_advance(&f.mc, SEC);
        struct timespec ts = {0, 3 * 1000000};
        nanosleep(&ts, NULL);
    }
    /* let them drain what is due at the final instant */
    int64_t end = clock_now_us(&f.mc.clock);
    for (int tries = 0; tries < 500; tries++) {
        struct schedule a = {0}, b = {0};
        ASSERT_OK(store_schedule_get(f.st, "tick", &a, &f.err), &f.err);
        ASSERT_OK(store_schedule_get(f.st, "tock", &b, &f.err), &f.err);
        bool done = a.next_run_at_us > end && b.next_run_at_us > end;
        schedule_fini(&a);
        schedule_fini(&b);
        if (done)
            break;
        struct timespec ts = {0, 10 * 1000000};
        nanosleep(&ts, NULL);
    }
    stop = 1;
    int made = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        ASSERT_OK(r[i].rc, NULL);
        made += r[i].made;
    }
    struct job_list l = {0};
    jobs_of(&f, "tick", &l);
    ASSERT_EQ(l.n, 60);
    for (size_t i = 0; i < l.n; i++)
        ASSERT_EQ(l.v[i].scheduled_for_us, at("2026-01-01T00:00:01Z") + (int64_t)i * SEC);
    job_list_fini(&l);
    jobs_of(&f, "tock", &l);
    ASSERT_EQ(l.n, 30);
    job_list_fini(&l);
    ASSERT_EQ(made, 90);
    fx_close(&f);
}

/* The plane's thread materializes on its own; poll with a deadline, no sleeps for time. */
BOTH(plane_materializes)
{
    struct fx f;
    fx_open(&f, pg, "2026-01-01T09:59:59Z");
    put(&f, "plane", "0 10 * * *", NULL, SCHEDULE_CATCHUP_ONCE);
    struct wakeup w;
    ASSERT_EQ(wakeup_init(&w), 0);
    struct sched_plane_config cfg = {.db_url = f.url, .clock = &f.mc.clock, .wake = &w};
    struct sched_plane *p = NULL;
    ASSERT_OK(sched_plane_start(&cfg, &p, &f.err), &f.err);
    manual_clock_set(&f.mc, at("2026-01-01T10:00:00.100Z"));
    size_t n = 0;
    for (int64_t deadline = clock_mono_now_us() + 10 * SEC; clock_mono_now_us() < deadline;) {
        struct job_list l = {0};
        jobs_of(&f, "plane", &l);
        n = l.n;
        job_list_fini(&l);
        if (n > 0)
            break;
        uint64_t seen = 0;
        (void)wakeup_wait(&w, &seen, 100);
    }
    sched_plane_stop(p);
    wakeup_fini(&w);
    ASSERT_EQ(n, 1);
    fx_close(&f);
}

/* The plane also reaps expired leases and prunes old finished jobs. */
BOTH(plane_reaps_and_prunes)
{
    struct fx f;
    fx_open(&f, pg, "2026-01-01T00:00:00Z");
    struct job_spec js = {.type = "t.run"};
    struct job done = {0}, held = {0};
    struct job_list l = {0};
    struct claim_req req = {.worker_id = "w1", .limit = 1, .lease_ms = 1000};
    ASSERT_OK(store_enqueue(f.st, &js, &done, NULL, &f.err), &f.err);
    ASSERT_OK(store_claim(f.st, &req, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    ASSERT_OK(store_complete(f.st, l.v[0].id, l.v[0].attempt, NULL, NULL, &f.err), &f.err);
    job_list_fini(&l);
    ASSERT_OK(store_enqueue(f.st, &js, &held, NULL, &f.err), &f.err);
    ASSERT_OK(store_claim(f.st, &req, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, held.id);
    job_list_fini(&l);
    /* two hours later: the lease is long expired, the finished job past retention */
    manual_clock_advance(&f.mc, 2 * 3600 * SEC);

    struct sched_plane_config cfg = {
        .db_url = f.url, .clock = &f.mc.clock, .reap_interval_ms = 50, .retention_ms = 3600 * 1000};
    struct sched_plane *p = NULL;
    ASSERT_OK(sched_plane_start(&cfg, &p, &f.err), &f.err);
    bool reaped = false, pruned = false;
    for (int64_t deadline = clock_mono_now_us() + 10 * SEC;
         clock_mono_now_us() < deadline && !(reaped && pruned);) {
        struct job j = {0};
        ASSERT_OK(store_get(f.st, held.id, &j, &f.err), &f.err);
        reaped = j.status == JOB_PENDING && j.last_error != NULL;
        job_fini(&j);
        pruned = store_get(f.st, done.id, &j, &f.err) == JOBD_E_NOTFOUND;
        job_fini(&j);
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
    }
    sched_plane_stop(p);
    ASSERT(reaped);
    ASSERT(pruned);
    job_fini(&done);
    job_fini(&held);
    fx_close(&f);
}

/* After the clock went back an hour: due jobs due now, leases and schedules moved back. */
BOTH(clock_went_back)
{
    struct fx f;
    fx_open(&f, pg, "2026-01-01T12:00:30Z");
    put(&f, "minutely", "* * * * *", NULL, SCHEDULE_CATCHUP_SKIP);
    put(&f, "daily", "30 12 * * *", NULL, SCHEDULE_CATCHUP_SKIP);
    struct job_spec js = {.type = "t.run", .run_at_us = at("2026-01-01T12:00:00Z")};
    struct job held = {0}, due = {0}, later = {0};
    struct job_list l = {0};
    struct claim_req req = {.worker_id = "w1", .limit = 1, .lease_ms = 60000};
    ASSERT_OK(store_enqueue(f.st, &js, &held, NULL, &f.err), &f.err);
    ASSERT_OK(store_claim(f.st, &req, &l, &f.err), &f.err); /* lease until 12:01:30 */
    ASSERT_EQ(l.n, 1);
    job_list_fini(&l);
    js.run_at_us = at("2026-01-01T12:00:20Z");
    ASSERT_OK(store_enqueue(f.st, &js, &due, NULL, &f.err), &f.err);
    js.run_at_us = at("2026-01-01T12:30:00Z");
    ASSERT_OK(store_enqueue(f.st, &js, &later, NULL, &f.err), &f.err);

    manual_clock_set(&f.mc, at("2026-01-01T11:00:30Z"));
    int jobs = -1, schedules = -1;
    ASSERT_OK(store_clock_went_back(f.st, 3600 * SEC, &jobs, &schedules, &f.err), &f.err);
    ASSERT_EQ(jobs, 1);
    ASSERT_EQ(schedules, 1); /* the daily one's next firing (12:30 today) is still ahead */
    struct job j = {0};
    ASSERT_OK(store_get(f.st, due.id, &j, &f.err), &f.err);
    ASSERT_EQ(j.run_at_us, at("2026-01-01T11:00:30Z"));
    job_fini(&j);
    ASSERT_OK(store_get(f.st, later.id, &j, &f.err), &f.err);
    ASSERT_EQ(j.run_at_us, at("2026-01-01T12:30:00Z")); /* an instant still ahead stays */
    job_fini(&j);
    ASSERT_OK(store_get(f.st, held.id, &j, &f.err), &f.err);
    ASSERT_EQ(j.lease_expires_at_us, at("2026-01-01T11:01:30Z"));
    job_fini(&j);
    struct schedule s = {0};
    ASSERT_OK(store_schedule_get(f.st, "minutely", &s, &f.err), &f.err);
    ASSERT_EQ(s.next_run_at_us, at("2026-01-01T11:01:00Z"));
    schedule_fini(&s);
    ASSERT_OK(store_claim(f.st, &req, &l, &f.err), &f.err); /* due now, not in an hour */
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, due.id);
    job_list_fini(&l);
    /* nothing more to do: a second call changes nothing */
    ASSERT_OK(store_clock_went_back(f.st, 0, &jobs, &schedules, &f.err), &f.err);
    ASSERT_EQ(jobs, 0);
    ASSERT_EQ(schedules, 0);
    job_fini(&held);
    job_fini(&due);
    job_fini(&later);
    fx_close(&f);
}

/* The plane notices the jump on its own (its clock fell behind the monotonic one). */
BOTH(plane_notices_clock_going_back)
{
    struct fx f;
    fx_open(&f, pg, "2026-01-01T12:00:30Z");
    put(&f, "minutely", "* * * * *", NULL, SCHEDULE_CATCHUP_SKIP);
    struct job_spec js = {.type = "t.run", .run_at_us = at("2026-01-01T12:00:20Z")};
    struct job due = {0};
    ASSERT_OK(store_enqueue(f.st, &js, &due, NULL, &f.err), &f.err);
    struct sched_plane_config cfg = {.db_url = f.url, .clock = &f.mc.clock};
    struct sched_plane *p = NULL;
    ASSERT_OK(sched_plane_start(&cfg, &p, &f.err), &f.err);
    /* let it see the old time once, then go back an hour */
    struct schedule s = {0};
    struct timespec ts = {0, 300 * 1000000};
    nanosleep(&ts, NULL);
    manual_clock_set(&f.mc, at("2026-01-01T11:00:30Z"));
    int64_t run_at = 0;
    for (int64_t deadline = clock_mono_now_us() + 10 * SEC; clock_mono_now_us() < deadline;) {
        struct job j = {0};
        ASSERT_OK(store_get(f.st, due.id, &j, &f.err), &f.err);
        run_at = j.run_at_us;
        job_fini(&j);
        ASSERT_OK(store_schedule_get(f.st, "minutely", &s, &f.err), &f.err);
        bool back = s.next_run_at_us == at("2026-01-01T11:01:00Z");
        schedule_fini(&s);
        if (back && run_at == at("2026-01-01T11:00:30Z"))
            break;
        ts.tv_nsec = 20 * 1000000;
        nanosleep(&ts, NULL);
    }
    sched_plane_stop(p);
    ASSERT_EQ(run_at, at("2026-01-01T11:00:30Z"));
    ASSERT_OK(store_schedule_get(f.st, "minutely", &s, &f.err), &f.err);
    ASSERT_EQ(s.next_run_at_us, at("2026-01-01T11:01:00Z"));
    schedule_fini(&s);
    job_fini(&due);
    fx_close(&f);
}

/*
 * Holds, uncommitted, a job row with the firing (schedule, at_us) until the
 * real clock reads until_us, then rolls it back: the plane's INSERT of that
 * firing (ON CONFLICT on the unique firing guard) waits for this transaction
 * meanwhile, after its call read now, and then makes the firing's job.
 */
static void
pg_hold_firing(const char *url, const char *schedule, int64_t at_us, int64_t until_us)
{
    PGconn *c = PQconnectdb(url);
    if (PQstatus(c) != CONNECTION_OK)
        TEST_FAIL("connect: %s", PQerrorMessage(c));
    char sql[256];
    snprintf(sql, sizeof sql,
             "BEGIN; INSERT INTO jobd.jobs (type, schedule, scheduled_for) "
             "VALUES ('t.hold', '%s', to_timestamp(%lld))",
             schedule, (long long)(at_us / SEC));
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        TEST_FAIL("hold: %s", PQerrorMessage(c));
    PQclear(r);
    while (clock_real_now_us() < until_us) {
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
    }
    PQclear(PQexec(c, "ROLLBACK"));
    PQfinish(c);
}

/*
 * A materializer call that takes long (here its INSERT of firing F waits 3 s
 * for another transaction; on a loaded machine a slow commit, or the process
 * stopped mid-call) returns with its schedule due again, and the pass calls
 * again at once. That call must count what fell due meanwhile as late, like
 * the pass itself: an every-second skip schedule on the store's own clock
 * still gets a job for every second. It used to measure the pass's grace
 * from its own, later now and drop the firings of the 2 s after F.
 */
TEST(pg_plane_slow_materializer_call_drops_nothing)
{
    TEST_NEED_PG();
    struct fx f;
    fx_open(&f, true, "2026-01-01T00:00:00Z");
    manual_clock_set(&f.mc, clock_real_now_us()); /* the plane runs on the store's clock */
    put(&f, "every", "* * * * * *", NULL, SCHEDULE_CATCHUP_SKIP);
    struct sched_plane_config cfg = {.db_url = f.url};
    struct sched_plane *p = NULL;
    ASSERT_OK(sched_plane_start(&cfg, &p, &f.err), &f.err);
    struct job_list l = {0};
    for (int64_t deadline = clock_mono_now_us() + 30 * SEC; l.n < 2;) {
        job_list_fini(&l);
        jobs_of(&f, "every", &l);
        if (clock_mono_now_us() > deadline)
            TEST_FAIL("the plane made %zu jobs in 30 s", l.n);
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
    job_list_fini(&l);
    struct schedule s = {0};
    ASSERT_OK(store_schedule_get(f.st, "every", &s, &f.err), &f.err);
    int64_t held = s.next_run_at_us + 2 * SEC;
    schedule_fini(&s);
    pg_hold_firing(f.url, "every", held, held + 3 * SEC);
    for (int64_t deadline = clock_mono_now_us() + 30 * SEC;;) {
        jobs_of(&f, "every", &l);
        if (l.n > 0 && l.v[l.n - 1].scheduled_for_us > held + 5 * SEC)
            break;
        if (clock_mono_now_us() > deadline)
            TEST_FAIL("the plane did not catch up within 30 s of the held firing");
        job_list_fini(&l);
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
    sched_plane_stop(p);
    for (size_t i = 1; i < l.n; i++)
        if (l.v[i].scheduled_for_us != l.v[i - 1].scheduled_for_us + SEC)
            TEST_FAIL("no job for the firings between %lld and %lld (s since the epoch; held %lld)",
                      (long long)(l.v[i - 1].scheduled_for_us / SEC),
                      (long long)(l.v[i].scheduled_for_us / SEC), (long long)(held / SEC));
    job_list_fini(&l);
    fx_close(&f);
}
