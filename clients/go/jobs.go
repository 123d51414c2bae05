// The calls on jobs already enqueued: read, wait for, cancel, retry,
// delete, list every page, attempt history, bulk actions (docs/API.md,
// Jobs).
package jobd

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"time"
)

func idText(id int64) string { return strconv.FormatInt(id, 10) }

// Get returns the job; ErrNotFound when there is none.
func (c *Client) Get(ctx context.Context, id int64) (*Job, error) {
	var j Job
	if _, err := c.do(ctx, call{route: routeJobGet, params: []string{idText(id)}}, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// maxServerWait is the longest ?wait= the server holds a request.
const maxServerWait = 60 * time.Second

// Wait returns the job as soon as it is terminal (succeeded, dead or
// cancelled), or as it is when timeout has passed (no error then: check
// Status). It asks the server to hold the request (GET …?wait=) and falls
// back to polling with backoff on a server that does not offer that.
func (c *Client) Wait(ctx context.Context, id int64, timeout time.Duration) (*Job, error) {
	deadline := time.Now().Add(timeout)
	pause := 50 * time.Millisecond
	for {
		left := time.Until(deadline)
		j, err := c.waitOnce(ctx, id, left)
		if err != nil {
			return nil, err
		}
		left = time.Until(deadline)
		if j.Status.Terminal() || left <= 0 {
			return j, nil
		}
		if !c.noWait.Load() {
			continue // the server held the request as long as it would
		}
		if pause > left {
			pause = left
		}
		if err := sleepCtx(ctx, pause); err != nil {
			return nil, err
		}
		if pause *= 2; pause > time.Second {
			pause = time.Second
		}
	}
}

// waitOnce is one GET, with ?wait= while the server is known to take it.
func (c *Client) waitOnce(ctx context.Context, id int64, left time.Duration) (*Job, error) {
	if c.noWait.Load() || left < time.Millisecond {
		return c.Get(ctx, id)
	}
	if left > maxServerWait {
		left = maxServerWait
	}
	var j Job
	q := url.Values{"wait": {durationText(left)}}
	_, err := c.do(ctx, call{route: routeJobGet, params: []string{idText(id)}, query: q}, &j)
	var e *Error
	if errors.As(err, &e) && e.Code == "invalid_query" && (e.Field == "" || e.Field == "wait") {
		c.noWait.Store(true)
		return c.Get(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	return &j, nil
}

// Cancel cancels a pending job at once, or asks the worker of a running
// one to stop it (the job then ends cancelled); ErrConflict
// (invalid_state) for a job that already finished.
func (c *Client) Cancel(ctx context.Context, id int64) (*Job, error) {
	return c.jobAction(ctx, routeJobCancel, id)
}

// Retry makes a dead or cancelled job pending again, due now, with fresh
// attempts; ErrConflict (invalid_state) otherwise.
func (c *Client) Retry(ctx context.Context, id int64) (*Job, error) {
	return c.jobAction(ctx, routeJobRetry, id)
}

func (c *Client) jobAction(ctx context.Context, r route, id int64) (*Job, error) {
	var j Job
	if _, err := c.do(ctx, call{route: r, params: []string{idText(id)}}, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// Delete removes a job that is not running, with its history;
// ErrConflict (job_running) for a running one.
func (c *Client) Delete(ctx context.Context, id int64) error {
	_, err := c.do(ctx, call{route: routeJobDelete, params: []string{idText(id)}}, nil)
	return err
}

// Attempts returns the job's attempt history, oldest first.
func (c *Client) Attempts(ctx context.Context, id int64) ([]Attempt, error) {
	var ans struct {
		Attempts []Attempt `json:"attempts"`
	}
	if _, err := c.do(ctx, call{route: routeJobAttempts, params: []string{idText(id)}}, &ans); err != nil {
		return nil, err
	}
	return ans.Attempts, nil
}

// AttemptLog is an attempt's log, the kept end of an exec handler's stderr
// (docs/API.md, GET /v1/jobs/{id}/attempts/{attempt}/log). A 404 names what
// is missing: the job, the attempt or the log.
func (c *Client) AttemptLog(ctx context.Context, id int64, attempt int32) (string, error) {
	a, err := c.do(ctx, call{route: routeAttemptLog, params: []string{idText(id), strconv.FormatInt(int64(attempt), 10)}}, nil)
	if err != nil {
		return "", err
	}
	return string(a.body), nil
}

// JobIterator goes through every page of a listing (Jobs), newest first:
//
//	it := c.Jobs(ctx, jobd.WithStatus(jobd.StatusDead))
//	for it.Next() {
//		job := it.Job()
//	}
//	if err := it.Err(); err != nil { … }
type JobIterator struct {
	c     *Client
	ctx   context.Context
	query url.Values
	page  []*Job
	cur   *Job
	after string
	last  bool
	err   error
}

// Jobs lists the jobs the options select, every page of them, newest first.
func (c *Client) Jobs(ctx context.Context, opts ...ListOption) *JobIterator {
	q := url.Values{}
	for _, o := range opts {
		o.applyList(q)
	}
	return &JobIterator{c: c, ctx: ctx, query: q}
}

// Next moves to the next job, fetching the next page when needed; false
// at the end or on an error (see Err).
func (it *JobIterator) Next() bool {
	for len(it.page) == 0 {
		if it.last || it.err != nil {
			it.cur = nil
			return false
		}
		it.fetch()
	}
	it.cur, it.page = it.page[0], it.page[1:]
	return true
}

func (it *JobIterator) fetch() {
	q := url.Values{}
	for k, v := range it.query {
		q[k] = v
	}
	if it.after != "" {
		q.Set("after", it.after)
	}
	var ans struct {
		Jobs []*Job  `json:"jobs"`
		Next *string `json:"next"`
	}
	if _, err := it.c.do(it.ctx, call{route: routeJobsList, query: q}, &ans); err != nil {
		it.err = err
		return
	}
	it.page = ans.Jobs
	if ans.Next == nil || *ans.Next == "" {
		it.last = true
	} else {
		it.after = *ans.Next
	}
}

// Job returns the job Next moved to.
func (it *JobIterator) Job() *Job { return it.cur }

// Err returns the error that ended the iteration, if any.
func (it *JobIterator) Err() error { return it.err }

// BulkFilter selects the jobs of a bulk action; it must name at least one
// thing. Zero fields select nothing.
type BulkFilter struct {
	Status        Status
	Queue         string
	Type          string
	Schedule      string
	CreatedAfter  time.Time
	CreatedBefore time.Time
	Key           string
	IDs           []int64
}

func (f BulkFilter) body() map[string]any {
	m := map[string]any{}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set("status", string(f.Status))
	set("queue", f.Queue)
	set("type", f.Type)
	set("schedule", f.Schedule)
	set("key", f.Key)
	if !f.CreatedAfter.IsZero() {
		m["created_after"] = f.CreatedAfter.UTC().Format(time.RFC3339Nano)
	}
	if !f.CreatedBefore.IsZero() {
		m["created_before"] = f.CreatedBefore.UTC().Format(time.RFC3339Nano)
	}
	if f.IDs != nil {
		m["ids"] = f.IDs
	}
	return m
}

// BulkResult counts what a bulk action did.
type BulkResult struct {
	Matched int `json:"matched"`
	Changed int `json:"changed"`
	Skipped int `json:"skipped"`
}

// Bulk applies action ("retry", "cancel" or "delete") to the jobs the
// filter selects, at most limit of them (0: the server's default, 10,000).
func (c *Client) Bulk(ctx context.Context, action string, filter BulkFilter, limit int) (*BulkResult, error) {
	body := map[string]any{"action": action, "filter": filter.body()}
	if limit > 0 {
		body["limit"] = limit
	}
	var r BulkResult
	if _, err := c.do(ctx, call{route: routeJobsBulk, body: body}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
