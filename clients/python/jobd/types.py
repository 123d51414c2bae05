"""The objects the API answers with (docs/API.md: the job object, the
schedule object, a queue object, an attempt, a worker), with attribute
access to every field. Times come as timezone-aware datetimes (UTC); a field
this client does not know yet (a newer server's) is still reachable as an
attribute, as it came in the JSON. `raw` is the object as answered."""
import datetime as _dt
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Union

Duration = Union[str, int, float, _dt.timedelta]
Time = Union[str, _dt.datetime]


def parse_time(v: Any) -> Optional[_dt.datetime]:
    """An RFC 3339 time of the API (`2026-12-02T14:03:17.120Z`) as an aware
    datetime; None for null."""
    if v is None:
        return None
    s = str(v)
    if s.endswith("Z") or s.endswith("z"):
        s = s[:-1] + "+00:00"
    return _dt.datetime.fromisoformat(s)


def format_time(v: Time) -> str:
    """A request time: an aware datetime in RFC 3339 (a naive one is
    refused: its zone would be a guess), or a string as given."""
    if isinstance(v, str):
        return v
    if v.tzinfo is None or v.utcoffset() is None:
        raise ValueError("a datetime sent to jobd must be timezone-aware "
                         "(datetime.now(timezone.utc), not datetime.now())")
    return v.isoformat(timespec="milliseconds")


def format_duration(v: Duration) -> str:
    """A request duration (docs/API.md, Conventions): a string as given
    ("250ms", "1h30m"), or seconds (a number or a timedelta) as whole
    milliseconds."""
    if isinstance(v, str):
        return v
    secs = v.total_seconds() if isinstance(v, _dt.timedelta) else float(v)
    ms = round(secs * 1000)
    if ms % 1000 == 0:
        return f"{ms // 1000}s"
    return f"{ms}ms"


class Record:
    """An API object: each field an attribute (times parsed)."""

    _TIMES: FrozenSet[str] = frozenset()
    _FIELDS: FrozenSet[str] = frozenset()

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.raw: Dict[str, Any] = dict(data)
        for k in self._FIELDS:
            if k not in data:
                setattr(self, k, None)
        for k, v in data.items():
            setattr(self, k, parse_time(v) if k in self._TIMES else v)

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes not set in __init__.
        raise AttributeError(f"{type(self).__name__} has no field {name!r}")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and getattr(other, "raw", None) == self.raw

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.raw!r})"


class Job(Record):
    """A job (docs/API.md, The job object)."""

    _TIMES = frozenset({"run_at", "scheduled_for", "lease_expires_at", "created_at",
                        "started_at", "finished_at"})
    _FIELDS = frozenset({"id", "queue", "type", "payload", "status", "priority", "run_at",
                         "attempt", "max_attempts", "attempt_floor", "idempotency_key",
                         "schedule", "scheduled_for", "worker_id", "lease_expires_at",
                         "timeout_s", "last_error", "result", "created_at", "started_at",
                         "finished_at", "traceparent", "depends_on", "on_parent_failure",
                         "workflow", "step", "progress", "cancel_requested", "group"})
    id: int
    queue: str
    type: str
    payload: Any
    status: str
    priority: int
    run_at: Optional[_dt.datetime]
    attempt: int
    max_attempts: int
    attempt_floor: int
    idempotency_key: Optional[str]
    schedule: Optional[str]
    scheduled_for: Optional[_dt.datetime]
    worker_id: Optional[str]
    lease_expires_at: Optional[_dt.datetime]
    timeout_s: Optional[float]
    last_error: Optional[str]
    result: Any
    created_at: Optional[_dt.datetime]
    started_at: Optional[_dt.datetime]
    finished_at: Optional[_dt.datetime]
    #: The W3C traceparent the job was enqueued with (docs/API.md, Trace
    #: context), or None; a worker's handler finds it in ctx.job.traceparent.
    traceparent: Optional[str]
    #: The ids of the job's parents, ascending ([] without): the job is
    #: "waiting" until they have all ended (docs/API.md, Dependencies).
    depends_on: List[int]
    #: "cancel" or "run": what the job does when a parent did not succeed.
    on_parent_failure: str
    #: The workflow the job is a step of and the step's ref, None otherwise.
    workflow: Optional[int]
    step: Optional[str]
    #: What the running attempt last reported ({percent, message, data, at}) or None.
    progress: Optional[Dict[str, Any]]
    cancel_requested: bool
    #: The group (a tenant, a customer) the job was enqueued with, or None
    #: (docs/API.md, Groups).
    group: Optional[str]
    #: Set on the job enqueue returns: an existing job was answered for its
    #: idempotency or unique key (replayed), or replaced by a debounce.
    replayed: bool = False
    debounced: bool = False

    STATUSES = ("waiting", "pending", "running", "succeeded", "dead", "cancelled")
    TERMINAL = frozenset({"succeeded", "dead", "cancelled"})

    @property
    def terminal(self) -> bool:
        """True when the job is succeeded, dead or cancelled."""
        return self.status in self.TERMINAL


class Parent(Record):
    """A parent of a claimed job as its handler sees it (ctx.parents;
    docs/API.md, POST /v1/claim): as it was when the job was claimed."""

    _FIELDS = frozenset({"id", "step", "type", "status", "result"})
    id: int
    step: Optional[str]
    type: str
    status: str
    result: Any


class Workflow(Record):
    """A workflow (docs/API.md, Workflows): status "running" until every
    step has ended, then "succeeded" or "failed"; counts by status; steps
    (a list of WorkflowStep) only from Workflows.get, [] in a listing."""

    _TIMES = frozenset({"created_at", "finished_at"})
    _FIELDS = frozenset({"id", "name", "status", "created_at", "finished_at", "counts"})
    id: int
    name: str
    status: str
    created_at: Optional[_dt.datetime]
    finished_at: Optional[_dt.datetime]
    counts: Dict[str, int]
    steps: List["WorkflowStep"]

    def __init__(self, data: Mapping[str, Any]) -> None:
        super().__init__(data)
        self.steps = [WorkflowStep(x) for x in data.get("steps") or []]


class WorkflowStep(Record):
    """A step of a workflow: its ref, its job's id, type and status, and its
    parents' refs."""

    _FIELDS = frozenset({"ref", "job_id", "type", "status", "depends_on"})
    ref: str
    job_id: int
    type: str
    status: str
    depends_on: List[str]


class Submitted(Record):
    """What Workflows.submit answers: the workflow's id and each step's job
    id by ref; replayed is True when an idempotency key found it submitted
    before."""

    _FIELDS = frozenset({"id", "jobs"})
    id: int
    jobs: Dict[str, int]
    replayed: bool

    def __init__(self, data: Mapping[str, Any], replayed: bool = False) -> None:
        super().__init__(data)
        self.replayed = replayed


class Schedule(Record):
    """A schedule (docs/API.md, Schedules)."""

    _TIMES = frozenset({"next_run_at", "last_fired_at", "created_at"})
    _FIELDS = frozenset({"name", "cron", "timezone", "type", "payload", "queue", "priority",
                         "max_attempts", "catchup", "paused", "next_run_at", "last_fired_at",
                         "created_at"})
    name: str
    cron: str
    timezone: str
    type: str
    payload: Any
    queue: str
    priority: int
    max_attempts: int
    catchup: str
    paused: bool
    next_run_at: Optional[_dt.datetime]
    last_fired_at: Optional[_dt.datetime]
    created_at: Optional[_dt.datetime]


class Queue(Record):
    """A queue with its counts and limits (docs/API.md, Queues)."""

    _FIELDS = frozenset({"name", "paused", "waiting", "pending", "running", "succeeded", "dead",
                         "cancelled", "oldest_pending_age_s", "max_running", "rate",
                         "group_max_running", "group_rate", "throughput_1m"})
    name: str
    paused: bool
    waiting: int  # jobs whose parents have not all ended
    pending: int
    running: int
    succeeded: int
    dead: int
    cancelled: int
    oldest_pending_age_s: Optional[float]
    max_running: Optional[int]
    rate: Optional[Dict[str, Any]]
    group_max_running: Optional[int]  # the same limits, counted per group of the queue
    group_rate: Optional[Dict[str, Any]]
    throughput_1m: Optional[Dict[str, int]]


class QueueGroup(Record):
    """A group of a queue with its pending and running jobs (Queues.groups);
    group is None for the queue's jobs without one."""

    _FIELDS = frozenset({"group", "pending", "running"})
    group: Optional[str]
    pending: int
    running: int


class Attempt(Record):
    """One attempt of a job (docs/API.md, GET /v1/jobs/{id}/attempts)."""

    _TIMES = frozenset({"started_at", "finished_at"})
    _FIELDS = frozenset({"attempt", "worker_id", "started_at", "finished_at", "outcome",
                         "error", "duration_s", "log_bytes"})
    attempt: int
    worker_id: Optional[str]
    started_at: Optional[_dt.datetime]
    finished_at: Optional[_dt.datetime]
    outcome: str
    error: Optional[str]
    duration_s: Optional[float]
    log_bytes: Optional[int]  # the size of its kept log (Client.attempt_log), None if none


class WorkerInfo(Record):
    """A worker as GET /v1/workers lists it (docs/API.md, Workers)."""

    _TIMES = frozenset({"started_at", "last_seen_at"})
    _FIELDS = frozenset({"id", "hostname", "pid", "version", "queues", "types", "concurrency",
                         "started_at", "last_seen_at", "state", "running"})
    id: str
    hostname: Optional[str]
    pid: Optional[int]
    version: Optional[str]
    queues: List[str]
    types: List[str]
    concurrency: Optional[int]
    started_at: Optional[_dt.datetime]
    last_seen_at: Optional[_dt.datetime]
    state: str
    running: List[int]
