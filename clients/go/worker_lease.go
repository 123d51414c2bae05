// The Worker's leases and presence: each held job is heartbeated every
// heartbeat interval and stopped when its lease ends by this process's
// clock without an answer (docs/WORKER.md, How the loop works, step 4);
// the worker itself is announced, refreshed and withdrawn (docs/API.md,
// Workers).
package jobd

import (
	"context"
	"errors"
	"os"
	"time"
)

// keep heartbeats r until it is settled.
func (w *Worker) keep(r *run) {
	beat := time.NewTimer(w.heartbeat)
	defer beat.Stop()
	expiry := time.NewTimer(time.Until(r.lease()))
	defer expiry.Stop()
	failures := 0
	for {
		select {
		case <-r.done:
			return
		case <-expiry.C:
			w.logf("%s: job %d: lease ran out without a heartbeat answer; stopping it", w.id, r.job.ID)
			r.stop(ErrLeaseLost)
			return
		case <-beat.C:
		}
		sent := time.Now()
		cancelReq, err := w.heartbeatOnce(r)
		select {
		case <-r.done:
			return
		default:
		}
		switch {
		case err == nil:
			failures = 0
			r.extend(sent.Add(w.lease))
			if !expiry.Stop() {
				<-expiry.C
			}
			expiry.Reset(time.Until(r.lease()))
			if cancelReq {
				r.stop(ErrJobCancelled)
			}
			beat.Reset(w.heartbeat)
		case errors.Is(err, ErrStaleAttempt) || errors.Is(err, ErrNotFound):
			r.stop(ErrLeaseLost)
			return
		default:
			// Try again sooner while the lease lasts.
			failures++
			beat.Reset(jitter(failures, w.heartbeat/8, w.heartbeat/2))
		}
	}
}

func (w *Worker) heartbeatOnce(r *run) (bool, error) {
	ctx, cancel := context.WithDeadline(context.Background(), r.lease())
	defer cancel()
	body := map[string]any{"attempt": r.job.Attempt, "lease_token": r.job.leaseToken,
		"lease_s": w.lease.Seconds()}
	var ans struct {
		CancelRequested bool `json:"cancel_requested"`
	}
	_, err := w.c.do(ctx, call{route: routeJobHeartbeat, params: []string{idText(r.job.ID)},
		body: body, noRetry: true}, &ans)
	return ans.CancelRequested, err
}

func (w *Worker) announce(ctx context.Context) error {
	host, _ := os.Hostname()
	body := map[string]any{
		"id": w.id, "hostname": host, "pid": os.Getpid(), "version": "jobd-go/" + Version,
		"queues": append([]string{}, w.queues...), "types": w.types, "concurrency": w.concurrency,
		"heartbeat_ms": w.heartbeat.Milliseconds(),
	}
	_, err := w.c.do(ctx, call{route: routeWorkerAnnounce, body: body}, nil)
	return err
}

// presence refreshes the worker's presence every heartbeat interval, says
// at once when it starts draining, and announces it again if the server
// forgot it. It returns (closing done) when the drain is over.
func (w *Worker) presence(done chan struct{}) {
	defer close(done)
	tick := time.NewTicker(w.heartbeat)
	defer tick.Stop()
	stopping := w.stopping
	last := "" // the last error logged: a lasting one is logged once
	for {
		select {
		case <-tick.C:
		case <-stopping:
			stopping = nil // say "draining" now, then keep refreshing
		case <-w.hardCtx.Done():
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), w.heartbeat)
		body := map[string]any{"draining": w.stopped()}
		_, err := w.c.do(ctx, call{route: routeWorkerPresence, params: []string{w.id}, body: body}, nil)
		if errors.Is(err, ErrNotFound) {
			err = w.announce(ctx)
		}
		cancel()
		switch {
		case err == nil:
			last = ""
		case err.Error() != last && !w.stopped():
			last = err.Error()
			w.logf("%s: presence: %v", w.id, err)
		}
	}
}

func (w *Worker) withdraw() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := w.c.do(ctx, call{route: routeWorkerWithdraw, params: []string{w.id}}, nil)
	if err != nil {
		w.logf("%s: withdraw: %v", w.id, err)
	}
}
