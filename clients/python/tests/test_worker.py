"""The Worker's cases of clients/cases.json against a real `jobd server`;
the kill -9 and SIGTERM cases run the worker as a child process
(worker_child.py)."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from typing import Any, Dict, List

import harness
from harness import unique, wait_until

import jobd


class WorkerCases(unittest.TestCase):
    c: jobd.Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.c = harness.client()

    def setUp(self) -> None:
        self.q, self.t = unique("w"), unique("w.type")

    def worker(self, fn: jobd.worker.Handler, client: Any = None, **kw: Any) -> jobd.Worker:
        kw.setdefault("concurrency", 2)
        kw.setdefault("lease", 5)
        w = jobd.Worker(client or self.c, queues=[self.q], **kw)
        w.register(self.t, fn)
        w.start()
        self.addCleanup(harness.stopper(w))
        return w

    def status(self, id: int, *want: str) -> jobd.Job:
        j: jobd.Job = wait_until(
            lambda: (lambda j: j if j.status in want else None)(self.c.get(id)),
            f"job {id} to be {'/'.join(want)}")
        return j

    def test_worker_complete(self) -> None:
        j = self.c.enqueue(self.t, {"n": 21}, queue=self.q)
        self.worker(lambda job, ctx: {"n": job.payload["n"] * 2, "attempt": ctx.attempt})
        done = self.status(j.id, "succeeded", "dead")
        self.assertEqual((done.status, done.attempt, done.result),
                         ("succeeded", 1, {"n": 42, "attempt": 1}))

    def test_worker_heartbeat_long_job(self) -> None:
        j = self.c.enqueue(self.t, queue=self.q)

        def slow(job: jobd.Job, ctx: jobd.Context) -> str:
            return "stopped" if ctx.wait(6.0) else "slept"
        self.worker(slow, lease=2)
        self.status(j.id, "running")
        t0 = time.monotonic()
        done = wait_until(lambda: (lambda x: x if x.status != "running" else None)(
            self.c.get(j.id)), "the run to end")
        self.assertGreaterEqual(time.monotonic() - t0, 5.0)
        self.assertEqual((done.status, done.attempt, done.result), ("succeeded", 1, "slept"))
        self.assertEqual([a.outcome for a in self.c.attempts(j.id)], ["succeeded"])

    def test_worker_error_retried(self) -> None:
        j = self.c.enqueue(self.t, queue=self.q, max_attempts=3)

        def flaky(job: jobd.Job, ctx: jobd.Context) -> str:
            if ctx.attempt == 1:
                raise ValueError("the first try fails")
            return "ok"
        self.worker(flaky)
        done = self.status(j.id, "succeeded", "dead")
        self.assertEqual((done.status, done.attempt, done.result), ("succeeded", 2, "ok"))
        self.assertIn("ValueError: the first try fails", done.last_error or "")
        self.assertEqual([a.outcome for a in self.c.attempts(j.id)], ["failed", "succeeded"])

    def test_worker_permanent_dead(self) -> None:
        j = self.c.enqueue(self.t, queue=self.q, max_attempts=5)

        def bad(job: jobd.Job, ctx: jobd.Context) -> None:
            raise jobd.Permanent("bad input")
        self.worker(bad)
        done = self.status(j.id, "dead", "succeeded")
        self.assertEqual((done.status, done.attempt), ("dead", 1))
        self.assertIn("bad input", done.last_error or "")

    def test_worker_timeout(self) -> None:
        j = self.c.enqueue(self.t, queue=self.q, timeout="1s", max_attempts=1)
        seen: Dict[str, Any] = {}

        def overrun(job: jobd.Job, ctx: jobd.Context) -> str:
            t0 = time.monotonic()
            seen["stopped"] = ctx.wait(30)
            seen.update(reason=ctx.cancel_reason, after=time.monotonic() - t0,
                        remaining=ctx.remaining(), deadline=ctx.deadline)
            return "too late"
        self.worker(overrun)
        done = self.status(j.id, "dead", "succeeded")
        self.assertEqual(done.status, "dead")
        self.assertIn("timeout", done.last_error or "")
        self.assertEqual((seen["stopped"], seen["reason"], seen["remaining"]),
                         (True, "timeout", 0.0))
        self.assertGreaterEqual(seen["after"], 0.95)
        self.assertIsNotNone(seen["deadline"])

    def test_worker_cancel_reaches_handler(self) -> None:
        j = self.c.enqueue(self.t, queue=self.q)
        seen: Dict[str, Any] = {}
        started = threading.Event()

        def wait_for_cancel(job: jobd.Job, ctx: jobd.Context) -> str:
            started.set()
            seen["stopped"] = ctx.wait(30)
            seen.update(reason=ctx.cancel_reason, at=time.monotonic())
            return "ignored"
        w = self.worker(wait_for_cancel, lease=2)
        self.assertTrue(started.wait(harness.DEADLINE))
        t0 = time.monotonic()
        self.assertEqual(self.c.cancel(j.id).status, "running")  # 202: cancel requested
        done = self.status(j.id, "cancelled", "succeeded", "dead")
        self.assertEqual(done.status, "cancelled")
        self.assertEqual((seen["stopped"], seen["reason"]), (True, "cancelled"))
        self.assertLess(seen["at"] - t0, w.heartbeat + 3.0)  # the next heartbeat (+ load)

    def child(self, d: str, conc: int) -> "subprocess.Popen[bytes]":
        p = subprocess.Popen([sys.executable, os.path.join(harness.HERE, "worker_child.py"),
                              harness.server().url, self.q, self.t, d, str(conc)])
        def reap() -> None:
            if p.poll() is None:
                p.kill()
            p.wait()
        self.addCleanup(reap)
        wait_until(lambda: os.path.exists(os.path.join(d, "ready")), "the child worker")
        return p

    def tmpdir(self) -> str:
        d = tempfile.mkdtemp(prefix="jobd-py-child.")
        self.addCleanup(shutil.rmtree, d, True)
        return d

    def test_worker_kill9_reaped(self) -> None:
        d = self.tmpdir()
        j = self.c.enqueue(self.t, queue=self.q, max_attempts=3)
        p = self.child(d, 1)
        wait_until(lambda: os.path.exists(os.path.join(d, f"started.{j.id}")), "the run")
        p.kill()
        p.wait()
        self.worker(lambda job, ctx: {"attempt": ctx.attempt})
        done = self.status(j.id, "succeeded", "dead")
        self.assertEqual(done.status, "succeeded")
        self.assertGreaterEqual(done.attempt, 2)
        self.assertEqual(self.c.attempts(j.id)[0].outcome, "reaped")

    def test_worker_sigterm_drain(self) -> None:
        d = self.tmpdir()
        a = self.c.enqueue(self.t, queue=self.q)
        p = self.child(d, 2)  # a free slot: its claim is long-polling when SIGTERM comes
        wait_until(lambda: os.path.exists(os.path.join(d, f"started.{a.id}")), "the run")
        p.send_signal(signal.SIGTERM)
        wait_until(lambda: [x for x in self.c.workers() if x.pid == p.pid
                            and x.state == "draining"], "the worker to say it drains")
        b = self.c.enqueue(self.t, queue=self.q)
        time.sleep(0.3)  # not a wait for a condition: room for a claim that must not happen
        open(os.path.join(d, "gate"), "w").close()
        self.assertEqual(p.wait(harness.DEADLINE), 0)
        self.assertEqual(self.c.get(a.id).status, "succeeded")
        bj = self.c.get(b.id)
        self.assertEqual(bj.status, "pending")
        self.assertEqual(bj.attempt, bj.attempt_floor)  # no attempt used
        self.assertFalse(os.path.exists(os.path.join(d, f"started.{b.id}")))
        self.assertFalse([x for x in self.c.workers() if x.pid == p.pid])

    def test_worker_report_retried(self) -> None:
        proxy = harness.DropProxy(harness.server().url, r"^POST /v1/jobs/\d+/complete ")
        self.addCleanup(proxy.close)
        j = self.c.enqueue(self.t, queue=self.q)
        runs: List[int] = []

        def once(job: jobd.Job, ctx: jobd.Context) -> str:
            runs.append(ctx.attempt)
            return "done"
        # the retried complete repeats the one that landed: the server answers
        # it 200 Idempotent-Replayed (docs/API.md, Repeated reports)
        w = self.worker(once, client=jobd.Client(proxy.url, token=""))
        done = self.status(j.id, "succeeded", "dead")
        wait_until(lambda: not w.running, "the report to be settled")
        self.assertEqual((done.status, done.attempt, done.result), ("succeeded", 1, "done"))
        self.assertEqual(runs, [1])
        self.assertEqual((proxy.hits, proxy.dropped), (2, 1))
        self.assertEqual([a.outcome for a in self.c.attempts(j.id)], ["succeeded"])

    def test_worker_release_unstarted(self) -> None:
        ids = self.c.enqueue_many([{"type": self.t, "queue": self.q, "payload": i}
                                   for i in range(3)])
        gate = threading.Event()
        started: List[int] = []

        def blocked(job: jobd.Job, ctx: jobd.Context) -> str:
            started.append(job.id)
            gate.wait(harness.DEADLINE)
            return "ran"
        w = self.worker(blocked, concurrency=1, prefetch=2)
        wait_until(lambda: started and all(self.c.get(i).status == "running" for i in ids),
                   "one run and two jobs claimed ahead")
        w.stop()
        rest = [i for i in ids if i not in started]
        for i in rest:
            j = self.status(i, "pending")
            self.assertEqual((j.attempt, j.attempt_floor, j.worker_id), (1, 1, None))
        self.assertEqual(self.c.get(started[0]).status, "running")
        gate.set()
        self.assertTrue(w.join(harness.DEADLINE))
        self.assertEqual(self.c.get(started[0]).status, "succeeded")
        self.assertEqual([a.outcome for a in self.c.attempts(rest[0])], ["released"])

    def test_worker_presence(self) -> None:
        other = unique("w.other")
        w = jobd.Worker(self.c, queues=[self.q], concurrency=3, lease=3)
        w.register(self.t, lambda job, ctx: None)
        w.register(other, lambda job, ctx: None)
        w.start()
        self.addCleanup(harness.stopper(w))
        # its first claim lists it before its own announce lands (a claim is
        # presence, docs/API.md): wait for the announce, which names its pid
        me = wait_until(lambda: [x for x in self.c.workers()
                                 if x.id == w.id and x.pid == os.getpid()], "the worker")[0]
        self.assertEqual((me.queues, sorted(me.types), me.concurrency, me.state, me.pid),
                         ([self.q], sorted([self.t, other]), 3, "active", os.getpid()))
        w.stop()
        self.assertTrue(w.join(harness.DEADLINE))
        self.assertFalse([x for x in self.c.workers() if x.id == w.id])

    def test_worker_parents(self) -> None:
        tp = unique("w.parent")
        p1 = self.c.enqueue(tp, {"v": 1}, queue=self.q)
        p2 = self.c.enqueue(tp, {"v": 2}, queue=self.q)
        child = self.c.enqueue(self.t, queue=self.q, depends_on=[p2.id, p1.id])
        lone = self.c.enqueue(self.t, queue=self.q)

        def seen(job: jobd.Job, ctx: jobd.Context) -> List[Any]:
            return [[type(p).__name__, p.id, p.step, p.type, p.status, p.result]
                    for p in ctx.parents]
        w = jobd.Worker(self.c, queues=[self.q], concurrency=2, lease=5)
        w.register(self.t, seen)
        w.register(tp, lambda job, ctx: {"v10": job.payload["v"] * 10})
        w.start()
        self.addCleanup(harness.stopper(w))
        done = self.status(child.id, "succeeded", "dead")
        self.assertEqual(done.result, [["Parent", p1.id, None, tp, "succeeded", {"v10": 10}],
                                       ["Parent", p2.id, None, tp, "succeeded", {"v10": 20}]])
        self.assertEqual(self.status(lone.id, "succeeded", "dead").result, [])

    def test_worker_progress(self) -> None:
        j = self.c.enqueue(self.t, queue=self.q)
        go_on = threading.Event()
        self.addCleanup(go_on.set)
        took: List[bool] = []
        ctxs: List[jobd.Context] = []

        def work(job: jobd.Job, ctx: jobd.Context) -> str:
            ctxs.append(ctx)
            took.append(ctx.progress(40, "3 of 8 files", data={"done": 3}))
            go_on.wait(harness.DEADLINE)
            return "ok"
        self.worker(work)
        running = wait_until(lambda: (lambda x: x if x.progress else None)(self.c.get(j.id)),
                             "the job's progress")
        self.assertEqual(running.status, "running")
        self.assertEqual((running.progress["percent"], running.progress["message"],
                          running.progress["data"]), (40, "3 of 8 files", {"done": 3}))
        go_on.set()
        self.status(j.id, "succeeded")
        self.assertEqual(took, [True])  # read once the handler is past it
        # the attempt is over: its progress is stale, said but not raised
        self.assertFalse(ctxs[0].progress(90, "late"))
        with self.assertRaises(ValueError):
            ctxs[0].progress(101)


if __name__ == "__main__":
    unittest.main()
