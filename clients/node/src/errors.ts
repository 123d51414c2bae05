// errors.ts — one error class per error kind of the API (docs/API.md,
// Errors), so callers can `instanceof` them; each keeps the answer's status,
// code, message and field. Also Permanent, the error a handler throws to
// make its job dead at once (docs/API.md, POST /v1/jobs/{id}/fail).

/** Any error this library raises about a request. */
export class JobdError extends Error {
  /** The HTTP status (0 when no answer came: NetworkError). */
  readonly status: number;
  /** The API's error code (`not_found`, `stale_attempt`, …). */
  readonly code: string;
  /** The field, query parameter or path part that is wrong, or null. */
  readonly field: string | null;
  /** Seconds from a Retry-After header, or null. */
  readonly retryAfter: number | null;

  constructor(status: number, code: string, message: string, field: string | null = null,
              retryAfter: number | null = null, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.field = field;
    this.retryAfter = retryAfter;
  }
}

/** 400, 413, 415 and other 4xx: the request is wrong (`field` names what). */
export class BadRequestError extends JobdError {}
/** 401: tokens are configured and the request had no valid one. */
export class UnauthorizedError extends JobdError {}
/** 403: the token's role does not allow the route. */
export class ForbiddenError extends JobdError {}
/** 404: no such job, schedule, worker or route. */
export class NotFoundError extends JobdError {}
/** 409: idempotency_conflict, invalid_state, conflict, job_running. */
export class ConflictError extends JobdError {}
/** 409 stale_attempt: a report for an attempt that is not the live one. */
export class StaleAttemptError extends JobdError {}
/**
 * 503 (the store is unavailable or the server busy: nothing was written),
 * 429 (too_many_bulk: try again later), and 504 (commit_unknown: the write
 * may have happened; docs/API.md, Errors).
 */
export class UnavailableError extends JobdError {}
/** 500 and other 5xx: something went wrong in the server. */
export class ServerError extends JobdError {}
/** No answer: the connection failed, was dropped, or timed out. */
export class NetworkError extends JobdError {}

/**
 * The error for an API error answer: the class by status (and code for
 * 409), keeping what the body says. A body that is not the API's error
 * shape (a proxy's page) gets the code `http_STATUS` and its text.
 */
export function errorFromResponse(status: number, body: unknown, text: string,
                                  retryAfter: number | null): JobdError {
  let code = `http_${status}`;
  let message = text.trim().slice(0, 500) || `HTTP ${status}`;
  let field: string | null = null;
  const e = (body as { error?: { code?: unknown; message?: unknown; field?: unknown } } | null)?.error;
  if (e && typeof e === "object") {
    if (typeof e.code === "string") code = e.code;
    if (typeof e.message === "string") message = e.message;
    if (typeof e.field === "string") field = e.field;
  }
  const cls = status === 409 && code === "stale_attempt" ? StaleAttemptError
    : status === 409 ? ConflictError
    : status === 401 ? UnauthorizedError
    : status === 403 ? ForbiddenError
    : status === 404 ? NotFoundError
    : status === 503 || status === 504 || status === 429 ? UnavailableError
    : status >= 500 ? ServerError
    : status >= 400 ? BadRequestError
    : JobdError;
  return new cls(status, code, message, field, retryAfter);
}

/**
 * Thrown by a handler: the job fails for good (dead at once, whatever
 * attempts it has left). Any other error is retried with backoff.
 */
export class Permanent extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "Permanent";
  }
}
