/*
 * lib.h — libjobd internals shared between the client (client.c) and the
 * embedded worker: the layout behind the public opaque jobd_job, and access
 * to a client's store for code and tests inside the project. Not installed.
 */
#ifndef JOBD_LIB_LIB_H
#define JOBD_LIB_LIB_H

#include "core/job.h"
#include "jobd.h"
#include "store/store.h"

/* The public jobd_job is a struct job; accessors read it. */
struct jobd_job {
    struct job job;
};

/* The client's store (borrowed; lives as long as the client). */
struct store *lib_client_store(jobd_client *client);

/*
 * Builds a job_spec from public options: validates opts, canonicalises the
 * payload into *payload_out (malloc'd, caller frees, also on error) and
 * points spec->payload at it. field_prefix ("jobs[3].") may be NULL.
 * Errors name the field; JOBD_E_INVALID, JOBD_E_TOOBIG, JOBD_E_NOMEM.
 */
int lib_spec_from_opts(const struct jobd_job_opts *opts, const char *field_prefix,
                       struct job_spec *spec, char **payload_out, struct jobd_error *err);

#endif
