// The cases of clients/cases.json about the client: enqueue, read, wait,
// list, cancel, retry, schedules, queues, statistics.
package jobd_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"jobd"
)

func TestCase_enqueue_every_field(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("every")
	runAt := time.Now().Add(time.Hour).Truncate(time.Millisecond).UTC()
	key := uniq("key")
	j, err := c.Enqueue(ctx, "t.every", map[string]any{"b": []int{1, 2}, "a": "x"},
		jobd.WithQueue(q), jobd.WithPriority(7), jobd.WithRunAt(runAt), jobd.WithMaxAttempts(3),
		jobd.WithIdempotencyKey(key), jobd.WithTimeout(1500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := j.Decode(&p); err != nil || p["a"] != "x" || len(p["b"].([]any)) != 2 {
		t.Errorf("payload %s (%v)", j.Payload, err)
	}
	if j.ID <= 0 || j.Type != "t.every" || j.Queue != q || j.Priority != 7 || !j.RunAt.Equal(runAt) ||
		j.MaxAttempts != 3 || j.IdempotencyKey != key || j.Timeout != 1500*time.Millisecond ||
		j.Status != jobd.StatusPending || j.Attempt != 0 || j.Replayed {
		t.Errorf("job as stored: %s", j.Raw)
	}
	g, err := c.Get(ctx, j.ID)
	if err != nil || string(g.Payload) != string(j.Payload) || g.Timeout != j.Timeout {
		t.Errorf("get: %v %s", err, g.Raw)
	}
}

func TestCase_enqueue_traceparent(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("tp")
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	j, err := c.Enqueue(ctx, "t.tp", nil, jobd.WithQueue(q), jobd.WithTraceparent(tp))
	if err != nil || j.Traceparent != tp {
		t.Fatalf("enqueue: %v %s", err, j.Raw)
	}
	if g, err := c.Get(ctx, j.ID); err != nil || g.Traceparent != tp {
		t.Errorf("get: %v %s", err, g.Raw)
	}
	if n, err := c.Enqueue(ctx, "t.tp", nil, jobd.WithQueue(q)); err != nil || n.Traceparent != "" {
		t.Errorf("without: %v %s", err, n.Raw)
	}
	jobs, err := c.EnqueueMany(ctx, []jobd.JobSpec{
		jobd.Spec("t.tp", nil, jobd.WithQueue(q), jobd.WithTraceparent(tp)), jobd.Spec("t.tp", nil, jobd.WithQueue(q))})
	if err != nil || len(jobs) != 2 {
		t.Fatalf("many: %v", err)
	}
	for i, want := range []string{tp, ""} {
		if g, err := c.Get(ctx, jobs[i].ID); err != nil || g.Traceparent != want {
			t.Errorf("many[%d]: %v %s", i, err, g.Raw)
		}
	}
	_, err = c.Enqueue(ctx, "t.tp", nil, jobd.WithQueue(q), jobd.WithTraceparent("00-nope"))
	var e *jobd.Error
	if !errors.Is(err, jobd.ErrBadRequest) || !errors.As(err, &e) || e.Code != "invalid_field" || e.Field != "traceparent" {
		t.Errorf("bad traceparent: %v", err)
	}
}

func TestCase_enqueue_in(t *testing.T) {
	t.Parallel()
	c, ctx := client(), ctxT(t)
	j, err := c.Enqueue(ctx, "t.in", nil, jobd.WithQueue(uniq("in")), jobd.WithIn(90*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	// On PostgreSQL created_at is the transaction's time and run_at the
	// request's: they may differ by the commit's wait.
	if d := j.RunAt.Sub(j.CreatedAt); d < 89*time.Second || d > 91*time.Second {
		t.Errorf("run_at - created_at = %v, want 90s (%s)", d, j.Raw)
	}
}

func TestCase_enqueue_idempotent_replay(t *testing.T) {
	t.Parallel()
	c, ctx, q, key := client(), ctxT(t), uniq("idem"), uniq("order")
	a, err := c.Enqueue(ctx, "t.idem", map[string]int{"n": 1}, jobd.WithQueue(q), jobd.WithIdempotencyKey(key))
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Enqueue(ctx, "t.idem", map[string]int{"n": 1}, jobd.WithQueue(q), jobd.WithIdempotencyKey(key))
	if err != nil || b.ID != a.ID || !b.Replayed || a.Replayed {
		t.Fatalf("replay: %v, ids %d %d, replayed %v %v", err, a.ID, b.ID, a.Replayed, b.Replayed)
	}
	_, err = c.Enqueue(ctx, "t.idem", map[string]int{"n": 2}, jobd.WithQueue(q), jobd.WithIdempotencyKey(key))
	var e *jobd.Error
	if !errors.Is(err, jobd.ErrConflict) || !errors.As(err, &e) || e.Code != "idempotency_conflict" || e.Status != 409 {
		t.Fatalf("another body with the key: %v", err)
	}
}

func TestCase_enqueue_many(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("many")
	// 2,500: three requests of at most 1,000, in flight together; the answer
	// keeps the order of the list, and ids grow within each request.
	specs := make([]jobd.JobSpec, 2500)
	for i := range specs {
		specs[i] = jobd.Spec("t.many", map[string]int{"i": i}, jobd.WithQueue(q))
	}
	jobs, err := c.EnqueueMany(ctx, specs)
	if err != nil || len(jobs) != 2500 {
		t.Fatalf("enqueue_many: %v, %d jobs", err, len(jobs))
	}
	seen := map[int64]bool{}
	for i, j := range jobs {
		if i%1000 > 0 && j.ID <= jobs[i-1].ID {
			t.Fatalf("ids out of order at %d: %d after %d", i, j.ID, jobs[i-1].ID)
		}
		if seen[j.ID] {
			t.Fatalf("id %d twice", j.ID)
		}
		seen[j.ID] = true
		var sent struct{ I int }
		if json.Unmarshal(j.Payload, &sent) != nil || sent.I != i {
			t.Fatalf("job %d (#%d) has payload %s", j.ID, i, j.Payload)
		}
		if i%500 != 0 {
			continue
		}
		g, err := c.Get(ctx, j.ID)
		var p struct{ I int }
		if err != nil || g.Decode(&p) != nil || p.I != i || g.Queue != q {
			t.Fatalf("job %d (#%d): %v %s", j.ID, i, err, g.Raw)
		}
	}
}

func TestCase_enqueue_debounce_unique(t *testing.T) {
	t.Parallel()
	c, ctx, q, k := client(), ctxT(t), uniq("deb"), uniq("deb-key")
	d1, err1 := c.Enqueue(ctx, "t.deb", map[string]int{"n": 1}, jobd.WithQueue(q), jobd.WithDebounce(k, time.Hour))
	d2, err2 := c.Enqueue(ctx, "t.deb", map[string]int{"n": 2}, jobd.WithQueue(q), jobd.WithDebounce(k, 2*time.Hour))
	if err1 != nil || err2 != nil || d1.Debounced || !d2.Debounced || d2.ID != d1.ID || !jsonEq(d2.Payload, []byte(`{"n":2}`)) {
		t.Fatalf("debounce: %v %v %s %s", err1, err2, d1.Raw, d2.Raw)
	}
	if ahead := time.Until(d2.RunAt); ahead < 2*time.Hour-time.Minute || ahead > 2*time.Hour+time.Minute {
		t.Errorf("debounced run_at %v from now", ahead)
	}
	u1, err1 := c.Enqueue(ctx, "t.deb", nil, jobd.WithQueue(q), jobd.WithUnique(k+"-u", time.Hour))
	u2, err2 := c.Enqueue(ctx, "t.deb", map[string]bool{"other": true}, jobd.WithQueue(q), jobd.WithUnique(k+"-u", time.Hour))
	if err1 != nil || err2 != nil || u1.Replayed || !u2.Replayed || u2.ID != u1.ID {
		t.Fatalf("unique: %v %v %s %s", err1, err2, u1.Raw, u2.Raw)
	}
	_, err := c.Enqueue(ctx, "t.deb", nil, jobd.WithQueue(q), jobd.WithDebounce(k, time.Hour), jobd.WithIdempotencyKey(k))
	var e *jobd.Error
	if !errors.Is(err, jobd.ErrBadRequest) || !errors.As(err, &e) || e.Code != "invalid_field" {
		t.Errorf("debounce with a key: %v", err)
	}
}

func TestCase_enqueue_group(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("grp")
	a, err := c.Enqueue(ctx, "t.grp", nil, jobd.WithQueue(q), jobd.WithGroup("tenant-a"))
	if err != nil || a.Group != "tenant-a" {
		t.Fatalf("enqueue: %v %s", err, a.Raw)
	}
	if g, err := c.Get(ctx, a.ID); err != nil || g.Group != "tenant-a" {
		t.Errorf("get: %v %s", err, g.Raw)
	}
	if n, err := c.Enqueue(ctx, "t.grp", nil, jobd.WithQueue(q)); err != nil || n.Group != "" {
		t.Errorf("without: %v %s", err, n.Raw)
	}
	many, err := c.EnqueueMany(ctx, []jobd.JobSpec{jobd.Spec("t.grp", nil, jobd.WithQueue(q), jobd.WithGroup("tenant-b")),
		jobd.Spec("t.grp", nil, jobd.WithQueue(q), jobd.WithGroup("tenant-b"))})
	if err != nil || many[0].Group != "tenant-b" || many[1].Group != "tenant-b" {
		t.Fatalf("many: %v", err)
	}
	_, err = c.Enqueue(ctx, "t.grp", nil, jobd.WithQueue(q), jobd.WithGroup("no spaces"))
	var e *jobd.Error
	if !errors.Is(err, jobd.ErrBadRequest) || !errors.As(err, &e) || e.Code != "invalid_field" || e.Field != "group" {
		t.Errorf("bad group: %v", err)
	}
	listed := 0
	for it := c.Jobs(ctx, jobd.WithQueue(q), jobd.WithGroup("tenant-b")); it.Next(); {
		if it.Job().Group != "tenant-b" {
			t.Errorf("listed by group: %s", it.Job().Raw)
		}
		listed++
	}
	if listed != 2 {
		t.Errorf("listed by group: %d jobs, want 2", listed)
	}
	gs, err := c.Queues.Groups(ctx, q, 0)
	want := []jobd.QueueGroup{{Group: "tenant-b", Pending: 2}, {Group: "", Pending: 1}, {Group: "tenant-a", Pending: 1}}
	if err != nil || fmt.Sprint(gs) != fmt.Sprint(want) {
		t.Errorf("groups: %v %+v", err, gs)
	}
	if gs, err := c.Queues.Groups(ctx, q, 1); err != nil || len(gs) != 1 {
		t.Errorf("groups, limit 1: %v %+v", err, gs)
	}
	qu, err := c.Queues.SetLimits(ctx, q, jobd.GroupMaxRunning(2), jobd.GroupRate(5, time.Second))
	if err != nil || qu.GroupMaxRunning == nil || *qu.GroupMaxRunning != 2 || qu.GroupRate == nil ||
		*qu.GroupRate != (jobd.QueueRate{Limit: 5, Per: "1s"}) {
		t.Fatalf("group limits: %v %+v", err, qu)
	}
	qu, err = c.Queues.SetLimits(ctx, q, jobd.GroupMaxRunning(0))
	if err != nil || qu.GroupMaxRunning != nil || qu.GroupRate == nil {
		t.Errorf("group_max_running removed: %v %+v", err, qu)
	}
}

func TestCase_get(t *testing.T) {
	t.Parallel()
	c, ctx := client(), ctxT(t)
	j, err := c.Enqueue(ctx, "t.get", "hello", jobd.WithQueue(uniq("get")))
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.Get(ctx, j.ID)
	if err != nil || g.ID != j.ID || string(g.Payload) != `"hello"` {
		t.Fatalf("get: %v %+v", err, g)
	}
	_, err = c.Get(ctx, 999999999999)
	var e *jobd.Error
	if !errors.Is(err, jobd.ErrNotFound) || !errors.As(err, &e) || e.Code != "not_found" || e.Status != 404 {
		t.Fatalf("get of an unknown id: %v", err)
	}
}

func TestCase_wait_result(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("wait")
	w := newWorker(t, c, q)
	w.Handle("t.wait", func(ctx context.Context, j *jobd.Job) (any, error) {
		time.Sleep(200 * time.Millisecond)
		return map[string]int{"x": 2}, nil
	})
	runWorker(t, w)
	j, err := c.Enqueue(ctx, "t.wait", nil, jobd.WithQueue(q))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Wait(ctx, j.ID, 30*time.Second)
	if err != nil || got.Status != jobd.StatusSucceeded || string(got.Result) != `{"x":2}` {
		t.Fatalf("wait: %v %+v", err, got)
	}
	idle, err := c.Enqueue(ctx, "t.nobody", nil, jobd.WithQueue(uniq("nobody")))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got, err = c.Wait(ctx, idle.ID, 300*time.Millisecond)
	if err != nil || got.Status != jobd.StatusPending {
		t.Fatalf("wait on a job nobody runs: %v %+v", err, got)
	}
	if el := time.Since(start); el < 300*time.Millisecond || el > 10*time.Second {
		t.Errorf("wait of 300ms took %v", el)
	}
}

func TestCase_list_paging(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("paging")
	specs := make([]jobd.JobSpec, 130)
	for i := range specs {
		specs[i] = jobd.Spec("t.page", i, jobd.WithQueue(q))
	}
	jobs, err := c.EnqueueMany(ctx, specs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]bool{}
	for _, j := range jobs {
		want[j.ID] = true
	}
	seen := map[int64]bool{}
	it := c.Jobs(ctx, jobd.WithStatus(jobd.StatusPending), jobd.WithQueue(q), jobd.WithPageSize(50))
	for it.Next() {
		id := it.Job().ID
		if seen[id] || !want[id] {
			t.Fatalf("job %d seen twice or not ours", id)
		}
		seen[id] = true
	}
	if err := it.Err(); err != nil || len(seen) != 130 {
		t.Fatalf("listed %d of 130: %v", len(seen), err)
	}
}

// succeededJob runs one job to success through a worker of its own.
func succeededJob(t *testing.T, c *jobd.Client) *jobd.Job {
	ctx, q := ctxT(t), uniq("ok")
	w := newWorker(t, c, q)
	w.Handle("t.ok", func(context.Context, *jobd.Job) (any, error) { return nil, nil })
	stop := runWorker(t, w)
	defer stop()
	j, err := c.Enqueue(ctx, "t.ok", nil, jobd.WithQueue(q))
	if err != nil {
		t.Fatal(err)
	}
	return jobIs(t, c, j.ID, jobd.StatusSucceeded, 30*time.Second)
}

func TestCase_cancel(t *testing.T) {
	t.Parallel()
	c, ctx := client(), ctxT(t)
	j, err := c.Enqueue(ctx, "t.cancel", nil, jobd.WithQueue(uniq("cancel")))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Cancel(ctx, j.ID)
	if err != nil || got.Status != jobd.StatusCancelled {
		t.Fatalf("cancel of a pending job: %v %+v", err, got)
	}
	done := succeededJob(t, c)
	_, err = c.Cancel(ctx, done.ID)
	var e *jobd.Error
	if !errors.Is(err, jobd.ErrConflict) || !errors.As(err, &e) || e.Code != "invalid_state" {
		t.Fatalf("cancel of a succeeded job: %v", err)
	}
}

func TestCase_retry(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("retry")
	w := newWorker(t, c, q)
	w.Handle("t.dead", func(context.Context, *jobd.Job) (any, error) {
		return nil, jobd.Permanent(errors.New("no"))
	})
	stop := runWorker(t, w)
	j, err := c.Enqueue(ctx, "t.dead", nil, jobd.WithQueue(q))
	if err != nil {
		t.Fatal(err)
	}
	jobIs(t, c, j.ID, jobd.StatusDead, 30*time.Second)
	stop()
	got, err := c.Retry(ctx, j.ID)
	if err != nil || got.Status != jobd.StatusPending || got.AttemptFloor != got.Attempt {
		t.Fatalf("retry of a dead job: %v %+v", err, got)
	}
	if err := c.Delete(ctx, j.ID); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := c.Get(ctx, j.ID); !errors.Is(err, jobd.ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestCase_schedules(t *testing.T) {
	t.Parallel()
	c, ctx, q, name := client(), ctxT(t), uniq("sched"), uniq("nightly")
	s, err := c.Schedules.Put(ctx, name, "0 3 * * *", "t.sched", jobd.WithQueue(q),
		jobd.WithPayload(map[string]int{"n": 1}), jobd.WithTimezone("Europe/Berlin"), jobd.WithPriority(2))
	if err != nil || s.Name != name || s.Queue != q || s.Timezone != "Europe/Berlin" || s.Priority != 2 || s.NextRunAt.IsZero() {
		t.Fatalf("put: %v %+v", err, s)
	}
	if g, err := c.Schedules.Get(ctx, name); err != nil || g.Cron != "0 3 * * *" {
		t.Fatalf("get: %v %+v", err, g)
	}
	list, err := c.Schedules.List(ctx)
	found := false
	for _, x := range list {
		found = found || x.Name == name
	}
	if err != nil || !found {
		t.Fatalf("list: %v, %d schedules, ours there: %v", err, len(list), found)
	}
	if p, err := c.Schedules.Pause(ctx, name); err != nil || !p.Paused {
		t.Fatalf("pause: %v %+v", err, p)
	}
	if r, err := c.Schedules.Resume(ctx, name); err != nil || r.Paused {
		t.Fatalf("resume: %v %+v", err, r)
	}
	j, err := c.Schedules.Trigger(ctx, name)
	if err != nil || j.Schedule != name || j.Queue != q || j.Type != "t.sched" {
		t.Fatalf("trigger: %v %+v", err, j)
	}
	if g, err := c.Get(ctx, j.ID); err != nil || g.Schedule != name {
		t.Fatalf("the triggered job: %v %+v", err, g)
	}
	next, zone, err := c.Schedules.Next(ctx, name, 3)
	if err != nil || len(next) != 3 || zone != "Europe/Berlin" || !next[0].Before(next[1]) {
		t.Fatalf("next: %v %v %s", err, next, zone)
	}
	if _, err := c.Schedules.Create(ctx, name, "0 3 * * *", "t.sched"); !errors.Is(err, jobd.ErrConflict) {
		t.Fatalf("create of a taken name: %v", err)
	}
	if err := c.Schedules.Delete(ctx, name); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := c.Schedules.Get(ctx, name); !errors.Is(err, jobd.ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestCase_queues(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("queues")
	if _, err := c.Enqueue(ctx, "t.q", nil, jobd.WithQueue(q)); err != nil {
		t.Fatal(err)
	}
	find := func() *jobd.Queue {
		list, err := c.Queues.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := range list {
			if list[i].Name == q {
				return &list[i]
			}
		}
		return nil
	}
	waitFor(t, 10*time.Second, "the queue to be listed with its job", func() bool {
		x := find()
		return x != nil && x.Pending == 1
	})
	if p, err := c.Queues.Pause(ctx, q); err != nil || !p.Paused {
		t.Fatalf("pause: %v %+v", err, p)
	}
	if x := find(); x == nil || !x.Paused {
		t.Fatalf("listed after pause: %+v", x)
	}
	if r, err := c.Queues.Resume(ctx, q); err != nil || r.Paused {
		t.Fatalf("resume: %v %+v", err, r)
	}
	l, err := c.Queues.SetLimits(ctx, q, jobd.MaxRunning(3), jobd.Rate(10, time.Second))
	if err != nil || l.MaxRunning == nil || *l.MaxRunning != 3 || l.Rate == nil || l.Rate.Limit != 10 {
		t.Fatalf("put limits: %v %+v", err, l)
	}
	l, err = c.Queues.SetLimits(ctx, q, jobd.MaxRunning(0), jobd.Rate(0, 0))
	if err != nil || l.MaxRunning != nil || l.Rate != nil {
		t.Fatalf("remove limits: %v %+v", err, l)
	}
}

func TestCase_stats_and_workers(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("stats")
	for i := 0; i < 2; i++ {
		if _, err := c.Enqueue(ctx, "t.stats", nil, jobd.WithQueue(q)); err != nil {
			t.Fatal(err)
		}
	}
	st, err := c.Stats(ctx, jobd.WithQueue(q), jobd.WithSince(10*time.Minute), jobd.WithStep(time.Minute))
	if err != nil || st.Step != time.Minute || len(st.Series) < 10 {
		t.Fatalf("stats: %v %+v", err, st)
	}
	var n int64
	for _, p := range st.Series {
		n += p.Enqueued
	}
	if n != 2 {
		t.Errorf("stats count %d enqueued in queue %s, want 2", n, q)
	}
	w := newWorker(t, c, q)
	w.Handle("t.stats", func(context.Context, *jobd.Job) (any, error) { return nil, nil })
	runWorker(t, w)
	waitFor(t, 10*time.Second, "the worker to be listed", func() bool {
		ws, err := c.Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ws {
			if x.ID == w.ID() {
				return true
			}
		}
		return false
	})
	if id, err := c.Whoami(ctx); err != nil || id.Role != "admin" || id.Tokens {
		t.Fatalf("whoami: %v %+v", err, id)
	}
	if err := c.Health(ctx); err != nil {
		t.Fatalf("health: %v", err)
	}
}

// jsonEq compares two JSON texts as values.
func jsonEq(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && fmt.Sprint(x) == fmt.Sprint(y)
}
