/*
 * c_worker.c — a worker with C handlers, linked against libjobd.
 *
 *   build/examples/c_worker [DB_URL] [CONFIG.ini]
 *
 * Registers "c.hello" (answers {"hello": <payload>}) and "c.count" (takes
 * 3 s in small steps, honouring stop requests), then runs
 * jobd's worker loop until SIGINT or SIGTERM, which stop it gracefully.
 * Enqueue with `jobd submit c.hello --payload '{"name":"ada"}'` or
 * jobd_enqueue() from the client section of jobd.h.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jobd.h>

static jobd_worker *the_worker;

static void
on_signal(int sig)
{
    (void)sig;
    jobd_worker_stop(the_worker); /* async-signal-safe */
}

static int
hello(jobd_run *run, void *ctx)
{
    (void)ctx;
    const char *payload = jobd_run_payload(run);
    size_t len = strlen(payload) + 32;
    char *result = malloc(len);
    if (result == NULL) {
        jobd_run_set_error(run, "out of memory");
        return JOBD_HANDLER_RETRY;
    }
    snprintf(result, len, "{\"hello\":%s}", payload);
    int rc = jobd_run_set_result(run, result);
    free(result);
    return rc == JOBD_OK ? JOBD_HANDLER_OK : JOBD_HANDLER_DEAD;
}

static int
count(jobd_run *run, void *ctx)
{
    (void)ctx;
    for (int i = 0; i < 30; i++) {
        if (jobd_run_should_stop(run)) {
            jobd_run_set_error(run, "stopped before counting to 3");
            return JOBD_HANDLER_RETRY;
        }
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return jobd_run_set_result(run, "{\"counted\":3}") == JOBD_OK ? JOBD_HANDLER_OK
                                                                  : JOBD_HANDLER_DEAD;
}

int
main(int argc, char **argv)
{
    const char *db = argc > 1 ? argv[1] : NULL;
    const char *config = argc > 2 ? argv[2] : NULL;
    struct jobd_error err = {0};
    if (jobd_worker_new(db, config, &the_worker, &err) != JOBD_OK) {
        fprintf(stderr, "c_worker: %s\n", err.msg);
        return 1;
    }
    if (jobd_worker_register(the_worker, "c.hello", hello, NULL) != JOBD_OK ||
        jobd_worker_register(the_worker, "c.count", count, NULL) != JOBD_OK ||
        jobd_worker_set_option(the_worker, "concurrency", "4", &err) != JOBD_OK) {
        fprintf(stderr, "c_worker: cannot register the handlers\n");
        jobd_worker_free(the_worker);
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    fprintf(stderr, "c_worker: running c.hello and c.count; Ctrl-C stops\n");
    int rc = jobd_worker_run(the_worker, &err);
    if (rc != JOBD_OK)
        fprintf(stderr, "c_worker: %s\n", err.msg);
    jobd_worker_free(the_worker);
    return rc == JOBD_OK ? 0 : 1;
}
