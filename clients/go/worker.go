// Worker: runs handlers registered by job type for the jobs it claims from
// a server, the way `jobd worker --server` does (docs/WORKER.md, Remote
// workers): it announces itself, long-polls claims, heartbeats each job,
// reports with the attempt and lease token, and drains on SIGTERM/SIGINT.
package jobd

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// HandlerFunc runs one job. Its return value (any value encoding/json can
// marshal; nil for none) becomes the job's result; an error fails the
// attempt (retried while attempts remain; Permanent(err) makes the job
// dead at once, RetryIn(err, d) sets the delay). ctx is cancelled when the
// job is cancelled, its timeout passes, its lease is lost or the worker's
// shutdown grace is over; StopCause(ctx) says which.
type HandlerFunc func(ctx context.Context, job *Job) (any, error)

// Worker claims jobs of the types it has handlers for and runs them.
// Configure it with NewWorker and Handle, then call Run once.
type Worker struct {
	c           *Client
	id          string
	queues      []string
	concurrency int
	prefetch    int
	lease       time.Duration
	heartbeat   time.Duration
	grace       time.Duration
	claimWait   time.Duration
	signals     []os.Signal
	logf        func(format string, args ...any)
	handlers    map[string]HandlerFunc
	types       []string

	mu       sync.Mutex
	queued   []*run         // claimed, waiting for a free slot
	held     map[int64]*run // every claimed job not yet reported
	active   int            // handlers running
	slotFree chan struct{}  // a slot was freed (capacity 1)
	runs     sync.WaitGroup // one per claimed job until it is settled
	stopping chan struct{}  // closed by Stop
	stopOnce sync.Once
	hardStop context.CancelFunc // stops every handler (grace over)
	hardCtx  context.Context
	draining atomic.Bool
	started  atomic.Bool
}

// WorkerOption configures a Worker (NewWorker).
type WorkerOption func(*Worker)

// WithWorkerID sets the worker's id (default HOST:PID, with "-N" added
// for the Nth worker of the process).
func WithWorkerID(id string) WorkerOption { return func(w *Worker) { w.id = id } }

// WithQueues sets the queues to claim from (default every queue).
func WithQueues(names ...string) WorkerOption {
	return func(w *Worker) { w.queues = append([]string(nil), names...) }
}

// WithConcurrency sets how many handlers run at once (default 8).
func WithConcurrency(n int) WorkerOption { return func(w *Worker) { w.concurrency = n } }

// WithPrefetch sets how many jobs are claimed ahead of free slots (default
// 0). A prefetched job is under lease, heartbeated, and released (handed
// back unused) if the worker stops before starting it.
func WithPrefetch(n int) WorkerOption { return func(w *Worker) { w.prefetch = n } }

// WithLease sets the lease asked for each job (default 60s; at least 1s):
// a job whose heartbeats stop for that long is handed on by the server.
// Heartbeats go every third of it unless WithHeartbeat says otherwise.
func WithLease(d time.Duration) WorkerOption { return func(w *Worker) { w.lease = d } }

// WithHeartbeat sets how often each job (and the worker's presence) is
// refreshed (default a third of the lease).
func WithHeartbeat(d time.Duration) WorkerOption { return func(w *Worker) { w.heartbeat = d } }

// WithShutdownGrace sets how long running jobs may finish after a stop
// (default 30s); then their contexts are cancelled.
func WithShutdownGrace(d time.Duration) WorkerOption { return func(w *Worker) { w.grace = d } }

// WithClaimWait sets how long an idle worker's claim is held by the server
// (the long poll; default 10s, at most 30s).
func WithClaimWait(d time.Duration) WorkerOption { return func(w *Worker) { w.claimWait = d } }

// WithSignals sets the signals that make Run drain and return (default
// SIGTERM and SIGINT; none: Run stops only through its context or Stop).
// A second signal stops the running handlers at once.
func WithSignals(sigs ...os.Signal) WorkerOption {
	return func(w *Worker) { w.signals = append([]os.Signal{}, sigs...) }
}

// WithLogger sends the worker's log lines (start, stop, errors; none per
// job) to l (default: standard error). A nil l silences them.
func WithLogger(l *log.Logger) WorkerOption {
	return func(w *Worker) {
		if l == nil {
			w.logf = func(string, ...any) {}
		} else {
			w.logf = l.Printf
		}
	}
}

var workerSeq atomic.Int64

// NewWorker returns a worker that talks to the server through c.
func NewWorker(c *Client, opts ...WorkerOption) *Worker {
	host, _ := os.Hostname()
	if host == "" {
		host = "localhost"
	}
	id := fmt.Sprintf("%s:%d", host, os.Getpid())
	if n := workerSeq.Add(1); n > 1 {
		id = fmt.Sprintf("%s-%d", id, n)
	}
	std := log.New(os.Stderr, "jobd worker: ", log.LstdFlags|log.Lmsgprefix)
	w := &Worker{
		c: c, id: id, concurrency: 8, lease: 60 * time.Second, grace: 30 * time.Second,
		claimWait: 10 * time.Second, signals: []os.Signal{syscall.SIGTERM, os.Interrupt},
		logf: std.Printf, handlers: map[string]HandlerFunc{}, held: map[int64]*run{},
		slotFree: make(chan struct{}, 1), stopping: make(chan struct{}),
	}
	for _, o := range opts {
		o(w)
	}
	if w.heartbeat <= 0 {
		w.heartbeat = w.lease / 3
	}
	w.hardCtx, w.hardStop = context.WithCancel(context.Background())
	return w
}

// ID returns the worker's id (as written on the jobs it claims).
func (w *Worker) ID() string { return w.id }

// Handle registers the handler of a job type; call it before Run.
func (w *Worker) Handle(typ string, h HandlerFunc) {
	w.handlers[typ] = h
}

// Stop makes Run drain: claim nothing more, hand back jobs not started,
// let running ones finish within the shutdown grace. It does not wait.
func (w *Worker) Stop() {
	w.stopOnce.Do(func() { close(w.stopping) })
}

func (w *Worker) stopped() bool {
	select {
	case <-w.stopping:
		return true
	default:
		return false
	}
}

func (w *Worker) check() error {
	switch {
	case len(w.handlers) == 0:
		return errors.New("jobd: the worker has no handlers (Handle)")
	case w.concurrency < 1:
		return errors.New("jobd: WithConcurrency must be at least 1")
	case w.prefetch < 0:
		return errors.New("jobd: WithPrefetch must not be negative")
	case w.lease < time.Second:
		return errors.New("jobd: WithLease must be at least 1s")
	case w.heartbeat >= w.lease:
		return errors.New("jobd: WithHeartbeat must be shorter than the lease")
	case w.claimWait < 0 || w.claimWait > 30*time.Second:
		return errors.New("jobd: WithClaimWait must be 0 … 30s")
	}
	return nil
}

// Run announces the worker, claims and runs jobs until ctx is done, Stop
// is called or one of its signals arrives, then drains: it claims nothing
// more, releases the jobs it claimed but did not start, waits up to the
// shutdown grace for running jobs, cancels the rest, reports everything,
// withdraws and returns nil. It returns an error at once if the server
// refuses the worker's announcement as a bad request, unauthorized or
// forbidden.
func (w *Worker) Run(ctx context.Context) error {
	if err := w.check(); err != nil {
		return err
	}
	if !w.started.CompareAndSwap(false, true) {
		return errors.New("jobd: Worker.Run called twice")
	}
	for t := range w.handlers {
		w.types = append(w.types, t)
	}
	sort.Strings(w.types)
	if err := w.announce(ctx); err != nil {
		// A server that refuses the worker's settings or token refuses its
		// claims too; one that is away or keeps enough workers
		// (limit_reached) still hands out jobs: presence is for operators
		// (docs/API.md, Workers), and it is announced again later.
		if errors.Is(err, ErrBadRequest) || errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrForbidden) {
			return err
		}
		w.logf("%s: announce: %v (going on)", w.id, err)
	}
	w.logf("%s: started, %d types, concurrency %d, server %s", w.id, len(w.types), w.concurrency, w.c.server)
	go w.watch(ctx)
	presenceDone := make(chan struct{})
	go w.presence(presenceDone)
	w.claimLoop()
	w.drain()
	<-presenceDone
	w.withdraw()
	w.logf("%s: stopped", w.id)
	return nil
}

// watch turns ctx's end and the signals into Stop; a second signal ends
// the grace at once.
func (w *Worker) watch(ctx context.Context) {
	sig := make(chan os.Signal, 2)
	if len(w.signals) > 0 {
		signal.Notify(sig, w.signals...)
		defer signal.Stop(sig)
	}
	select {
	case <-ctx.Done():
		w.Stop()
	case s := <-sig:
		w.logf("%s: %v: draining (shutdown grace %v)", w.id, s, w.grace)
		w.Stop()
	case <-w.hardCtx.Done():
		return
	}
	select {
	case s := <-sig:
		w.logf("%s: %v again: stopping the running jobs", w.id, s)
		w.hardStop()
	case <-w.hardCtx.Done():
	}
}

// drain runs after the claim loop ends (see Run).
func (w *Worker) drain() {
	w.draining.Store(true)
	w.mu.Lock()
	queued := w.queued
	w.queued = nil
	w.mu.Unlock()
	for _, r := range queued {
		go w.release(r)
	}
	all := make(chan struct{})
	go func() { w.runs.Wait(); close(all) }()
	grace := time.NewTimer(w.grace)
	defer grace.Stop()
	select {
	case <-all:
		w.hardStop()
		return
	case <-grace.C:
	case <-w.hardCtx.Done():
	}
	w.hardStop()
	w.mu.Lock()
	for _, r := range w.held {
		r.stop(ErrWorkerStopping)
	}
	w.mu.Unlock()
	select {
	case <-all:
	case <-time.After(5 * time.Second):
		w.logf("%s: jobs still unreported 5s after the shutdown grace; their leases will run out", w.id)
	}
}
