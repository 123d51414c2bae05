"""What a handler gets beside its job: the attempt, the deadline its
timeout sets, whether it should stop (docs/WORKER.md: a thread cannot be
killed, so timeouts, cancels and shutdown are cooperative), the job's
parents and a way to report progress (docs/API.md, POST /v1/jobs/{id}/progress)."""
import datetime as _dt
import logging
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

from . import errors
from .types import Job, Parent

log = logging.getLogger("jobd")

# Sends one progress body for the run; returns whether a cancel was requested.
ProgressFn = Callable[[Dict[str, Any]], bool]


def progress_body(percent: Optional[float], message: Optional[str], data: Any) -> Dict[str, Any]:
    """The fields of a progress report (docs/API.md): those given."""
    body: Dict[str, Any] = {}
    if percent is not None:
        if not 0 <= percent <= 100:
            raise ValueError("progress: percent must be within 0..100")
        body["percent"] = percent
    if message is not None:
        body["message"] = message
    if data is not None:
        body["data"] = data
    return body


class Context:
    """The context of one run of a handler.

    cancelled turns true when the run should stop; cancel_reason then says
    why: "cancelled" (a user cancelled the job), "timeout" (the job's
    timeout passed), "shutdown" (the worker stops and its shutdown grace is
    over) or "lost" (the lease was lost: another worker may run the job).
    A handler that goes on after that has its outcome decided for it once
    the worker's stop_grace is over: a timeout or a cancel fails the
    attempt, a shutdown hands the job back due at once.
    """

    def __init__(self, job: Job, worker_id: str, timeout_s: Optional[float],
                 parents: Optional[Sequence[Parent]] = None,
                 progress_fn: Optional[ProgressFn] = None) -> None:
        self.job = job
        #: The job's parents as they were when it was claimed, in id order
        #: (id, step, type, status, result); [] for a job without parents.
        self.parents: List[Parent] = list(parents or [])
        self._progress_fn = progress_fn
        self.attempt: int = job.attempt
        self.worker_id = worker_id
        self.timeout_s = timeout_s
        self.cancel_reason: Optional[str] = None
        self.deadline: Optional[_dt.datetime] = None
        self._deadline_mono: Optional[float] = None
        self._event = threading.Event()

    def _start(self) -> None:
        if self.timeout_s is not None:
            self._deadline_mono = time.monotonic() + self.timeout_s
            self.deadline = (_dt.datetime.now(_dt.timezone.utc)
                             + _dt.timedelta(seconds=self.timeout_s))

    def _stop(self, reason: str) -> bool:
        """Asks the run to stop; False when it was asked already."""
        if self.cancel_reason is not None:
            return False
        self.cancel_reason = reason
        self._event.set()
        return True

    @property
    def cancelled(self) -> bool:
        """True once the run should stop (see cancel_reason)."""
        return self._event.is_set()

    def wait(self, seconds: Optional[float] = None) -> bool:
        """Sleeps up to `seconds` (None: until stopped), returning early
        with True when the run should stop; False when the time passed."""
        return self._event.wait(seconds)

    def remaining(self) -> Optional[float]:
        """Seconds until the job's timeout (never below 0), None without one."""
        if self._deadline_mono is None:
            return None
        return max(0.0, self._deadline_mono - time.monotonic())

    def progress(self, percent: Optional[float] = None, message: Optional[str] = None,
                 data: Any = None) -> bool:
        """Reports the run's progress (POST /v1/jobs/{id}/progress, fenced by
        the attempt like a heartbeat, which it also is): percent 0..100, a
        message (at most 1 KiB), any JSON data (at most 16 KiB); each report
        replaces the last as a whole. Report as often as it helps people,
        not per item. True when the server took it; False (never an error)
        when it did not: the attempt is no longer live (stale_attempt, the
        lease was lost), or the server could not be reached."""
        body = progress_body(percent, message, data)
        if self._progress_fn is None:
            raise RuntimeError("progress: this context belongs to no worker")
        try:
            self._progress_fn(body)
            return True
        except (errors.StaleAttempt, errors.NotFound) as e:
            log.warning("job %d attempt %d: progress not taken (%s)",
                        self.job.id, self.attempt, e.code)
        except errors.JobdError as e:
            log.warning("job %d attempt %d: progress not sent: %s", self.job.id, self.attempt, e)
        return False
