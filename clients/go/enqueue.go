// Enqueueing: one job (POST /v1/jobs) or many in batches
// (POST /v1/jobs/batch), docs/API.md, Jobs.
package jobd

import (
	"context"
	"errors"
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
	return &j, nil
}

// maxBatch is the server's limit on the jobs of one batch (docs/API.md,
// Conventions, Limits).
const maxBatch = 10000

// EnqueueMany adds the jobs and returns them in order. Up to 10,000 jobs
// go in one request, all or nothing (a bad one fails the call naming it,
// e.g. field "jobs[3].type"); a longer list is sent in such batches one
// after the other, and a failing batch leaves the earlier ones written (the
// jobs returned so far come back with the error).
func (c *Client) EnqueueMany(ctx context.Context, specs []JobSpec) ([]*Job, error) {
	out := make([]*Job, 0, len(specs))
	for start := 0; start < len(specs); start += maxBatch {
		end := start + maxBatch
		if end > len(specs) {
			end = len(specs)
		}
		bodies := make([]*jobBody, 0, end-start)
		keyed := true
		for i := start; i < end; i++ {
			bodies = append(bodies, &specs[i].body)
			keyed = keyed && specs[i].body.IdempotencyKey != ""
		}
		var ans struct {
			Jobs []*Job `json:"jobs"`
		}
		req := struct {
			Jobs []*jobBody `json:"jobs"`
		}{bodies}
		if _, err := c.do(ctx, call{route: routeEnqueueBatch, body: &req, keyed: keyed}, &ans); err != nil {
			return out, err
		}
		if len(ans.Jobs) != end-start {
			return out, errors.New("jobd: POST /v1/jobs/batch: the answer does not have one job per job sent")
		}
		out = append(out, ans.Jobs...)
	}
	return out, nil
}
