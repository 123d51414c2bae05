/*
 * test_traceparent.c — core/traceparent.h: version-00 traceparents taken,
 * every malformed one refused with an error naming the field, and the
 * trace id read out of a valid one.
 */
#include <string.h>

#include "core/err.h"
#include "core/traceparent.h"
#include "test.h"

#define GOOD "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

TEST(valid_traceparents_taken)
{
    struct jobd_error err = {0};
    ASSERT_EQ(traceparent_validate(GOOD, "traceparent", &err), JOBD_OK);
    ASSERT_EQ(traceparent_validate("00-00000000000000000000000000000001-0000000000000001-00",
                                   "traceparent", &err),
              JOBD_OK);
    char id[TRACE_ID_LEN + 1];
    traceparent_trace_id(GOOD, id);
    ASSERT_STR_EQ(id, "4bf92f3577b34da6a3ce929d0e0e4736");
}

TEST(malformed_traceparents_refused_by_name)
{
    static const char *const bad[] = {
        "",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",     /* no flags */
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-", /* too long */
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  /* uppercase */
        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",  /* not hex */
        "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  /* separator */
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  /* zero trace id */
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  /* zero parent id */
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  /* another version */
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  /* invalid version */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct jobd_error err = {0};
        ASSERT_EQ(traceparent_validate(bad[i], "jobs[2].traceparent", &err), JOBD_E_INVALID);
        ASSERT_STR_EQ(err.field, "jobs[2].traceparent");
        ASSERT(strstr(err.msg, "traceparent") != NULL);
    }
    struct jobd_error err = {0};
    ASSERT_EQ(traceparent_validate(NULL, "traceparent", &err), JOBD_E_INVALID);
}
