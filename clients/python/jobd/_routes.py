"""The one route table of the client: every request it makes goes through a
pair below, written as a literal ("METHOD", "/v1/path/{param}") so that
clients/coverage.py can find the routes wrapped here by regex and check them
against docs/openapi.yaml (docs/API.md describes each route)."""
from typing import Tuple

Route = Tuple[str, str]

# Jobs (docs/API.md, Jobs)
JOB_CREATE: Route = ("POST", "/v1/jobs")
JOB_BATCH: Route = ("POST", "/v1/jobs/batch")
JOB_GET: Route = ("GET", "/v1/jobs/{id}")
JOB_LIST: Route = ("GET", "/v1/jobs")
JOB_CANCEL: Route = ("POST", "/v1/jobs/{id}/cancel")
JOB_RETRY: Route = ("POST", "/v1/jobs/{id}/retry")
JOB_DELETE: Route = ("DELETE", "/v1/jobs/{id}")
JOB_BULK: Route = ("POST", "/v1/jobs/bulk")
JOB_ATTEMPTS: Route = ("GET", "/v1/jobs/{id}/attempts")
JOB_ATTEMPT_LOG: Route = ("GET", "/v1/jobs/{id}/attempts/{attempt}/log")

# Workflows (docs/API.md, Workflows)
WORKFLOW_SUBMIT: Route = ("POST", "/v1/workflows")
WORKFLOW_GET: Route = ("GET", "/v1/workflows/{id}")
WORKFLOW_LIST: Route = ("GET", "/v1/workflows")
WORKFLOW_ADD_STEPS: Route = ("POST", "/v1/workflows/{id}/steps")
WORKFLOW_CANCEL: Route = ("POST", "/v1/workflows/{id}/cancel")
WORKFLOW_RETRY: Route = ("POST", "/v1/workflows/{id}/retry")
WORKFLOW_DELETE: Route = ("DELETE", "/v1/workflows/{id}")

# Schedules (docs/API.md, Schedules)
SCHEDULE_CREATE: Route = ("POST", "/v1/schedules")
SCHEDULE_PUT: Route = ("PUT", "/v1/schedules/{name}")
SCHEDULE_LIST: Route = ("GET", "/v1/schedules")
SCHEDULE_GET: Route = ("GET", "/v1/schedules/{name}")
SCHEDULE_DELETE: Route = ("DELETE", "/v1/schedules/{name}")
SCHEDULE_PAUSE: Route = ("POST", "/v1/schedules/{name}/pause")
SCHEDULE_RESUME: Route = ("POST", "/v1/schedules/{name}/resume")
SCHEDULE_TRIGGER: Route = ("POST", "/v1/schedules/{name}/trigger")
SCHEDULE_NEXT: Route = ("GET", "/v1/schedules/{name}/next")

# Queues (docs/API.md, Queues)
QUEUE_LIST: Route = ("GET", "/v1/queues")
QUEUE_PAUSE: Route = ("POST", "/v1/queues/{name}/pause")
QUEUE_RESUME: Route = ("POST", "/v1/queues/{name}/resume")
QUEUE_LIMITS: Route = ("PUT", "/v1/queues/{name}")
QUEUE_GROUPS: Route = ("GET", "/v1/queues/{name}/groups")

# Statistics, workers, operations (docs/API.md, Statistics, Workers, Operations)
STATS: Route = ("GET", "/v1/stats")
WORKER_LIST: Route = ("GET", "/v1/workers")
WORKER_ANNOUNCE: Route = ("POST", "/v1/workers")
WORKER_PRESENCE: Route = ("POST", "/v1/workers/{name}/presence")
WORKER_WITHDRAW: Route = ("POST", "/v1/workers/{name}/withdraw")
WHOAMI: Route = ("GET", "/v1/whoami")
HEALTHZ: Route = ("GET", "/healthz")

# Remote workers (docs/API.md, Remote workers)
CLAIM: Route = ("POST", "/v1/claim")
JOB_HEARTBEAT: Route = ("POST", "/v1/jobs/{id}/heartbeat")
JOB_PROGRESS: Route = ("POST", "/v1/jobs/{id}/progress")
JOB_COMPLETE: Route = ("POST", "/v1/jobs/{id}/complete")
JOB_FAIL: Route = ("POST", "/v1/jobs/{id}/fail")
JOB_RELEASE: Route = ("POST", "/v1/jobs/{id}/release")
CANCELS: Route = ("GET", "/v1/cancels")
