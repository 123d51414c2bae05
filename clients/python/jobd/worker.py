"""Worker: runs handlers on threads for the jobs a jobd server hands out
(docs/API.md, Remote workers; docs/WORKER.md). One thread claims with a long
poll, `concurrency` threads run handlers, one heartbeats every running job
at a third of its lease and enforces timeouts, one keeps the worker's
presence (docs/API.md, Workers). SIGTERM or SIGINT (under run()) stops
claiming, hands back the jobs claimed but not started, lets the running ones
finish for up to shutdown_grace, stops the rest and exits."""
import collections
import functools
import json
import logging
import signal
import threading
import time
from types import FrameType
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence, Tuple, TypeVar

from . import _lease
from . import errors
from .client import Client
from .context import Context
from .errors import Permanent

log = logging.getLogger("jobd")

Handler = Callable[[Any, Context], Any]
F = TypeVar("F", bound=Handler)

_count_lock = threading.Lock()
_count = 0


def _next_worker_number() -> int:
    global _count
    with _count_lock:
        _count += 1
        return _count


class _Run:
    """One claimed attempt, from its claim until it is reported (or found
    lost) and its handler has returned."""

    def __init__(self, c: _lease.Claimed, fn: Handler, ctx: Context, hb_at: float) -> None:
        self.c = c
        self.fn = fn
        self.ctx = ctx
        self.state = "queued"  # queued -> running; or released
        self.reported = False  # a report was sent (or will never be)
        self.returned = False  # the handler returned (or never started)
        self.hb_at = hb_at
        self.timeout_at: Optional[float] = None
        self.force_at: Optional[float] = None


class Worker:
    """A worker for the job types registered with @worker.handler(TYPE).

    client: the Client to use (default Client(server, token)); queues: the
    queues to claim from (default every queue); concurrency: handlers run at
    once; lease: seconds of lease per claim (heartbeat every lease/3 unless
    given); shutdown_grace: seconds running jobs may finish after a stop;
    stop_grace: seconds a handler told to stop (timeout, cancel, shutdown)
    has before the worker reports for it; prefetch: jobs claimed ahead of
    free threads (held under lease, handed back when the worker stops);
    claim_wait: the long poll of a claim, seconds (at most 30); id: the
    worker id (default HOST:PID).
    """

    def __init__(self, client: Optional[Client] = None, *, server: Optional[str] = None,
                 token: Optional[str] = None, queues: Optional[Sequence[str]] = None,
                 concurrency: int = 8, lease: float = 60.0, heartbeat: Optional[float] = None,
                 shutdown_grace: float = 30.0, stop_grace: float = 5.0, prefetch: int = 0,
                 claim_wait: float = 10.0, id: Optional[str] = None) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if prefetch < 0:
            raise ValueError("prefetch must not be negative")
        self.heartbeat = heartbeat if heartbeat is not None else lease / 3
        if not 0 < self.heartbeat < lease:
            raise ValueError("heartbeat must be shorter than the lease")
        self.client = client or Client(server, token)
        self.queues = list(queues or [])
        self.concurrency = concurrency
        self.lease = lease
        self.shutdown_grace = shutdown_grace
        self.stop_grace = stop_grace
        self.prefetch = prefetch
        self.claim_wait = max(0.0, min(30.0, claim_wait))
        self.id = id or _lease.default_worker_id(_next_worker_number())
        self._handlers: Dict[str, Tuple[Handler, Optional[float]]] = {}
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)  # runs changed: claim loop, ticker, drain
        self._work = threading.Condition(self._lock)  # a run to start: handler threads
        self._runs: Dict[Tuple[int, int], _Run] = {}
        self._queue: Deque[_Run] = collections.deque()
        self._stopping = threading.Event()
        self._finished = threading.Event()
        self._threads: List[threading.Thread] = []
        self._pool_exit = False
        self._ticker_exit = False
        self._presence_wake = threading.Event()
        self._presence_exit = False
        self._grace: Optional[float] = None
        self._claim_conn = self.client.transport.new_conn()
        self._fatal: Optional[BaseException] = None
        self._signalled: Optional[int] = None
        self._started = False

    # ---- registration ----

    def handler(self, type: str, *, timeout: Optional[float] = None) -> Callable[[F], F]:
        """Registers the decorated function `f(job, ctx)` for jobs of
        `type`; its return value (JSON) becomes the job's result, raising
        jobd.Permanent fails the job at once, any other exception fails the
        attempt (retried while attempts remain). `timeout` (seconds) applies
        to jobs that have no timeout of their own."""
        def deco(fn: F) -> F:
            self.register(type, fn, timeout=timeout)
            return fn
        return deco

    def register(self, type: str, fn: Handler, *, timeout: Optional[float] = None) -> None:
        if self._started:
            raise RuntimeError("handlers must be registered before the worker starts")
        self._handlers[type] = (fn, timeout)

    # ---- life cycle ----

    def start(self) -> None:
        """Starts the worker's threads and returns; stop() and join() end it."""
        if not self._handlers:
            raise ValueError("no handler registered: nothing to claim")
        if self._started:
            raise RuntimeError("a worker starts once")
        self._started = True
        targets: List[Tuple[str, Callable[[], None]]] = [
            ("claim", self._loop), ("ticker", self._ticker), ("presence", self._presence)]
        targets += [(f"handler-{i}", self._serve) for i in range(self.concurrency)]
        for name, fn in targets:
            t = threading.Thread(target=fn, name=f"jobd-{name}", daemon=True)
            self._threads.append(t)
            t.start()

    def run(self) -> None:
        """Runs until stop(), SIGTERM or SIGINT (a second one stops at once,
        without the grace); raises the error that ended it, if any (a bad
        token, a refused claim)."""
        self.start()
        old: Dict[signal.Signals, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for s in (signal.SIGTERM, signal.SIGINT):
                old[s] = signal.signal(s, self._on_signal)
        try:
            n = 0
            while not self._finished.wait(0.1):
                if self._signalled is not None:
                    self._signalled = None
                    n += 1
                    log.info("worker %s: stopping (signal)%s", self.id,
                             "" if n == 1 else ", without grace")
                    self.stop(grace=None if n == 1 else 0.0)
        finally:
            for s, h in old.items():
                signal.signal(s, h)
        if self._fatal is not None:
            raise self._fatal

    def _on_signal(self, signum: int, frame: Optional[FrameType]) -> None:
        self._signalled = signum  # acted on by run(): no locks in a signal handler

    def stop(self, grace: Optional[float] = None) -> None:
        """Stops claiming and drains (see the class); returns at once, join()
        waits. grace overrides shutdown_grace."""
        with self._cond:
            if grace is not None:
                self._grace = grace
            self._stopping.set()
            self._cond.notify_all()
        self._claim_conn.abort()
        self._presence_wake.set()

    def join(self, timeout: Optional[float] = None) -> bool:
        """Waits for the worker to finish; True when it has."""
        return self._finished.wait(timeout)

    @property
    def running(self) -> List[int]:
        """The ids of the jobs this worker holds now."""
        with self._lock:
            return [k[0] for k in self._runs]

    # ---- the claim loop ----

    def _loop(self) -> None:
        pause = 0.1
        try:
            while not self._stopping.is_set():
                with self._cond:
                    while (len(self._runs) >= self.concurrency + self.prefetch
                           and not self._stopping.is_set()):
                        self._cond.wait(1.0)
                    free = self.concurrency + self.prefetch - len(self._runs)
                if self._stopping.is_set():
                    break
                try:
                    got = _lease.claim(self.client.transport, self._claim_conn, self.id,
                                       list(self._handlers), self.queues, free, self.lease,
                                       self.claim_wait)
                except errors.Unavailable as e:
                    if self._stopping.is_set():
                        break
                    log.warning("worker %s: claim failed, trying again: %s", self.id, e)
                    self._stopping.wait(pause)
                    pause = min(5.0, pause * 2)
                    continue
                pause = 0.1
                self._take(got)
        except errors.JobdError as e:
            log.error("worker %s: stopping: %s", self.id, e)
            self._fatal = e
        except BaseException as e:  # a bug: never leave the worker half-alive
            log.exception("worker %s: the claim loop failed", self.id)
            self._fatal = e
        finally:
            try:
                self._drain()
            finally:
                self._finished.set()

    def _take(self, got: List[_lease.Claimed]) -> None:
        back: List[_lease.Claimed] = []
        now = time.monotonic()
        with self._cond:
            for c in got:
                if self._stopping.is_set():
                    back.append(c)
                    continue
                fn, default_timeout = self._handlers[c.job.type]
                timeout = c.job.timeout_s if c.job.timeout_s is not None else default_timeout
                ctx = Context(c.job, self.id, timeout, c.parents)
                run = _Run(c, fn, ctx, now + self.heartbeat)
                ctx._progress_fn = functools.partial(self._progress, run)
                self._runs[(c.id, c.attempt)] = run
                self._queue.append(run)
                self._work.notify()
            self._cond.notify_all()
        for c in back:
            self._release(c)

    def _release(self, c: _lease.Claimed) -> None:
        _lease.report(self.client.transport, "release", c, {}, time.monotonic() + 5.0)

    # ---- handler threads ----

    def _serve(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._pool_exit:
                    self._work.wait()
                if not self._queue:
                    return
                run = self._queue.popleft()
                if run.state != "queued":
                    continue
                run.state = "running"
                run.ctx._start()
                if run.ctx.timeout_s is not None:
                    run.timeout_at = time.monotonic() + run.ctx.timeout_s
                self._cond.notify_all()
            self._execute(run)

    def _execute(self, run: _Run) -> None:
        kind, extra = "complete", {}  # type: Tuple[str, Dict[str, Any]]
        try:
            value = run.fn(run.ctx.job, run.ctx)
            try:
                json.dumps(value, allow_nan=False)
                extra = {"result": value}
            except (TypeError, ValueError) as e:
                kind, extra = "fail", {"error": f"the handler's result is not JSON: {e}",
                                       "retryable": False}
        except Permanent as e:
            kind, extra = "fail", {"error": _lease.error_text(e), "retryable": False}
        except Exception as e:
            kind, extra = "fail", {"error": _lease.error_text(e), "retryable": True}
        with self._cond:
            run.returned = True
            reason = run.ctx.cancel_reason
            if run.reported:
                self._forget(run)
                return
            run.reported = True
        if reason == "shutdown" and kind == "fail":
            extra["retry_in_s"] = 0
        elif reason in ("timeout", "cancelled"):
            kind, extra = "fail", self._stopped_report(run, reason)
        if reason != "lost":
            self._report(run, kind, extra)
        with self._cond:
            self._forget(run)

    def _stopped_report(self, run: _Run, reason: str) -> Dict[str, Any]:
        if reason == "timeout":
            return {"error": f"timeout: the job ran past its timeout of {run.ctx.timeout_s:g}s",
                    "retryable": True}
        if reason == "cancelled":
            return {"error": "cancelled while running", "retryable": True}
        return {"error": "stopped: the worker shut down before the job finished",
                "retryable": True, "retry_in_s": 0}

    def _report(self, run: _Run, kind: str, extra: Dict[str, Any]) -> None:
        give_up = max(run.c.lease_end, time.monotonic() + 10.0)
        if self._stopping.is_set():
            give_up = min(give_up, time.monotonic() + 5.0)
        _lease.report(self.client.transport, kind, run.c, extra, give_up)

    def _forget(self, run: _Run) -> None:
        """Drops a run that is reported and whose handler returned (lock held)."""
        if run.reported and (run.returned or run.state != "running"):
            self._runs.pop((run.c.id, run.c.attempt), None)
            self._cond.notify_all()

    # ---- heartbeats, timeouts, stopped runs ----

    def _ticker(self) -> None:
        while True:
            now = time.monotonic()
            beats: List[_Run] = []
            forced: List[_Run] = []
            wake = now + 0.5
            with self._cond:
                if self._ticker_exit:
                    return
                for run in list(self._runs.values()):
                    if run.reported:
                        continue
                    if (run.timeout_at is not None and now >= run.timeout_at
                            and run.ctx._stop("timeout")):
                        run.force_at = now + self.stop_grace
                    if run.force_at is not None and now >= run.force_at:
                        run.reported = True
                        forced.append(run)
                        continue
                    if now >= run.hb_at:
                        beats.append(run)
                    for t in (run.hb_at, run.timeout_at, run.force_at):
                        if t is not None and t > now:
                            wake = min(wake, t)
            for run in forced:
                log.warning("job %d attempt %d: the handler did not stop within %gs (%s)",
                            run.c.id, run.c.attempt, self.stop_grace, run.ctx.cancel_reason)
                reason = run.ctx.cancel_reason or "shutdown"
                if reason != "lost":
                    self._report(run, "fail", self._stopped_report(run, reason))
                with self._cond:
                    self._forget(run)
            for run in beats:
                self._beat(run)
            with self._cond:
                if not beats and not forced and not self._ticker_exit:
                    self._cond.wait(max(0.0, wake - time.monotonic()))

    def _beat(self, run: _Run) -> None:
        now = time.monotonic()
        try:
            cancel = _lease.heartbeat(self.client.transport, run.c, self.lease,
                                      timeout=max(1.0, self.heartbeat))
        except (errors.StaleAttempt, errors.NotFound) as e:
            with self._cond:
                if run.reported:  # its report landed meanwhile
                    return
            log.warning("job %d attempt %d: lease lost (%s)", run.c.id, run.c.attempt, e.code)
            self._lost(run)
            return
        except errors.Unavailable as e:
            with self._cond:
                run.hb_at = time.monotonic() + min(1.0, self.heartbeat / 2)
            if time.monotonic() >= run.c.lease_end:
                log.warning("job %d attempt %d: lease ran out without a heartbeat: %s",
                            run.c.id, run.c.attempt, e)
                self._lost(run)
            return
        except errors.JobdError as e:
            log.error("job %d attempt %d: heartbeat refused: %s", run.c.id, run.c.attempt, e)
            self._lost(run)
            return
        release = False
        with self._cond:
            run.hb_at = now + self.heartbeat
            if cancel and run.ctx._stop("cancelled"):
                run.force_at = time.monotonic() + self.stop_grace
                if run.state == "queued":
                    run.state, run.reported, release = "released", True, True
                    self._forget(run)
        if release:
            self._release(run.c)

    def _progress(self, run: _Run, body: Dict[str, Any]) -> bool:
        """A progress report from run's handler (Context.progress): a
        heartbeat too, so a cancel in its answer stops the run as one would."""
        cancel = _lease.progress(self.client.transport, run.c, body,
                                 timeout=max(1.0, self.heartbeat))
        if cancel:
            with self._cond:
                if run.ctx._stop("cancelled"):
                    run.force_at = time.monotonic() + self.stop_grace
                self._cond.notify_all()
        return cancel

    def _lost(self, run: _Run) -> None:
        with self._cond:
            run.ctx._stop("lost")
            run.reported = True
            if run.state == "queued":
                run.state = "released"
            self._forget(run)

    # ---- presence ----

    def _presence(self) -> None:
        interval = max(1.0, min(20.0, self.heartbeat))
        announced = False
        while not self._presence_exit:
            try:
                if not announced:
                    _lease.announce(self.client.transport, self.id, self.queues,
                                    list(self._handlers), self.concurrency, interval)
                    announced = True
                    if self._stopping.is_set():
                        _lease.presence(self.client.transport, self.id, True)
                else:
                    _lease.presence(self.client.transport, self.id, self._stopping.is_set())
            except errors.NotFound:
                announced = False
                continue
            except errors.JobdError as e:
                log.debug("worker %s: presence: %s", self.id, e)
            self._presence_wake.wait(interval)
            self._presence_wake.clear()

    # ---- shutdown ----

    def _drain(self) -> None:
        grace = self.shutdown_grace if self._grace is None else self._grace
        self._stopping.set()
        self._presence_wake.set()
        back: List[_lease.Claimed] = []
        with self._cond:
            for run in list(self._runs.values()):
                if run.state == "queued" and not run.reported:
                    run.state, run.reported = "released", True
                    back.append(run.c)
                    self._forget(run)
            self._cond.notify_all()
        for c in back:
            self._release(c)
        end = time.monotonic() + grace
        with self._cond:
            while self._runs and time.monotonic() < end and self._grace != 0:
                self._cond.wait(min(0.2, max(0.0, end - time.monotonic())))
                if self._grace is not None:
                    end = min(end, time.monotonic() + self._grace)
            now = time.monotonic()
            for run in self._runs.values():
                if not run.reported and run.ctx._stop("shutdown"):
                    run.force_at = now + (min(self.stop_grace, 2.0) if self._grace != 0 else 0)
            self._cond.notify_all()
            end = time.monotonic() + self.stop_grace + 10.0
            while any(not r.reported for r in self._runs.values()) and time.monotonic() < end:
                self._cond.wait(0.2)
            self._pool_exit = True
            self._ticker_exit = True
            self._presence_exit = True
            self._cond.notify_all()
            self._work.notify_all()
        self._presence_wake.set()
        for t in self._threads:
            if t.name in ("jobd-ticker", "jobd-presence"):
                t.join(timeout=15.0)
        _lease.withdraw(self.client.transport, self.id)
        self._claim_conn.close()
