// The cases of clients/cases.json about the Worker, in this process.
package jobd_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"jobd"
)

func TestCase_worker_complete(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("complete")
	w := newWorker(t, c, q)
	w.Handle("t.add", func(ctx context.Context, j *jobd.Job) (any, error) {
		var p struct{ A, B int }
		if err := j.Decode(&p); err != nil {
			return nil, jobd.Permanent(err)
		}
		return map[string]int{"sum": p.A + p.B}, nil
	})
	runWorker(t, w)
	j, err := c.Enqueue(ctx, "t.add", map[string]int{"a": 2, "b": 3}, jobd.WithQueue(q))
	if err != nil {
		t.Fatal(err)
	}
	got := jobIs(t, c, j.ID, jobd.StatusSucceeded, 30*time.Second)
	var r struct{ Sum int }
	if got.DecodeResult(&r) != nil || r.Sum != 5 || got.Attempt != 1 || got.WorkerID != w.ID() {
		t.Fatalf("job: %s", got.Raw)
	}
}

func TestCase_worker_heartbeat_long_job(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("long")
	w := newWorker(t, c, q, jobd.WithLease(2*time.Second))
	w.Handle("t.long", func(ctx context.Context, j *jobd.Job) (any, error) {
		select {
		case <-time.After(6 * time.Second):
			return "done", nil
		case <-ctx.Done():
			return nil, jobd.StopCause(ctx)
		}
	})
	runWorker(t, w)
	j, err := c.Enqueue(ctx, "t.long", nil, jobd.WithQueue(q))
	if err != nil {
		t.Fatal(err)
	}
	got := jobIs(t, c, j.ID, jobd.StatusSucceeded, 40*time.Second)
	if got.Attempt != 1 || string(got.Result) != `"done"` {
		t.Fatalf("job: %s", got.Raw)
	}
}

func TestCase_worker_error_retried(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("errretry")
	w := newWorker(t, c, q)
	w.Handle("t.flaky", func(ctx context.Context, j *jobd.Job) (any, error) {
		if j.Attempt == 1 {
			return nil, errors.New("flaky on attempt 1")
		}
		return j.Attempt, nil
	})
	runWorker(t, w)
	j, err := c.Enqueue(ctx, "t.flaky", nil, jobd.WithQueue(q), jobd.WithMaxAttempts(3))
	if err != nil {
		t.Fatal(err)
	}
	got := jobIs(t, c, j.ID, jobd.StatusSucceeded, 30*time.Second)
	if got.Attempt != 2 || string(got.Result) != "2" || got.LastError != "flaky on attempt 1" {
		t.Fatalf("job: %s", got.Raw)
	}
}

func TestCase_worker_permanent_dead(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("permanent")
	w := newWorker(t, c, q)
	w.Handle("t.perm", func(ctx context.Context, j *jobd.Job) (any, error) {
		return nil, jobd.Permanent(errors.New("bad input"))
	})
	runWorker(t, w)
	j, err := c.Enqueue(ctx, "t.perm", nil, jobd.WithQueue(q), jobd.WithMaxAttempts(5))
	if err != nil {
		t.Fatal(err)
	}
	got := jobIs(t, c, j.ID, jobd.StatusDead, 30*time.Second)
	if got.Attempt != 1 || got.LastError != "bad input" {
		t.Fatalf("job: %s", got.Raw)
	}
}

func TestCase_worker_timeout(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("timeout")
	var cause atomic.Value
	w := newWorker(t, c, q)
	w.Handle("t.slow", func(ctx context.Context, j *jobd.Job) (any, error) {
		select {
		case <-ctx.Done():
			cause.Store(jobd.StopCause(ctx))
			return nil, ctx.Err()
		case <-time.After(20 * time.Second):
			return "too late", nil
		}
	})
	runWorker(t, w)
	j, err := c.Enqueue(ctx, "t.slow", nil, jobd.WithQueue(q), jobd.WithTimeout(time.Second), jobd.WithMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	got := jobIs(t, c, j.ID, jobd.StatusDead, 30*time.Second)
	if !strings.Contains(got.LastError, "timed out") {
		t.Fatalf("job: %s", got.Raw)
	}
	if c, _ := cause.Load().(error); c != jobd.ErrJobTimedOut {
		t.Fatalf("the handler's StopCause: %v", c)
	}
}

func TestCase_worker_cancel_reaches_handler(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("cancelrun")
	started := make(chan struct{})
	stopped := make(chan error, 1)
	w := newWorker(t, c, q, jobd.WithLease(3*time.Second))
	w.Handle("t.wait", func(ctx context.Context, j *jobd.Job) (any, error) {
		close(started)
		<-ctx.Done()
		stopped <- jobd.StopCause(ctx)
		return nil, ctx.Err()
	})
	runWorker(t, w)
	j, err := c.Enqueue(ctx, "t.wait", nil, jobd.WithQueue(q))
	if err != nil {
		t.Fatal(err)
	}
	<-started
	got, err := c.Cancel(ctx, j.ID)
	if err != nil || got.Status != jobd.StatusRunning {
		t.Fatalf("cancel of a running job: %v %+v", err, got)
	}
	select {
	case cause := <-stopped:
		if cause != jobd.ErrJobCancelled {
			t.Fatalf("StopCause %v", cause)
		}
	case <-time.After(10 * time.Second): // a heartbeat is due every second
		t.Fatal("the handler's context was not cancelled")
	}
	jobIs(t, c, j.ID, jobd.StatusCancelled, 30*time.Second)
}

// dropFirstComplete is a proxy to the server that forwards the first
// completion and then drops its connection without the answer.
type dropFirstComplete struct {
	completes atomic.Int32
	lastCode  atomic.Int32
}

func (p *dropFirstComplete) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, serverURL+r.URL.RequestURI(), bytes.NewReader(body))
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.HasSuffix(r.URL.Path, "/complete") {
		p.lastCode.Store(int32(resp.StatusCode))
		if p.completes.Add(1) == 1 {
			panic(http.ErrAbortHandler) // landed, but the worker never hears it
		}
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(data)
}

func TestCase_worker_report_retried(t *testing.T) {
	t.Parallel()
	p := &dropFirstComplete{}
	proxy := httptest.NewUnstartedServer(p)
	proxy.Config.ErrorLog = log.New(io.Discard, "", 0)
	proxy.Start()
	defer proxy.Close()
	c, ctx, q := client(), ctxT(t), uniq("report")
	var logs syncBuf
	w := newWorker(t, jobd.New(jobd.WithServer(proxy.URL), jobd.WithToken("")), q,
		jobd.WithLogger(log.New(&logs, "", 0)))
	w.Handle("t.once", func(ctx context.Context, j *jobd.Job) (any, error) { return "once", nil })
	stop := runWorker(t, w)
	j, err := c.Enqueue(ctx, "t.once", nil, jobd.WithQueue(q))
	if err != nil {
		t.Fatal(err)
	}
	got := jobIs(t, c, j.ID, jobd.StatusSucceeded, 30*time.Second)
	waitFor(t, 10*time.Second, "the completion to be sent again", func() bool { return p.completes.Load() >= 2 })
	stop()
	if got.Attempt != 1 || string(got.Result) != `"once"` {
		t.Fatalf("job: %s", got.Raw)
	}
	if n := p.completes.Load(); n != 2 {
		t.Errorf("%d completions sent, want 2", n)
	}
	if code := p.lastCode.Load(); code != 409 && code != 200 {
		t.Errorf("the repeat was answered %d", code)
	}
	if strings.Contains(logs.String(), "stale") || strings.Contains(logs.String(), "complete") {
		t.Errorf("the worker logged the repeat as an error:\n%s", logs.String())
	}
	hist, err := c.Attempts(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hist {
		if h.Attempt != 1 || (h.Outcome != "succeeded" && h.Outcome != "running") {
			t.Errorf("attempt history: %+v", hist)
		}
	}
}

func TestCase_worker_release_unstarted(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("release")
	// The jobs are due before the worker starts, so its first claim takes
	// all three (concurrency 1 + prefetch 2) in one answer: once the first
	// runs, the others are held and not started.
	var ids []int64
	for i := 0; i < 3; i++ {
		j, err := c.Enqueue(ctx, "t.block", nil, jobd.WithQueue(q))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	unblock := make(chan struct{})
	started := make(chan int64, 3)
	w := newWorker(t, c, q, jobd.WithConcurrency(1), jobd.WithPrefetch(2), jobd.WithShutdownGrace(20*time.Second))
	w.Handle("t.block", func(ctx context.Context, j *jobd.Job) (any, error) {
		started <- j.ID
		<-unblock
		return nil, nil
	})
	stop := runWorker(t, w)
	var first int64
	select {
	case first = <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("no job started")
	}
	for _, id := range ids {
		jobIs(t, c, id, jobd.StatusRunning, 30*time.Second)
	}
	w.Stop()
	for _, id := range ids {
		if id == first {
			continue
		}
		got := jobIs(t, c, id, jobd.StatusPending, 30*time.Second)
		if got.AttemptFloor != got.Attempt || got.Attempt != 1 || got.WorkerID != "" {
			t.Errorf("released job: %s", got.Raw)
		}
	}
	close(unblock)
	stop()
	jobIs(t, c, first, jobd.StatusSucceeded, 30*time.Second)
	if len(started) != 0 {
		t.Errorf("a held job was started after the stop")
	}
}

func TestCase_worker_presence(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("presence")
	w := newWorker(t, c, q, jobd.WithConcurrency(3))
	w.Handle("t.b", func(context.Context, *jobd.Job) (any, error) { return nil, nil })
	w.Handle("t.a", func(context.Context, *jobd.Job) (any, error) { return nil, nil })
	stop := runWorker(t, w)
	listed := func() *jobd.WorkerInfo {
		ws, err := c.Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ws {
			if ws[i].ID == w.ID() {
				return &ws[i]
			}
		}
		return nil
	}
	// Its first claim lists it before its own announce lands (a claim is
	// presence, docs/API.md): wait for the announce, which names its pid.
	waitFor(t, 10*time.Second, "the worker to be listed", func() bool {
		x := listed()
		return x != nil && x.PID == os.Getpid()
	})
	x := listed()
	if x.State != "active" || strings.Join(x.Queues, ",") != q || strings.Join(x.Types, ",") != "t.a,t.b" ||
		x.Concurrency != 3 {
		t.Fatalf("listed as %+v", x)
	}
	stop()
	if x := listed(); x != nil {
		t.Fatalf("still listed after it stopped: %+v", x)
	}
}

// Beyond the cases: a handler still running when the shutdown grace is over
// sees ErrWorkerStopping, and its job is due again at once.
func TestWorkerGraceOver(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("grace")
	started := make(chan struct{})
	cause := make(chan error, 1)
	w := newWorker(t, c, q, jobd.WithShutdownGrace(300*time.Millisecond))
	w.Handle("t.stuck", func(ctx context.Context, j *jobd.Job) (any, error) {
		close(started)
		<-ctx.Done()
		cause <- jobd.StopCause(ctx)
		return nil, ctx.Err()
	})
	stop := runWorker(t, w)
	j, err := c.Enqueue(ctx, "t.stuck", nil, jobd.WithQueue(q))
	if err != nil {
		t.Fatal(err)
	}
	<-started
	stop()
	if got := <-cause; got != jobd.ErrWorkerStopping {
		t.Fatalf("StopCause %v", got)
	}
	got := jobIs(t, c, j.ID, jobd.StatusPending, 10*time.Second)
	if got.Attempt != 1 || !strings.Contains(got.LastError, "worker stopped") || time.Until(got.RunAt) > time.Second {
		t.Fatalf("job: %s", got.Raw)
	}
}
