/*
 * jobjson_window.c — the `debounce` and `unique` members of a job body
 * (docs/API.md, POST /v1/jobs): each null, absent, or {"key": K, "for":
 * DUR}, DUR a duration as `in` takes it. The ranges and the combinations
 * refused are core/window.c's (job_spec_validate). Strings borrowed from o.
 */
#include <stdio.h>
#include <string.h>

#include "api/jobjson.h"
#include "core/duration.h"
#include "core/err.h"

static const char *const window_fields[] = {"key", "for", NULL};

static int
read_window(json_t *o, const char *prefix, const char *name, struct job_window *w,
            struct jobd_error *err)
{
    char f[160];
    json_t *v = json_object_get(o, name);
    if (v == NULL || json_is_null(v))
        return JOBD_OK;
    snprintf(f, sizeof f, "%s%s", prefix ? prefix : "", name);
    if (!json_is_object(v))
        return jobd_error_set(err, JOBD_E_INVALID, f,
                              "%s must be an object {\"key\": KEY, \"for\": DURATION}", f);
    char sub[176];
    snprintf(sub, sizeof sub, "%s.", f);
    const char *dur = NULL;
    int rc;
    if ((rc = jobjson_check_fields(v, window_fields, sub, err)) != JOBD_OK ||
        (rc = jobjson_get_str(v, "key", sub, true, &w->key, err)) != JOBD_OK ||
        (rc = jobjson_get_str(v, "for", sub, true, &dur, err)) != JOBD_OK)
        return rc;
    snprintf(f, sizeof f, "%sfor", sub);
    if ((rc = duration_parse_ms(dur, &w->for_ms, f, err)) != JOBD_OK)
        return rc;
    if (w->for_ms < 1) /* 0s: say so here, where "0s" was written */
        return jobd_error_set(err, JOBD_E_INVALID, f, "%s must be at least 1ms", f);
    return JOBD_OK;
}

int
jobjson_spec_windows(json_t *o, const char *prefix, struct job_spec *spec, struct jobd_error *err)
{
    int rc = read_window(o, prefix, "debounce", &spec->debounce, err);
    if (rc == JOBD_OK)
        rc = read_window(o, prefix, "unique", &spec->unique, err);
    return rc;
}
