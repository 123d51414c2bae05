"""The remote-worker protocol both workers share (docs/API.md, Remote
workers): claims with a long poll, heartbeats and reports, each carrying the
attempt (the fencing token) and that attempt's lease token. The lease is
counted on this host's clock from what the claim answer says (held_ms,
lease_remaining_ms), so a long poll costs no lease. Reports are fenced, so a
report that met a network error is sent again; one that then meets
stale_attempt counts as landed when the job's history shows the attempt
ended with the outcome sent."""
import logging
import os
import random
import socket
import time
import traceback
from typing import Any, Dict, FrozenSet, List, Optional, Sequence

from . import _routes as R
from . import errors
from ._http import VERSION, Conn, Transport
from .types import Job, Parent

log = logging.getLogger("jobd")

# The outcomes (docs/API.md, GET /v1/jobs/{id}/attempts) that show a report
# of each kind landed.
_LANDED: Dict[str, FrozenSet[str]] = {
    "complete": frozenset({"succeeded"}),
    "fail": frozenset({"failed", "dead", "cancelled"}),
    "release": frozenset({"released", "cancelled"}),
}
_ROUTES = {"complete": R.JOB_COMPLETE, "fail": R.JOB_FAIL, "release": R.JOB_RELEASE}

_ERROR_TEXT_MAX = 4000  # the server keeps the last 4 KiB of an error


class Claimed:
    """One claimed attempt: the job as the claim answered it, its lease
    token and the end of its lease on this host's monotonic clock."""

    def __init__(self, item: Dict[str, Any], lease_end: float) -> None:
        data = dict(item)
        self.token = str(data.pop("lease_token", ""))
        data.setdefault("status", "running")
        data.pop("lease_remaining_ms", None)
        self.parents = [Parent(p) for p in data.get("parents") or []]
        self.job = Job(data)
        self.id = int(item["id"])
        self.attempt = int(item["attempt"])
        self.lease_end = lease_end

    def fence(self) -> Dict[str, Any]:
        return {"attempt": self.attempt, "lease_token": self.token}


def default_worker_id(n: int) -> str:
    """HOST:PID as `jobd worker` uses (docs/WORKER.md, Configuration); a
    second worker in the same process gets .N after it."""
    base = f"{socket.gethostname()}:{os.getpid()}"
    return base if n <= 1 else f"{base}.{n}"


def claim(t: Transport, conn: Conn, worker_id: str, types: Sequence[str],
          queues: Optional[Sequence[str]], limit: int, lease_s: float,
          wait_s: float) -> List[Claimed]:
    """POST /v1/claim: up to `limit` jobs, waiting up to wait_s for one."""
    body: Dict[str, Any] = {"worker_id": worker_id, "types": list(types), "limit": limit,
                            "lease_s": max(1, int(round(lease_s)))}
    if queues:
        body["queues"] = list(queues)
    if wait_s > 0:
        body["wait_s"] = round(wait_s, 3)
    sent = time.monotonic()
    a = t.request(R.CLAIM, body=body, safe=False, conn=conn, timeout=wait_s + t.timeout)
    held = float(a.body.get("held_ms") or 0) / 1000.0
    out = []
    for item in a.body.get("jobs", []):
        left = item.get("lease_remaining_ms")
        lease = float(left) / 1000.0 if left is not None else lease_s
        out.append(Claimed(item, sent + held + lease))
    return out


def heartbeat(t: Transport, c: Claimed, lease_s: float, timeout: float) -> bool:
    """POST /v1/jobs/{id}/heartbeat: extends the lease (c.lease_end) and
    returns whether a cancel was requested. Raises StaleAttempt or NotFound
    when the attempt is no longer live, NetworkError/Unavailable when the
    server could not say."""
    sent = time.monotonic()
    body = c.fence()
    body["lease_s"] = max(1, int(round(lease_s)))
    a = t.request(R.JOB_HEARTBEAT, params={"id": c.id}, body=body, safe=True, retries=0,
                  timeout=timeout)
    c.lease_end = sent + lease_s
    return bool(a.body.get("cancel_requested"))


def progress(t: Transport, c: Claimed, extra: Dict[str, Any], timeout: float) -> bool:
    """POST /v1/jobs/{id}/progress: the attempt's progress, fenced and
    answered as a heartbeat (the server extends the lease to its default
    without shortening it; c.lease_end is left as the heartbeats keep it).
    Returns whether a cancel was requested; raises StaleAttempt or NotFound
    when the attempt is no longer live. Sent again after a network error
    (a progress replaces the last one: a repeat changes nothing)."""
    body = c.fence()
    body.update(extra)
    a = t.request(R.JOB_PROGRESS, params={"id": c.id}, body=body, safe=True, retries=1,
                  timeout=timeout)
    return bool(a.body.get("cancel_requested"))


def report(t: Transport, kind: str, c: Claimed, extra: Dict[str, Any],
           give_up_at: float) -> bool:
    """Sends a complete, fail or release report until it lands, is refused
    as stale, or `give_up_at` (monotonic) passes. True when it landed."""
    body = c.fence()
    body.update(extra)
    dropped = False
    pause = 0.05
    while True:
        try:
            t.request(_ROUTES[kind], params={"id": c.id}, body=body, safe=True, retries=0)
            return True
        except errors.StaleAttempt:
            if dropped and _landed(t, kind, c):
                log.debug("job %d attempt %d: the %s report landed before its connection "
                          "dropped", c.id, c.attempt, kind)
                return True
            log.warning("job %d attempt %d: %s refused as stale (the lease was lost)",
                        c.id, c.attempt, kind)
            return False
        except errors.NotFound:
            log.warning("job %d: gone before its %s report (deleted)", c.id, kind)
            return False
        except errors.Unavailable as e:
            dropped = dropped or isinstance(e, errors.NetworkError)
            if time.monotonic() + pause > give_up_at:
                log.error("job %d attempt %d: %s report not sent: %s", c.id, c.attempt, kind, e)
                return False
            time.sleep(random.uniform(pause / 2, pause))
            pause = min(2.0, pause * 2)


def _landed(t: Transport, kind: str, c: Claimed) -> bool:
    try:
        a = t.request(R.JOB_ATTEMPTS, params={"id": c.id})
    except errors.JobdError:
        return False
    for x in a.body.get("attempts", []):
        if x.get("attempt") == c.attempt:
            return x.get("outcome") in _LANDED[kind]
    return False


def error_text(e: BaseException) -> str:
    """A handler's exception as the job's last_error: `Type: message`, then
    the end of the traceback, at most about 4 KB."""
    head = f"{type(e).__name__}: {e}"
    tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    text = head + "\n" + tb if tb else head
    return text if len(text) <= _ERROR_TEXT_MAX else text[:200] + "\n...\n" + text[-3700:]


def announce(t: Transport, worker_id: str, queues: Optional[Sequence[str]],
             types: Sequence[str], concurrency: int, interval_s: float) -> None:
    """POST /v1/workers: this worker is present and active (docs/API.md, Workers)."""
    t.request(R.WORKER_ANNOUNCE, body={
        "id": worker_id, "hostname": socket.gethostname(), "pid": os.getpid(),
        "version": f"jobd-python/{VERSION}", "queues": list(queues or []),
        "types": list(types), "concurrency": concurrency,
        "heartbeat_ms": max(1, int(interval_s * 1000))}, safe=True, retries=1, timeout=10)


def presence(t: Transport, worker_id: str, draining: bool) -> None:
    """POST /v1/workers/{name}/presence; NotFound when the server forgot
    the worker (announce again)."""
    t.request(R.WORKER_PRESENCE, params={"name": worker_id}, body={"draining": draining},
              safe=True, retries=0, timeout=10)


def withdraw(t: Transport, worker_id: str) -> None:
    """POST /v1/workers/{name}/withdraw: the worker stopped."""
    try:
        t.request(R.WORKER_WITHDRAW, params={"name": worker_id}, safe=True, retries=1,
                  timeout=5)
    except errors.JobdError as e:
        log.warning("worker %s: withdraw failed: %s", worker_id, e)
