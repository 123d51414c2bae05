// The options of the calls on jobs, schedules and statistics. An option
// that several calls take (WithQueue: the queue a job goes to, the queue a
// listing or a schedule or the statistics is about) is one type that
// implements each of their option interfaces, so a misplaced option is a
// compile error, not a silently ignored one.
package jobd

import (
	"net/url"
	"strconv"
	"time"
)

// EnqueueOption sets a field of a job being enqueued (Enqueue, Spec).
type EnqueueOption interface{ applyEnqueue(*jobBody) }

// ListOption narrows or pages a listing of jobs (Jobs).
type ListOption interface{ applyList(url.Values) }

// ScheduleOption sets a field of a schedule (Schedules.Create, Put).
type ScheduleOption interface{ applySchedule(*scheduleBody) }

// StatsOption narrows the statistics (Stats).
type StatsOption interface{ applyStats(url.Values) }

// QueueOption names a queue; see WithQueue.
type QueueOption string

// WithQueue names the queue: the job's (default "default"), the one a
// listing or the statistics are about, or the queue of a schedule's jobs.
func WithQueue(name string) QueueOption { return QueueOption(name) }

func (q QueueOption) applyEnqueue(b *jobBody)       { b.Queue = string(q) }
func (q QueueOption) applyList(v url.Values)        { v.Set("queue", string(q)) }
func (q QueueOption) applySchedule(b *scheduleBody) { b.Queue = string(q) }
func (q QueueOption) applyStats(v url.Values)       { v.Set("queue", string(q)) }

// PriorityOption sets a priority; see WithPriority.
type PriorityOption int

// WithPriority sets the priority of the job or of a schedule's jobs
// (−1,000,000 … 1,000,000, default 0; higher runs first).
func WithPriority(p int) PriorityOption { return PriorityOption(p) }

func (p PriorityOption) applyEnqueue(b *jobBody)       { v := int(p); b.Priority = &v }
func (p PriorityOption) applySchedule(b *scheduleBody) { v := int(p); b.Priority = &v }

// MaxAttemptsOption sets max_attempts; see WithMaxAttempts.
type MaxAttemptsOption int

// WithMaxAttempts sets how many attempts the job (or each of a schedule's
// jobs) may use (default 25).
func WithMaxAttempts(n int) MaxAttemptsOption { return MaxAttemptsOption(n) }

func (m MaxAttemptsOption) applyEnqueue(b *jobBody)       { v := int(m); b.MaxAttempts = &v }
func (m MaxAttemptsOption) applySchedule(b *scheduleBody) { v := int(m); b.MaxAttempts = &v }

type enqueueFunc func(*jobBody)

func (f enqueueFunc) applyEnqueue(b *jobBody) { f(b) }

// WithRunAt makes the job due at t (default now). Not with WithIn.
func WithRunAt(t time.Time) EnqueueOption {
	return enqueueFunc(func(b *jobBody) { b.RunAt = t.UTC().Format(time.RFC3339Nano) })
}

// WithIn makes the job due d from now, by the server's clock (whole
// milliseconds). Not with WithRunAt.
func WithIn(d time.Duration) EnqueueOption {
	return enqueueFunc(func(b *jobBody) { b.In = durationText(d) })
}

// WithIdempotencyKey sets the job's idempotency key: enqueueing the same
// type, queue and payload with it again returns the first job; anything
// else with it is ErrConflict (idempotency_conflict). With a key an
// enqueue is also retried after a network error or a 503.
func WithIdempotencyKey(key string) EnqueueOption {
	return enqueueFunc(func(b *jobBody) { b.IdempotencyKey = key })
}

// WithTraceparent gives the job a W3C traceparent (version 00) that it
// carries to its handlers and log lines (docs/API.md, Trace context); a
// malformed one is ErrBadRequest naming the field traceparent.
func WithTraceparent(tp string) EnqueueOption {
	return enqueueFunc(func(b *jobBody) { b.Traceparent = tp })
}

// WithDependsOn makes the job wait (StatusWaiting) until the jobs ids have
// all ended (docs/API.md, Dependencies); an id that names no job is
// ErrBadRequest naming the field depends_on.
func WithDependsOn(ids ...int64) EnqueueOption {
	return enqueueFunc(func(b *jobBody) { b.DependsOn = append(b.DependsOn, ids...) })
}

// What a waiting job does when one of its parents did not succeed
// (WithOnParentFailure).
const (
	ParentFailureCancel = "cancel" // the job is cancelled (the default)
	ParentFailureRun    = "run"    // the job runs anyway
)

// WithOnParentFailure sets what the job does when a parent did not
// succeed: ParentFailureCancel (default) or ParentFailureRun.
func WithOnParentFailure(mode string) EnqueueOption {
	return enqueueFunc(func(b *jobBody) { b.OnParentFail = mode })
}

// WithDebounce replaces the pending job of this type and queue enqueued
// with key (new payload and priority, due d from now; the answer has
// Debounced set), or makes one due d from now (docs/API.md, Debounce and
// unique windows). Not with WithRunAt, WithIn, WithDependsOn,
// WithIdempotencyKey or WithUnique.
func WithDebounce(key string, d time.Duration) EnqueueOption {
	return enqueueFunc(func(b *jobBody) { b.Debounce = &window{key, durationText(d)} })
}

// WithUnique makes at most one job with key per d, from that job's
// creation: inside the window Enqueue returns that job with Replayed set.
// Not with WithIdempotencyKey or WithDebounce.
func WithUnique(key string, d time.Duration) EnqueueOption {
	return enqueueFunc(func(b *jobBody) { b.Unique = &window{key, durationText(d)} })
}

// GroupOption names a group; see WithGroup.
type GroupOption string

// WithGroup sets the job's group (whom it is for: a tenant, a customer;
// [A-Za-z0-9._:-]{1,128}): due jobs of different groups are claimed in
// turn, and a queue's group limits count per group (docs/API.md, Groups).
// In a listing, only that group's jobs.
func WithGroup(g string) GroupOption { return GroupOption(g) }

func (g GroupOption) applyEnqueue(b *jobBody) { b.Group = string(g) }
func (g GroupOption) applyList(v url.Values)  { v.Set("group", string(g)) }

// WithTimeout limits each attempt of the job to d (1ms … 366d): a worker
// stops the handler and the attempt fails as timed out.
func WithTimeout(d time.Duration) EnqueueOption {
	return enqueueFunc(func(b *jobBody) { s := d.Seconds(); b.TimeoutS = &s })
}

type listFunc func(url.Values)

func (f listFunc) applyList(v url.Values) { f(v) }

// WithStatus lists only jobs in that state.
func WithStatus(s Status) ListOption {
	return listFunc(func(v url.Values) { v.Set("status", string(s)) })
}

// WithType lists only jobs of that type.
func WithType(t string) ListOption { return listFunc(func(v url.Values) { v.Set("type", t) }) }

// WithScheduleName lists only jobs a schedule made.
func WithScheduleName(name string) ListOption {
	return listFunc(func(v url.Values) { v.Set("schedule", name) })
}

// WithCreatedAfter lists only jobs created at or after t.
func WithCreatedAfter(t time.Time) ListOption {
	return listFunc(func(v url.Values) { v.Set("created_after", t.UTC().Format(time.RFC3339Nano)) })
}

// WithCreatedBefore lists only jobs created before t.
func WithCreatedBefore(t time.Time) ListOption {
	return listFunc(func(v url.Values) { v.Set("created_before", t.UTC().Format(time.RFC3339Nano)) })
}

// WithKey lists only the job with this idempotency key.
func WithKey(key string) ListOption { return listFunc(func(v url.Values) { v.Set("key", key) }) }

// WithPageSize sets how many jobs each request of a listing fetches
// (1 … 1000, default 100); the iterator still goes through every page.
func WithPageSize(n int) ListOption {
	return listFunc(func(v url.Values) { v.Set("limit", strconv.Itoa(n)) })
}

type statsFunc func(url.Values)

func (f statsFunc) applyStats(v url.Values) { f(v) }

// WithSince sets how far back the statistics go (default 1h, at most 7d).
func WithSince(d time.Duration) StatsOption {
	return statsFunc(func(v url.Values) { v.Set("since", durationText(d)) })
}

// WithStep sets the statistics' step (default 1m; a multiple of 10s).
func WithStep(d time.Duration) StatsOption {
	return statsFunc(func(v url.Values) { v.Set("step", durationText(d)) })
}
