/*
 * bench_enqueue.c — enqueue throughput: one job per HTTP request from
 * client threads (enqueue1), and batches through HTTP, libjobd or plain SQL
 * (enqueue).
 */
#include "bench.h"
#include <curl/curl.h>

/* --------------------------------------------------------------- enqueue1 */

struct http_ctx {
    const char *url;
    long long n;
    atomic_llong next;
    atomic_llong bad;
    long long per_req; /* jobs per request */
};

static size_t
discard(char *p, size_t sz, size_t n, void *u)
{
    return sz * n;
}

static void *
http_client(void *arg)
{
    struct http_ctx *c = arg;
    CURL *h = curl_easy_init();
    struct curl_slist *hd = curl_slist_append(NULL, "Content-Type: application/json");
    hd = curl_slist_append(hd, "Expect:");
    curl_easy_setopt(h, CURLOPT_URL, c->url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    char *body = NULL;
    for (;;) {
        long long i = atomic_fetch_add(&c->next, c->per_req);
        if (i >= c->n)
            break;
        free(body);
        body = NULL;
        if (c->per_req == 1) {
            body = malloc(128);
            if (!body)
                die("out of memory");
            snprintf(body, 128, "{\"type\":\"noop\",\"payload\":{\"i\":%lld}}", i);
        } else {
            /* {"jobs":[{...},{...}]} of min(per_req, n - i) jobs */
            long long k = c->n - i < c->per_req ? c->n - i : c->per_req;
            size_t cap = (size_t)k * 64 + 32, len = 0;
            body = malloc(cap);
            if (!body)
                die("out of memory");
            len += (size_t)snprintf(body, cap, "{\"jobs\":[");
            for (long long j = 0; j < k; j++)
                len += (size_t)snprintf(body + len, cap - len,
                                        "%s{\"type\":\"noop\",\"payload\":{\"i\":%lld}}",
                                        j ? "," : "", i + j);
            snprintf(body + len, cap - len, "]}");
        }
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        long code = 0;
        if (curl_easy_perform(h) != CURLE_OK ||
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK || code != 201)
            atomic_fetch_add(&c->bad, 1);
    }
    free(body);
    curl_slist_free_all(hd);
    curl_easy_cleanup(h);
    return NULL;
}

/* Runs clients threads against url until n jobs are sent; returns seconds. */
static double
http_run(struct http_ctx *c, int clients)
{
    pthread_t th[256];
    if (clients < 1 || clients > 256)
        die("--clients must be 1..256");
    double t0 = mono_s();
    for (int i = 0; i < clients; i++)
        pthread_create(&th[i], NULL, http_client, c);
    for (int i = 0; i < clients; i++)
        pthread_join(th[i], NULL);
    return mono_s() - t0;
}

int
cmd_enqueue1(void)
{
    const char *url = opt_req("db"), *jobd = opt_req("jobd");
    long long n = opt_ll("n", 20000), clients = opt_ll("clients", 10);
    struct db d;
    db_open(&d, url, true);
    struct server s;
    server_start(&s, jobd, url);
    char ep[128];
    snprintf(ep, sizeof ep, "%s/v1/jobs", s.base);
    struct http_ctx c = {.url = ep, .n = n, .per_req = 1};
    struct cpu_snap a, b;
    cpu_snap(&a, NULL, 0, s.pid, d.pg);
    double secs = http_run(&c, (int)clients);
    cpu_snap(&b, NULL, 0, s.pid, d.pg);
    long rss = vm_hwm_kb(s.pid);
    stop_proc(s.pid);
    long long held = db_hot(&d);
    char line[4096], cpu[256], set[256];
    cpu_json(cpu, sizeof cpu, &a, &b);
    snprintf(set, sizeof set,
             "{\"clients\":%lld,\"http\":\"libcurl keep-alive, one POST per job\"}", clients);
    int k = head(line, sizeof line, "enqueue1", &d, "POST /v1/jobs, one job per request",
                 "enqueue1", n, clients, set);
    snprintf(
        line + k, sizeof line - (size_t)k,
        ",\"enqueue_single_jobs_per_s\":%.0f,\"enqueue_s\":%.3f,\"failed_requests\":%lld,"
        "\"held\":%lld,\"server_peak_rss_kb\":%ld,\"cpu\":%s,"
        "\"notes\":\"%lld callers in parallel (threads), each waiting for its 201 before the next "
        "request; the server answers 201 only after the commit; held = rows in the store "
        "after\"%s}",
        (double)n / secs, secs, (long long)atomic_load(&c.bad), held, rss, cpu, clients,
        held == n ? "" : ",\"error\":\"the store does not hold every acknowledged job\"");
    puts(line);
    db_close(&d);
    return 0;
}

/* ---------------------------------------------------------------- enqueue */

static double
enqueue_lib(const char *url, long long n, long long batch)
{
    struct jobd_error err = {0};
    jobd_client *c = NULL;
    if (jobd_client_open(url, &c, &err) != JOBD_OK)
        die("open: %s", err.msg);
    struct jobd_job_opts *o = calloc((size_t)batch, sizeof *o);
    char(*pl)[32] = calloc((size_t)batch, sizeof *pl);
    if (!o || !pl)
        die("out of memory");
    double t0 = mono_s();
    for (long long i = 0; i < n; i += batch) {
        long long k = n - i < batch ? n - i : batch;
        for (long long j = 0; j < k; j++) {
            snprintf(pl[j], sizeof pl[j], "{\"i\":%lld}", i + j);
            o[j] = (struct jobd_job_opts){.type = "noop", .payload = pl[j]};
        }
        if (jobd_enqueue_batch(c, o, (size_t)k, NULL, &err) != JOBD_OK)
            die("jobd_enqueue_batch: %s", err.msg);
    }
    double secs = mono_s() - t0;
    free(o);
    free(pl);
    jobd_client_close(c);
    return secs;
}

/* `SELECT jobd.enqueue(...)` one statement per job, batch statements per transaction. */
static double
enqueue_sql(struct db *d, long long n, long long batch)
{
    PGconn *pc = PQconnectdb(d->url);
    if (PQstatus(pc) != CONNECTION_OK)
        die("connect: %s", PQerrorMessage(pc));
    PGresult *r = PQprepare(pc, "enq", "SELECT jobd.enqueue('noop', $1::jsonb)", 1, NULL);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        die("prepare: %s", PQerrorMessage(pc));
    PQclear(r);
    double t0 = mono_s();
    for (long long i = 0; i < n; i += batch) {
        long long k = n - i < batch ? n - i : batch;
        PQclear(PQexec(pc, "BEGIN"));
        for (long long j = 0; j < k; j++) {
            char pl[32];
            snprintf(pl, sizeof pl, "{\"i\":%lld}", i + j);
            const char *v[1] = {pl};
            r = PQexecPrepared(pc, "enq", 1, v, NULL, NULL, 0);
            if (PQresultStatus(r) != PGRES_TUPLES_OK)
                die("jobd.enqueue: %s", PQerrorMessage(pc));
            PQclear(r);
        }
        r = PQexec(pc, "COMMIT");
        if (PQresultStatus(r) != PGRES_COMMAND_OK)
            die("commit: %s", PQerrorMessage(pc));
        PQclear(r);
    }
    double secs = mono_s() - t0;
    PQfinish(pc);
    return secs;
}

int
cmd_enqueue(void)
{
    const char *url = opt_req("db"), *via = opt_req("via");
    long long n = opt_ll("n", 20000), batch = opt_ll("batch", 1000);
    if (batch < 1 || batch > 10000)
        die("--batch must be 1..10000");
    struct db d;
    db_open(&d, url, true);
    double secs;
    long rss = -1;
    char variant[128], notes[256];
    if (strcmp(via, "http") == 0) {
        struct server s;
        server_start(&s, opt_req("jobd"), url);
        char ep[128];
        snprintf(ep, sizeof ep, "%s/v1/jobs/batch", s.base);
        struct http_ctx c = {.url = ep, .n = n, .per_req = batch};
        secs = http_run(&c, 1);
        rss = vm_hwm_kb(s.pid);
        stop_proc(s.pid);
        if (atomic_load(&c.bad))
            die("%lld batch requests failed", (long long)atomic_load(&c.bad));
        snprintf(variant, sizeof variant, "POST /v1/jobs/batch, %lld jobs per request", batch);
        snprintf(notes, sizeof notes,
                 "one client, one request at a time, each answered after its commit");
    } else if (strcmp(via, "lib") == 0) {
        secs = enqueue_lib(url, n, batch);
        snprintf(variant, sizeof variant, "libjobd jobd_enqueue_batch, %lld jobs per call", batch);
        snprintf(notes, sizeof notes,
                 "one client, directly on the store, one transaction per call");
    } else if (strcmp(via, "sql") == 0) {
        if (!d.pg)
            die("--via sql needs PostgreSQL");
        secs = enqueue_sql(&d, n, batch);
        snprintf(variant, sizeof variant, "SELECT jobd.enqueue() per job, %lld per transaction",
                 batch);
        snprintf(notes, sizeof notes,
                 "libpq, prepared statement, one round trip per job, COMMIT every %lld", batch);
    } else {
        die("--via must be http, lib or sql");
    }
    long long held = db_hot(&d);
    char line[4096], set[128];
    snprintf(set, sizeof set, "{\"batch\":%lld}", batch);
    int k = head(line, sizeof line, "enqueue", &d, variant, "enqueue", n, 1, set);
    k += snprintf(line + k, sizeof line - (size_t)k,
                  ",\"via\":\"%s\",\"enqueue_jobs_per_s\":%.0f,\"enqueue_s\":%.3f,\"held\":%lld,"
                  "\"notes\":\"%s\"",
                  via, (double)n / secs, secs, held, notes);
    if (rss >= 0)
        k += snprintf(line + k, sizeof line - (size_t)k, ",\"server_peak_rss_kb\":%ld", rss);
    if (held != n)
        k += snprintf(line + k, sizeof line - (size_t)k,
                      ",\"error\":\"the store holds %lld jobs, expected %lld\"", held, n);
    snprintf(line + k, sizeof line - (size_t)k, "}");
    puts(line);
    db_close(&d);
    return 0;
}
