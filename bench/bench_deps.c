/*
 * bench_deps.c — what dependencies cost (docs/MODEL.md, Dependencies):
 * how soon a child starts after its parent (deps-chain), and the throughput
 * of a fan-out with a fan-in beside the same number of independent jobs
 * (deps-fanout), each on one idle C-handler worker as lateness uses.
 */
#include "bench.h"

static jobd_client *
client_open(const char *url)
{
    struct jobd_error err = {0};
    jobd_client *c = NULL;
    if (jobd_client_open(url, &c, &err) != JOBD_OK)
        die("open: %s", err.msg);
    return c;
}

static int64_t
enqueue1(jobd_client *c, const struct jobd_job_opts *o)
{
    struct jobd_error err = {0};
    int64_t id = 0;
    if (jobd_enqueue(c, o, &id, &err) != JOBD_OK)
        die("jobd_enqueue: %s", err.msg);
    return id;
}

/* ------------------------------------------------------------- deps-chain */

/*
 * n parent/child pairs, one pair at a time spread/n ms apart: the parent
 * due lead ms after its enqueue (so the child is enqueued, waiting, before
 * the parent runs), the child depending on it. The worker's handler
 * records, for each child, its first instant minus the instant the
 * parent's handler returned (bench_cworker.c): the whole path of a release,
 * the parent's report, its commit releasing the child, the wake-up and the
 * claim.
 */
int
cmd_deps_chain(void)
{
    const char *url = opt_req("db"), *latfile = opt("lat-file", NULL);
    long long n = opt_ll("n", 300), spread = opt_ll("spread-ms", 6000);
    long long lead = opt_ll("lead-ms", 30), conc = opt_ll("concurrency", 16);
    if (n < 1 || n > 20000)
        die("--n must be 1..20000");
    struct db d;
    db_open(&d, url, true);
    struct workers w;
    workers_start(&w, 1, "c", url, conc, NULL, true);
    sleep_ms(1500); /* started, migrated, idle */
    jobd_client *c = client_open(url);
    double t0 = mono_s();
    for (long long i = 0; i < n; i++) {
        struct jobd_job_opts po = {.type = "noop",
                                   .payload = "{\"chain_parent\":1}",
                                   .run_at_us = real_us() + lead * 1000};
        int64_t parent = enqueue1(c, &po);
        char pl[64];
        snprintf(pl, sizeof pl, "{\"after\":%lld}", (long long)parent);
        struct jobd_job_opts co = {
            .type = "noop", .payload = pl, .depends_on = &parent, .n_depends_on = 1};
        enqueue1(c, &co);
        double next = t0 + ((double)i + 1) * (double)spread / 1000 / (double)n;
        if (next > mono_s())
            sleep_ms((next - mono_s()) * 1000);
    }
    jobd_client_close(c);
    bool ok = wait_done(&d, 2 * n, (double)(spread + lead) / 1000 + 60, &w);
    workers_stop(&w);
    double *lat = NULL;
    size_t nl = 0, cap = 0;
    long long handled = read_lat(w.out[0], &lat, &nl, &cap);
    qsort(lat, nl, sizeof *lat, cmp_dbl);
    if (latfile) {
        FILE *f = fopen(latfile, "w");
        if (!f)
            die("cannot write %s", latfile);
        for (size_t i = 0; i < nl; i++)
            fprintf(f, "%.3f\n", lat[i]);
        fclose(f);
    }
    char line[4096], set[160];
    snprintf(set, sizeof set, "{\"concurrency\":%lld,\"spread_ms\":%lld,\"lead_ms\":%lld}", conc,
             spread, lead);
    int k = head(line, sizeof line, "deps_chain", &d,
                 "C handler, idle worker, child of a parent that just succeeded", "latency", n,
                 conc, set);
    k += snprintf(line + k, sizeof line - (size_t)k,
                  ",\"pairs\":%lld,\"children_measured\":%zu,\"handled\":%lld,\"p50_ms\":%s,"
                  "\"p90_ms\":%s,\"p99_ms\":%s,\"max_ms\":%s,"
                  "\"notes\":\"pairs enqueued one at a time (jobd_enqueue), spread_ms/n apart, "
                  "the parent due lead_ms later, the child with depends_on the parent; latency "
                  "= the child handler's first instant minus the instant the parent's handler "
                  "returned (one process, CLOCK_REALTIME): report, commit, release, wake-up and "
                  "claim\"",
                  n, nl, handled, jnum(pct(lat, nl, 50), 0), jnum(pct(lat, nl, 90), 1),
                  jnum(pct(lat, nl, 99), 2), jnum(nl ? lat[nl - 1] : NAN, 3));
    if (!ok || (long long)nl != n)
        k += snprintf(line + k, sizeof line - (size_t)k,
                      ",\"error\":\"%zu of %lld children recorded\"", nl, n);
    snprintf(line + k, sizeof line - (size_t)k, "}");
    puts(line);
    free(lat);
    db_close(&d);
    return 0;
}

/* ------------------------------------------------------------ deps-fanout */

/* Enqueues n no-op jobs in batches of at most 10,000, each with parents[0..np). */
static void
enqueue_many(jobd_client *c, long long n, const int64_t *parents, size_t np, int64_t *ids)
{
    struct jobd_job_opts *o = calloc(10000, sizeof *o);
    if (!o)
        die("out of memory");
    for (long long at = 0; at < n; at += 10000) {
        size_t m = (size_t)(n - at < 10000 ? n - at : 10000);
        for (size_t i = 0; i < m; i++)
            o[i] =
                (struct jobd_job_opts){.type = "noop", .depends_on = parents, .n_depends_on = np};
        struct jobd_error err = {0};
        double t0 = mono_s();
        if (jobd_enqueue_batch(c, o, m, ids ? ids + at : NULL, &err) != JOBD_OK)
            die("jobd_enqueue_batch: %s", err.msg);
        fprintf(stderr, "deps-fanout: enqueued %zu jobs (%zu parents each) in %.3f s\n", m, np,
                mono_s() - t0);
    }
    free(o);
}

/*
 * Runs what is in the store on one fresh worker until target jobs succeeded:
 * seconds; *cpu_ms the CPU of the worker and (PostgreSQL) of its server
 * meanwhile, in ms, which the machine's other load disturbs less than the
 * wall time (bench/README.md).
 */
static double
run_until(struct db *d, const char *url, long long target, long long conc, double *cpu_ms)
{
    struct workers w;
    struct cpu_snap a, b;
    cpu_snap(&a, NULL, 0, 0, d->pg);
    double t0 = mono_s();
    workers_start(&w, 1, "c", url, conc, NULL, false);
    if (!wait_done(d, target, 300, &w))
        die("deps-fanout: timed out");
    double s = mono_s() - t0;
    cpu_snap(&b, w.pid, w.n, 0, d->pg);
    workers_stop(&w);
    *cpu_ms =
        (double)(b.workers - a.workers + b.server - a.server) * 1000 / (double)sysconf(_SC_CLK_TCK);
    return s;
}

/*
 * The root's release as the run saw it: from the root's finished_at (set by
 * its completion, before the statement's trigger releases the children) to
 * the first child's start, in ms: the release, its commit, the wake-up and
 * the first claim (docs/BENCHMARKS.md, Fan-out at 10,000).
 */
static double
release_gap_ms(struct db *d, int64_t root, const int64_t *kids, long long n)
{
    char sql[512];
    if (d->pg)
        snprintf(sql, sizeof sql,
                 "SELECT (extract(epoch FROM (SELECT min(started_at) FROM jobd.all_jobs"
                 " WHERE id BETWEEN %lld AND %lld) - (SELECT finished_at FROM jobd.all_jobs"
                 " WHERE id = %lld)) * 1000000)::bigint",
                 (long long)kids[0], (long long)kids[n - 1], (long long)root);
    else
        snprintf(sql, sizeof sql,
                 "SELECT (SELECT min(started_at) FROM jobs_done WHERE id BETWEEN %lld AND %lld)"
                 " - (SELECT finished_at FROM jobs_done WHERE id = %lld)",
                 (long long)kids[0], (long long)kids[n - 1], (long long)root);
    return (double)db_count(d, sql) / 1000;
}

/*
 * n independent jobs, then (store reset) a root, n children of the root, and
 * a fan-in: joiners of at most 1,000 children each (the limit of depends_on)
 * and a last job after the joiners. Each timed from the worker's start to
 * the last job's success, so both include the same start-up.
 */
int
cmd_deps_fanout(void)
{
    const char *url = opt_req("db");
    long long n = opt_ll("n", 10000), conc = opt_ll("concurrency", 100);
    if (n < 1000 || n > 100000)
        die("--n must be 1000..100000");
    struct db d;
    db_open(&d, url, true);
    jobd_client *c = client_open(url);
    enqueue_many(c, n, NULL, 0, NULL);
    jobd_client_close(c);
    db_settle(&d);
    double plain_cpu = 0, fan_cpu = 0;
    double plain_s = run_until(&d, url, n, conc, &plain_cpu);
    db_close(&d);

    /* SQLite: a second file, as a store keeps the first one's identity for the process */
    char url2[600];
    snprintf(url2, sizeof url2, "%s%s", url, is_pg(url) ? "" : ".fanout");
    url = url2;
    db_open(&d, url, true);
    c = client_open(url);
    /* no worker runs yet, so the children are all waiting when it starts */
    struct jobd_job_opts ro = {.type = "noop"};
    int64_t root = enqueue1(c, &ro);
    int64_t *kids = calloc((size_t)n, sizeof *kids);
    size_t nj = (size_t)((n + 999) / 1000);
    int64_t *joiners = calloc(nj, sizeof *joiners);
    if (!kids || !joiners)
        die("out of memory");
    enqueue_many(c, n, &root, 1, kids);
    double tj = mono_s();
    for (size_t j = 0; j < nj; j++) {
        size_t lo = j * 1000, m = (size_t)n - lo < 1000 ? (size_t)n - lo : 1000;
        struct jobd_job_opts jo = {.type = "noop", .depends_on = kids + lo, .n_depends_on = m};
        joiners[j] = enqueue1(c, &jo);
    }
    struct jobd_job_opts lo = {.type = "noop", .depends_on = joiners, .n_depends_on = nj};
    enqueue1(c, &lo);
    fprintf(stderr, "deps-fanout: enqueued %zu joiners and the last job in %.3f s\n", nj,
            mono_s() - tj);
    jobd_client_close(c);
    db_settle(&d);
    long long total = n + 2 + (long long)nj;
    double fan_s = run_until(&d, url, total, conc, &fan_cpu);
    double gap = release_gap_ms(&d, root, kids, n);
    free(kids);
    free(joiners);

    double plain = (double)n / plain_s, fan = (double)n / fan_s;
    char line[4096], set[128];
    snprintf(set, sizeof set, "{\"concurrency\":%lld,\"joiners\":%zu}", conc, nj);
    int k = head(line, sizeof line, "deps_fanout", &d,
                 "C handler, one worker: fan-out and fan-in beside independent jobs", "throughput",
                 n, conc, set);
    snprintf(line + k, sizeof line - (size_t)k,
             ",\"independent_jobs_per_s\":%.0f,\"fanout_jobs_per_s\":%.0f,\"ratio\":%.3f,"
             "\"independent_s\":%.3f,\"fanout_s\":%.3f,\"independent_cpu_ms_per_1000\":%.1f,"
             "\"fanout_cpu_ms_per_1000\":%.1f,\"release_gap_ms\":%.1f,"
             "\"notes\":\"independent: n jobs by jobd_enqueue_batch, then one worker timed from "
             "its start until n succeeded; fan-out: a root, n children depending on it, "
             "joiners of 1,000 children each (the most depends_on takes) and a last job after "
             "the joiners, timed the same way until all n+%zu+2 succeeded; rates count the n "
             "jobs; cpu: the worker's and the PostgreSQL server's over each timed run per "
             "1,000 of the n jobs; release_gap_ms: the root's finished_at to its first "
             "child's start\"}",
             plain, fan, fan / plain, plain_s, fan_s, plain_cpu * 1000 / (double)n,
             fan_cpu * 1000 / (double)n, gap, nj);
    puts(line);
    db_close(&d);
    return 0;
}
