/*
 * handles.c — worker_handles (handles.h): which jobs a worker takes.
 */
#include "core/handles.h"

#include <string.h>

/* True if the JSON array a holds the string s. */
static bool
strings_have(const json_t *a, const char *s)
{
    size_t i;
    const json_t *v;
    json_array_foreach(a, i, v) {
        const char *t = json_string_value(v);
        if (t != NULL && strcmp(t, s) == 0)
            return true;
    }
    return false;
}

bool
worker_handles(const json_t *types, const json_t *queues, const char *type, const char *queue)
{
    return strings_have(types, type) &&
           (json_array_size(queues) == 0 || strings_have(queues, queue));
}
