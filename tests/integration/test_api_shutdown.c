/*
 * test_api_shutdown.c — SIGTERM while clients enqueue as fast as they can.
 * Each enqueue waits for its group commit on a suspended connection; with
 * --shutdown-grace 0 the drain gives up at once, and the server must still
 * answer every waiter, exit 0 (libmicrohttpd aborts the process if it is
 * stopped with a suspended connection), and every job it acknowledged with
 * 201 must be in the store when it comes back.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "apitest.h"

#define CLIENTS 8
#define MAX_ACKED 200000

struct client {
    const struct srv *s;
    atomic_bool *stop;
    int64_t *acked; /* ids of the 201s */
    size_t n_acked; /* written by the client, read by the test: atomics */
};

/* Enqueues on one keep-alive connection until told to stop or refused. */
static void *
client_main(void *arg)
{
    struct client *c = arg;
    CURL *h = curl_easy_init();
    char url[128];
    snprintf(url, sizeof url, "%s/v1/jobs", c->s->base);
    struct curl_slist *hl = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, "{\"type\":\"t\"}");
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, apitest_body_cb);
    while (!atomic_load(c->stop) && c->n_acked < MAX_ACKED / CLIENTS) {
        struct resp r = {0};
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &r);
        CURLcode cc = curl_easy_perform(h);
        long status = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        if (cc == CURLE_OK && status == 201) {
            json_t *v = json_loadb(r.body, r.len, 0, NULL);
            c->acked[c->n_acked] = json_integer_value(json_object_get(v, "id"));
            __atomic_store_n(&c->n_acked, c->n_acked + 1, __ATOMIC_RELEASE);
            json_decref(v);
        }
        free(r.body);
        if (cc != CURLE_OK) /* the server is gone */
            break;
    }
    curl_slist_free_all(hl);
    curl_easy_cleanup(h);
    return NULL;
}

/*
 * How many epoll instances process pid holds. The server must hold none:
 * libmicrohttpd 0.9.75 aborts the process at random when a daemon that
 * waits in epoll is quiesced under load (src/api/http.c), which no run of
 * the test below can show every time; this shows the cause every time.
 */
static int
epoll_fds(pid_t pid)
{
    char dir[64], path[600], target[64];
    snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(dir);
    ASSERT(d != NULL);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len > 0) {
            target[len] = '\0';
            n += strcmp(target, "anon_inode:[eventpoll]") == 0;
        }
    }
    closedir(d);
    return n;
}

BOTH(sigterm_under_enqueue_load_answers_everyone_and_loses_nothing)
{
    const char *extra[] = {"--shutdown-grace", "0s", NULL};
    struct srv s;
    srv_start(&s, backend, extra);
    atomic_bool stop = false;
    struct client cl[CLIENTS];
    pthread_t th[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        cl[i] = (struct client){.s = &s, .stop = &stop};
        cl[i].acked = calloc(MAX_ACKED / CLIENTS, sizeof *cl[i].acked);
        ASSERT(cl[i].acked != NULL);
        pthread_create(&th[i], NULL, client_main, &cl[i]);
    }
    /* Let the load build up, so that commits are in flight at the signal. */
    int64_t until = apitest_now_ms() + 5000;
    size_t total = 0;
    while (apitest_now_ms() < until) {
        total = 0;
        for (int i = 0; i < CLIENTS; i++)
            total += __atomic_load_n(&cl[i].n_acked, __ATOMIC_ACQUIRE);
        if (total >= 300)
            break;
        apitest_nap_ms(5);
    }
    ASSERT_EQ(epoll_fds(s.pid), 0);
    srv_stop(&s); /* SIGTERM; fails the test unless it exits 0 */
    atomic_store(&stop, true);
    for (int i = 0; i < CLIENTS; i++)
        pthread_join(th[i], NULL);

    srv_start_db(&s, NULL);
    total = 0;
    for (int i = 0; i < CLIENTS; i++) {
        for (size_t k = 0; k < cl[i].n_acked; k++) {
            char path[64];
            snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)cl[i].acked[k]);
            struct resp r;
            if (req(&s, "GET", path, NULL, &r) != 200)
                TEST_FAIL("job %lld was acknowledged with 201 but is not in the store (%ld)",
                          (long long)cl[i].acked[k], r.status);
            resp_fini(&r);
        }
        total += cl[i].n_acked;
        free(cl[i].acked);
    }
    ASSERT(total > 0);
    fprintf(stderr, "%s: %zu acknowledged enqueues, all present after the restart\n", backend,
            total);
    srv_stop(&s);
}
