/*
 * traceparent.c — core/traceparent.h: the shape of a version-00 W3C
 * traceparent, checked byte by byte (no regex, no allocation).
 */
#include "core/traceparent.h"

#include <string.h>

#include "core/err.h"

/* True when s[0..n) are lowercase hex digits, not all '0' when nonzero. */
static bool
hex_run(const char *s, size_t n, bool nonzero)
{
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
        any |= c != '0';
    }
    return any || !nonzero;
}

int
traceparent_validate(const char *s, const char *field, struct jobd_error *err)
{
    static const char shape[] = "must be a W3C traceparent: 00-<32 hex digits>-<16 hex digits>-"
                                "<2 hex digits>, lowercase";
    if (s == NULL || strlen(s) != TRACEPARENT_LEN || s[2] != '-' || s[35] != '-' || s[52] != '-' ||
        !hex_run(s, 2, false) || !hex_run(s + 3, 32, false) || !hex_run(s + 36, 16, false) ||
        !hex_run(s + 53, 2, false))
        return jobd_error_set(err, JOBD_E_INVALID, field, "%s %s", field, shape);
    if (memcmp(s, "00", 2) != 0)
        return jobd_error_set(err, JOBD_E_INVALID, field,
                              "%s: only version 00 of traceparent is taken, not %.2s", field, s);
    if (!hex_run(s + 3, 32, true))
        return jobd_error_set(err, JOBD_E_INVALID, field, "%s: the trace id must not be all zeros",
                              field);
    if (!hex_run(s + 36, 16, true))
        return jobd_error_set(err, JOBD_E_INVALID, field, "%s: the parent id must not be all zeros",
                              field);
    return JOBD_OK;
}

void
traceparent_trace_id(const char *s, char out[TRACE_ID_LEN + 1])
{
    memcpy(out, s + 3, TRACE_ID_LEN);
    out[TRACE_ID_LEN] = '\0';
}
