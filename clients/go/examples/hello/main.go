// The README's first job, run by a Go worker: with a jobd server at
// $JOBD_SERVER (`make run` starts one on http://127.0.0.1:8080),
//
//	cd clients/go && go run ./examples/hello
//
// starts a Worker for the type "hello" on the queue "hello-go" (so that
// the worker of `make run`, which also runs "hello", leaves it alone),
// enqueues {"name": "world"}, waits for the result, prints it and stops.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"jobd"
)

func main() {
	ctx := context.Background()
	c := jobd.New() // $JOBD_SERVER, $JOBD_TOKEN

	w := jobd.NewWorker(c, jobd.WithQueues("hello-go"))
	w.Handle("hello", func(ctx context.Context, job *jobd.Job) (any, error) {
		var p struct {
			Name string `json:"name"`
		}
		if err := job.Decode(&p); err != nil {
			return nil, jobd.Permanent(err) // a bad payload: retrying will not help
		}
		return map[string]any{"greeting": "hello, " + p.Name, "job": job.ID, "attempt": job.Attempt}, nil
	})
	stopped := make(chan error, 1)
	go func() { stopped <- w.Run(ctx) }()

	job, err := c.Enqueue(ctx, "hello", map[string]string{"name": "world"}, jobd.WithQueue("hello-go"))
	if err == nil {
		job, err = c.Wait(ctx, job.ID, 30*time.Second)
	}
	w.Stop()
	if rerr := <-stopped; err == nil {
		err = rerr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hello:", err)
		os.Exit(1)
	}
	fmt.Printf("job %d %s: %s\n", job.ID, job.Status, job.Result)
}
