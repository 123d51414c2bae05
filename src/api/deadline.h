/*
 * deadline.h — a deadline for receiving a whole request (headers and body).
 *
 * libmicrohttpd's own timeout is an idle timeout: a client that sends one
 * byte every few seconds keeps a connection (and a descriptor) for ever,
 * and it cannot say "this request took too long" before the headers are
 * complete, when the access handler is first called. So every connection
 * is registered here when it opens (with its socket), its clock runs while
 * a request is being received — from the connection's start or the end of
 * its previous answer until the request is received in full — and a
 * watchdog thread shuts down the socket of one that overruns. shutdown(2)
 * does not close the descriptor: libmicrohttpd sees the end of the stream
 * and closes the connection itself, in its own thread, so nothing is freed
 * under its feet. A connection is unregistered before its socket is closed
 * (libmicrohttpd's NOTIFY_CLOSED), so a reused descriptor is never hit.
 * Thread-safe.
 */
#ifndef JOBD_API_DEADLINE_H
#define JOBD_API_DEADLINE_H

#include <stdint.h>

#include "jobd.h"

struct deadlines;
struct dl_conn;

/* Starts the watchdog for requests that must be received within timeout_ms. */
int deadlines_start(int64_t timeout_ms, struct deadlines **out, struct jobd_error *err);
/* Stops the watchdog and frees what is still registered. NULL-safe. */
void deadlines_stop(struct deadlines *d);
/* Registers a new connection on fd, its clock running; NULL on out-of-memory
 * (the connection then has no deadline beyond the idle timeout). */
struct dl_conn *deadlines_add(struct deadlines *d, int fd);
/* Unregisters and frees c (NULL-safe); call before the socket is closed. */
void deadlines_remove(struct deadlines *d, struct dl_conn *c);
/* The request on c is received in full: its clock stops (NULL-safe). */
void deadlines_received(struct deadlines *d, struct dl_conn *c);
/* c answered and may carry another request: its clock starts again (NULL-safe). */
void deadlines_rearm(struct deadlines *d, struct dl_conn *c);

#endif
