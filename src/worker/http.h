/*
 * http.h — the http handler runner: each run is one POST, all of them on one
 * libcurl multi handle driven by one thread (no thread per call).
 *
 * docs/WORKER.md, "http handlers, in detail": POST of the payload with
 * Content-Type: application/json, Idempotency-Key, Jobd-Job-Id and
 * Jobd-Attempt. 2xx -> succeeded (a JSON body of at most 64 KiB becomes the
 * result); 4xx other than 408 and 429 -> dead; 408, 429, 5xx, a connection
 * error or the timeout -> retryable, with Retry-After (seconds or an HTTP
 * date) as the retry delay.
 */
#ifndef JOBD_WORKER_HTTP_H
#define JOBD_WORKER_HTTP_H

#include "worker/run.h"

struct http_runner;

/* The runner table's configure for `http = URL` (runner.h): http:// or https://. */
JOBD_MUST_USE int http_configure(struct handler_conf *h, const char *value, const char *dir,
                                 struct jobd_error *err);

/* Starts the curl thread; results go to sink (on that thread). */
JOBD_MUST_USE int http_runner_new(struct run_sink sink, struct http_runner **out,
                                  struct jobd_error *err);
/* Queues run (ownership passes); exactly one result will come. Thread-safe. */
void http_runner_start(struct http_runner *h, struct run *run);
/* Aborts the call (id, attempt); its result says why. Thread-safe. */
void http_runner_stop(struct http_runner *h, int64_t id, int32_t attempt, enum run_stop why);
/* Aborts every call and joins the thread; no result after it returns. NULL-safe. */
void http_runner_free(struct http_runner *h);

/*
 * Parses a Retry-After value: delta-seconds or an HTTP date (relative to
 * now_s, seconds since the epoch). Returns the delay in ms (>= 0), or -1 if
 * value is neither. Pure.
 */
int64_t http_retry_after_ms(const char *value, int64_t now_s);

#endif
