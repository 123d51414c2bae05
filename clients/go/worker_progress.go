// A handler's progress reports (docs/API.md, POST /v1/jobs/{id}/progress):
// fenced by the attempt and its lease token like a heartbeat, which a
// progress report also is.
package jobd

import (
	"context"
	"errors"
	"time"
)

// ProgressReport is one progress report: Percent (0 … 100, nil for none),
// Message (at most 1 KiB) and Data (any value encoding/json can marshal, at
// most 16 KiB encoded; nil for none). Each report replaces the last as a whole.
type ProgressReport struct {
	Percent *float64
	Message string
	Data    any
}

// progressTimeout bounds one report, retries included.
const progressTimeout = 10 * time.Second

// Progress reports the progress of the job whose handler got ctx: percent
// (0 … 100) and a message; see ReportProgress.
func Progress(ctx context.Context, percent float64, message string) error {
	return ReportProgress(ctx, ProgressReport{Percent: &percent, Message: message})
}

// ReportProgress reports p for the job whose handler got ctx (from a
// Worker), so that people can see how far it is (the job's Progress).
// Report as often as it helps people, not per item. An error never
// concerns the job's outcome: ErrStaleAttempt (or ErrNotFound) means the
// attempt is no longer live (its lease was lost, it was reported), a
// network error that the server could not be reached; a handler may
// ignore it. A cancel found in the answer stops the handler's ctx as a
// heartbeat's would.
func ReportProgress(ctx context.Context, p ProgressReport) error {
	r, _ := ctx.Value(runKey{}).(*run)
	if r == nil || r.c == nil {
		return errors.New("jobd: progress: the context is not a Worker handler's")
	}
	if p.Percent != nil && (*p.Percent < 0 || *p.Percent > 100) {
		return errors.New("jobd: progress: percent must be within 0 … 100")
	}
	body := map[string]any{"attempt": r.job.Attempt, "lease_token": r.job.leaseToken}
	if p.Percent != nil {
		body["percent"] = *p.Percent
	}
	if p.Message != "" {
		body["message"] = p.Message
	}
	if p.Data != nil {
		body["data"] = p.Data
	}
	// Not the handler's ctx: a report is the worker's business, and one
	// sent as the handler is being stopped still says where it got to.
	rctx, cancel := context.WithTimeout(context.Background(), progressTimeout)
	defer cancel()
	var ans struct {
		CancelRequested bool `json:"cancel_requested"`
	}
	_, err := r.c.do(rctx, call{route: routeJobProgress, params: []string{idText(r.job.ID)}, body: body}, &ans)
	if err == nil && ans.CancelRequested {
		r.stop(ErrJobCancelled)
	}
	return err
}
