// The objects the server answers with (docs/API.md, The job object, and
// the attempts list), decoded into Go types: times as time.Time (the zero
// time where the server says null), seconds as time.Duration, payloads and
// results kept as raw JSON for the caller to decode into its own types.
package jobd

import (
	"encoding/json"
	"fmt"
	"time"
)

// Status is a job's state.
type Status string

// The job states (docs/API.md, The job object).
const (
	StatusWaiting   Status = "waiting" // its parents have not all ended (docs/API.md, Dependencies)
	StatusPending   Status = "pending"
	StatusRunning   Status = "running"
	StatusSucceeded Status = "succeeded"
	StatusDead      Status = "dead"
	StatusCancelled Status = "cancelled"
)

// Terminal reports whether a job in this state will not run again by itself.
func (s Status) Terminal() bool {
	return s == StatusSucceeded || s == StatusDead || s == StatusCancelled
}

// Job is a job as the server describes it. Strings the server sends as
// null are "", times it sends as null are the zero time, and Timeout is 0
// for no timeout. Raw keeps the whole object as sent, fields this version
// does not know included.
type Job struct {
	ID             int64           `json:"id"`
	Queue          string          `json:"queue"`
	Type           string          `json:"type"`
	Payload        json.RawMessage `json:"payload"`
	Status         Status          `json:"status"`
	Priority       int             `json:"priority"`
	RunAt          time.Time       `json:"run_at"`
	Attempt        int             `json:"attempt"`
	MaxAttempts    int             `json:"max_attempts"`
	AttemptFloor   int             `json:"attempt_floor"`
	IdempotencyKey string          `json:"idempotency_key"`
	Schedule       string          `json:"schedule"`
	ScheduledFor   time.Time       `json:"scheduled_for"`
	WorkerID       string          `json:"worker_id"`
	LeaseExpiresAt time.Time       `json:"lease_expires_at"`
	Timeout        time.Duration   `json:"-"`
	LastError      string          `json:"last_error"`
	Result         json.RawMessage `json:"result"`
	CreatedAt      time.Time       `json:"created_at"`
	StartedAt      time.Time       `json:"started_at"`
	FinishedAt     time.Time       `json:"finished_at"`
	// Traceparent is the W3C traceparent the job was enqueued with, "" if
	// none (docs/API.md, Trace context); a claimed job has it too.
	Traceparent string `json:"traceparent"`
	// DependsOn is the ids of the job's parents, ascending (none without):
	// the job is waiting until they have all ended; OnParentFailure ("cancel"
	// or "run") is what it does when one of them did not succeed
	// (docs/API.md, Dependencies).
	DependsOn       []int64 `json:"depends_on"`
	OnParentFailure string  `json:"on_parent_failure"`
	// Workflow and Step are the workflow the job is a step of and the
	// step's ref; 0 and "" for a job of no workflow.
	Workflow int64  `json:"workflow"`
	Step     string `json:"step"`
	// Progress is what the running attempt last reported, nil if nothing
	// (read by Get and Jobs; other answers carry nil).
	Progress        *JobProgress `json:"progress"`
	CancelRequested bool         `json:"cancel_requested"`
	// Group is whom the job is for (a tenant, a customer), "" for none
	// (docs/API.md, Groups).
	Group string `json:"group"`
	// Parents are a claimed job's parents as they were when it was claimed,
	// in id order (a Worker's handler reads them here); nil elsewhere.
	Parents []Parent        `json:"parents"`
	Raw     json.RawMessage `json:"-"`

	// Replayed is true when Enqueue returned an existing job for its
	// idempotency or unique key (the header Idempotent-Replayed); Debounced
	// when it replaced the pending job of its debounce key (Debounced).
	Replayed  bool `json:"-"`
	Debounced bool `json:"-"`

	leaseToken string // a claimed job's, for its reports
}

// JobProgress is a running attempt's last progress report (docs/API.md,
// The job object); Percent is nil when the report had none.
type JobProgress struct {
	Percent *float64        `json:"percent"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
	At      time.Time       `json:"at"`
}

// Parent is one parent of a claimed job (docs/API.md, POST /v1/claim):
// its id, step ref ("" outside a workflow), type, status and result.
type Parent struct {
	ID     int64           `json:"id"`
	Step   string          `json:"step"`
	Type   string          `json:"type"`
	Status Status          `json:"status"`
	Result json.RawMessage `json:"result"`
}

// DecodeResult decodes the parent's result into v (as json.Unmarshal does).
func (p *Parent) DecodeResult(v any) error {
	if len(p.Result) == 0 {
		return json.Unmarshal([]byte("null"), v)
	}
	return json.Unmarshal(p.Result, v)
}

// UnmarshalJSON reads the server's job object (nulls and timeout_s).
func (j *Job) UnmarshalJSON(b []byte) error {
	type plain Job
	var aux struct {
		*plain
		TimeoutS   *float64 `json:"timeout_s"`
		LeaseToken string   `json:"lease_token"`
	}
	aux.plain = (*plain)(j)
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	j.Timeout = 0
	if aux.TimeoutS != nil {
		j.Timeout = seconds(*aux.TimeoutS)
	}
	j.leaseToken = aux.LeaseToken
	j.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// Decode decodes the job's payload into v (as json.Unmarshal does).
func (j *Job) Decode(v any) error {
	if len(j.Payload) == 0 {
		return json.Unmarshal([]byte("null"), v)
	}
	return json.Unmarshal(j.Payload, v)
}

// DecodeResult decodes the job's result into v (as json.Unmarshal does).
func (j *Job) DecodeResult(v any) error {
	if len(j.Result) == 0 {
		return json.Unmarshal([]byte("null"), v)
	}
	return json.Unmarshal(j.Result, v)
}

// Attempt is one entry of a job's attempt history.
type Attempt struct {
	Attempt    int           `json:"attempt"`
	WorkerID   string        `json:"worker_id"`
	StartedAt  time.Time     `json:"started_at"`
	FinishedAt time.Time     `json:"finished_at"`
	Outcome    string        `json:"outcome"` // running, succeeded, failed, dead, reaped, cancelled, released
	Error      string        `json:"error"`
	Duration   time.Duration `json:"-"`
	LogBytes   *int64        `json:"log_bytes"` // its kept log's size (AttemptLog), nil if none
}

// UnmarshalJSON reads duration_s.
func (a *Attempt) UnmarshalJSON(b []byte) error {
	type plain Attempt
	var aux struct {
		*plain
		DurationS *float64 `json:"duration_s"`
	}
	aux.plain = (*plain)(a)
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	a.Duration = 0
	if aux.DurationS != nil {
		a.Duration = seconds(*aux.DurationS)
	}
	return nil
}

func seconds(s float64) time.Duration {
	return time.Duration(s*1e3+0.5) * time.Millisecond
}

// durationText spells d as the server's durations are written in
// requests (docs/API.md, Conventions): whole milliseconds, "1500ms".
func durationText(d time.Duration) string {
	return fmt.Sprintf("%dms", d.Milliseconds())
}
