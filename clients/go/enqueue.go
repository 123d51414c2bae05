// Enqueueing: one job (POST /v1/jobs) or many in batches
// (POST /v1/jobs/batch), docs/API.md, Jobs.
package jobd

import (
	"context"
	"errors"
	"sync"
)

// jobBody is the JSON of one job to enqueue.
type jobBody struct {
	Type           string   `json:"type"`
	Payload        any      `json:"payload,omitempty"`
	Queue          string   `json:"queue,omitempty"`
	Priority       *int     `json:"priority,omitempty"`
	RunAt          string   `json:"run_at,omitempty"`
	In             string   `json:"in,omitempty"`
	MaxAttempts    *int     `json:"max_attempts,omitempty"`
	IdempotencyKey string   `json:"idempotency_key,omitempty"`
	TimeoutS       *float64 `json:"timeout_s,omitempty"`
	Traceparent    string   `json:"traceparent,omitempty"`
	DependsOn      []int64  `json:"depends_on,omitempty"`
	OnParentFail   string   `json:"on_parent_failure,omitempty"`
	Debounce       *window  `json:"debounce,omitempty"`
	Unique         *window  `json:"unique,omitempty"`
	Group          string   `json:"group,omitempty"`
}

// window is a debounce or unique key and its duration.
type window struct {
	Key string `json:"key"`
	For string `json:"for"`
}

// JobSpec is a job to enqueue with EnqueueMany; make one with Spec.
type JobSpec struct{ body jobBody }

// Spec describes a job for EnqueueMany: its type, payload (any value
// encoding/json can marshal; nil for the default {}) and options.
func Spec(typ string, payload any, opts ...EnqueueOption) JobSpec {
	s := JobSpec{jobBody{Type: typ, Payload: payload}}
	for _, o := range opts {
		o.applyEnqueue(&s.body)
	}
	return s
}

// Enqueue adds a job of type typ with payload (any value encoding/json can
// marshal; nil for the default {}) and returns it as stored. With an
// idempotency key already used for the same type, queue and payload it
// returns the existing job with Replayed set.
func (c *Client) Enqueue(ctx context.Context, typ string, payload any, opts ...EnqueueOption) (*Job, error) {
	s := Spec(typ, payload, opts...)
	var j Job
	a, err := c.do(ctx, call{route: routeEnqueue, body: &s.body, keyed: s.body.IdempotencyKey != ""}, &j)
	if err != nil {
		return nil, err
	}
	j.Replayed = a.header.Get("Idempotent-Replayed") == "true"
	j.Debounced = a.header.Get("Debounced") == "true"
	return &j, nil
}

// maxBatch is the jobs EnqueueMany sends a request: the server takes up to
// 10,000 (docs/API.md, Conventions, Limits) but writes ten batches of 1,000
// faster than one of 10,000, and batches in flight together share its
// commits (docs/BENCHMARKS.md, "Clients"); batchParallel of them at once.
const (
	maxBatch      = 1000
	batchParallel = 4
)

// EnqueueMany adds the jobs and returns them in order. They go in batches
// of 1,000 jobs, up to four requests at once; each batch is all or nothing
// (a bad job fails the call naming it, e.g. field "jobs[3].type"), the list
// as a whole is not: when a batch fails, others may be written. The jobs
// of the batches before the first failed one come back with its error (use
// idempotency keys to send the whole list again safely).
func (c *Client) EnqueueMany(ctx context.Context, specs []JobSpec) ([]*Job, error) {
	n := (len(specs) + maxBatch - 1) / maxBatch
	got := make([][]*Job, n)
	errs := make([]error, n)
	sem := make(chan struct{}, batchParallel)
	var wg sync.WaitGroup
	for k := 0; k < n; k++ {
		start, end := k*maxBatch, (k+1)*maxBatch
		if end > len(specs) {
			end = len(specs)
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(k int, part []JobSpec) {
			defer func() { <-sem; wg.Done() }()
			got[k], errs[k] = c.enqueueBatch(ctx, part)
		}(k, specs[start:end])
	}
	wg.Wait()
	out := make([]*Job, 0, len(specs))
	for k := range got {
		if errs[k] != nil {
			return out, errs[k]
		}
		out = append(out, got[k]...)
	}
	return out, nil
}

// enqueueBatch sends one POST /v1/jobs/batch, retried on the network only
// when every job has an idempotency key.
func (c *Client) enqueueBatch(ctx context.Context, part []JobSpec) ([]*Job, error) {
	bodies := make([]*jobBody, 0, len(part))
	keyed := true
	for i := range part {
		bodies = append(bodies, &part[i].body)
		keyed = keyed && part[i].body.IdempotencyKey != ""
	}
	var ans struct {
		Jobs []*Job `json:"jobs"`
	}
	req := struct {
		Jobs []*jobBody `json:"jobs"`
	}{bodies}
	if _, err := c.do(ctx, call{route: routeEnqueueBatch, body: &req, keyed: keyed}, &ans); err != nil {
		return nil, err
	}
	if len(ans.Jobs) != len(part) {
		return nil, errors.New("jobd: POST /v1/jobs/batch: the answer does not have one job per job sent")
	}
	return ans.Jobs, nil
}
