// A Worker's reports (complete, fail, release) are retried after network
// errors and 503s until they land. A copy that may have landed before its
// connection broke, whose retry then meets 409 stale_attempt, is checked
// against the job: if the attempt ended as reported, it landed once and
// that is not an error (docs/API.md, Remote workers; a server that
// answers repeated reports itself with Idempotent-Replayed needs no check).
package jobd

import (
	"context"
	"errors"
	"time"
)

// reportPatience is how long a report is retried; a drain allows less.
const (
	reportPatience = 60 * time.Second
	drainPatience  = 5 * time.Second
)

// report sends one report of r and retries it; the error is the last
// answer's when it did not land (it is logged), nil when it did.
func (w *Worker) report(r *run, rt route, body map[string]any) error {
	patience := reportPatience
	if w.hardCtx.Err() != nil {
		patience = drainPatience
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	mayHaveLanded := false
	for n := 0; ; n++ {
		_, err := w.c.do(ctx, call{route: rt, params: []string{idText(r.job.ID)}, body: body, noRetry: true}, nil)
		if err == nil {
			return nil
		}
		if errors.Is(err, ErrStaleAttempt) && mayHaveLanded && w.landed(ctx, r, rt) {
			return nil
		}
		if errors.Is(err, ErrStaleAttempt) {
			w.logf("%s: job %d: the %s of attempt %d was refused as stale: its lease was lost, the job may be another worker's now",
				w.id, r.job.ID, reportName(rt), r.job.Attempt)
			return err
		}
		if !transient(err) || ctx.Err() != nil {
			w.logf("%s: job %d: %s %s: %v", w.id, r.job.ID, rt.method, rt.path, err)
			return err
		}
		// A broken connection may have delivered the report, and so may a
		// 503: a report is one statement whose answer the server can lose
		// (docs/API.md, "A lost commit").
		mayHaveLanded = true
		if sleepCtx(ctx, jitter(n, 50*time.Millisecond, 2*time.Second)) != nil {
			w.logf("%s: job %d: giving up on %s after %v: %v", w.id, r.job.ID, rt.path, patience, err)
			return err
		}
	}
}

// landed says whether attempt A of the job ended as the report rt says.
func (w *Worker) landed(ctx context.Context, r *run, rt route) bool {
	a := r.job.Attempt
	if rt == routeJobComplete {
		j, err := w.c.Get(ctx, r.job.ID)
		return err == nil && j.Status == StatusSucceeded && j.Attempt == a
	}
	hist, err := w.c.Attempts(ctx, r.job.ID)
	if err != nil {
		return false
	}
	for _, h := range hist {
		if h.Attempt != a {
			continue
		}
		switch h.Outcome {
		case "failed", "dead", "cancelled":
			return rt == routeJobFail
		case "released":
			return rt == routeJobRelease
		}
	}
	return false
}

func reportName(rt route) string {
	switch rt {
	case routeJobComplete:
		return "completion"
	case routeJobFail:
		return "failure report"
	}
	return "release"
}
