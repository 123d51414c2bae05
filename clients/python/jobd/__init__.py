"""jobd: the Python client of the jobd job scheduler (docs/API.md).

    import jobd
    c = jobd.Client()                       # $JOBD_SERVER, $JOBD_TOKEN
    j = c.enqueue("email.send", {"to": "a@b.c"}, queue="mail")
    c.wait(j.id, timeout=30)

    w = jobd.Worker(queues=["mail"], concurrency=8)

    @w.handler("email.send")
    def send(job, ctx):
        return {"sent": True}               # the job's result

    w.run()                                 # until SIGTERM/SIGINT, then drains
"""
from ._http import VERSION as __version__
from .aio import AsyncContext, AsyncWorker
from .client import UNSET, Client, Queues, Schedules, job_spec
from .context import Context
from .errors import (BadRequest, Conflict, Forbidden, JobdError, NetworkError, NotFound,
                     Permanent, ServerError, StaleAttempt, Unauthorized, Unavailable)
from .types import (Attempt, Job, Parent, Queue, QueueGroup, Schedule, Submitted, WorkerInfo, Workflow,
                    WorkflowStep)
from .workflows import Workflows
from .worker import Worker

__all__ = [
    "__version__", "Client", "Schedules", "Queues", "job_spec", "UNSET",
    "Worker", "AsyncWorker", "Context", "AsyncContext",
    "Job", "Schedule", "Queue", "QueueGroup", "Attempt", "WorkerInfo", "Parent",
    "Workflows", "Workflow", "WorkflowStep", "Submitted",
    "JobdError", "BadRequest", "Unauthorized", "Forbidden", "NotFound", "Conflict",
    "StaleAttempt", "Unavailable", "NetworkError", "ServerError", "Permanent",
]
