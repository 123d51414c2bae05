/*
 * apierr.c — building error bodies with jansson (so messages that quote user
 * input are escaped properly) and mapping jobd_err codes to HTTP statuses.
 */
#include "api/apierr.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

static const char oom_body[] =
    "{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\",\"field\":null}}";

void
api_json_take(struct api_response *r, int status, char *body)
{
    free(r->body);
    r->status = status;
    r->content_type = "application/json";
    r->body = body;
    r->body_len = body ? strlen(body) : 0;
    if (body == NULL) {
        /* The answer could not be printed: never a success status on it. */
        r->status = 500;
        r->body = strdup(oom_body);
        r->body_len = r->body ? strlen(r->body) : 0;
    }
}

void
api_error(struct api_response *r, int status, const char *code, const char *field, const char *fmt,
          ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *o = json_pack("{s:{s:s, s:s, s:o}}", "error", "code", code, "message", msg, "field",
                          (field && *field) ? json_string(field) : json_null());
    char *text = NULL;
    if (o != NULL) {
        text = json_dumps(o, JSON_COMPACT);
        json_decref(o);
    }
    api_json_take(r, status, text);
}

void
api_error_from(struct api_response *r, int rc, const struct jobd_error *err)
{
    const char *field = err ? err->field : NULL;
    const char *msg = (err && err->msg[0]) ? err->msg : jobd_strerror(rc);
    switch (rc) {
    case JOBD_E_INVALID: api_error(r, 400, "invalid_field", field, "%s", msg); break;
    case JOBD_E_TOOBIG: api_error(r, 413, "too_large", field, "%s", msg); break;
    case JOBD_E_NOTFOUND: api_error(r, 404, "not_found", field, "%s", msg); break;
    case JOBD_E_CONFLICT: api_error(r, 409, "conflict", field, "%s", msg); break;
    case JOBD_E_STALE: api_error(r, 409, "stale_attempt", field, "%s", msg); break;
    case JOBD_E_STATE: api_error(r, 409, "invalid_state", field, "%s", msg); break;
    case JOBD_E_UNAVAILABLE:
        /* The detail names hosts, ports and files: for the server log, not the client. */
        log_write(LOGL_WARN, "api", "store unavailable", &LF_STR("error", msg), 1);
        api_error(r, 503, "store_unavailable", NULL,
                  "the store is unavailable; nothing was written, try again later");
        break;
    case JOBD_E_COMMIT_UNKNOWN:
        /* Never 503: that promises nothing was written (docs/API.md, Errors). */
        log_write(LOGL_WARN, "api", "commit outcome unknown", &LF_STR("error", msg), 1);
        api_error(r, 504, "commit_unknown", NULL,
                  "the connection to the store broke at commit and whether the write took "
                  "effect could not be learned; it may have: check before writing again, or "
                  "retry with the same idempotency key");
        break;
    case JOBD_E_UNAUTHORIZED: api_error(r, 401, "unauthorized", NULL, "%s", msg); break;
    case JOBD_E_NOMEM: api_error(r, 500, "internal", NULL, "out of memory"); break;
    default:
        log_write(LOGL_ERROR, "api", "internal error", &LF_STR("error", msg), 1);
        api_error(r, 500, "internal", NULL, "internal error; the server log has the details");
        break;
    }
}
