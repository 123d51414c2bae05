// Typed errors: every error answer of the server (docs/API.md, Errors)
// becomes an *Error that matches one sentinel with errors.Is, so callers
// branch on the kind and still read the status, code, message and field.
package jobd

import (
	"errors"
	"fmt"
	"time"
)

// The kinds of error answer. An *Error matches exactly one of them with
// errors.Is, except that ErrStaleAttempt also matches ErrConflict (both
// are 409 answers).
var (
	ErrBadRequest   = errors.New("jobd: bad request")   // 400, 405, 413, 415
	ErrUnauthorized = errors.New("jobd: unauthorized")  // 401
	ErrForbidden    = errors.New("jobd: forbidden")     // 403
	ErrNotFound     = errors.New("jobd: not found")     // 404
	ErrConflict     = errors.New("jobd: conflict")      // 409 idempotency_conflict, invalid_state, conflict, job_running, limit_reached
	ErrStaleAttempt = errors.New("jobd: stale attempt") // 409 stale_attempt: the report changed nothing
	ErrUnavailable  = errors.New("jobd: unavailable")   // 503 store_unavailable, busy; 504 commit_unknown; 429 too_many_bulk
	ErrServer       = errors.New("jobd: server error")  // 500 internal and any other status
)

// Error is an error answer of the server. Its fields are those of the body
// {"error": {"code", "message", "field"}}; Field is "" when the server
// named none.
type Error struct {
	Status     int           // the HTTP status
	Code       string        // snake_case, e.g. "invalid_field"
	Message    string        // the server's sentence
	Field      string        // the field, query parameter or path part at fault, or ""
	RetryAfter time.Duration // the Retry-After header, 0 when absent
	Method     string        // the request's method
	Path       string        // the request's path (no query)
}

func (e *Error) Error() string {
	s := fmt.Sprintf("jobd: %s %s: %d %s: %s", e.Method, e.Path, e.Status, e.Code, e.Message)
	if e.Field != "" {
		s += " (field " + e.Field + ")"
	}
	return s
}

// Kind returns the sentinel this error matches (ErrNotFound, ...).
func (e *Error) Kind() error {
	switch e.Code {
	case "stale_attempt":
		return ErrStaleAttempt
	case "idempotency_conflict", "invalid_state", "conflict", "job_running", "limit_reached":
		return ErrConflict
	case "unauthorized":
		return ErrUnauthorized
	case "forbidden", "cross_site_request", "host_not_allowed":
		return ErrForbidden
	case "not_found":
		return ErrNotFound
	case "store_unavailable", "busy", "commit_unknown", "too_many_bulk":
		return ErrUnavailable
	case "internal":
		return ErrServer
	}
	return kindOfStatus(e.Status)
}

func kindOfStatus(status int) error {
	switch {
	case status == 401:
		return ErrUnauthorized
	case status == 403:
		return ErrForbidden
	case status == 404:
		return ErrNotFound
	case status == 409:
		return ErrConflict
	case status == 429 || status == 502 || status == 503 || status == 504:
		return ErrUnavailable
	case status >= 400 && status < 500:
		return ErrBadRequest
	}
	return ErrServer
}

// Is makes errors.Is(err, jobd.ErrNotFound) and the like work.
func (e *Error) Is(target error) bool {
	k := e.Kind()
	return target == k || (k == ErrStaleAttempt && target == ErrConflict)
}

// permanentError marks a handler's error as not worth retrying.
type permanentError struct{ err error }

func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }

// Permanent wraps a handler's error so that the job goes dead at once,
// whatever attempts it has left (the fail report's "retryable": false,
// docs/API.md, Remote workers). Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

// IsPermanent reports whether err (or an error it wraps) came from Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// retryInError carries the delay a handler asks for before the next attempt.
type retryInError struct {
	err error
	d   time.Duration
}

func (r *retryInError) Error() string { return r.err.Error() }
func (r *retryInError) Unwrap() error { return r.err }

// RetryIn wraps a handler's error so that the next attempt is due after d
// (the fail report's retry_in_s, e.g. from a Retry-After) instead of the
// server's backoff. RetryIn(nil, d) is nil.
func RetryIn(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryInError{err, d}
}
