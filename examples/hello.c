/*
 * hello.c — the smallest complete libjobd program: enqueue a few jobs into
 * a store, then act as a worker for them (claim, "work", complete).
 *
 *   build/examples/hello [STORE_URL]     (default: $JOBD_DB, else sqlite:hello.db)
 *
 * It uses only the public header, as a program outside this repository
 * would, and links against the shared libjobd.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobd.h"

static int
fail(const char *what, int rc, const struct jobd_error *err)
{
    fprintf(stderr, "hello: %s: %s%s%s\n", what, jobd_strerror(rc), err->msg[0] ? ": " : "",
            err->msg);
    return 1;
}

int
main(int argc, char **argv)
{
    const char *url = argc > 1 ? argv[1] : getenv("JOBD_DB");
    if (url == NULL || *url == '\0')
        url = "sqlite:hello.db";

    struct jobd_error err = {0};
    jobd_client *client = NULL;
    int rc = jobd_client_open(url, &client, &err);
    if (rc != JOBD_OK)
        return fail("opening the store", rc, &err);

    static const char *const names[] = {"Ada", "Grace", "Edsger"};
    enum { N = sizeof names / sizeof names[0] };
    int64_t ids[N];
    struct jobd_job_opts opts[N];
    char payloads[N][64];
    for (int i = 0; i < N; i++) {
        snprintf(payloads[i], sizeof payloads[i], "{\"name\": \"%s\", \"n\": %d}", names[i], i);
        opts[i] =
            (struct jobd_job_opts){.type = "hello.greet", .payload = payloads[i], .priority = i};
    }
    rc = jobd_enqueue_batch(client, opts, N, ids, &err);
    if (rc != JOBD_OK) {
        jobd_client_close(client);
        return fail("enqueueing", rc, &err);
    }
    printf("enqueued %d jobs (ids %lld..%lld) into %s\n", N, (long long)ids[0],
           (long long)ids[N - 1], url);

    /* The worker half: claim what is due, in priority order, until none is. */
    char worker_id[64];
    snprintf(worker_id, sizeof worker_id, "hello-%ld", (long)getpid());
    const char *types[] = {"hello.greet"};
    struct jobd_claim_opts co = {
        .worker_id = worker_id, .types = types, .n_types = 1, .limit = 10, .lease_ms = 30000};
    int worked = 0, failed = 0;
    for (;;) {
        jobd_job_batch *batch = NULL;
        rc = jobd_claim(client, &co, &batch, &err);
        if (rc != JOBD_OK) {
            jobd_client_close(client);
            return fail("claiming", rc, &err);
        }
        size_t n = jobd_job_batch_count(batch);
        for (size_t i = 0; i < n; i++) {
            const jobd_job *job = jobd_job_batch_get(batch, i);
            printf("job %lld attempt %d (%s): %s\n", (long long)jobd_job_id(job),
                   jobd_job_attempt(job), jobd_job_type(job), jobd_job_payload(job));
            rc = jobd_complete(client, jobd_job_id(job), jobd_job_attempt(job),
                               "{\"greeted\": true}", &err);
            if (rc == JOBD_OK) {
                worked++;
            } else {
                failed++;
                fail("completing", rc, &err);
            }
        }
        jobd_job_batch_free(batch);
        if (n == 0)
            break;
    }

    int succeeded = 0;
    for (int i = 0; i < N; i++) {
        const char *status = "?";
        int32_t attempt = 0;
        rc = jobd_get_status(client, ids[i], &status, &attempt, &err);
        if (rc != JOBD_OK) {
            jobd_client_close(client);
            return fail("reading a status", rc, &err);
        }
        succeeded += strcmp(status, "succeeded") == 0;
    }
    printf("summary: enqueued %d, worked %d, failed %d, %d of ours succeeded\n", N, worked, failed,
           succeeded);
    jobd_client_close(client);
    return succeeded == N && failed == 0 ? 0 : 1;
}
