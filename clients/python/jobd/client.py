"""Client: every route of the jobd HTTP API for applications (docs/API.md):
enqueue, read, wait for, cancel, retry and delete jobs, list them page by
page, and manage schedules and queues. Reads JOBD_SERVER and JOBD_TOKEN by
default, like the jobd command line."""
import concurrent.futures
import datetime as _dt
import os
import time
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import _routes as R
from . import errors
from ._http import Transport
from .workflows import Workflows
from .types import (Attempt, Duration, Job, Queue, QueueGroup, Schedule, Time, WorkerInfo,
                    format_duration, format_time, parse_time)

DEFAULT_SERVER = "http://127.0.0.1:8080"

# POST /v1/jobs/batch takes at most 10,000 jobs and 16 MiB (docs/API.md,
# Conventions); enqueue_many sends chunks well inside both, several at once.
_BATCH_JOBS = 1000
_BATCH_BYTES = 8 << 20
_BATCH_PARALLEL = 4

# GET /v1/jobs/{id}?wait= waits at most 60 s per request (docs/API.md).
_WAIT_MAX_S = 60.0


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()
"""Default of an optional argument that is left out of the request
(None, where the API allows it, means null)."""


Window = Union[Tuple[str, Duration], Mapping[str, Any]]
"""A debounce or unique window: (key, for) or {"key": K, "for": DUR}."""


def _window(w: Window) -> Dict[str, Any]:
    if isinstance(w, tuple):
        key, dur = w
    else:
        key, dur = w["key"], w["for"]
    return {"key": key, "for": format_duration(dur)}


def job_spec(type: str, payload: Any = None, *, queue: Optional[str] = None,
             priority: Optional[int] = None, run_at: Optional[Time] = None,
             in_: Optional[Duration] = None, max_attempts: Optional[int] = None,
             idempotency_key: Optional[str] = None, timeout: Optional[Duration] = None,
             traceparent: Optional[str] = None, depends_on: Optional[Sequence[int]] = None,
             on_parent_failure: Optional[str] = None, debounce: Optional[Window] = None,
             unique: Optional[Window] = None, group: Optional[str] = None,
             extra: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The JSON body of one job for POST /v1/jobs or an item of
    enqueue_many (docs/API.md, POST /v1/jobs): only the fields given.
    `extra` adds fields as they are (for fields newer than this client)."""
    body: Dict[str, Any] = {"type": type}
    if payload is not None:
        body["payload"] = payload
    if queue is not None:
        body["queue"] = queue
    if priority is not None:
        body["priority"] = priority
    if run_at is not None:
        body["run_at"] = format_time(run_at)
    if in_ is not None:
        body["in"] = format_duration(in_)
    if max_attempts is not None:
        body["max_attempts"] = max_attempts
    if idempotency_key is not None:
        body["idempotency_key"] = idempotency_key
    if timeout is not None:
        body["timeout"] = format_duration(timeout)
    if traceparent is not None:
        body["traceparent"] = traceparent
    if depends_on is not None:
        body["depends_on"] = list(depends_on)
    if on_parent_failure is not None:
        body["on_parent_failure"] = on_parent_failure
    if debounce is not None:
        body["debounce"] = _window(debounce)
    if unique is not None:
        body["unique"] = _window(unique)
    if group is not None:
        body["group"] = group
    body.update(extra or {})
    return body


def _spec_of(item: Union[Mapping[str, Any], Tuple[Any, ...]]) -> Dict[str, Any]:
    """An item of enqueue_many: a (type, payload) pair, or a mapping with
    job_spec's arguments (in_ or in, datetimes and timedeltas allowed)."""
    if isinstance(item, tuple):
        return job_spec(*item)
    m = dict(item)
    if "in" in m:
        m["in_"] = m.pop("in")
    known = {"type", "payload", "queue", "priority", "run_at", "in_", "max_attempts",
             "idempotency_key", "timeout", "traceparent", "depends_on", "on_parent_failure",
             "debounce", "unique", "group", "extra"}
    extra = {k: m.pop(k) for k in list(m) if k not in known}
    if extra:
        m["extra"] = {**extra, **(m.get("extra") or {})}
    if "type" not in m:
        raise ValueError("enqueue_many: an item without a type")
    return job_spec(**m)


class Client:
    """A client of one jobd server. Thread-safe: each thread uses a
    keep-alive connection of its own.

    server: the base URL (default $JOBD_SERVER, else http://127.0.0.1:8080);
    token: the bearer token (default $JOBD_TOKEN); timeout: seconds per
    request; retries: how often a request safe to repeat is sent again after
    a network error or a 503, with full-jitter backoff from `backoff` seconds.
    """

    def __init__(self, server: Optional[str] = None, token: Optional[str] = None, *,
                 timeout: float = 30.0, retries: int = 4, backoff: float = 0.1) -> None:
        server = server or os.environ.get("JOBD_SERVER") or DEFAULT_SERVER
        token = token if token is not None else os.environ.get("JOBD_TOKEN") or None
        self.transport = Transport(server, token, timeout, retries, backoff)
        self.schedules = Schedules(self.transport)
        self.queues = Queues(self.transport)
        self.workflows = Workflows(self.transport)
        self._wait_supported = True

    @property
    def server(self) -> str:
        return self.transport.server

    def close(self) -> None:
        """Closes the client's connections (it can still be used after)."""
        self.transport.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- jobs ----

    def enqueue(self, type: str, payload: Any = None, *, queue: Optional[str] = None,
                priority: Optional[int] = None, run_at: Optional[Time] = None,
                in_: Optional[Duration] = None, max_attempts: Optional[int] = None,
                idempotency_key: Optional[str] = None, timeout: Optional[Duration] = None,
                traceparent: Optional[str] = None, depends_on: Optional[Sequence[int]] = None,
                on_parent_failure: Optional[str] = None, debounce: Optional[Window] = None,
                unique: Optional[Window] = None, group: Optional[str] = None,
                extra: Optional[Mapping[str, Any]] = None) -> Job:
        """Enqueues one job (POST /v1/jobs) and returns it. With an
        idempotency_key the same call again returns the same job (and is
        retried after a network error or a 503); the key with another
        type, queue or payload raises Conflict (idempotency_conflict).
        traceparent: a W3C traceparent the job carries to its handlers and
        log lines (docs/API.md, Trace context); a bad one raises BadRequest
        naming it. depends_on: ids of jobs this one waits for (status
        "waiting" until they have all ended; an unknown id raises BadRequest
        naming depends_on); on_parent_failure: "cancel" (default) or "run",
        what it does when a parent did not succeed (docs/API.md, Dependencies).
        debounce=(key, for): a pending job of this type and queue with the
        key is replaced in place (new payload and priority, due `for` from
        now; the answer's job.debounced is True), else one is made due
        `for` from now; unique=(key, for): at most one job with the key per
        `for`, a second enqueue inside the window returns the first job
        (job.replayed is True). Neither goes with an idempotency_key
        (docs/API.md, Debounce and unique windows). group: whom the job is
        for (a tenant, a customer): due jobs of different groups are claimed
        in turn, and a queue's group limits count per group (docs/API.md, Groups)."""
        body = job_spec(type, payload, queue=queue, priority=priority, run_at=run_at, in_=in_,
                        max_attempts=max_attempts, idempotency_key=idempotency_key,
                        timeout=timeout, traceparent=traceparent, depends_on=depends_on,
                        on_parent_failure=on_parent_failure, debounce=debounce, unique=unique,
                        group=group, extra=extra)
        a = self.transport.request(R.JOB_CREATE, body=body,
                                   safe=body.get("idempotency_key") is not None)
        job = Job(a.body)
        job.replayed = a.headers.get("idempotent-replayed") == "true"
        job.debounced = a.headers.get("debounced") == "true"
        return job

    def enqueue_many(self, jobs: Sequence[Union[Mapping[str, Any], Tuple[Any, ...]]],
                     *, chunk: int = _BATCH_JOBS, parallel: int = _BATCH_PARALLEL) -> List[int]:
        """Enqueues many jobs through POST /v1/jobs/batch and returns their
        ids in order. Each item is a (type, payload) pair or a mapping of
        enqueue's arguments ({"type": ..., "payload": ..., "queue": ...}).
        Sent in chunks of `chunk` jobs (at most 10,000), up to `parallel` at
        once; each chunk is all or nothing, the list as a whole is not: when
        a chunk fails, others may be enqueued (use idempotency keys to send
        the whole list again safely)."""
        specs = [_spec_of(j) for j in jobs]
        chunks: List[List[Dict[str, Any]]] = []
        i = 0
        while i < len(specs):
            part: List[Dict[str, Any]] = []
            size = 0
            while i < len(specs) and len(part) < min(chunk, 10000) and size < _BATCH_BYTES:
                part.append(specs[i])
                size += len(repr(specs[i].get("payload")))
                i += 1
            chunks.append(part)

        def send(part: List[Dict[str, Any]]) -> List[int]:
            safe = all(s.get("idempotency_key") is not None for s in part)
            a = self.transport.request(R.JOB_BATCH, body={"jobs": part}, safe=safe)
            return [int(j["id"]) for j in a.body["jobs"]]
        if len(chunks) <= 1 or parallel <= 1:
            return [x for part in chunks for x in send(part)]
        # Several requests in flight: the server commits them together and
        # this process encodes one chunk while the others travel.
        with concurrent.futures.ThreadPoolExecutor(min(parallel, len(chunks))) as ex:
            return [x for ids in ex.map(send, chunks) for x in ids]

    def get(self, id: int) -> Job:
        """The job (GET /v1/jobs/{id}); NotFound if there is none."""
        return Job(self.transport.request(R.JOB_GET, params={"id": id}).body)

    def wait(self, id: int, timeout: float = 30.0) -> Job:
        """Waits up to `timeout` seconds for the job to be terminal
        (succeeded, dead or cancelled) and returns it; when the time is up,
        returns it as it is then (no error). Uses GET /v1/jobs/{id}?wait=
        where the server has it, else polls with backoff (50 ms up to 1 s)."""
        deadline = time.monotonic() + timeout
        pause = 0.05
        while True:
            left = deadline - time.monotonic()
            if self._wait_supported and left > 0.05:
                w = min(left, _WAIT_MAX_S)
                t0 = time.monotonic()
                try:
                    a = self.transport.request(R.JOB_GET, params={"id": id},
                                               query={"wait": f"{max(1, int(w * 1000))}ms"},
                                               timeout=w + self.transport.timeout)
                except errors.BadRequest as e:
                    if e.code != "invalid_query":
                        raise
                    self._wait_supported = False
                    continue
                job = Job(a.body)
                if job.terminal or time.monotonic() >= deadline - 0.01:
                    return job
                # An answer well before its wait, not terminal: the server
                # does not know ?wait= (it ignores the parameter); poll.
                if time.monotonic() - t0 < w / 2:
                    self._wait_supported = False
                continue
            job = self.get(id)
            left = deadline - time.monotonic()
            if job.terminal or left <= 0:
                return job
            time.sleep(min(pause, left))
            pause = min(1.0, pause * 1.6)

    def jobs(self, *, status: Optional[str] = None, queue: Optional[str] = None,
             type: Optional[str] = None, schedule: Optional[str] = None,
             created_after: Optional[Time] = None, created_before: Optional[Time] = None,
             key: Optional[str] = None, group: Optional[str] = None,
             page_size: int = 100) -> Iterator[Job]:
        """Every job the filters match, newest first, fetched page by page
        (GET /v1/jobs with its `next` cursor; page_size 1 to 1000)."""
        q: Dict[str, Any] = {"status": status, "queue": queue, "type": type,
                             "schedule": schedule, "key": key, "group": group,
                             "limit": page_size,
                             "created_after": format_time(created_after) if created_after else None,
                             "created_before": format_time(created_before) if created_before else None}
        while True:
            page = self.transport.request(R.JOB_LIST, query=q).body
            for j in page["jobs"]:
                yield Job(j)
            if page.get("next") is None:
                return
            q["after"] = page["next"]

    def cancel(self, id: int) -> Job:
        """Cancels the job (POST /v1/jobs/{id}/cancel): a pending one is
        cancelled at once; a running one is asked to stop (its worker learns
        it at its next heartbeat). Conflict (invalid_state) if it finished."""
        return Job(self.transport.request(R.JOB_CANCEL, params={"id": id}).body)

    def retry(self, id: int) -> Job:
        """Makes a dead or cancelled job pending again, due now, with fresh
        attempts (POST /v1/jobs/{id}/retry); Conflict otherwise."""
        return Job(self.transport.request(R.JOB_RETRY, params={"id": id}).body)

    def delete(self, id: int) -> None:
        """Deletes a job that is not running, with its history
        (DELETE /v1/jobs/{id}); Conflict (job_running) for a running one."""
        self.transport.request(R.JOB_DELETE, params={"id": id})

    def bulk(self, action: str, *, limit: Optional[int] = None, **filter: Any) -> Dict[str, int]:
        """Retries, cancels or deletes (`action`) every job a filter matches
        (POST /v1/jobs/bulk; filter keys as for jobs(), plus ids=[...]);
        returns {"matched", "changed", "skipped"}."""
        f = {k: (format_time(v) if isinstance(v, _dt.datetime) else v)
             for k, v in filter.items() if v is not None}
        body: Dict[str, Any] = {"action": action, "filter": f}
        if limit is not None:
            body["limit"] = limit
        res: Dict[str, int] = self.transport.request(R.JOB_BULK, body=body).body
        return res

    def attempts(self, id: int) -> List[Attempt]:
        """The job's attempts, oldest first (GET /v1/jobs/{id}/attempts)."""
        a = self.transport.request(R.JOB_ATTEMPTS, params={"id": id})
        return [Attempt(x) for x in a.body["attempts"]]

    def attempt_log(self, id: int, attempt: int) -> str:
        """An attempt's log, the kept end of an exec handler's stderr
        (GET /v1/jobs/{id}/attempts/{attempt}/log); NotFound names what is
        missing (id, attempt or log)."""
        a = self.transport.request(R.JOB_ATTEMPT_LOG, params={"id": id, "attempt": attempt})
        return a.body if isinstance(a.body, str) else ""

    # ---- the rest ----

    def stats(self, *, since: Optional[Duration] = None, step: Optional[Duration] = None,
              queue: Optional[str] = None) -> Dict[str, Any]:
        """What happened to jobs over time (GET /v1/stats):
        {"step_s": S, "series": [{"t", "enqueued", "succeeded", "failed", "dead"}]}."""
        q = {"since": format_duration(since) if since is not None else None,
             "step": format_duration(step) if step is not None else None, "queue": queue}
        res: Dict[str, Any] = self.transport.request(R.STATS, query=q).body
        return res

    def workers(self) -> List[WorkerInfo]:
        """Every worker that announced itself (GET /v1/workers)."""
        return [WorkerInfo(w) for w in self.transport.request(R.WORKER_LIST).body["workers"]]

    def whoami(self) -> Dict[str, Any]:
        """{"role", "tokens", "token_sent"} for this client's token
        (GET /v1/whoami)."""
        res: Dict[str, Any] = self.transport.request(R.WHOAMI).body
        return res

    def cancels(self, ids: List[int], wait: float = 0.0) -> List[int]:
        """Which of the running jobs `ids` have a cancel requested
        (GET /v1/cancels, docs/API.md, Hearing of a cancel). With `wait`
        (seconds, at most 60) and none requested yet, the server holds the
        request until a cancel may have come or the time is up; an empty
        answer then only means "ask again"."""
        query = {"jobs": ",".join(str(int(i)) for i in ids)}
        if wait > 0:
            query["wait"] = f"{max(1, int(wait * 1000))}ms"
        a = self.transport.request(R.CANCELS, query=query, timeout=wait + self.transport.timeout)
        return [int(i) for i in a.body.get("jobs", [])]

    def healthy(self) -> bool:
        """True when the server answers GET /healthz with 200 (its store
        answers); False on 503 or when it cannot be reached."""
        try:
            self.transport.request(R.HEALTHZ, retries=0)
            return True
        except errors.Unavailable:
            return False


class Schedules:
    """Cron schedules (docs/API.md, Schedules): client.schedules.*"""

    def __init__(self, t: Transport) -> None:
        self._t = t

    @staticmethod
    def _body(cron: str, type: str, payload: Any, timezone: Optional[str],
              queue: Optional[str], priority: Optional[int], max_attempts: Optional[int],
              catchup: Optional[str]) -> Dict[str, Any]:
        b: Dict[str, Any] = {"cron": cron, "type": type}
        for k, v in (("payload", payload), ("timezone", timezone), ("queue", queue),
                     ("priority", priority), ("max_attempts", max_attempts),
                     ("catchup", catchup)):
            if v is not None:
                b[k] = v
        return b

    def put(self, name: str, cron: str, type: str, payload: Any = None, *,
            timezone: Optional[str] = None, queue: Optional[str] = None,
            priority: Optional[int] = None, max_attempts: Optional[int] = None,
            catchup: Optional[str] = None) -> Schedule:
        """Creates or replaces the schedule `name` (PUT /v1/schedules/{name}):
        applying the same definition again neither skips nor repeats a firing."""
        b = self._body(cron, type, payload, timezone, queue, priority, max_attempts, catchup)
        return Schedule(self._t.request(R.SCHEDULE_PUT, params={"name": name}, body=b,
                                        safe=True).body)

    def create(self, name: str, cron: str, type: str, payload: Any = None, *,
               timezone: Optional[str] = None, queue: Optional[str] = None,
               priority: Optional[int] = None, max_attempts: Optional[int] = None,
               catchup: Optional[str] = None) -> Schedule:
        """Creates the schedule (POST /v1/schedules); Conflict if the name exists."""
        b = self._body(cron, type, payload, timezone, queue, priority, max_attempts, catchup)
        b["name"] = name
        return Schedule(self._t.request(R.SCHEDULE_CREATE, body=b).body)

    def get(self, name: str) -> Schedule:
        return Schedule(self._t.request(R.SCHEDULE_GET, params={"name": name}).body)

    def list(self) -> List[Schedule]:
        return [Schedule(s) for s in self._t.request(R.SCHEDULE_LIST).body["schedules"]]

    def delete(self, name: str) -> None:
        """Deletes the schedule; the jobs it made stay."""
        self._t.request(R.SCHEDULE_DELETE, params={"name": name})

    def pause(self, name: str) -> Schedule:
        return Schedule(self._t.request(R.SCHEDULE_PAUSE, params={"name": name},
                                        safe=True).body)

    def resume(self, name: str) -> Schedule:
        return Schedule(self._t.request(R.SCHEDULE_RESUME, params={"name": name},
                                        safe=True).body)

    def trigger(self, name: str) -> Job:
        """Makes a job of the schedule now (POST /v1/schedules/{name}/trigger)."""
        return Job(self._t.request(R.SCHEDULE_TRIGGER, params={"name": name}).body)

    def next(self, name: str, count: int = 5) -> List[_dt.datetime]:
        """The schedule's next `count` firings (GET /v1/schedules/{name}/next)."""
        a = self._t.request(R.SCHEDULE_NEXT, params={"name": name}, query={"count": count})
        return [t for t in (parse_time(x) for x in a.body["next"]) if t is not None]


class Queues:
    """Queues (docs/API.md, Queues): client.queues.*"""

    def __init__(self, t: Transport) -> None:
        self._t = t

    def list(self) -> List[Queue]:
        return [Queue(q) for q in self._t.request(R.QUEUE_LIST).body["queues"]]

    def get(self, name: str) -> Optional[Queue]:
        """The queue from list(), or None when it has no jobs, pause or limits."""
        return next((q for q in self.list() if q.name == name), None)

    def pause(self, name: str) -> Queue:
        return Queue(self._t.request(R.QUEUE_PAUSE, params={"name": name}, safe=True).body)

    def resume(self, name: str) -> Queue:
        return Queue(self._t.request(R.QUEUE_RESUME, params={"name": name}, safe=True).body)

    def put(self, name: str, *, max_running: Any = UNSET, rate: Any = UNSET,
            group_max_running: Any = UNSET, group_rate: Any = UNSET) -> Queue:
        """Sets the queue's limits (PUT /v1/queues/{name}, role admin):
        max_running=N, rate=(limit, per) or {"limit": N, "per": "1s"}, and
        the same counted per group of the queue (group_max_running,
        group_rate); None removes a limit, leaving an argument out keeps it."""
        b: Dict[str, Any] = {}
        for k, v in (("max_running", max_running), ("rate", rate),
                     ("group_max_running", group_max_running), ("group_rate", group_rate)):
            if v is UNSET:
                continue
            if isinstance(v, tuple):
                v = {"limit": v[0], "per": format_duration(v[1])}
            b[k] = v
        return Queue(self._t.request(R.QUEUE_LIMITS, params={"name": name}, body=b,
                                     safe=True).body)

    def groups(self, name: str, *, limit: Optional[int] = None) -> List[QueueGroup]:
        """The queue's groups with pending or running jobs, busiest first
        (GET /v1/queues/{name}/groups; limit 1 to 1,000, default 100)."""
        a = self._t.request(R.QUEUE_GROUPS, params={"name": name}, query={"limit": limit})
        return [QueueGroup(g) for g in a.body["groups"]]

