// Queues: their counts, pause and resume, and their limits (docs/API.md,
// Queues).
package jobd

import (
	"context"
	"net/url"
	"strconv"
	"time"
)

// Queue is a queue as the server describes it.
type Queue struct {
	Name             string     `json:"name"`
	Paused           bool       `json:"paused"`
	Waiting          int64      `json:"waiting"` // jobs whose parents have not all ended
	Pending          int64      `json:"pending"`
	Running          int64      `json:"running"`
	Succeeded        int64      `json:"succeeded"`
	Dead             int64      `json:"dead"`
	Cancelled        int64      `json:"cancelled"`
	OldestPendingAge float64    `json:"oldest_pending_age_s"`
	MaxRunning       *int       `json:"max_running"`       // nil: no limit
	Rate             *QueueRate `json:"rate"`              // nil: no limit
	GroupMaxRunning  *int       `json:"group_max_running"` // the same, per group of the queue
	GroupRate        *QueueRate `json:"group_rate"`
	Throughput1m     Throughput `json:"throughput_1m"`
	UnhandledTypes   []string   `json:"unhandled_types"` // List only
}

// QueueRate is a queue's rate limit: at most Limit starts in each window of Per.
type QueueRate struct {
	Limit int    `json:"limit"`
	Per   string `json:"per"` // a duration as the server spells it: "1s", "1m"
}

// Throughput counts a queue's outcomes in the last minute.
type Throughput struct {
	Succeeded int64 `json:"succeeded"`
	Failed    int64 `json:"failed"`
	Dead      int64 `json:"dead"`
}

// Queues groups the calls on queues (Client.Queues).
type Queues struct{ c *Client }

// List returns every queue with jobs, a pause flag or limits, by name.
func (q *Queues) List(ctx context.Context) ([]Queue, error) {
	var ans struct {
		Queues []Queue `json:"queues"`
	}
	if _, err := q.c.do(ctx, call{route: routeQueueList}, &ans); err != nil {
		return nil, err
	}
	return ans.Queues, nil
}

// Pause stops workers claiming from the queue.
func (q *Queues) Pause(ctx context.Context, name string) (*Queue, error) {
	return q.one(ctx, call{route: routeQueuePause, params: []string{name}})
}

// Resume lets workers claim from the queue again.
func (q *Queues) Resume(ctx context.Context, name string) (*Queue, error) {
	return q.one(ctx, call{route: routeQueueResume, params: []string{name}})
}

// LimitOption changes one limit of a queue (SetLimits).
type LimitOption func(map[string]any)

// MaxRunning lets at most n of the queue's jobs run at once, across every
// worker; n <= 0 removes the limit.
func MaxRunning(n int) LimitOption {
	return func(m map[string]any) {
		if n <= 0 {
			m["max_running"] = nil
		} else {
			m["max_running"] = n
		}
	}
}

// Rate lets at most limit of the queue's jobs start in each window of per
// (1s … 1d); limit <= 0 removes the limit.
func Rate(limit int, per time.Duration) LimitOption {
	return func(m map[string]any) {
		if limit <= 0 {
			m["rate"] = nil
		} else {
			m["rate"] = map[string]any{"limit": limit, "per": durationText(per)}
		}
	}
}

// GroupMaxRunning lets at most n jobs of any one group of the queue run at
// once; n <= 0 removes the limit.
func GroupMaxRunning(n int) LimitOption {
	return func(m map[string]any) {
		if n <= 0 {
			m["group_max_running"] = nil
		} else {
			m["group_max_running"] = n
		}
	}
}

// GroupRate lets at most limit jobs of any one group of the queue start in
// each window of per; limit <= 0 removes the limit.
func GroupRate(limit int, per time.Duration) LimitOption {
	return func(m map[string]any) {
		tmp := map[string]any{}
		Rate(limit, per)(tmp)
		m["group_rate"] = tmp["rate"]
	}
}

// QueueGroup is one group of a queue with its pending and running jobs;
// Group is "" for the queue's jobs without a group.
type QueueGroup struct {
	Group   string `json:"group"`
	Pending int64  `json:"pending"`
	Running int64  `json:"running"`
}

// Groups returns the queue's groups with pending or running jobs, busiest
// first, at most limit of them (0: the server's default, 100).
func (q *Queues) Groups(ctx context.Context, name string, limit int) ([]QueueGroup, error) {
	v := url.Values{}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var ans struct {
		Groups []QueueGroup `json:"groups"`
	}
	if _, err := q.c.do(ctx, call{route: routeQueueGroups, params: []string{name}, query: v}, &ans); err != nil {
		return nil, err
	}
	return ans.Groups, nil
}

// SetLimits changes the queue's limits (the others stay) and returns it.
func (q *Queues) SetLimits(ctx context.Context, name string, limits ...LimitOption) (*Queue, error) {
	body := map[string]any{}
	for _, l := range limits {
		l(body)
	}
	return q.one(ctx, call{route: routeQueuePut, params: []string{name}, body: body})
}

func (q *Queues) one(ctx context.Context, cl call) (*Queue, error) {
	var qu Queue
	if _, err := q.c.do(ctx, cl, &qu); err != nil {
		return nil, err
	}
	return &qu, nil
}
