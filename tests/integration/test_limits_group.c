/*
 * test_limits_group.c — group_max_running across processes (docs/MODEL.md,
 * Groups), through the real binary on both stores: 3 `jobd worker`
 * processes of concurrency 16 (48 slots) on a queue whose groups may each
 * run 2 at once, with 3 groups of 12 jobs. Sampled from the store (GET
 * /v1/jobs?status=running, each job's group) and from the handlers' own
 * start and end records, no group ever has more than 2 running, and each
 * reaches 2; every job succeeds at its first attempt (held back, never
 * failed); and the workers, held back most of the time, do not spin (their
 * CPU time stays a fraction of the wall time, as test_limits_running.c
 * measures it).
 */
#include "limitstest.h"

#define GROUPS 3
#define PER_GROUP 12
#define JOBS (GROUPS * PER_GROUP)
#define CAP 2

static const char *const group_names[GROUPS] = {"acme", "globex", "initech"};

/* CPU seconds (user + system) process pid has used so far, from /proc. */
static double
cpu_s(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command may hold spaces */
    unsigned long ut = 0, st = 0;
    if (p == NULL ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        TEST_FAIL("cannot read %s", path);
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Enqueues the jobs, group by group; ids[k] gets the group index of job id k - first. */
static int64_t
enqueue_groups(const struct srv *s, int *group_of, size_t cap)
{
    int64_t first = 0;
    json_t *jobs = json_array();
    for (int i = 0; i < JOBS; i++)
        json_array_append_new(jobs, json_pack("{s:s,s:s,s:s}", "type", "slow", "queue", "glim",
                                              "group", group_names[i % GROUPS]));
    json_t *body = json_pack("{s:o}", "jobs", jobs);
    char *text = json_dumps(body, JSON_COMPACT);
    struct resp r;
    long st = req(s, "POST", "/v1/jobs/batch", text, &r);
    if (st != 201)
        TEST_FAIL("POST /v1/jobs/batch: %ld %s", st, r.body);
    json_t *o = json_loads(r.body, 0, NULL);
    size_t i;
    json_t *j;
    json_array_foreach(json_object_get(o, "jobs"), i, j) {
        int64_t id = json_integer_value(json_object_get(j, "id"));
        if (i == 0)
            first = id;
        ASSERT((size_t)(id - first) < cap);
        group_of[id - first] = (int)(i % GROUPS);
    }
    json_decref(o);
    resp_fini(&r);
    free(text);
    json_decref(body);
    return first;
}

/* The most running of any one group now, from the store. */
static long
store_most_of_a_group(const struct srv *s)
{
    json_t *o = get_json(s, "/v1/jobs?queue=glim&status=running&limit=1000");
    long n[GROUPS] = {0}, most = 0;
    size_t i;
    json_t *j;
    json_array_foreach(json_object_get(o, "jobs"), i, j) {
        const char *g = json_string_value(json_object_get(j, "group"));
        for (int k = 0; g != NULL && k < GROUPS; k++)
            if (strcmp(g, group_names[k]) == 0 && ++n[k] > most)
                most = n[k];
    }
    json_decref(o);
    return most;
}

/* The most handlers of one group that ran at once, from their records. */
static long
handlers_most_of_a_group(const char *rec_path, const int *group_of, int64_t first)
{
    struct lt_rec *v;
    size_t n = lt_read(rec_path, &v);
    ASSERT_EQ(n, 2 * JOBS);
    long now[GROUPS] = {0}, most = 0;
    for (size_t i = 0; i < n; i++) {
        int g = group_of[v[i].id - first];
        now[g] += v[i].start ? 1 : -1;
        if (now[g] > most)
            most = now[g];
    }
    free(v);
    return most;
}

BOTH(group_max_running_holds_across_three_workers)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    EXPECT(&s, "PUT", "/v1/queues/glim", "{\"group_max_running\": 2}", 200, NULL);
    char rec[600], ini[600];
    snprintf(rec, sizeof rec, "%s", test_path("records"));
    lt_setup("slow", "glim", "0.3", rec, ini, sizeof ini);
    int group_of[JOBS * 2];
    int64_t first = enqueue_groups(&s, group_of, sizeof group_of / sizeof group_of[0]);
    pid_t pids[3];
    lt_start_workers(&s, ini, 3, pids);
    int64_t deadline = apitest_now_ms() + 30000;
    while (lt_count(&s, "glim", "running") < GROUPS * CAP) {
        if (apitest_now_ms() > deadline)
            TEST_FAIL("the workers never had %d jobs running", GROUPS * CAP);
        apitest_nap_ms(10);
    }
    int64_t t0 = apitest_now_ms();
    double cpu0 = 0, cpu = 0;
    for (int i = 0; i < 3; i++)
        cpu0 += cpu_s(pids[i]);
    long store_most = 0;
    deadline = apitest_now_ms() + 40000;
    while (lt_count(&s, "glim", "succeeded") < JOBS) {
        long m = store_most_of_a_group(&s);
        if (m > CAP)
            TEST_FAIL("the store shows %ld jobs of one group running, limit %d", m, CAP);
        if (m > store_most)
            store_most = m;
        if (apitest_now_ms() > deadline)
            TEST_FAIL("the jobs did not all finish within 40 s");
        apitest_nap_ms(20);
    }
    double wall_s = (double)(apitest_now_ms() - t0) / 1000.0;
    for (int i = 0; i < 3; i++)
        cpu += cpu_s(pids[i]);
    cpu -= cpu0;
    lt_stop_workers(3, pids);
    long handler_most = handlers_most_of_a_group(rec, group_of, first);
    fprintf(stderr,
            "group_max_running %s: store saw %ld, handlers %ld of one group at once; %.1f s, "
            "workers' cpu %.2f s\n",
            backend, store_most, handler_most, wall_s, cpu);
    ASSERT_EQ(store_most, CAP);
    ASSERT_EQ(handler_most, CAP);
    /* Held back, not failed: every job succeeded at its first attempt. */
    json_t *o = get_json(&s, "/v1/jobs?queue=glim&limit=1000");
    size_t i;
    json_t *j;
    ASSERT_EQ(json_array_size(json_object_get(o, "jobs")), JOBS);
    json_array_foreach(json_object_get(o, "jobs"), i, j) {
        ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "succeeded");
        ASSERT_EQ(json_integer_value(json_object_get(j, "attempt")), 1);
    }
    json_decref(o);
    /* No spinning (test_limits_running.c says why this bound). */
    ASSERT(cpu < 0.9 * wall_s);
    srv_stop(&s);
}
