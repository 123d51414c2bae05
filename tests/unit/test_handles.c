/*
 * test_handles.c — worker_handles (core/handles.h): a worker takes a job
 * when the job's type is among its types and its queues are empty (every
 * queue) or name the job's queue; the one rule behind GET /v1/queues'
 * unhandled_types and jobd submit's warning.
 */
#include <jansson.h>

#include "core/handles.h"
#include "test.h"

TEST(types_and_queues)
{
    json_t *types = json_pack("[s, s]", "mail.send", "report");
    json_t *none = json_array();
    json_t *queues = json_pack("[s]", "mail");
    ASSERT(worker_handles(types, none, "mail.send", "anything"));
    ASSERT(worker_handles(types, NULL, "report", "default"));
    ASSERT(worker_handles(types, queues, "mail.send", "mail"));
    ASSERT(!worker_handles(types, queues, "mail.send", "default"));
    ASSERT(!worker_handles(types, none, "mail.sen", "mail"));
    ASSERT(!worker_handles(none, none, "mail.send", "mail"));
    ASSERT(!worker_handles(NULL, NULL, "mail.send", "mail"));
    json_t *odd = json_pack("[i, s]", 7, "mail");
    ASSERT(worker_handles(types, odd, "report", "mail")); /* non-strings are skipped */
    ASSERT(!worker_handles(odd, none, "7", "mail"));
    json_decref(odd);
    json_decref(types);
    json_decref(none);
    json_decref(queues);
}
