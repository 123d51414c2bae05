// The Worker's claims: a long poll for as many jobs as it has room for
// (docs/API.md, POST /v1/claim), each job's lease counted from when the
// server claimed it, and the hand-off of claimed jobs to free slots.
package jobd

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptrace"
	"sync"
	"time"
)

// claimedJob is one job of a claim answer.
type claimedJob struct {
	Job
	LeaseRemainingMS int64 `json:"lease_remaining_ms"`
}

// claimAnswer is the answer of POST /v1/claim.
type claimAnswer struct {
	Jobs   []*claimedJob `json:"jobs"`
	HeldMS int64         `json:"held_ms"`
}

// UnmarshalJSON reads a claimed job (Job's decoder would take the whole
// object for itself).
func (cj *claimedJob) UnmarshalJSON(b []byte) error {
	if err := cj.Job.UnmarshalJSON(b); err != nil {
		return err
	}
	var aux struct {
		LeaseRemainingMS int64 `json:"lease_remaining_ms"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	cj.LeaseRemainingMS = aux.LeaseRemainingMS
	return nil
}

// claimLoop claims until Stop.
func (w *Worker) claimLoop() {
	failures := 0
	for !w.stopped() {
		free := w.room()
		if free <= 0 {
			select {
			case <-w.slotFree:
			case <-w.stopping:
			}
			continue
		}
		if free > 1000 {
			free = 1000
		}
		sent := time.Now()
		ans, err := w.claimStoppable(free)
		if err != nil {
			if w.stopped() {
				return
			}
			if failures == 0 || failures%20 == 0 {
				w.logf("%s: claim: %v (retrying)", w.id, err)
			}
			_ = sleepStop(w.stopping, jitter(failures, 100*time.Millisecond, 5*time.Second))
			failures++
			continue
		}
		failures = 0
		for _, cj := range ans.Jobs {
			end := sent.Add(time.Duration(ans.HeldMS+cj.LeaseRemainingMS) * time.Millisecond)
			w.accept(&cj.Job, end)
		}
	}
}

// room is how many more jobs the worker may hold.
func (w *Worker) room() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.concurrency + w.prefetch - len(w.held)
}

// claimStoppable is one claim that Stop ends at once while the server
// holds it (the long poll), but not once its answer has begun to arrive:
// cutting a claim answer the worker has read would leave its jobs claimed
// until their leases ran out, while one cut unread is given back by the
// server (docs/API.md, Remote workers). A claim answered after
// Stop is released by accept.
func (w *Worker) claimStoppable(limit int) (*claimAnswer, error) {
	var mu sync.Mutex
	answered := false
	// Bounded, so that a network that went silent cannot hold the claims
	// for ever: the long poll plus time for the answer.
	ctx, cancel := context.WithTimeout(context.Background(), w.claimWait+30*time.Second)
	defer cancel()
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotFirstResponseByte: func() {
		mu.Lock()
		answered = true
		mu.Unlock()
	}})
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-w.stopping:
			mu.Lock()
			if !answered {
				cancel()
			}
			mu.Unlock()
		case <-done:
		}
	}()
	return w.claim(ctx, limit)
}

func (w *Worker) claim(ctx context.Context, limit int) (*claimAnswer, error) {
	body := map[string]any{
		"worker_id": w.id, "types": w.types, "limit": limit,
		"lease_s": w.lease.Seconds(), "wait_s": w.claimWait.Seconds(),
	}
	if len(w.queues) > 0 {
		body["queues"] = w.queues
	}
	var ans claimAnswer
	if _, err := w.c.do(ctx, call{route: routeClaim, body: body}, &ans); err != nil {
		return nil, err
	}
	return &ans, nil
}

// accept takes a claimed job: it is held (heartbeated) from now on, and
// started when a slot is free. One claimed after Stop, or whose lease is
// about to end already, is handed back at once.
func (w *Worker) accept(j *Job, leaseEnd time.Time) {
	r := &run{c: w.c, job: j, handler: w.handlers[j.Type], done: make(chan struct{}), leaseEnd: leaseEnd, hard: w.hardCtx}
	r.ctx, r.cancel = context.WithCancel(w.hardCtx)
	j.Status = StatusRunning
	w.runs.Add(1)
	w.mu.Lock()
	w.held[j.ID] = r
	late := time.Until(leaseEnd) < w.heartbeat/2
	if r.handler == nil || late || w.stopped() {
		w.mu.Unlock()
		go w.release(r)
		return
	}
	w.queued = append(w.queued, r)
	w.dispatchLocked()
	w.mu.Unlock()
	go w.keep(r)
}

// dispatchLocked starts queued jobs while slots are free (w.mu held).
func (w *Worker) dispatchLocked() {
	for w.active < w.concurrency && len(w.queued) > 0 && !w.draining.Load() {
		r := w.queued[0]
		w.queued = w.queued[1:]
		if r.stopCause() != nil { // its lease ran out while it waited
			go w.settle(r)
			continue
		}
		r.started = true
		w.active++
		go w.execute(r)
	}
}

func sleepStop(stop <-chan struct{}, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-stop:
		return errors.New("stopped")
	}
}
