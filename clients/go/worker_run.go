// One claimed job inside a Worker: its lease, its handler's run with the
// context that carries why it was stopped, and the report that follows.
package jobd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// Why a handler's context was cancelled (StopCause).
var (
	ErrJobCancelled   = errors.New("jobd: the job was cancelled")
	ErrJobTimedOut    = errors.New("jobd: the job's timeout passed")
	ErrLeaseLost      = errors.New("jobd: the job's lease was lost")
	ErrWorkerStopping = errors.New("jobd: the worker is stopping")
)

// run is a claimed job from its claim to its report.
type run struct {
	c        *Client // for its progress reports (ReportProgress)
	job      *Job
	handler  HandlerFunc
	ctx      context.Context // cancelled by stop
	cancel   context.CancelFunc
	done     chan struct{} // closed once settled (reported, released or dropped)
	mu       sync.Mutex
	leaseEnd time.Time       // by this process's clock
	hard     context.Context // the worker's: done when its shutdown grace is over
	cause    error           // the first stop's reason
	started  bool            // its handler was started (under Worker.mu)
}

type runKey struct{}

// StopCause says why a handler's ctx was cancelled: ErrJobCancelled,
// ErrJobTimedOut, ErrLeaseLost or ErrWorkerStopping; nil while it runs on
// (or for a context not given by a Worker).
func StopCause(ctx context.Context) error {
	r, _ := ctx.Value(runKey{}).(*run)
	if r == nil {
		return nil
	}
	if c := r.stopCause(); c != nil {
		return c
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ErrJobTimedOut
	}
	return nil
}

func (r *run) stop(cause error) {
	r.mu.Lock()
	if r.cause == nil {
		r.cause = cause
	}
	r.mu.Unlock()
	r.cancel()
}

func (r *run) stopCause() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cause == nil && r.hard != nil && r.hard.Err() != nil {
		return ErrWorkerStopping
	}
	return r.cause
}

func (r *run) lease() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leaseEnd
}

func (r *run) extend(t time.Time) {
	r.mu.Lock()
	r.leaseEnd = t
	r.mu.Unlock()
}

// execute runs the handler in this goroutine and reports its outcome.
func (w *Worker) execute(r *run) {
	ctx := context.WithValue(r.ctx, runKey{}, r)
	cancel := context.CancelFunc(func() {})
	if r.job.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, r.job.Timeout)
	}
	result, err := call1(ctx, r.handler, r.job)
	timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
	cancel()
	w.finish(r, result, err, timedOut)
}

// call1 calls the handler, turning a panic into an error.
func call1(ctx context.Context, h HandlerFunc, j *Job) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return h(ctx, j)
}

// finish decides the report from how the run ended.
func (w *Worker) finish(r *run, result any, err error, timedOut bool) {
	switch cause := r.stopCause(); {
	case cause == ErrLeaseLost:
		w.settle(r) // another worker may have it: nothing to say
	case cause == ErrJobCancelled:
		w.fail(r, "cancelled while running", true, nil)
	case cause == ErrWorkerStopping:
		zero := 0.0
		w.fail(r, "the worker stopped before the job finished", true, &zero)
	case timedOut:
		w.fail(r, fmt.Sprintf("timed out after %v", r.job.Timeout), true, nil)
	case err != nil:
		var in *retryInError
		var after *float64
		if errors.As(err, &in) {
			s := in.d.Seconds()
			after = &s
		}
		w.fail(r, err.Error(), !IsPermanent(err), after)
	default:
		w.complete(r, result)
	}
}

func (w *Worker) complete(r *run, result any) {
	body := map[string]any{"attempt": r.job.Attempt, "lease_token": r.job.leaseToken}
	if result != nil {
		b, err := json.Marshal(result)
		if err != nil {
			w.fail(r, "the handler's result is not JSON: "+err.Error(), false, nil)
			return
		}
		body["result"] = json.RawMessage(b)
	}
	err := w.report(r, routeJobComplete, body)
	if errors.Is(err, ErrBadRequest) && result != nil {
		w.fail(r, "the handler's result was refused: "+err.Error(), false, nil)
		return
	}
	w.settle(r)
}

func (w *Worker) fail(r *run, msg string, retryable bool, retryIn *float64) {
	body := map[string]any{"attempt": r.job.Attempt, "lease_token": r.job.leaseToken,
		"error": msg, "retryable": retryable}
	if retryIn != nil {
		body["retry_in_s"] = *retryIn
	}
	_ = w.report(r, routeJobFail, body)
	w.settle(r)
}

// release hands a job back unstarted.
func (w *Worker) release(r *run) {
	body := map[string]any{"attempt": r.job.Attempt, "lease_token": r.job.leaseToken}
	_ = w.report(r, routeJobRelease, body)
	w.settle(r)
}

// settle forgets the run: its heartbeats stop and its slot is free.
func (w *Worker) settle(r *run) {
	r.cancel()
	close(r.done)
	w.mu.Lock()
	delete(w.held, r.job.ID)
	if r.started {
		w.active--
	}
	w.dispatchLocked()
	w.mu.Unlock()
	select {
	case w.slotFree <- struct{}{}:
	default:
	}
	w.runs.Done()
}
