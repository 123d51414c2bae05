// The Go client's roles in bench/clients.sh (`make bench`, beside the other
// clients and jobd's own `jobd worker --server`; docs/BENCHMARKS.md, "Clients").
//
//	bench enqueue -n N -queue Q   enqueue N no-op jobs through EnqueueMany (after one
//	                              request: not the first connection's); prints jobs/s
//	bench worker -queue Q         a Worker at its default settings with a no-op handler, until SIGTERM
//	bench wait -n N -queue Q      from now until Q has no pending or running job; prints jobs/s
//	bench sink -listen ADDR       an HTTP endpoint answering 200 {} (a no-op http handler for jobd's worker)
//
// The server is $JOBD_SERVER (token $JOBD_TOKEN).
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"jobd"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bench enqueue|worker|wait|sink [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	n := fs.Int("n", 10000, "jobs")
	queue := fs.String("queue", "bench", "queue")
	listen := fs.String("listen", "127.0.0.1:0", "sink address")
	_ = fs.Parse(os.Args[2:])
	ctx := context.Background()
	c := jobd.New()
	var err error
	switch os.Args[1] {
	case "enqueue":
		err = enqueue(ctx, c, *n, *queue)
	case "worker":
		w := jobd.NewWorker(c, jobd.WithQueues(*queue), jobd.WithLogger(nil))
		w.Handle("noop", func(context.Context, *jobd.Job) (any, error) { return nil, nil })
		err = w.Run(ctx)
	case "wait":
		err = wait(ctx, c, *n, *queue)
	case "sink":
		err = http.ListenAndServe(*listen, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("{}"))
		}))
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func enqueue(ctx context.Context, c *jobd.Client, n int, queue string) error {
	specs := make([]jobd.JobSpec, n)
	for i := range specs {
		specs[i] = jobd.Spec("noop", map[string]int{"n": i}, jobd.WithQueue(queue))
	}
	if _, err := c.Whoami(ctx); err != nil { // timed as a program that already talks to the server sees it
		return err
	}
	start := time.Now()
	jobs, err := c.EnqueueMany(ctx, specs)
	if err != nil {
		return err
	}
	el := time.Since(start)
	fmt.Printf("go enqueue_many: %d jobs in %.3fs: %.0f jobs/s\n", len(jobs), el.Seconds(), float64(len(jobs))/el.Seconds())
	return nil
}

// wait polls (every 20 ms) until the queue has nothing pending or running.
func wait(ctx context.Context, c *jobd.Client, n int, queue string) error {
	start := time.Now()
	left := func(st jobd.Status) (bool, error) {
		it := c.Jobs(ctx, jobd.WithQueue(queue), jobd.WithStatus(st), jobd.WithPageSize(1))
		more := it.Next()
		return more, it.Err()
	}
	for {
		p, err := left(jobd.StatusPending)
		if err != nil {
			return err
		}
		r, err := left(jobd.StatusRunning)
		if err != nil {
			return err
		}
		if !p && !r {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	el := time.Since(start)
	fmt.Printf("%d jobs in %.3fs: %.0f jobs/s\n", n, el.Seconds(), float64(n)/el.Seconds())
	return nil
}
