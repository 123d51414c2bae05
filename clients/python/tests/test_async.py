"""AsyncWorker (asyncio handlers) against a real `jobd server`: the
worker cases whose behaviour differs from the threaded Worker's (the
handler's task is cancelled on a timeout, a cancel or the end of a drain)."""
import asyncio
import threading
import time
import unittest
from typing import Any, Dict, List

import harness
from harness import unique, wait_until

import jobd


class AsyncWorkerTests(unittest.TestCase):
    c: jobd.Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.c = harness.client()

    def setUp(self) -> None:
        self.q, self.t = unique("aw"), unique("aw.type")

    def start(self, w: jobd.AsyncWorker) -> None:
        """Serves `w` on an event loop in a thread until the test ends."""
        done = threading.Event()

        def main() -> None:
            asyncio.run(w.serve())
            done.set()
        threading.Thread(target=main, daemon=True).start()
        self.addCleanup(done.wait, 30)  # cleanups run last first: stop, then wait
        self.addCleanup(harness.stopper(w))
        self.done = done

    def worker(self, **kw: Any) -> jobd.AsyncWorker:
        kw.setdefault("lease", 5)
        return jobd.AsyncWorker(self.c, queues=[self.q], **kw)

    def status(self, id: int, *want: str) -> jobd.Job:
        j: jobd.Job = wait_until(
            lambda: (lambda j: j if j.status in want else None)(self.c.get(id)),
            f"job {id} to be {'/'.join(want)}")
        return j

    def test_async_complete_error_permanent(self) -> None:
        ok = self.c.enqueue(self.t, {"n": 1}, queue=self.q)
        flaky = self.c.enqueue(self.t, {"flaky": True}, queue=self.q, max_attempts=3)
        bad = self.c.enqueue(self.t, {"bad": True}, queue=self.q, max_attempts=3)
        w = self.worker()

        @w.handler(self.t)
        async def h(job: jobd.Job, ctx: jobd.AsyncContext) -> Any:
            await asyncio.sleep(0)
            if job.payload.get("bad"):
                raise jobd.Permanent("never")
            if job.payload.get("flaky") and ctx.attempt == 1:
                raise RuntimeError("once")
            return {"n": job.payload.get("n"), "attempt": ctx.attempt}
        self.start(w)
        self.assertEqual(self.status(ok.id, "succeeded").result, {"n": 1, "attempt": 1})
        f = self.status(flaky.id, "succeeded", "dead")
        self.assertEqual((f.status, f.attempt), ("succeeded", 2))
        self.assertIn("RuntimeError: once", f.last_error or "")
        b = self.status(bad.id, "dead", "succeeded")
        self.assertEqual((b.status, b.attempt), ("dead", 1))

    def test_async_heartbeat_timeout_cancel(self) -> None:
        long = self.c.enqueue(self.t, {"sleep": 3}, queue=self.q)
        slow = self.c.enqueue(self.t, {"sleep": 30}, queue=self.q, timeout="500ms",
                              max_attempts=1)
        seen: Dict[int, Any] = {}
        w = self.worker(lease=1.2, concurrency=4)

        @w.handler(self.t)
        async def h(job: jobd.Job, ctx: jobd.AsyncContext) -> str:
            try:
                await asyncio.sleep(job.payload["sleep"])
            except asyncio.CancelledError:
                seen[job.id] = ctx.cancel_reason
                raise
            return "slept"
        self.start(w)
        d = self.status(slow.id, "dead", "succeeded")
        self.assertIn("timeout", d.last_error or "")
        self.assertEqual(seen.get(slow.id), "timeout")
        cancel = self.c.enqueue(self.t, {"sleep": 30}, queue=self.q)
        self.status(cancel.id, "running")
        self.c.cancel(cancel.id)
        self.assertEqual(self.status(cancel.id, "cancelled", "succeeded", "dead").status,
                         "cancelled")
        self.assertEqual(seen.get(cancel.id), "cancelled")
        done = self.status(long.id, "succeeded", "dead", "pending")
        self.assertEqual((done.status, done.attempt, done.result), ("succeeded", 1, "slept"))

    def test_async_drain_and_presence(self) -> None:
        j = self.c.enqueue(self.t, queue=self.q)
        started: List[float] = []
        w = self.worker(shutdown_grace=10)

        @w.handler(self.t)
        async def h(job: jobd.Job, ctx: jobd.AsyncContext) -> str:
            started.append(time.monotonic())
            await asyncio.sleep(0.5)
            return "drained"
        self.start(w)
        wait_until(lambda: started, "the run")
        wait_until(lambda: [x for x in self.c.workers() if x.id == w.id], "the worker listed")
        w.stop()
        self.assertTrue(self.done.wait(harness.DEADLINE))
        self.assertEqual(self.c.get(j.id).result, "drained")
        self.assertFalse([x for x in self.c.workers() if x.id == w.id])
        with self.assertRaises(TypeError):
            w.register("x", lambda job, ctx: None)  # type: ignore[arg-type,return-value]

    def test_async_parents_progress(self) -> None:
        parent = self.c.enqueue(self.t, {"parent": True}, queue=self.q)
        child = self.c.enqueue(self.t, {}, queue=self.q, depends_on=[parent.id])
        seen = threading.Event()
        self.addCleanup(seen.set)
        ctxs: List[jobd.AsyncContext] = []
        w = self.worker()

        @w.handler(self.t)
        async def h(job: jobd.Job, ctx: jobd.AsyncContext) -> Any:
            if job.payload.get("parent"):
                return "from the parent"
            ctxs.append(ctx)
            took = await ctx.progress(50, "half")
            end = time.monotonic() + harness.DEADLINE
            while not seen.is_set() and time.monotonic() < end:
                await asyncio.sleep(0.02)
            return {"took": took, "parents": [[p.id, p.status, p.result] for p in ctx.parents]}
        self.start(w)
        running = wait_until(lambda: (lambda x: x if x.progress else None)(self.c.get(child.id)),
                             "the child's progress")
        self.assertEqual((running.progress["percent"], running.progress["message"]), (50, "half"))
        seen.set()
        self.assertEqual(self.status(child.id, "succeeded").result,
                         {"took": True, "parents": [[parent.id, "succeeded", "from the parent"]]})

        async def late() -> bool:  # the attempt is over: stale, said but not raised
            return await ctxs[0].progress(60)
        self.assertFalse(asyncio.run(late()))

if __name__ == "__main__":
    unittest.main()
