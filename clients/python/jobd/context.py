"""What a handler gets beside its job: the attempt, the deadline its
timeout sets, and whether it should stop (docs/WORKER.md: a thread cannot be
killed, so timeouts, cancels and shutdown are cooperative)."""
import datetime as _dt
import threading
import time
from typing import Optional

from .types import Job


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

    def __init__(self, job: Job, worker_id: str, timeout_s: Optional[float]) -> None:
        self.job = job
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
