// The cases of clients/cases.json about composing jobs: dependencies,
// workflows, and what a handler sees of them (parents) and says while it
// runs (progress).
package jobd_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"jobd"
)

func TestCase_enqueue_depends_on(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("deps")
	p1, err1 := c.Enqueue(ctx, "t.deps.p", nil, jobd.WithQueue(q))
	p2, err2 := c.Enqueue(ctx, "t.deps.p", nil, jobd.WithQueue(q))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	child, err := c.Enqueue(ctx, "t.deps.c", nil, jobd.WithQueue(q), jobd.WithDependsOn(p2.ID, p1.ID))
	if err != nil || child.Status != jobd.StatusWaiting || !reflect.DeepEqual(child.DependsOn, []int64{p1.ID, p2.ID}) ||
		child.OnParentFailure != jobd.ParentFailureCancel || child.Workflow != 0 || child.Step != "" {
		t.Fatalf("child: %v %s", err, child.Raw)
	}
	if g, err := c.Get(ctx, child.ID); err != nil || !reflect.DeepEqual(g.DependsOn, []int64{p1.ID, p2.ID}) {
		t.Errorf("get: %v %s", err, g.Raw)
	}
	// a queue counts its waiting jobs (on PostgreSQL about a second late)
	waitFor(t, 30*time.Second, "the queue to count 1 waiting, 2 pending", func() bool {
		qs, err := c.Queues.List(ctx)
		for _, x := range qs {
			if x.Name == q {
				return err == nil && x.Waiting == 1 && x.Pending == 2
			}
		}
		return false
	})
	// a parent that does not succeed: cancel (the default) or run anyway
	px, _ := c.Enqueue(ctx, "t.deps.x", nil, jobd.WithQueue(q))
	cc, _ := c.Enqueue(ctx, "t.deps.c", nil, jobd.WithQueue(q), jobd.WithDependsOn(px.ID),
		jobd.WithOnParentFailure(jobd.ParentFailureCancel))
	cr, _ := c.Enqueue(ctx, "t.deps.c", nil, jobd.WithQueue(q), jobd.WithDependsOn(px.ID),
		jobd.WithOnParentFailure(jobd.ParentFailureRun))
	many, err := c.EnqueueMany(ctx, []jobd.JobSpec{
		jobd.Spec("t.deps.c", nil, jobd.WithQueue(q), jobd.WithDependsOn(px.ID), jobd.WithOnParentFailure(jobd.ParentFailureRun)),
		jobd.Spec("t.deps.c", nil, jobd.WithQueue(q))})
	if err != nil || many[0].Status != jobd.StatusWaiting || !reflect.DeepEqual(many[0].DependsOn, []int64{px.ID}) ||
		many[0].OnParentFailure != "run" || many[1].Status != jobd.StatusPending || len(many[1].DependsOn) != 0 {
		t.Fatalf("many: %v %s %s", err, many[0].Raw, many[1].Raw)
	}
	if _, err := c.Cancel(ctx, px.ID); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int64]jobd.Status{cc.ID: jobd.StatusCancelled, cr.ID: jobd.StatusPending,
		many[0].ID: jobd.StatusPending} {
		if g, err := c.Get(ctx, id); err != nil || g.Status != want {
			t.Errorf("job %d: %v %s, want %s", id, err, g.Raw, want)
		}
	}
	// the parents succeed: the child is released, pending
	w := newWorker(t, c, q)
	w.Handle("t.deps.p", func(context.Context, *jobd.Job) (any, error) { return nil, nil })
	runWorker(t, w)
	jobIs(t, c, child.ID, jobd.StatusPending, 30*time.Second)
	_, err = c.Enqueue(ctx, "t.deps.c", nil, jobd.WithQueue(q), jobd.WithDependsOn(2000000000))
	var e *jobd.Error
	if !errors.Is(err, jobd.ErrBadRequest) || !errors.As(err, &e) || e.Code != "invalid_field" || e.Field != "depends_on" {
		t.Errorf("unknown parent: %v", err)
	}
}

func TestCase_workflows(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("wf")
	name, key := uniq("wf-name"), uniq("wf-key")
	steps := []jobd.Step{
		{Ref: "extract", Type: "t.wf", Queue: q, Payload: map[string]int{"day": 6}},
		{Ref: "load", Type: "t.wf", Queue: q, DependsOn: []string{"extract"}, Timeout: 30 * time.Second},
	}
	sub, err := c.Workflows.Submit(ctx, name, steps, jobd.WithWorkflowKey(key))
	if err != nil || sub.ID <= 0 || len(sub.Jobs) != 2 || sub.Jobs["extract"] == 0 || sub.Jobs["load"] == 0 || sub.Replayed {
		t.Fatalf("submit: %v %+v", err, sub)
	}
	wf, err := c.Workflows.Get(ctx, sub.ID)
	if err != nil || wf.ID != sub.ID || wf.Name != name || wf.Status != "running" || !wf.FinishedAt.IsZero() ||
		wf.Counts[jobd.StatusPending] != 1 || wf.Counts[jobd.StatusWaiting] != 1 || len(wf.Steps) != 2 {
		t.Fatalf("get: %v %+v", err, wf)
	}
	want := []jobd.WorkflowStep{
		{Ref: "extract", JobID: sub.Jobs["extract"], Type: "t.wf", Status: jobd.StatusPending, DependsOn: []string{}},
		{Ref: "load", JobID: sub.Jobs["load"], Type: "t.wf", Status: jobd.StatusWaiting, DependsOn: []string{"extract"}},
	}
	if !reflect.DeepEqual(wf.Steps, want) {
		t.Errorf("steps: %+v", wf.Steps)
	}
	load, err := c.Get(ctx, sub.Jobs["load"])
	if err != nil || load.Workflow != sub.ID || load.Step != "load" || load.Status != jobd.StatusWaiting ||
		!reflect.DeepEqual(load.DependsOn, []int64{sub.Jobs["extract"]}) || load.Timeout != 30*time.Second {
		t.Errorf("the load step's job: %v %s", err, load.Raw)
	}
	var ids []int64
	it := c.Workflows.List(ctx, jobd.WorkflowFilter{Name: name})
	for it.Next() {
		ids = append(ids, it.Workflow().ID)
	}
	if it.Err() != nil || !reflect.DeepEqual(ids, []int64{sub.ID}) {
		t.Errorf("list: %v %v", it.Err(), ids)
	}
	it = c.Workflows.List(ctx, jobd.WorkflowFilter{Name: name, Status: "succeeded"})
	if it.Next() || it.Err() != nil {
		t.Errorf("list succeeded: %v", it.Err())
	}
	again, err := c.Workflows.Submit(ctx, name, steps, jobd.WithWorkflowKey(key))
	if err != nil || again.ID != sub.ID || !reflect.DeepEqual(again.Jobs, sub.Jobs) || !again.Replayed {
		t.Errorf("replay: %v %+v", err, again)
	}
	_, err = c.Workflows.Submit(ctx, name, []jobd.Step{{Ref: "a", Type: "t.wf", DependsOn: []string{"b"}},
		{Ref: "b", Type: "t.wf", DependsOn: []string{"a"}}})
	var e *jobd.Error
	if !errors.Is(err, jobd.ErrBadRequest) || !errors.As(err, &e) || !strings.HasPrefix(e.Field, "steps[") {
		t.Errorf("cycle: %v", err)
	}
	if _, err := c.Workflows.Get(ctx, 2000000000); !errors.Is(err, jobd.ErrNotFound) {
		t.Errorf("unknown workflow: %v", err)
	}
}

func TestCase_workflow_ops(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("wfops")
	wfs := c.Workflows
	sub, err := wfs.Submit(ctx, uniq("wfops"), []jobd.Step{{Ref: "a", Type: "t.wfops", Queue: q},
		{Ref: "b", Type: "t.wfops", Queue: q, DependsOn: []string{"a"}}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := sub.Jobs["a"], sub.Jobs["b"]
	added, err := wfs.AddSteps(ctx, sub.ID, []jobd.Step{{Ref: "x", Type: "t.wfops", Queue: q, DependsOn: []string{"a"}}}, "b")
	if err != nil || len(added) != 1 || added["x"] == 0 {
		t.Fatalf("add steps: %v %v", err, added)
	}
	if j, err := c.Get(ctx, b); err != nil || !reflect.DeepEqual(j.DependsOn, []int64{a, added["x"]}) {
		t.Errorf("b's parents: %v %v", err, j.DependsOn)
	}
	if wf, err := wfs.Get(ctx, sub.ID); err != nil || len(wf.Steps) != 3 || wf.Steps[2].Ref != "x" {
		t.Errorf("steps: %v %+v", err, wf)
	}
	var e *jobd.Error
	_, err = wfs.AddSteps(ctx, sub.ID, []jobd.Step{{Ref: "y", Type: "t.wfops", Queue: q}}, "a")
	if !errors.Is(err, jobd.ErrConflict) || !errors.As(err, &e) || e.Code != "step_not_waiting" || e.Field != "before[0]" {
		t.Errorf("before a pending step: %v", err)
	}
	if err := wfs.Delete(ctx, sub.ID); !errors.As(err, &e) || e.Code != "workflow_running" {
		t.Errorf("delete while running: %v", err)
	}
	wf, err := wfs.Cancel(ctx, sub.ID)
	if err != nil || wf.Status != "failed" || wf.Counts[jobd.StatusCancelled] != 3 {
		t.Fatalf("cancel: %v %+v", err, wf)
	}
	wf, err = wfs.Retry(ctx, sub.ID)
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	got := map[string]jobd.Status{}
	for _, s := range wf.Steps {
		got[s.Ref] = s.Status
	}
	if err != nil || wf.Status != "running" || !reflect.DeepEqual(got, map[string]jobd.Status{
		"a": jobd.StatusPending, "b": jobd.StatusWaiting, "x": jobd.StatusWaiting}) {
		t.Fatalf("retry: %v %+v", err, wf)
	}
	if _, err := wfs.Cancel(ctx, sub.ID); err != nil {
		t.Fatal(err)
	}
	if err := wfs.Delete(ctx, sub.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := wfs.Get(ctx, sub.ID); !errors.Is(err, jobd.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
	if _, err := c.Get(ctx, a); !errors.Is(err, jobd.ErrNotFound) {
		t.Errorf("a step's job after delete: %v", err)
	}
}

func TestCase_worker_parents(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("parents")
	p1, _ := c.Enqueue(ctx, "t.parent", map[string]int{"v": 1}, jobd.WithQueue(q))
	p2, _ := c.Enqueue(ctx, "t.parent", map[string]int{"v": 2}, jobd.WithQueue(q))
	child, err := c.Enqueue(ctx, "t.child", nil, jobd.WithQueue(q), jobd.WithDependsOn(p2.ID, p1.ID))
	if err != nil {
		t.Fatal(err)
	}
	lone, _ := c.Enqueue(ctx, "t.child", nil, jobd.WithQueue(q))
	w := newWorker(t, c, q)
	w.Handle("t.parent", func(_ context.Context, j *jobd.Job) (any, error) {
		var p struct{ V int }
		err := j.Decode(&p)
		return map[string]int{"v10": p.V * 10}, err
	})
	w.Handle("t.child", func(_ context.Context, j *jobd.Job) (any, error) {
		out := []any{}
		for _, p := range j.Parents {
			var r struct{ V10 int }
			if err := p.DecodeResult(&r); err != nil {
				return nil, err
			}
			out = append(out, []any{p.ID, p.Step, p.Type, p.Status, r.V10})
		}
		return out, nil
	})
	runWorker(t, w)
	got := jobIs(t, c, child.ID, jobd.StatusSucceeded, 30*time.Second)
	want, _ := json.Marshal([]any{[]any{p1.ID, "", "t.parent", "succeeded", 10}, []any{p2.ID, "", "t.parent", "succeeded", 20}})
	if !jsonEq(got.Result, want) {
		t.Errorf("parents seen: %s, want %s", got.Result, want)
	}
	if l := jobIs(t, c, lone.ID, jobd.StatusSucceeded, 30*time.Second); string(l.Result) != "[]" {
		t.Errorf("no parents: %s", l.Result)
	}
}

func TestCase_worker_progress(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("progress")
	goOn := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(goOn) }) })
	var mu sync.Mutex
	var first error
	var saved context.Context
	w := newWorker(t, c, q)
	w.Handle("t.progress", func(hctx context.Context, j *jobd.Job) (any, error) {
		err := jobd.ReportProgress(hctx, jobd.ProgressReport{Percent: ptr(40.0), Message: "3 of 8 files",
			Data: map[string]int{"done": 3}})
		mu.Lock()
		first, saved = err, hctx
		mu.Unlock()
		select {
		case <-goOn:
		case <-time.After(30 * time.Second):
		}
		return "ok", nil
	})
	runWorker(t, w)
	j, err := c.Enqueue(ctx, "t.progress", nil, jobd.WithQueue(q))
	if err != nil {
		t.Fatal(err)
	}
	var running *jobd.Job
	waitFor(t, 30*time.Second, "the job's progress", func() bool {
		running, err = c.Get(ctx, j.ID)
		return err == nil && running.Progress != nil
	})
	p := running.Progress
	if running.Status != jobd.StatusRunning || p.Percent == nil || *p.Percent != 40 || p.Message != "3 of 8 files" ||
		!jsonEq(p.Data, []byte(`{"done":3}`)) || p.At.IsZero() {
		t.Errorf("progress: %s", running.Raw)
	}
	once.Do(func() { close(goOn) })
	jobIs(t, c, j.ID, jobd.StatusSucceeded, 30*time.Second)
	mu.Lock()
	defer mu.Unlock()
	if first != nil {
		t.Errorf("progress while running: %v", first)
	}
	// the attempt is over: its progress is stale, an error to ignore, not a panic
	if err := jobd.Progress(saved, 90, "late"); !errors.Is(err, jobd.ErrStaleAttempt) {
		t.Errorf("stale progress: %v", err)
	}
	if err := jobd.Progress(context.Background(), 10, "no worker"); err == nil {
		t.Errorf("progress outside a handler: no error")
	}
}

func ptr[T any](v T) *T { return &v }
