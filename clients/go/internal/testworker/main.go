// testworker is a worker process for the package's tests (kill -9 and
// SIGTERM need a real process): it runs the type "sleep", whose payload
// {"ms": N, "first_only": bool} says how long to sleep (the whole sleep is
// skipped on attempts after the first when first_only is set), and prints
// "started ID ATTEMPT" on stdout when a job starts. Settings come from the
// environment: JOBD_SERVER, JOBD_TOKEN, TW_QUEUE, TW_LEASE, TW_GRACE,
// TW_CONCURRENCY.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"jobd"
)

func main() {
	opts := []jobd.WorkerOption{jobd.WithQueues(os.Getenv("TW_QUEUE"))}
	if d, err := time.ParseDuration(os.Getenv("TW_LEASE")); err == nil {
		opts = append(opts, jobd.WithLease(d))
	}
	if d, err := time.ParseDuration(os.Getenv("TW_GRACE")); err == nil {
		opts = append(opts, jobd.WithShutdownGrace(d))
	}
	if n, err := strconv.Atoi(os.Getenv("TW_CONCURRENCY")); err == nil {
		opts = append(opts, jobd.WithConcurrency(n))
	}
	if id := os.Getenv("TW_ID"); id != "" {
		opts = append(opts, jobd.WithWorkerID(id))
	}
	w := jobd.NewWorker(jobd.New(), opts...)
	w.Handle("sleep", func(ctx context.Context, job *jobd.Job) (any, error) {
		var p struct {
			MS        int  `json:"ms"`
			FirstOnly bool `json:"first_only"`
		}
		if err := job.Decode(&p); err != nil {
			return nil, jobd.Permanent(err)
		}
		fmt.Printf("started %d %d\n", job.ID, job.Attempt)
		if p.FirstOnly && job.Attempt > 1 {
			return map[string]int{"slept_ms": 0}, nil
		}
		select {
		case <-time.After(time.Duration(p.MS) * time.Millisecond):
			return map[string]int{"slept_ms": p.MS}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	if err := w.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "testworker:", err)
		os.Exit(1)
	}
}
