// Operations: statistics, workers, the caller's role, health and metrics
// (docs/API.md, Statistics, Workers, Operations).
package jobd

import (
	"context"
	"encoding/json"
	"net/url"
	"time"
)

// rawJSON keeps a JSON value as sent (a schedule's payload).
type rawJSON = json.RawMessage

// Stats is what happened to jobs over time.
type Stats struct {
	Step   time.Duration
	Series []StatsPoint
}

// StatsPoint is one step of the statistics.
type StatsPoint struct {
	T         time.Time `json:"t"`
	Enqueued  int64     `json:"enqueued"`
	Succeeded int64     `json:"succeeded"`
	Failed    int64     `json:"failed"`
	Dead      int64     `json:"dead"`
}

// Stats returns the counts of enqueued, succeeded, failed and dead jobs
// per step, oldest first.
func (c *Client) Stats(ctx context.Context, opts ...StatsOption) (*Stats, error) {
	q := url.Values{}
	for _, o := range opts {
		o.applyStats(q)
	}
	var ans struct {
		StepS  float64      `json:"step_s"`
		Series []StatsPoint `json:"series"`
	}
	if _, err := c.do(ctx, call{route: routeStats, query: q}, &ans); err != nil {
		return nil, err
	}
	return &Stats{Step: seconds(ans.StepS), Series: ans.Series}, nil
}

// WorkerInfo is a worker as the server lists it.
type WorkerInfo struct {
	ID          string    `json:"id"`
	Hostname    string    `json:"hostname"`
	PID         int       `json:"pid"`
	Version     string    `json:"version"`
	Queues      []string  `json:"queues"` // empty: every queue
	Types       []string  `json:"types"`
	Concurrency int       `json:"concurrency"`
	StartedAt   time.Time `json:"started_at"`
	LastSeenAt  time.Time `json:"last_seen_at"`
	State       string    `json:"state"` // active, draining, gone
	Running     []int64   `json:"running"`
}

// Workers returns the workers the server knows, by id, going through
// every page.
func (c *Client) Workers(ctx context.Context) ([]WorkerInfo, error) {
	var all []WorkerInfo
	q := url.Values{"limit": {"1000"}}
	for {
		var ans struct {
			Workers []WorkerInfo `json:"workers"`
			Next    *string      `json:"next"`
		}
		if _, err := c.do(ctx, call{route: routeWorkersList, query: q}, &ans); err != nil {
			return nil, err
		}
		all = append(all, ans.Workers...)
		if ans.Next == nil || *ans.Next == "" {
			return all, nil
		}
		q.Set("after", *ans.Next)
	}
}

// Identity is what the server makes of the caller's token.
type Identity struct {
	Role      string `json:"role"`       // read, worker, write, admin; none without a valid token
	Tokens    bool   `json:"tokens"`     // whether the server has tokens configured
	TokenSent bool   `json:"token_sent"` // whether the request carried one
}

// Whoami returns the role of the client's token.
func (c *Client) Whoami(ctx context.Context) (*Identity, error) {
	var id Identity
	if _, err := c.do(ctx, call{route: routeWhoami}, &id); err != nil {
		return nil, err
	}
	return &id, nil
}

// Health returns nil when the server and its store answer (GET /healthz).
func (c *Client) Health(ctx context.Context) error {
	_, err := c.do(ctx, call{route: routeHealthz}, nil)
	return err
}

// Metrics returns the server's Prometheus text (GET /metrics).
func (c *Client) Metrics(ctx context.Context) (string, error) {
	a, err := c.do(ctx, call{route: routeMetrics}, nil)
	if err != nil {
		return "", err
	}
	return string(a.body), nil
}
