"""Workflows (docs/API.md, Workflows): a named set of jobs with dependencies
among them, submitted at once, all or nothing; client.workflows.*"""
from typing import Any, Dict, Iterator, Mapping, Optional, Sequence

from . import _routes as R
from ._http import Transport
from .types import Submitted, Workflow, format_duration, format_time

# The fields of a step whose values this client converts (datetimes,
# timedeltas, seconds); the others go as they are.
_TIMES = ("run_at",)
_DURATIONS = ("in", "timeout")


def step_spec(step: Mapping[str, Any]) -> Dict[str, Any]:
    """The JSON of one step: a mapping with "ref", "type" and any job field
    (payload, queue, priority, max_attempts, timeout, run_at, in or in_,
    depends_on: [refs], on_parent_failure); run_at may be an aware
    datetime, in/in_ and timeout seconds or a timedelta."""
    s = dict(step)
    if "in_" in s:
        s["in"] = s.pop("in_")
    for k in _TIMES:
        if s.get(k) is not None:
            s[k] = format_time(s[k])
    for k in _DURATIONS:
        if s.get(k) is not None:
            s[k] = format_duration(s[k])
    if "depends_on" in s and s["depends_on"] is not None:
        s["depends_on"] = list(s["depends_on"])
    return s


class Workflows:
    """client.workflows: submit, get and list workflows."""

    def __init__(self, t: Transport) -> None:
        self._t = t

    def submit(self, name: str, steps: Sequence[Mapping[str, Any]], *,
               idempotency_key: Optional[str] = None) -> Submitted:
        """Submits a workflow (POST /v1/workflows): each step becomes a job,
        waiting for the steps its depends_on names by ref. Returns the
        workflow's id and each ref's job id. All or nothing: a cycle, an
        unknown or duplicate ref or a bad field raises BadRequest naming the
        step (steps[3].depends_on) and writes nothing. With an
        idempotency_key the same call again answers the same workflow
        (replayed), and only then is it sent again after a network error
        or a 503."""
        body: Dict[str, Any] = {"name": name, "steps": [step_spec(s) for s in steps]}
        if idempotency_key is not None:
            body["idempotency_key"] = idempotency_key
        a = self._t.request(R.WORKFLOW_SUBMIT, body=body, safe=idempotency_key is not None)
        return Submitted(a.body, replayed=a.status == 200)

    def get(self, id: int) -> Workflow:
        """The workflow with its status, counts and steps
        (GET /v1/workflows/{id}); NotFound if there is none."""
        return Workflow(self._t.request(R.WORKFLOW_GET, params={"id": id}).body)

    def add_steps(self, id: int, steps: Sequence[Mapping[str, Any]], *,
                  before: Optional[Sequence[str]] = None) -> Dict[str, int]:
        """Adds steps to a running workflow (POST /v1/workflows/{id}/steps),
        for work found as it runs; their depends_on may name existing refs
        and each other, and each step named in `before` (still waiting)
        waits for them too. Returns each new ref's job id. Conflict
        (step_not_waiting naming before[k], workflow_finished) when too late.
        Never sent twice by the client (a repeat would add the steps again)."""
        body: Dict[str, Any] = {"steps": [step_spec(s) for s in steps]}
        if before is not None:
            body["before"] = list(before)
        a = self._t.request(R.WORKFLOW_ADD_STEPS, params={"id": id}, body=body)
        jobs: Dict[str, int] = a.body["jobs"]
        return jobs

    def cancel(self, id: int) -> Workflow:
        """Cancels every step that has not ended (POST
        /v1/workflows/{id}/cancel; a running one is asked to stop) and
        returns the workflow; a second cancel changes nothing."""
        return Workflow(self._t.request(R.WORKFLOW_CANCEL, params={"id": id}, safe=True).body)

    def retry(self, id: int) -> Workflow:
        """Puts every dead or cancelled step back, pending or waiting as its
        parents say (POST /v1/workflows/{id}/retry), and returns the workflow."""
        return Workflow(self._t.request(R.WORKFLOW_RETRY, params={"id": id}).body)

    def delete(self, id: int) -> None:
        """Deletes an ended workflow with its steps' jobs (DELETE
        /v1/workflows/{id}); Conflict (workflow_running) while a step has
        not ended: cancel it first."""
        self._t.request(R.WORKFLOW_DELETE, params={"id": id})

    def list(self, *, status: Optional[str] = None, name: Optional[str] = None,
             page_size: int = 50) -> Iterator[Workflow]:
        """Every workflow the filters match (status "running", "succeeded"
        or "failed"; name), newest first, without steps, fetched page by
        page (GET /v1/workflows; page_size 1 to 100)."""
        q: Dict[str, Any] = {"status": status, "name": name, "limit": page_size}
        while True:
            page = self._t.request(R.WORKFLOW_LIST, query=q).body
            for w in page["workflows"]:
                yield Workflow(w)
            if page.get("next") is None:
                return
            q["after"] = page["next"]
