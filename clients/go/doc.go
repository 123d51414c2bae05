// Package jobd is the Go client of jobd, a job scheduler: enqueue and
// manage jobs through a jobd server's HTTP API (docs/API.md), and run
// workers that claim jobs and run Go handlers for them (docs/WORKER.md,
// Remote workers). It uses the standard library only.
//
// A first job and a first worker:
//
//	c := jobd.New() // $JOBD_SERVER and $JOBD_TOKEN, or jobd.WithServer(...)
//	job, err := c.Enqueue(ctx, "email.send", map[string]string{"to": "a@b.c"},
//		jobd.WithQueue("mail"), jobd.WithMaxAttempts(5))
//
//	w := jobd.NewWorker(c, jobd.WithQueues("mail"))
//	w.Handle("email.send", func(ctx context.Context, job *jobd.Job) (any, error) {
//		var p struct{ To string }
//		if err := job.Decode(&p); err != nil {
//			return nil, jobd.Permanent(err) // dead at once: retrying will not help
//		}
//		return map[string]bool{"sent": true}, nil
//	})
//	err = w.Run(ctx) // until SIGTERM/SIGINT or ctx is done, then drains
//
// Errors from the server are *Error values that match one of the
// sentinels (ErrNotFound, ErrConflict, ErrStaleAttempt, ErrUnauthorized,
// ErrForbidden, ErrBadRequest, ErrUnavailable, ErrServer) with errors.Is.
package jobd
