"""Typed errors, one class per kind of error the server answers
(docs/API.md, Errors): each keeps the HTTP status, the error's code, its
message and the field it names. `Permanent` is not an answer of the server:
a handler raises it to fail its job at once, without a retry."""
from typing import Any, Dict, Optional, Type


class JobdError(Exception):
    """Any error answered by a jobd server (or met on the way to it)."""

    def __init__(self, status: int, code: str, message: str,
                 field: Optional[str] = None) -> None:
        super().__init__(f"{status} {code}: {message}" + (f" (field {field})" if field else ""))
        self.status = status
        self.code = code
        self.message = message
        self.field = field


class BadRequest(JobdError):
    """400 (malformed_json, invalid_field, unknown_field, invalid_query,
    number_out_of_range, empty_filter, missing_host), 413 too_large and 415
    unsupported_media_type; `field` names what is wrong."""


class Unauthorized(JobdError):
    """401: tokens are configured and the request had no valid one."""


class Forbidden(JobdError):
    """403 forbidden: the token's role does not allow the route; also
    cross_site_request and host_not_allowed (docs/API.md, Conventions)."""


class NotFound(JobdError):
    """404: no such job, schedule, worker or route."""


class Conflict(JobdError):
    """409: idempotency_conflict, invalid_state, conflict, job_running,
    limit_reached."""


class StaleAttempt(Conflict):
    """409 stale_attempt: a report for an attempt that is no longer the live
    one (the lease was lost, or the attempt already ended)."""


class Unavailable(JobdError):
    """503 store_unavailable or busy (nothing was written), 429
    too_many_bulk, 504 commit_unknown (the write may have happened: retry
    with the same idempotency key); try again later."""


class NetworkError(Unavailable):
    """The server could not be reached or the connection dropped before an
    answer (status 0, code "network"). Whether a request that met it was
    carried out is unknown."""

    def __init__(self, message: str) -> None:
        super().__init__(0, "network", message, None)


class ServerError(JobdError):
    """500 internal, or any other answer the client does not expect."""


class Permanent(Exception):
    """Raised by a handler: the job fails at once and goes dead, whatever
    attempts it has left (docs/API.md, POST /v1/jobs/{id}/fail, retryable)."""


# The kind of each error code (clients/cases.json, error_codes).
_BY_CODE: Dict[str, Type[JobdError]] = {
    "malformed_json": BadRequest,
    "invalid_field": BadRequest,
    "unknown_field": BadRequest,
    "invalid_query": BadRequest,
    "number_out_of_range": BadRequest,
    "bad_framing": BadRequest,
    "empty_filter": BadRequest,
    "too_large": BadRequest,
    "unauthorized": Unauthorized,
    "forbidden": Forbidden,
    "not_found": NotFound,
    "idempotency_conflict": Conflict,
    "stale_attempt": StaleAttempt,
    "invalid_state": Conflict,
    "conflict": Conflict,
    "job_running": Conflict,
    "limit_reached": Conflict,
    "missing_host": BadRequest,
    "unsupported_media_type": BadRequest,
    "cross_site_request": Forbidden,
    "host_not_allowed": Forbidden,
    "store_unavailable": Unavailable,
    "busy": Unavailable,
    "too_many_bulk": Unavailable,
    "commit_unknown": Unavailable,
    "internal": ServerError,
}

# For a code this client does not know: the kind its status stands for.
_BY_STATUS: Dict[int, Type[JobdError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound,
    405: BadRequest, 409: Conflict, 410: NotFound, 413: BadRequest, 415: BadRequest,
    429: Unavailable, 503: Unavailable, 504: Unavailable,
}


def from_answer(status: int, body: Any) -> JobdError:
    """The typed error for an error answer: `body` is its parsed JSON (or
    anything else when it was not the documented error object)."""
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict):
        return _BY_STATUS.get(status, ServerError)(
            status, "http_" + str(status), f"HTTP {status} without an error object", None)
    code = str(err.get("code") or "http_" + str(status))
    message = str(err.get("message") or "")
    field = err.get("field")
    cls = _BY_CODE.get(code, _BY_STATUS.get(status, ServerError))
    return cls(status, code, message, field if isinstance(field, str) else None)
