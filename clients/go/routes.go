// The one table of every HTTP route this package calls (docs/API.md,
// docs/openapi.yaml). Every request goes through it, written as literal
// {"METHOD", "/v1/path/{param}"} pairs so that a coverage script can find
// the wrapped routes by pattern across the clients.
package jobd

// retryRule says when a request may be sent again after a network error or
// a 503 (docs/API.md, Errors): only where repeating it cannot do twice what
// the caller asked once.
type retryRule int

const (
	retryNever   retryRule = iota // a second copy could act twice (cancel, delete, claim)
	retryAlways                   // reads and requests whose repeat changes nothing more
	retryWithKey                  // enqueue: safe only with an idempotency key
)

type route struct {
	method string
	path   string
	retry  retryRule
}

var (
	routeEnqueue        = route{"POST", "/v1/jobs", retryWithKey}
	routeEnqueueBatch   = route{"POST", "/v1/jobs/batch", retryWithKey}
	routeJobsBulk       = route{"POST", "/v1/jobs/bulk", retryNever}
	routeJobsList       = route{"GET", "/v1/jobs", retryAlways}
	routeJobGet         = route{"GET", "/v1/jobs/{id}", retryAlways}
	routeJobDelete      = route{"DELETE", "/v1/jobs/{id}", retryNever}
	routeJobCancel      = route{"POST", "/v1/jobs/{id}/cancel", retryNever}
	routeJobRetry       = route{"POST", "/v1/jobs/{id}/retry", retryNever}
	routeJobAttempts    = route{"GET", "/v1/jobs/{id}/attempts", retryAlways}
	routeAttemptLog     = route{"GET", "/v1/jobs/{id}/attempts/{attempt}/log", retryAlways}
	routeJobHeartbeat   = route{"POST", "/v1/jobs/{id}/heartbeat", retryAlways}
	routeJobProgress    = route{"POST", "/v1/jobs/{id}/progress", retryAlways}
	routeJobComplete    = route{"POST", "/v1/jobs/{id}/complete", retryAlways}
	routeJobFail        = route{"POST", "/v1/jobs/{id}/fail", retryAlways}
	routeJobRelease     = route{"POST", "/v1/jobs/{id}/release", retryAlways}
	routeClaim          = route{"POST", "/v1/claim", retryNever}
	routeWorkflowSubmit = route{"POST", "/v1/workflows", retryWithKey}
	routeWorkflowGet    = route{"GET", "/v1/workflows/{id}", retryAlways}
	routeWorkflowList   = route{"GET", "/v1/workflows", retryAlways}
	routeWorkflowSteps  = route{"POST", "/v1/workflows/{id}/steps", retryNever}
	routeWorkflowCancel = route{"POST", "/v1/workflows/{id}/cancel", retryAlways}
	routeWorkflowRetry  = route{"POST", "/v1/workflows/{id}/retry", retryNever}
	routeWorkflowDelete = route{"DELETE", "/v1/workflows/{id}", retryNever}
	routeScheduleCreate = route{"POST", "/v1/schedules", retryNever}
	routeScheduleList   = route{"GET", "/v1/schedules", retryAlways}
	routeSchedulePut    = route{"PUT", "/v1/schedules/{name}", retryAlways}
	routeScheduleGet    = route{"GET", "/v1/schedules/{name}", retryAlways}
	routeScheduleDelete = route{"DELETE", "/v1/schedules/{name}", retryNever}
	routeSchedulePause  = route{"POST", "/v1/schedules/{name}/pause", retryAlways}
	routeScheduleResume = route{"POST", "/v1/schedules/{name}/resume", retryAlways}
	routeScheduleTrig   = route{"POST", "/v1/schedules/{name}/trigger", retryNever}
	routeScheduleNext   = route{"GET", "/v1/schedules/{name}/next", retryAlways}
	routeQueueList      = route{"GET", "/v1/queues", retryAlways}
	routeQueuePut       = route{"PUT", "/v1/queues/{name}", retryAlways}
	routeQueueGroups    = route{"GET", "/v1/queues/{name}/groups", retryAlways}
	routeQueuePause     = route{"POST", "/v1/queues/{name}/pause", retryAlways}
	routeQueueResume    = route{"POST", "/v1/queues/{name}/resume", retryAlways}
	routeWorkersList    = route{"GET", "/v1/workers", retryAlways}
	routeWorkerAnnounce = route{"POST", "/v1/workers", retryAlways}
	routeWorkerPresence = route{"POST", "/v1/workers/{name}/presence", retryAlways}
	routeWorkerWithdraw = route{"POST", "/v1/workers/{name}/withdraw", retryAlways}
	routeStats          = route{"GET", "/v1/stats", retryAlways}
	routeWhoami         = route{"GET", "/v1/whoami", retryAlways}
	routeHealthz        = route{"GET", "/healthz", retryAlways}
	routeMetrics        = route{"GET", "/metrics", retryAlways}
)
