/*
 * apierr.h — error responses of the API: the status code plus {"error":
 * {"code": "snake_case_code", "message": "…", "field": "…"|null}}
 * (docs/API.md, "Errors"), and the one mapping from enum jobd_err to
 * status/code, so every route answers the same failure the same way.
 */
#ifndef JOBD_API_APIERR_H
#define JOBD_API_APIERR_H

#include "api/api.h"

/*
 * Fills r with an error body. code is the snake_case API code; field may be
 * NULL or "" (-> null); message is printf-formatted. Replaces any body r had.
 * On out-of-memory r still gets the status with a static body.
 */
void api_error(struct api_response *r, int status, const char *code, const char *field,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * Maps a jobd error (rc, with detail in err) to a response:
 * INVALID 400 invalid_field, TOOBIG 413 too_large, NOTFOUND 404 not_found,
 * CONFLICT 409 conflict, STALE 409 stale_attempt, STATE 409 invalid_state,
 * UNAVAILABLE 503 store_unavailable (nothing was written), COMMIT_UNKNOWN
 * 504 commit_unknown (it may have been), UNAUTHORIZED 401, others 500 internal.
 */
void api_error_from(struct api_response *r, int rc, const struct jobd_error *err);

/* Sets r to status with the JSON text body (taken: body must be malloc'd).
 * A NULL body (the answer could not be printed) gives 500 "out of memory"
 * whatever status was asked, so a failed print never reads as a success. */
void api_json_take(struct api_response *r, int status, char *body);

#endif
