// Workflows: named sets of jobs with dependencies among them, submitted at
// once, all or nothing (docs/API.md, Workflows; docs/MODEL.md, Workflows).
package jobd

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"time"
)

// Step is one step of a workflow to submit: a job (its fields as for
// Enqueue) named by Ref, waiting for the steps DependsOn names by ref.
// Zero fields are left to the server's defaults.
type Step struct {
	Ref             string
	Type            string
	Payload         any // nil for the default {}
	Queue           string
	Priority        int
	MaxAttempts     int
	Timeout         time.Duration
	RunAt           time.Time     // not with In
	In              time.Duration // not with RunAt
	DependsOn       []string      // refs of other steps
	OnParentFailure string        // ParentFailureCancel (default) or ParentFailureRun
}

// MarshalJSON writes the step as POST /v1/workflows takes it.
func (s Step) MarshalJSON() ([]byte, error) {
	type body struct {
		Ref             string   `json:"ref"`
		Type            string   `json:"type"`
		Payload         any      `json:"payload,omitempty"`
		Queue           string   `json:"queue,omitempty"`
		Priority        int      `json:"priority,omitempty"`
		MaxAttempts     int      `json:"max_attempts,omitempty"`
		Timeout         string   `json:"timeout,omitempty"`
		RunAt           string   `json:"run_at,omitempty"`
		In              string   `json:"in,omitempty"`
		DependsOn       []string `json:"depends_on,omitempty"`
		OnParentFailure string   `json:"on_parent_failure,omitempty"`
	}
	b := body{Ref: s.Ref, Type: s.Type, Payload: s.Payload, Queue: s.Queue, Priority: s.Priority,
		MaxAttempts: s.MaxAttempts, DependsOn: s.DependsOn, OnParentFailure: s.OnParentFailure}
	if s.Timeout > 0 {
		b.Timeout = durationText(s.Timeout)
	}
	if !s.RunAt.IsZero() {
		b.RunAt = s.RunAt.UTC().Format(time.RFC3339Nano)
	}
	if s.In > 0 {
		b.In = durationText(s.In)
	}
	return json.Marshal(b)
}

// Submitted is what Submit answers: the workflow's id and each step's job
// id by ref. Replayed is true when its idempotency key found it submitted
// before (the server then answered the first submission).
type Submitted struct {
	ID       int64            `json:"id"`
	Jobs     map[string]int64 `json:"jobs"`
	Replayed bool             `json:"-"`
}

// Workflow is a workflow as the server describes it: Status is "running"
// until every step has ended, then "succeeded" or "failed"; FinishedAt is
// the zero time until then. Steps are filled by Get only.
type Workflow struct {
	ID         int64          `json:"id"`
	Name       string         `json:"name"`
	Status     string         `json:"status"`
	CreatedAt  time.Time      `json:"created_at"`
	FinishedAt time.Time      `json:"finished_at"`
	Counts     map[Status]int `json:"counts"`
	Steps      []WorkflowStep `json:"steps"`
}

// WorkflowStep is one step of a workflow read back: its ref, its job's id,
// type and status, and its parents' refs.
type WorkflowStep struct {
	Ref       string   `json:"ref"`
	JobID     int64    `json:"job_id"`
	Type      string   `json:"type"`
	Status    Status   `json:"status"`
	DependsOn []string `json:"depends_on"`
}

// WorkflowFilter selects workflows to list; zero fields select all.
type WorkflowFilter struct {
	Status   string // "running", "succeeded" or "failed"
	Name     string
	PageSize int // 1 … 100 per request (default 50); the iterator goes through every page
}

// WorkflowOption sets a field of a workflow being submitted.
type WorkflowOption func(*workflowBody)

type workflowBody struct {
	Name           string `json:"name"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	Steps          []Step `json:"steps"`
}

// WithWorkflowKey sets the workflow's idempotency key: the same key again
// answers the first submission (Replayed), writing nothing; with a key a
// Submit is also retried after a network error or a 503.
func WithWorkflowKey(key string) WorkflowOption {
	return func(b *workflowBody) { b.IdempotencyKey = key }
}

// Workflows groups the calls on workflows (Client.Workflows).
type Workflows struct{ c *Client }

// Submit submits a workflow: each step becomes a job, waiting for the
// steps it depends on. All or nothing: a cycle, an unknown or duplicate
// ref or a bad field is ErrBadRequest naming the step ("steps[3].depends_on")
// and writes nothing.
func (w *Workflows) Submit(ctx context.Context, name string, steps []Step, opts ...WorkflowOption) (*Submitted, error) {
	b := workflowBody{Name: name, Steps: steps}
	for _, o := range opts {
		o(&b)
	}
	var s Submitted
	a, err := w.c.do(ctx, call{route: routeWorkflowSubmit, body: &b, keyed: b.IdempotencyKey != ""}, &s)
	if err != nil {
		return nil, err
	}
	s.Replayed = a.status == 200
	return &s, nil
}

// Get returns the workflow with its steps; ErrNotFound when there is none.
func (w *Workflows) Get(ctx context.Context, id int64) (*Workflow, error) {
	var wf Workflow
	if _, err := w.c.do(ctx, call{route: routeWorkflowGet, params: []string{idText(id)}}, &wf); err != nil {
		return nil, err
	}
	return &wf, nil
}

// AddSteps adds steps to a running workflow, for work found as it runs:
// their DependsOn may name existing refs and each other, and each step
// named in before (which must still be waiting) waits for them too. It
// returns each new ref's job id. ErrConflict (step_not_waiting naming
// "before[k]", workflow_finished) when it is too late. Never sent twice
// by the client: a repeat would add the steps again.
func (w *Workflows) AddSteps(ctx context.Context, id int64, steps []Step, before ...string) (map[string]int64, error) {
	body := struct {
		Steps  []Step   `json:"steps"`
		Before []string `json:"before,omitempty"`
	}{steps, before}
	var ans struct {
		Jobs map[string]int64 `json:"jobs"`
	}
	if _, err := w.c.do(ctx, call{route: routeWorkflowSteps, params: []string{idText(id)}, body: &body}, &ans); err != nil {
		return nil, err
	}
	return ans.Jobs, nil
}

// Cancel cancels every step that has not ended (a running one is asked to
// stop) and returns the workflow; a second cancel changes nothing.
func (w *Workflows) Cancel(ctx context.Context, id int64) (*Workflow, error) {
	return w.action(ctx, routeWorkflowCancel, id)
}

// Retry puts every dead or cancelled step back, pending or waiting as its
// parents say, and returns the workflow.
func (w *Workflows) Retry(ctx context.Context, id int64) (*Workflow, error) {
	return w.action(ctx, routeWorkflowRetry, id)
}

func (w *Workflows) action(ctx context.Context, r route, id int64) (*Workflow, error) {
	var wf Workflow
	if _, err := w.c.do(ctx, call{route: r, params: []string{idText(id)}}, &wf); err != nil {
		return nil, err
	}
	return &wf, nil
}

// Delete deletes an ended workflow with its steps' jobs; ErrConflict
// (workflow_running) while a step has not ended: cancel it first.
func (w *Workflows) Delete(ctx context.Context, id int64) error {
	_, err := w.c.do(ctx, call{route: routeWorkflowDelete, params: []string{idText(id)}}, nil)
	return err
}

// List returns the workflows the filter selects, newest first, without
// their steps, every page of them.
func (w *Workflows) List(ctx context.Context, f WorkflowFilter) *WorkflowIterator {
	q := url.Values{}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	if f.Name != "" {
		q.Set("name", f.Name)
	}
	if f.PageSize > 0 {
		q.Set("limit", strconv.Itoa(f.PageSize))
	}
	return &WorkflowIterator{c: w.c, ctx: ctx, query: q}
}

// WorkflowIterator goes through every page of a listing of workflows, as
// JobIterator does for jobs.
type WorkflowIterator struct {
	c     *Client
	ctx   context.Context
	query url.Values
	page  []*Workflow
	cur   *Workflow
	last  bool
	err   error
}

// Next moves to the next workflow, fetching the next page when needed;
// false at the end or on an error (see Err).
func (it *WorkflowIterator) Next() bool {
	for len(it.page) == 0 {
		if it.last || it.err != nil {
			it.cur = nil
			return false
		}
		var ans struct {
			Workflows []*Workflow `json:"workflows"`
			Next      *string     `json:"next"`
		}
		if _, err := it.c.do(it.ctx, call{route: routeWorkflowList, query: it.query}, &ans); err != nil {
			it.err = err
			return false
		}
		it.page = ans.Workflows
		if ans.Next == nil || *ans.Next == "" {
			it.last = true
		} else {
			it.query.Set("after", *ans.Next)
		}
	}
	it.cur, it.page = it.page[0], it.page[1:]
	return true
}

// Workflow returns the workflow Next moved to.
func (it *WorkflowIterator) Workflow() *Workflow { return it.cur }

// Err returns the error that ended the iteration, if any.
func (it *WorkflowIterator) Err() error { return it.err }
