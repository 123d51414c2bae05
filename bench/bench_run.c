/*
 * bench_run.c — how jobd runs jobs: processing throughput (process),
 * lateness of delayed and due-now jobs (lateness), and claim cost with many
 * pending or future jobs (scaling).
 */
#include "bench.h"

/* ----------------------------------------------------------------- process */

int
cmd_process(void)
{
    const char *url = opt_req("db"), *handler = opt_req("handler");
    const char *jobd = opt("jobd", "build/jobd");
    long long n = opt_ll("n", 20000), nw = opt_ll("workers", 1);
    long long conc = opt_ll("concurrency", strcmp(handler, "exec") == 0 ? 16 : 100);
    double timeout = (double)opt_ll("timeout-s", 240);
    /* --groups G: the jobs spread over G groups of the queue (its fair claim,
     * docs/DESIGN.md, Groups); --progress 1: the C handler reports progress
     * once a job (jobd_progress), as a handler that reports it would */
    long long groups = opt_ll("groups", 0);
    bool progress = strcmp(opt("progress", "0"), "1") == 0;
    if (progress && strcmp(handler, "c") != 0)
        die("--progress 1 needs --handler c");
    struct db d;
    db_open(&d, url, true);
    double s0 = mono_s();
    db_seed(&d, n, false, 0, groups);
    double seed_s = mono_s() - s0;
    db_settle(&d);
    /* --events 1: the event log records (docs/API.md, GET /v1/events) as while a
     * stream client listens, with no reader: what its triggers cost the store */
    bool events = strcmp(opt("events", "0"), "1") == 0;
    if (events)
        db_exec(&d, d.pg ? "UPDATE jobd.event_log SET listened_at = now()"
                         : "UPDATE event_log SET listened_at = "
                           "CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)");
    struct workers w;
    struct cpu_snap a, b;
    cpu_snap(&a, NULL, 0, 0, d.pg);
    double t0 = mono_s();
    workers_start(&w, (int)nw, handler, url, conc, jobd, false);
    bool ok = wait_done(&d, n, timeout, &w);
    double secs = mono_s() - t0;
    cpu_snap(&b, w.pid, w.n, 0, d.pg);
    long rss = workers_rss_max(&w);
    workers_stop(&w);
    long long failed = db_failed(&d);
    char line[4096], cpu[256], set[256], variant[160], gv[48] = "";
    cpu_json(cpu, sizeof cpu, &a, &b);
    snprintf(set, sizeof set,
             "{\"workers\":%lld,\"concurrency_per_worker\":%lld,\"handler\":\"%s\","
             "\"groups\":%lld,\"progress\":%s}",
             nw, conc, strcmp(handler, "c") == 0 ? "C no-op (libjobd)" : "exec /bin/true", groups,
             progress ? "true" : "false");
    if (groups > 0)
        snprintf(gv, sizeof gv, ", %lld group%s", groups, groups > 1 ? "s" : "");
    snprintf(variant, sizeof variant, "%s handler, %lld worker%s%s%s%s", handler, nw,
             nw > 1 ? "s" : "", events ? ", event log recording" : "", gv,
             progress ? ", progress reported" : "");
    int k = head(line, sizeof line, "process", &d, variant, "throughput", n, conc, set);
    k += snprintf(
        line + k, sizeof line - (size_t)k,
        ",\"handler\":\"%s\",\"workers\":%lld,\"events\":%s,\"groups\":%lld,\"progress\":%s,"
        "\"process_jobs_per_s\":%.0f,"
        "\"process_s\":%.3f,"
        "\"seed_s\":%.3f,\"failed\":%lld,\"worker_peak_rss_kb\":%ld,\"cpu\":%s,"
        "\"notes\":\"jobs seeded by one INSERT ... SELECT, then %lld worker process%s started "
        "and timed until the store holds n succeeded rows (jobs or jobs_done); worker "
        "start-up is inside the time; worker_pct sums the workers (exec: with their "
        "children)%s\"",
        handler, nw, events ? "true" : "false", groups, progress ? "true" : "false",
        (double)n / secs, secs, seed_s, failed, rss, cpu, nw, nw > 1 ? "es" : "",
        groups > 0 ? "; groups: the first job of each group enqueued by jobd_enqueue_batch (the "
                     "queue's mark and job_groups rows as an enqueue writes them), the rest "
                     "seeded in the groups in turn"
                   : "");
    if (!ok)
        k += snprintf(line + k, sizeof line - (size_t)k, ",\"error\":\"timed out after %.0f s\"",
                      timeout);
    snprintf(line + k, sizeof line - (size_t)k, "}");
    puts(line);
    db_close(&d);
    return 0;
}

/* ---------------------------------------------------------------- lateness */

/*
 * Enqueues the lateness run's n jobs: one at a time, each due at once, spread/n
 * ms apart (now_mode), or in one batch due evenly over spread ms from lead ms
 * ahead. *first is the first due instant, [*e0, *e1] the enqueue window.
 */
static void
lateness_enqueue(const char *url, long long n, long long spread, long long lead, bool now_mode,
                 int64_t *first, int64_t *e0, int64_t *e1)
{
    struct jobd_error err = {0};
    jobd_client *c = NULL;
    if (jobd_client_open(url, &c, &err) != JOBD_OK)
        die("open: %s", err.msg);
    struct jobd_job_opts *o = calloc((size_t)n, sizeof *o);
    char(*pl)[48] = calloc((size_t)n, sizeof *pl);
    if (!o || !pl)
        die("out of memory");
    *first = real_us() + lead * 1000;
    *e0 = real_us();
    if (now_mode) {
        /* one job at a time, due the instant it is enqueued, spread/n apart */
        double t0 = mono_s();
        for (long long i = 0; i < n; i++) {
            int64_t due = real_us();
            snprintf(pl[0], sizeof pl[0], "{\"due_us\":%lld}", (long long)due);
            o[0] = (struct jobd_job_opts){.type = "noop", .payload = pl[0], .run_at_us = due};
            if (jobd_enqueue(c, &o[0], NULL, &err) != JOBD_OK)
                die("jobd_enqueue: %s", err.msg);
            double next = t0 + ((double)i + 1) * (double)spread / 1000 / (double)n;
            if (next > mono_s())
                sleep_ms((next - mono_s()) * 1000);
        }
        *e1 = real_us();
        *first = *e0;
    } else {
        for (long long i = 0; i < n; i++) {
            int64_t due = *first + (int64_t)(((double)i + 0.5) * (double)spread * 1000 / (double)n);
            snprintf(pl[i], sizeof pl[i], "{\"due_us\":%lld}", (long long)due);
            o[i] = (struct jobd_job_opts){.type = "noop", .payload = pl[i], .run_at_us = due};
        }
        *e0 = real_us();
        if (jobd_enqueue_batch(c, o, (size_t)n, NULL, &err) != JOBD_OK)
            die("jobd_enqueue_batch: %s", err.msg);
        *e1 = real_us();
    }
    jobd_client_close(c);
    free(o);
    free(pl);
}

int
cmd_lateness(void)
{
    const char *url = opt_req("db"), *latfile = opt("lat-file", NULL);
    long long n = opt_ll("n", 2000), spread = opt_ll("spread-ms", 10000);
    long long lead = opt_ll("lead-ms", 1000), conc = opt_ll("concurrency", 16);
    if (n < 1 || n > 10000)
        die("--n must be 1..10000 (one batch)");
    struct db d;
    db_open(&d, url, true);
    struct workers w;
    workers_start(&w, 1, "c", url, conc, NULL, true);
    sleep_ms(1500); /* started, migrated, idle */
    bool now_mode = strcmp(opt("due-now", "0"), "1") == 0;
    struct cpu_snap a, b;
    cpu_snap(&a, w.pid, 1, 0, d.pg);
    int64_t first, e0, e1;
    lateness_enqueue(url, n, spread, lead, now_mode, &first, &e0, &e1);
    bool ok = wait_done(&d, n, (double)(spread + lead) / 1000 + 60, &w);
    cpu_snap(&b, w.pid, 1, 0, d.pg);
    long rss = workers_rss_max(&w);
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
    double sum = 0;
    size_t early = 0;
    for (size_t i = 0; i < nl; i++) {
        sum += lat[i];
        early += lat[i] < 0;
    }
    char line[4096], cpu[256], set[256];
    cpu_json(cpu, sizeof cpu, &a, &b);
    snprintf(set, sizeof set, "{\"concurrency\":%lld,\"spread_ms\":%lld,\"lead_ms\":%lld}", conc,
             spread, lead);
    snprintf(set + strlen(set) - 1, sizeof set - strlen(set) + 1, ",\"due_now\":%s}",
             now_mode ? "true" : "false");
    int k = head(line, sizeof line, "lateness", &d,
                 now_mode ? "C handler, idle worker, due now (one enqueue at a time)"
                          : "C handler, idle worker, due at known future instants",
                 "latency", n, conc, set);
    k += snprintf(
        line + k, sizeof line - (size_t)k,
        ",\"due_now\":%s,\"poll\":\"%s\",\"enqueue_ms\":%.1f,\"enqueue_done_before_first_due\":%s,"
        "\"started\":%zu,\"handled\":%lld,\"p50_ms\":%s,\"p90_ms\":%s,\"p99_ms\":%s,"
        "\"max_ms\":%s,\"min_ms\":%s,\"mean_ms\":%s,\"early\":%zu,"
        "\"worker_peak_rss_kb\":%ld,\"cpu\":%s,"
        "\"notes\":\"%s; the C handler records its first instant minus run_at (both "
        "CLOCK_REALTIME, same machine)\"",
        now_mode ? "true" : "false",
        d.pg ? "LISTEN/NOTIFY + timer for the soonest run_at"
             : "timer for the soonest run_at + inotify on the WAL (1 s poll; 100 ms without "
               "inotify)",
        (double)(e1 - e0) / 1000, e1 <= first ? "true" : "false", nl, handled,
        jnum(pct(lat, nl, 50), 0), jnum(pct(lat, nl, 90), 1), jnum(pct(lat, nl, 99), 2),
        jnum(nl ? lat[nl - 1] : NAN, 3), jnum(nl ? lat[0] : NAN, 4),
        jnum(nl ? sum / (double)nl : NAN, 5), early, rss, cpu,
        now_mode ? "jobs enqueued one at a time (jobd_enqueue, one commit each), spread_ms/n "
                   "apart, each with run_at = the instant just before its enqueue call"
                 : "jobs enqueued in one jobd_enqueue_batch with run_at spread evenly over "
                   "spread_ms from lead_ms ahead");
    if (!ok || (long long)nl != n)
        k += snprintf(line + k, sizeof line - (size_t)k, ",\"error\":\"%zu of %lld jobs recorded\"",
                      nl, n);
    snprintf(line + k, sizeof line - (size_t)k, "}");
    puts(line);
    free(lat);
    db_close(&d);
    return 0;
}

/* ----------------------------------------------------------------- scaling */

/*
 * The rate over the kk jobs whose finishing instants are fin[0..kk], and the
 * rates of its 5 sub-windows, sorted, into rates[5].
 */
static double
window_rates(const int64_t *fin, long long kk, double rates[5])
{
    for (int i = 0; i < 5; i++) {
        long long lo = kk * i / 5, hi = kk * (i + 1) / 5;
        double dt = (double)(fin[hi] - fin[lo]) / 1e6;
        /* 0: the whole sub-window finished in one completion statement (one finished_at) */
        rates[i] = dt > 0 ? (double)(hi - lo) / dt : INFINITY;
    }
    qsort(rates, 5, sizeof *rates, cmp_dbl);
    return (double)kk / ((double)(fin[kk] - fin[0]) / 1e6);
}

/* The 5 rates as JSON numbers; JSON has no infinity, so such a sub-window is null. */
static void
rates_json(char *buf, size_t size, const double rates[5])
{
    int k = 0;
    for (int i = 0; i < 5; i++) {
        const char *sep = i ? "," : "";
        if (isfinite(rates[i]))
            k += snprintf(buf + k, size - (size_t)k, "%s%.0f", sep, rates[i]);
        else
            k += snprintf(buf + k, size - (size_t)k, "%snull", sep);
    }
}

int
cmd_scaling(void)
{
    const char *url = opt_req("db");
    long long pending = opt_ll("pending", 10000), future = opt_ll("future", 0);
    long long kk = opt_ll("k", 5000), warm = opt_ll("warm", 1000);
    long long conc = opt_ll("concurrency", 100);
    if (warm + kk + 1 > pending || kk < 5)
        die("--warm + --k must be below --pending, and --k at least 5");
    struct db d;
    db_open(&d, url, true);
    double s0 = mono_s();
    db_seed(&d, future, true, 1, 0);
    db_seed(&d, pending, false, 0, 0);
    double seed_s = mono_s() - s0;
    db_settle(&d);
    struct workers w;
    workers_start(&w, 1, "c", url, conc, NULL, false);
    /*
     * The worker runs until warm + k + 1 jobs have succeeded; the rate then
     * comes from the store's own finished_at of jobs warm .. warm + k (in
     * finishing order), so polling and start-up do not blur it. The rates
     * of 5 sub-windows of k/5 jobs go along, to show how steady it was.
     */
    struct cpu_snap a, b;
    cpu_snap(&a, w.pid, 1, 0, d.pg);
    long long target = warm + kk + 1 < pending ? warm + kk + 1 : pending;
    bool ok = wait_done(&d, target, 300, &w);
    cpu_snap(&b, w.pid, 1, 0, d.pg);
    long rss = workers_rss_max(&w);
    workers_stop(&w);
    int64_t *fin = calloc((size_t)kk + 1, sizeof *fin);
    if (!fin)
        die("out of memory");
    long long nf = db_finished(&d, warm, kk + 1, fin);
    double rates[5] = {0}, whole = 0;
    if (ok && nf == kk + 1 && fin[kk] > fin[0])
        whole = window_rates(fin, kk, rates);
    else
        ok = false;
    free(fin);
    double t0 = 0, t1 = whole > 0 ? (double)kk / whole : 0;
    long long d0 = 0, d1 = ok ? kk : 0;
    char line[4096], cpu[256], set[256], variant[128];
    cpu_json(cpu, sizeof cpu, &a, &b);
    snprintf(set, sizeof set, "{\"concurrency\":%lld,\"future\":%lld,\"k\":%lld}", conc, future,
             kk);
    if (future)
        snprintf(variant, sizeof variant, "%lld pending + %lld future-dated ahead in the index",
                 pending, future);
    else
        snprintf(variant, sizeof variant, "%lld pending", pending);
    char sub[128];
    rates_json(sub, sizeof sub, rates);
    int k = head(line, sizeof line, "scaling", &d, variant, "scaling", pending, conc, set);
    k += snprintf(
        line + k, sizeof line - (size_t)k,
        ",\"pending\":%lld,\"future\":%lld,\"claim_complete_jobs_per_s\":%.0f,"
        "\"whole_window_jobs_per_s\":%.0f,\"subwindow_jobs_per_s\":[%s],"
        "\"measured_jobs\":%lld,\"measured_s\":%.3f,\"seed_s\":%.3f,"
        "\"worker_peak_rss_kb\":%ld,\"cpu\":%s,"
        "\"notes\":\"one C-handler worker; jobs %lld to %lld in finishing order, timed by "
        "their finished_at in the store (subwindow_jobs_per_s: the same window in 5 "
        "parts, sorted, to show the noise); future-dated jobs have priority 1, so they sort before "
        "the due ones in "
        "the claim index and must be skipped by run_at\"",
        pending, future, ok ? whole : 0.0, whole, sub, d1 - d0, t1 - t0, seed_s, rss, cpu, warm,
        warm + kk);
    if (!ok)
        k += snprintf(line + k, sizeof line - (size_t)k,
                      ",\"error\":\"no window of %lld jobs after the first %lld (timed out?)\"", kk,
                      warm);
    snprintf(line + k, sizeof line - (size_t)k, "}");
    puts(line);
    db_close(&d);
    return 0;
}
