// The cases of clients/cases.json that need a worker in a process of its
// own (internal/testworker, built here): kill -9 and SIGTERM.
package jobd_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"jobd"
)

var (
	buildOnce sync.Once
	workerBin string
	buildErr  error
)

func testworker(t *testing.T) string {
	buildOnce.Do(func() {
		workerBin = filepath.Join(tmpDir, "testworker")
		out, err := exec.Command("go", "build", "-o", workerBin, "./internal/testworker").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./internal/testworker: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return workerBin
}

// child is a running testworker; started receives "ID ATTEMPT" lines.
type child struct {
	cmd     *exec.Cmd
	started chan string
	exited  chan error
}

func startChild(t *testing.T, id string, env ...string) *child {
	cmd := exec.Command(testworker(t))
	cmd.Env = append(os.Environ(), append([]string{"JOBD_SERVER=" + serverURL, "JOBD_TOKEN=", "TW_ID=" + id}, env...)...)
	logf, err := os.Create(filepath.Join(tmpDir, id+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := &child{cmd: cmd, started: make(chan string, 16), exited: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if s := strings.TrimPrefix(sc.Text(), "started "); s != sc.Text() {
				ch.started <- s
			}
		}
		ch.exited <- cmd.Wait()
		logf.Close()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return ch
}

func (ch *child) waitStart(t *testing.T, id int64, attempt int) {
	t.Helper()
	want := fmt.Sprintf("%d %d", id, attempt)
	select {
	case s := <-ch.started:
		if s != want {
			t.Fatalf("the worker started %q, want %q", s, want)
		}
	case err := <-ch.exited:
		t.Fatalf("the worker exited: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatalf("the worker did not start job %d", id)
	}
}

func TestCase_worker_kill9_reaped(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("kill9")
	ch := startChild(t, uniq("kill9-a"), "TW_QUEUE="+q, "TW_LEASE=2s")
	j, err := c.Enqueue(ctx, "sleep", map[string]any{"ms": 60000, "first_only": true}, jobd.WithQueue(q))
	if err != nil {
		t.Fatal(err)
	}
	ch.waitStart(t, j.ID, 1)
	if err := ch.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-ch.exited
	second := startChild(t, uniq("kill9-b"), "TW_QUEUE="+q, "TW_LEASE=2s")
	second.waitStart(t, j.ID, 2)
	got := jobIs(t, c, j.ID, jobd.StatusSucceeded, 30*time.Second)
	if got.Attempt != 2 {
		t.Fatalf("job: %s", got.Raw)
	}
	hist, err := c.Attempts(ctx, j.ID)
	if err != nil || len(hist) == 0 || hist[0].Outcome != "reaped" {
		t.Fatalf("attempt history: %v %+v", err, hist)
	}
}

func TestCase_worker_sigterm_drain(t *testing.T) {
	t.Parallel()
	c, ctx, q := client(), ctxT(t), uniq("sigterm")
	id := uniq("sigterm-w")
	ch := startChild(t, id, "TW_QUEUE="+q, "TW_CONCURRENCY=2", "TW_GRACE=20s", "TW_LEASE=3s")
	a, err := c.Enqueue(ctx, "sleep", map[string]any{"ms": 1500}, jobd.WithQueue(q))
	if err != nil {
		t.Fatal(err)
	}
	ch.waitStart(t, a.ID, 1)
	if err := ch.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the worker to say it is draining", func() bool {
		ws, err := c.Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if w.ID == id {
				return w.State == "draining"
			}
		}
		return false
	})
	b, err := c.Enqueue(ctx, "sleep", map[string]any{"ms": 1}, jobd.WithQueue(q))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ch.exited:
		var ee *exec.ExitError
		if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 0) {
			t.Fatalf("the worker exited with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the worker did not exit after SIGTERM")
	}
	if got, err := c.Get(ctx, a.ID); err != nil || got.Status != jobd.StatusSucceeded || got.Attempt != 1 {
		t.Fatalf("the running job: %v %+v", err, got)
	}
	// Not run, no attempt used (a claim the server parked before the stop
	// and could not deliver is given back: attempt_floor = attempt).
	if got, err := c.Get(ctx, b.ID); err != nil || got.Status != jobd.StatusPending || got.Attempt != got.AttemptFloor {
		t.Fatalf("the job enqueued during the drain: %v %+v", err, got)
	}
	select {
	case s := <-ch.started:
		t.Fatalf("the draining worker started %s", s)
	default:
	}
}

// The README's first job through examples/hello, as a user runs it.
func TestExampleHello(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(tmpDir, "hello")
	if out, err := exec.Command("go", "build", "-o", bin, "./examples/hello").CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/hello: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "JOBD_SERVER="+serverURL, "JOBD_TOKEN=")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `succeeded: {"attempt":1,"greeting":"hello, world"`) {
		t.Fatalf("examples/hello: %v\n%s", err, out)
	}
}
