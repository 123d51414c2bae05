"""AsyncWorker: the Worker of jobd/worker.py for asyncio handlers
(`async def f(job, ctx)`). Handlers run as tasks on the event loop; a
timeout, a cancel, a lost lease or the end of the shutdown grace cancels the
handler's task (it sees CancelledError at its next await, and ctx.cancelled
with ctx.cancel_reason). The HTTP requests (claims, heartbeats, reports,
presence) run on a small thread pool, so the event loop never blocks."""
import asyncio
import concurrent.futures
import functools
import json
import logging
import signal
import time
from typing import (Any, Awaitable, Callable, Coroutine, Dict, Optional, Sequence, Set, Tuple,
                    TypeVar)

from . import _lease
from . import errors
from .client import Client
from .context import Context, progress_body
from .errors import Permanent
from .types import Job, Parent
from .worker import _next_worker_number

log = logging.getLogger("jobd")

AsyncHandler = Callable[[Any, "AsyncContext"], Coroutine[Any, Any, Any]]
F = TypeVar("F", bound=AsyncHandler)
T = TypeVar("T")


async def _wait_event(ev: asyncio.Event, timeout: Optional[float]) -> bool:
    """Waits up to `timeout` for `ev`; True when it is set. (Not
    asyncio.wait_for, which can swallow a cancel that meets the event.)"""
    if ev.is_set():
        return True
    waiter = asyncio.ensure_future(ev.wait())
    try:
        done, _ = await asyncio.wait({waiter}, timeout=timeout)
    finally:
        waiter.cancel()
    return bool(done)


class AsyncContext(Context):
    """Context for asyncio handlers: `await ctx.sleep(s)` returns early
    (True) when the run should stop; `await ctx.progress(...)` reports
    progress without blocking the loop."""

    def __init__(self, job: Job, worker_id: str, timeout_s: Optional[float],
                 parents: Optional[Sequence[Parent]] = None) -> None:
        super().__init__(job, worker_id, timeout_s, parents)
        self._aevent = asyncio.Event()
        self._aprogress_fn: Optional[Callable[[Dict[str, Any]], Awaitable[bool]]] = None

    async def progress(self, percent: Optional[float] = None,  # type: ignore[override]
                       message: Optional[str] = None, data: Any = None) -> bool:
        """Context.progress for asyncio: the request runs off the loop.
        True when the server took it, False (never an error) when not."""
        body = progress_body(percent, message, data)
        if self._aprogress_fn is None:
            raise RuntimeError("progress: this context belongs to no worker")
        try:
            await self._aprogress_fn(body)
            return True
        except (errors.StaleAttempt, errors.NotFound) as e:
            log.warning("job %d attempt %d: progress not taken (%s)",
                        self.job.id, self.attempt, e.code)
        except errors.JobdError as e:
            log.warning("job %d attempt %d: progress not sent: %s", self.job.id, self.attempt, e)
        return False

    def _stop(self, reason: str) -> bool:
        if not super()._stop(reason):
            return False
        self._aevent.set()
        return True

    async def sleep(self, seconds: Optional[float] = None) -> bool:
        """Sleeps up to `seconds`; True (early) when the run should stop."""
        return await _wait_event(self._aevent, seconds)


class AsyncWorker:
    """An asyncio worker; the arguments are Worker's (without prefetch).
    run() blocks (asyncio.run) and drains on SIGTERM/SIGINT; inside a
    running loop, `await worker.serve()` and worker.stop()."""

    def __init__(self, client: Optional[Client] = None, *, server: Optional[str] = None,
                 token: Optional[str] = None, queues: Optional[Sequence[str]] = None,
                 concurrency: int = 8, lease: float = 60.0, heartbeat: Optional[float] = None,
                 shutdown_grace: float = 30.0, stop_grace: float = 5.0,
                 claim_wait: float = 10.0, id: Optional[str] = None) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.heartbeat = heartbeat if heartbeat is not None else lease / 3
        if not 0 < self.heartbeat < lease:
            raise ValueError("heartbeat must be shorter than the lease")
        self.client = client or Client(server, token)
        self.queues = list(queues or [])
        self.concurrency = concurrency
        self.lease = lease
        self.shutdown_grace = shutdown_grace
        self.stop_grace = stop_grace
        self.claim_wait = max(0.0, min(30.0, claim_wait))
        self.id = id or _lease.default_worker_id(_next_worker_number())
        self._handlers: Dict[str, Tuple[AsyncHandler, Optional[float]]] = {}
        self._active: Dict[Tuple[int, int], Tuple["asyncio.Task[Any]", AsyncContext]] = {}
        self._runs: Set["asyncio.Task[None]"] = set()
        self._claim_conn = self.client.transport.new_conn()
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=concurrency + 4, thread_name_prefix="jobd-io")
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._stopping: Optional[asyncio.Event] = None
        self._changed: Optional[asyncio.Event] = None
        self._grace: Optional[float] = None
        self._presence_kick: Optional[asyncio.Event] = None
        self._presence_exit = False
        self._stop_requested = False

    def handler(self, type: str, *, timeout: Optional[float] = None) -> Callable[[F], F]:
        """Registers `async def f(job, ctx)` for jobs of `type` (see
        Worker.handler)."""
        def deco(fn: F) -> F:
            self.register(type, fn, timeout=timeout)
            return fn
        return deco

    def register(self, type: str, fn: AsyncHandler, *, timeout: Optional[float] = None) -> None:
        if not asyncio.iscoroutinefunction(fn):
            raise TypeError(f"handler for {type!r}: AsyncWorker takes `async def` handlers "
                            "(use jobd.Worker for plain functions)")
        self._handlers[type] = (fn, timeout)

    def run(self) -> None:
        """Runs until SIGTERM or SIGINT (a second one stops without grace)."""
        asyncio.run(self._main_with_signals())

    async def _main_with_signals(self) -> None:
        loop = asyncio.get_running_loop()
        hits = [0]

        def on_signal() -> None:
            hits[0] += 1
            self.stop(grace=None if hits[0] == 1 else 0.0)
        for s in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(s, on_signal)
        try:
            await self.serve()
        finally:
            for s in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(s)

    def stop(self, grace: Optional[float] = None) -> None:
        """Stops claiming and drains; safe from any thread."""
        if grace is not None:
            self._grace = grace
        self._stop_requested = True
        self._claim_conn.abort()
        loop, ev, ch = self._loop, self._stopping, self._changed
        if loop is not None and ev is not None and ch is not None:
            try:
                loop.call_soon_threadsafe(ev.set)
                loop.call_soon_threadsafe(ch.set)
            except RuntimeError:  # the loop is closed: the worker has finished
                pass

    async def _io(self, fn: Callable[..., T], *args: Any, **kw: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(fn, *args, **kw))

    async def serve(self) -> None:
        """Claims and runs jobs until stop(), then drains."""
        if not self._handlers:
            raise ValueError("no handler registered: nothing to claim")
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        self._changed = asyncio.Event()
        kick = self._presence_kick = asyncio.Event()
        self._presence_exit = False
        presence = asyncio.create_task(self._presence())
        try:
            await self._claims()
        finally:
            kick.set()  # says it drains
            await self._drain()
            self._presence_exit = True
            kick.set()
            await asyncio.wait({presence}, timeout=15.0)
            await self._io(_lease.withdraw, self.client.transport, self.id)
            self._claim_conn.close()
            self._pool.shutdown(wait=False)

    async def _claims(self) -> None:
        assert self._stopping is not None and self._changed is not None
        pause = 0.1
        while not self._stopping.is_set() and not self._stop_requested:
            while len(self._active) >= self.concurrency and not self._stopping.is_set():
                self._changed.clear()
                await self._changed.wait()
            if self._stopping.is_set():
                return
            free = self.concurrency - len(self._active)
            try:
                got = await self._io(_lease.claim, self.client.transport, self._claim_conn,
                                     self.id, list(self._handlers), self.queues, free,
                                     self.lease, self.claim_wait)
            except errors.Unavailable as e:
                if self._stopping.is_set() or self._stop_requested:
                    return
                log.warning("worker %s: claim failed, trying again: %s", self.id, e)
                await _wait_event(self._stopping, pause)
                pause = min(5.0, pause * 2)
                continue
            pause = 0.1
            for c in got:
                if self._stopping.is_set():
                    await self._io(_lease.report, self.client.transport, "release", c, {},
                                   time.monotonic() + 5.0)
                    continue
                fn, default_timeout = self._handlers[c.job.type]
                timeout = c.job.timeout_s if c.job.timeout_s is not None else default_timeout
                ctx = AsyncContext(c.job, self.id, timeout, c.parents)
                ctx._start()
                task = asyncio.create_task(fn(c.job, ctx))
                ctx._aprogress_fn = functools.partial(self._progress, c, task, ctx)
                self._active[(c.id, c.attempt)] = (task, ctx)
                r = asyncio.create_task(self._run_one(c, task, ctx))
                self._runs.add(r)
                r.add_done_callback(self._runs.discard)

    async def _run_one(self, c: _lease.Claimed, task: "asyncio.Task[Any]",
                       ctx: AsyncContext) -> None:
        beats = asyncio.create_task(self._heartbeats(c, task, ctx))
        try:
            done, _ = await asyncio.wait({task}, timeout=ctx.timeout_s)
            if not done and ctx._stop("timeout"):
                task.cancel()
            if not task.done():
                await asyncio.wait({task}, timeout=self.stop_grace)
        finally:
            beats.cancel()
            await asyncio.gather(beats, return_exceptions=True)
        kind, extra = self._outcome(task, ctx)
        if kind:
            give_up = max(c.lease_end, time.monotonic() + 10.0)
            await self._io(_lease.report, self.client.transport, kind, c, extra, give_up)
        self._active.pop((c.id, c.attempt), None)
        assert self._changed is not None
        self._changed.set()

    def _outcome(self, task: "asyncio.Task[Any]", ctx: AsyncContext) -> Tuple[str, Dict[str, Any]]:
        reason = ctx.cancel_reason
        if reason == "lost":
            return "", {}
        if reason == "timeout":
            return "fail", {"error": f"timeout: the job ran past its timeout of "
                                     f"{ctx.timeout_s:g}s", "retryable": True}
        if reason == "cancelled":
            return "fail", {"error": "cancelled while running", "retryable": True}
        if not task.done() or task.cancelled():
            return "fail", {"error": "stopped: the worker shut down before the job finished",
                            "retryable": True, "retry_in_s": 0}
        e = task.exception()
        if isinstance(e, Permanent):
            return "fail", {"error": _lease.error_text(e), "retryable": False}
        if e is not None:
            extra: Dict[str, Any] = {"error": _lease.error_text(e), "retryable": True}
            if reason == "shutdown":
                extra["retry_in_s"] = 0
            return "fail", extra
        value = task.result()
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as err:
            return "fail", {"error": f"the handler's result is not JSON: {err}",
                            "retryable": False}
        return "complete", {"result": value}

    async def _heartbeats(self, c: _lease.Claimed, task: "asyncio.Task[Any]",
                          ctx: AsyncContext) -> None:
        due = time.monotonic() + self.heartbeat
        while True:
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            try:
                cancel = await self._io(_lease.heartbeat, self.client.transport, c, self.lease,
                                        max(1.0, self.heartbeat))
            except (errors.StaleAttempt, errors.NotFound) as e:
                log.warning("job %d attempt %d: lease lost (%s)", c.id, c.attempt, e.code)
                if ctx._stop("lost"):
                    task.cancel()
                return
            except errors.Unavailable as e:
                if time.monotonic() >= c.lease_end:
                    log.warning("job %d attempt %d: lease ran out without a heartbeat: %s",
                                c.id, c.attempt, e)
                    if ctx._stop("lost"):
                        task.cancel()
                    return
                due = time.monotonic() + min(1.0, self.heartbeat / 2)
                continue
            due = time.monotonic() + self.heartbeat
            if cancel and ctx._stop("cancelled"):
                task.cancel()

    async def _progress(self, c: _lease.Claimed, task: "asyncio.Task[Any]", ctx: AsyncContext,
                        body: Dict[str, Any]) -> bool:
        """A progress report of the handler's (AsyncContext.progress), a
        heartbeat too: a cancel in its answer stops the handler as one would."""
        cancel = await self._io(_lease.progress, self.client.transport, c, body,
                                max(1.0, self.heartbeat))
        if cancel and ctx._stop("cancelled"):
            task.cancel()
        return cancel

    async def _presence(self) -> None:
        assert self._stopping is not None and self._presence_kick is not None
        interval = max(1.0, min(20.0, self.heartbeat))
        announced = False
        while not self._presence_exit:
            try:
                if not announced:
                    await self._io(_lease.announce, self.client.transport, self.id, self.queues,
                                   list(self._handlers), self.concurrency, interval)
                    announced = True
                await self._io(_lease.presence, self.client.transport, self.id,
                               self._stopping.is_set())
            except errors.NotFound:
                announced = False
                continue
            except errors.JobdError as e:
                log.debug("worker %s: presence: %s", self.id, e)
            await _wait_event(self._presence_kick, interval)
            self._presence_kick.clear()

    async def _drain(self) -> None:
        assert self._stopping is not None
        self._stopping.set()
        grace = self.shutdown_grace if self._grace is None else self._grace
        end = time.monotonic() + grace
        while self._active and time.monotonic() < end and self._grace != 0:
            await asyncio.wait([t for t, _ in self._active.values()],
                               timeout=min(0.2, max(0.0, end - time.monotonic())))
            if self._grace is not None:
                end = min(end, time.monotonic() + self._grace)
        for task, ctx in list(self._active.values()):
            if ctx._stop("shutdown"):
                task.cancel()
        if self._runs:
            await asyncio.wait(list(self._runs), timeout=self.stop_grace + 10.0)
