// The suite's fixture: a real `jobd server` (the binary from $JOBD_BIN, or
// one built in this tree) on the store $JOBD_GO_TEST_DB names (a fresh
// SQLite file when unset), with short reap and backoff intervals so that
// the worker cases take seconds; and the check that every case of
// clients/cases.json has a test of its own.
package jobd_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"jobd"
)

var (
	serverURL string
	jobdBin   string
	dbURL     string
	tmpDir    string
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	var err error
	tmpDir, err = os.MkdirTemp("", "jobd-go-test.")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmpDir)
	jobdBin = findJobd()
	if jobdBin == "" {
		fmt.Fprintln(os.Stderr, "no jobd binary: set JOBD_BIN or build jobd in build/ or build-asan/")
		return 1
	}
	dbURL = os.Getenv("JOBD_GO_TEST_DB")
	if dbURL == "" {
		dbURL = "sqlite:" + filepath.Join(tmpDir, "jobs.db")
	}
	srv, url, err := startServer(dbURL, "main")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stopServer(srv)
	serverURL = url
	return m.Run()
}

func findJobd() string {
	if b := os.Getenv("JOBD_BIN"); b != "" {
		return b
	}
	for _, p := range []string{"../../build/jobd", "../../build-asan/jobd"} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			abs, _ := filepath.Abs(p)
			return abs
		}
	}
	return ""
}

// startServer starts `jobd server` on db with extra flags and returns it
// once it says where it listens.
func startServer(db, name string, extra ...string) (*exec.Cmd, string, error) {
	args := append([]string{"server", "--db", db, "--listen", "127.0.0.1:0", "--shutdown-grace", "2s",
		"--reap-interval", "200ms", "--backoff-base", "100ms", "--backoff-cap", "300ms",
		"--access-log", "off"}, extra...)
	cmd := exec.Command(jobdBin, args...)
	logf, err := os.Create(filepath.Join(tmpDir, name+"-server.log"))
	if err != nil {
		return nil, "", err
	}
	pr, pw, _ := os.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	pw.Close()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		re := regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+)$`)
		sent := false
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if m := re.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		logf.Close()
	}()
	select {
	case u := <-found:
		return cmd, u, nil
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		return nil, "", fmt.Errorf("jobd server did not say where it listens (log: %s)", logf.Name())
	}
}

func stopServer(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
	}
}

func client(opts ...jobd.ClientOption) *jobd.Client {
	return jobd.New(append([]jobd.ClientOption{jobd.WithServer(serverURL), jobd.WithToken("")}, opts...)...)
}

var seq atomic.Int64

// uniq makes a queue or type name no other test uses.
func uniq(prefix string) string {
	return fmt.Sprintf("%s-%d", strings.ReplaceAll(prefix, "_", "-"), seq.Add(1))
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond every 20 ms until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// jobIs waits until the job has the status and returns it.
func jobIs(t *testing.T, c *jobd.Client, id int64, st jobd.Status, d time.Duration) *jobd.Job {
	t.Helper()
	var j *jobd.Job
	end := time.Now().Add(d)
	for {
		var err error
		j, err = c.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("get %d: %v", id, err)
		}
		if j.Status == st {
			return j
		}
		if time.Now().After(end) {
			t.Fatalf("timed out after %v waiting for job %d to be %s: %s", d, id, st, j.Raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// syncBuf is a log destination the worker's goroutines may share.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runWorker runs w in the background; the returned func stops it and
// waits for Run to return (failing the test if it does not within 30 s).
func runWorker(t *testing.T, w *jobd.Worker) func() {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- w.Run(context.Background()) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			w.Stop()
			select {
			case err := <-errc:
				if err != nil {
					t.Errorf("worker: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Errorf("worker did not stop within 30s")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// newWorker is a worker for one test's queue, silent unless it fails.
func newWorker(t *testing.T, c *jobd.Client, queue string, opts ...jobd.WorkerOption) *jobd.Worker {
	base := []jobd.WorkerOption{jobd.WithQueues(queue), jobd.WithSignals(), jobd.WithClaimWait(2 * time.Second),
		jobd.WithWorkerID(uniq("w-" + queue))}
	return jobd.NewWorker(c, append(base, opts...)...)
}

func TestEveryCaseHasATest(t *testing.T) {
	data, err := os.ReadFile("../cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases struct {
		Cases []struct {
			ID string `json:"id"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("*_test.go")
	var src strings.Builder
	for _, f := range files {
		b, _ := os.ReadFile(f)
		src.Write(b)
	}
	if len(cases.Cases) == 0 {
		t.Fatal("clients/cases.json lists no cases")
	}
	for _, c := range cases.Cases {
		if !strings.Contains(src.String(), "func TestCase_"+c.ID+"(t *testing.T)") {
			t.Errorf("case %q of clients/cases.json has no test: write func TestCase_%s(t *testing.T)", c.ID, c.ID)
		}
	}
}
