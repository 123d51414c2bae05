// Schedules: named cron templates the server turns into jobs
// (docs/API.md, Schedules; cron syntax in docs/CRON.md).
package jobd

import (
	"context"
	"net/url"
	"strconv"
	"time"
)

// Schedule is a schedule as the server describes it.
type Schedule struct {
	Name        string    `json:"name"`
	Cron        string    `json:"cron"`
	Timezone    string    `json:"timezone"`
	Type        string    `json:"type"`
	Payload     rawJSON   `json:"payload"`
	Queue       string    `json:"queue"`
	Priority    int       `json:"priority"`
	MaxAttempts int       `json:"max_attempts"`
	Catchup     string    `json:"catchup"`
	Paused      bool      `json:"paused"`
	NextRunAt   time.Time `json:"next_run_at"`
	LastFiredAt time.Time `json:"last_fired_at"`
	CreatedAt   time.Time `json:"created_at"`
}

// scheduleBody is the JSON of a schedule being created or replaced.
type scheduleBody struct {
	Name        string `json:"name"`
	Cron        string `json:"cron"`
	Type        string `json:"type"`
	Timezone    string `json:"timezone,omitempty"`
	Payload     any    `json:"payload,omitempty"`
	Queue       string `json:"queue,omitempty"`
	Priority    *int   `json:"priority,omitempty"`
	MaxAttempts *int   `json:"max_attempts,omitempty"`
	Catchup     string `json:"catchup,omitempty"`
}

type scheduleFunc func(*scheduleBody)

func (f scheduleFunc) applySchedule(b *scheduleBody) { f(b) }

// WithTimezone sets the IANA zone the cron expression is read in (default UTC).
func WithTimezone(zone string) ScheduleOption {
	return scheduleFunc(func(b *scheduleBody) { b.Timezone = zone })
}

// WithPayload sets the payload of each job the schedule makes (default {}).
func WithPayload(v any) ScheduleOption {
	return scheduleFunc(func(b *scheduleBody) { b.Payload = v })
}

// WithCatchup says what to do with firings missed while no scheduler ran:
// "once" (default), "all" or "skip".
func WithCatchup(mode string) ScheduleOption {
	return scheduleFunc(func(b *scheduleBody) { b.Catchup = mode })
}

// Schedules groups the calls on schedules (Client.Schedules).
type Schedules struct{ c *Client }

func scheduleSpec(name, cron, typ string, opts []ScheduleOption) *scheduleBody {
	b := &scheduleBody{Name: name, Cron: cron, Type: typ}
	for _, o := range opts {
		o.applySchedule(b)
	}
	return b
}

// Create makes a new schedule; ErrConflict (conflict) if the name is taken.
func (s *Schedules) Create(ctx context.Context, name, cron, typ string, opts ...ScheduleOption) (*Schedule, error) {
	return s.one(ctx, call{route: routeScheduleCreate, body: scheduleSpec(name, cron, typ, opts)})
}

// Put creates the schedule or replaces its definition (keeping its pause
// state, its last firing and, when cron and zone are unchanged, its next).
func (s *Schedules) Put(ctx context.Context, name, cron, typ string, opts ...ScheduleOption) (*Schedule, error) {
	return s.one(ctx, call{route: routeSchedulePut, params: []string{name}, body: scheduleSpec(name, cron, typ, opts)})
}

// Get returns the schedule; ErrNotFound when there is none.
func (s *Schedules) Get(ctx context.Context, name string) (*Schedule, error) {
	return s.one(ctx, call{route: routeScheduleGet, params: []string{name}})
}

// List returns every schedule, by name, going through every page. A
// listed schedule has no Payload (the server leaves it out of lists; Get
// has it).
func (s *Schedules) List(ctx context.Context) ([]Schedule, error) {
	var all []Schedule
	q := url.Values{"limit": {"1000"}}
	for {
		var ans struct {
			Schedules []Schedule `json:"schedules"`
			Next      *string    `json:"next"`
		}
		if _, err := s.c.do(ctx, call{route: routeScheduleList, query: q}, &ans); err != nil {
			return nil, err
		}
		all = append(all, ans.Schedules...)
		if ans.Next == nil || *ans.Next == "" {
			return all, nil
		}
		q.Set("after", *ans.Next)
	}
}

// Delete removes the schedule (the jobs it made stay).
func (s *Schedules) Delete(ctx context.Context, name string) error {
	_, err := s.c.do(ctx, call{route: routeScheduleDelete, params: []string{name}}, nil)
	return err
}

// Pause stops the schedule making jobs.
func (s *Schedules) Pause(ctx context.Context, name string) (*Schedule, error) {
	return s.one(ctx, call{route: routeSchedulePause, params: []string{name}})
}

// Resume lets the schedule make jobs again (missed firings are not caught up).
func (s *Schedules) Resume(ctx context.Context, name string) (*Schedule, error) {
	return s.one(ctx, call{route: routeScheduleResume, params: []string{name}})
}

// Trigger makes one job of the schedule now, paused or not, and returns it.
func (s *Schedules) Trigger(ctx context.Context, name string) (*Job, error) {
	var j Job
	if _, err := s.c.do(ctx, call{route: routeScheduleTrig, params: []string{name}}, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// Next returns the schedule's next count firings (1 … 100; 0 for the
// server's default, 5), in UTC, and its zone.
func (s *Schedules) Next(ctx context.Context, name string, count int) ([]time.Time, string, error) {
	var q url.Values
	if count > 0 {
		q = url.Values{"count": {strconv.Itoa(count)}}
	}
	var ans struct {
		Timezone string      `json:"timezone"`
		Next     []time.Time `json:"next"`
	}
	if _, err := s.c.do(ctx, call{route: routeScheduleNext, params: []string{name}, query: q}, &ans); err != nil {
		return nil, "", err
	}
	return ans.Next, ans.Timezone, nil
}

func (s *Schedules) one(ctx context.Context, cl call) (*Schedule, error) {
	var sc Schedule
	if _, err := s.c.do(ctx, cl, &sc); err != nil {
		return nil, err
	}
	return &sc, nil
}
