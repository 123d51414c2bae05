"""The Client's cases of clients/cases.json against a real `jobd server`."""
import datetime as dt
import os
import unittest
from typing import Any, Dict, List
from unittest import mock

import harness
from harness import unique, wait_until

import jobd


class ClientCases(unittest.TestCase):
    c: jobd.Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.c = harness.client()

    def run_jobs(self, queue: str, type: str, fn: jobd.worker.Handler) -> jobd.Worker:
        w = jobd.Worker(self.c, queues=[queue], concurrency=2, lease=5)
        w.register(type, fn)
        w.start()
        self.addCleanup(harness.stopper(w))
        return w

    def test_enqueue_every_field(self) -> None:
        q, t = unique("every"), unique("every.type")
        at = dt.datetime(2030, 1, 2, 3, 4, 5, 678000, tzinfo=dt.timezone(dt.timedelta(hours=2)))
        j = self.c.enqueue(t, {"to": "a@b.c", "n": [1, 2]}, queue=q, priority=7, run_at=at,
                           max_attempts=3, idempotency_key=unique("key"),
                           timeout=dt.timedelta(milliseconds=1500))
        self.assertEqual((j.type, j.queue, j.priority, j.max_attempts, j.status),
                         (t, q, 7, 3, "pending"))
        self.assertEqual(j.payload, {"to": "a@b.c", "n": [1, 2]})
        self.assertEqual(j.run_at, at)
        self.assertEqual(j.timeout_s, 1.5)
        self.assertTrue(j.idempotency_key and j.idempotency_key.startswith("key-"))
        self.assertIsInstance(j.id, int)
        got = self.c.get(j.id)
        self.assertEqual(got, j)
        # durations as strings and as seconds
        self.assertEqual(self.c.enqueue(t, queue=q, timeout="2s", in_="1h").timeout_s, 2)
        self.assertEqual(self.c.enqueue(t, queue=q, timeout=0.25).timeout_s, 0.25)
        with self.assertRaises(ValueError):
            self.c.enqueue(t, queue=q, run_at=dt.datetime(2030, 1, 1))  # naive: refused

    def test_enqueue_traceparent(self) -> None:
        t, q = unique("tp.type"), unique("tp")
        tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        j = self.c.enqueue(t, queue=q, traceparent=tp)
        self.assertEqual(j.traceparent, tp)
        self.assertEqual(self.c.get(j.id).traceparent, tp)
        self.assertIsNone(self.c.enqueue(t, queue=q).traceparent)
        ids = self.c.enqueue_many([{"type": t, "queue": q, "traceparent": tp}, (t, None)])
        self.assertEqual([self.c.get(i).traceparent for i in ids], [tp, None])
        with self.assertRaises(jobd.BadRequest) as e:
            self.c.enqueue(t, queue=q, traceparent="00-nope")
        self.assertEqual((e.exception.code, e.exception.field), ("invalid_field", "traceparent"))
        # a worker's handler finds it in the job it is given (the claim answer)
        self.run_jobs(q, t, lambda job, ctx: {"tp": job.traceparent})
        done = self.c.wait(j.id, timeout=harness.DEADLINE)
        self.assertEqual((done.status, done.result), ("succeeded", {"tp": tp}))

    def test_enqueue_in(self) -> None:
        j = self.c.enqueue(unique("in.type"), queue=unique("in"), in_=dt.timedelta(minutes=5))
        assert j.run_at is not None and j.created_at is not None
        delta = (j.run_at - j.created_at).total_seconds()
        self.assertAlmostEqual(delta, 300, delta=1.0)
        j2 = self.c.enqueue(unique("in.type"), queue=unique("in"), in_="90s")
        assert j2.run_at is not None and j2.created_at is not None
        self.assertAlmostEqual((j2.run_at - j2.created_at).total_seconds(), 90, delta=1.0)

    def test_enqueue_idempotent_replay(self) -> None:
        t, q, key = unique("idem.type"), unique("idem"), unique("order")
        a = self.c.enqueue(t, {"n": 1}, queue=q, idempotency_key=key)
        b = self.c.enqueue(t, {"n": 1}, queue=q, idempotency_key=key)
        self.assertEqual(a.id, b.id)
        self.assertEqual(len(list(self.c.jobs(queue=q))), 1)
        with self.assertRaises(jobd.Conflict) as e:
            self.c.enqueue(t, {"n": 2}, queue=q, idempotency_key=key)
        self.assertEqual((e.exception.status, e.exception.code), (409, "idempotency_conflict"))

    def test_enqueue_many(self) -> None:
        t, q = unique("many.type"), unique("many")
        items = [{"type": t, "payload": {"i": i}, "queue": q} for i in range(250)]
        ids = self.c.enqueue_many(items)
        self.assertEqual(len(ids), 250)
        self.assertEqual(len(set(ids)), 250)
        self.assertEqual(ids, sorted(ids))
        for i in (0, 1, 125, 249):
            j = self.c.get(ids[i])
            self.assertEqual((j.payload, j.queue, j.type), ({"i": i}, q, t))
        self.assertEqual(len(self.c.enqueue_many([(t, {"pair": True})])), 1)
        self.assertEqual(self.c.enqueue_many([]), [])

    def test_enqueue_depends_on(self) -> None:
        q, tp, tc, tx = unique("deps"), unique("deps.p"), unique("deps.c"), unique("deps.x")
        p1, p2 = self.c.enqueue(tp, queue=q), self.c.enqueue(tp, queue=q)
        child = self.c.enqueue(tc, queue=q, depends_on=[p2.id, p1.id])
        self.assertEqual((child.status, child.depends_on, child.on_parent_failure),
                         ("waiting", [p1.id, p2.id], "cancel"))
        self.assertEqual((child.workflow, child.step), (None, None))
        self.assertEqual(self.c.get(child.id).depends_on, [p1.id, p2.id])
        # a queue counts its waiting jobs (on PostgreSQL about a second late)
        wait_until(lambda: (lambda x: x is not None and (x.waiting, x.pending) == (1, 2))(
            self.c.queues.get(q)), "the queue to count 1 waiting, 2 pending")
        # a parent that does not succeed: cancel (the default) or run anyway
        px = self.c.enqueue(tx, queue=q)
        cc = self.c.enqueue(tc, queue=q, depends_on=[px.id], on_parent_failure="cancel")
        cr = self.c.enqueue(tc, queue=q, depends_on=[px.id], on_parent_failure="run")
        ids = self.c.enqueue_many([{"type": tc, "queue": q, "depends_on": [px.id],
                                    "on_parent_failure": "run"}, (tc, None)])
        many = [self.c.get(i) for i in ids]
        self.assertEqual([(j.status, j.depends_on, j.on_parent_failure) for j in many],
                         [("waiting", [px.id], "run"), ("pending", [], "cancel")])
        self.c.cancel(px.id)
        self.assertEqual(self.c.get(cc.id).status, "cancelled")
        self.assertEqual(self.c.get(cr.id).status, "pending")
        self.assertEqual(self.c.get(ids[0]).status, "pending")
        # the parents succeed: the child is released, pending
        self.run_jobs(q, tp, lambda job, ctx: None)
        wait_until(lambda: self.c.get(child.id).status == "pending", "the child to be released")
        with self.assertRaises(jobd.BadRequest) as e:
            self.c.enqueue(tc, queue=q, depends_on=[2_000_000_000])
        self.assertEqual((e.exception.code, e.exception.field), ("invalid_field", "depends_on"))

    def test_workflows(self) -> None:
        q, t, name, key = unique("wf"), unique("wf.type"), unique("wf-name"), unique("wf-key")
        steps: List[Dict[str, Any]] = [
            {"ref": "extract", "type": t, "queue": q, "payload": {"day": 6}},
            {"ref": "load", "type": t, "queue": q, "depends_on": ["extract"],
             "timeout": dt.timedelta(seconds=30), "in_": 0}]
        sub = self.c.workflows.submit(name, steps, idempotency_key=key)
        self.assertEqual(set(sub.jobs), {"extract", "load"})
        self.assertFalse(sub.replayed)
        w = self.c.workflows.get(sub.id)
        self.assertEqual((w.id, w.name, w.status, w.finished_at), (sub.id, name, "running", None))
        self.assertEqual((w.counts["pending"], w.counts["waiting"]), (1, 1))
        self.assertEqual([(s.ref, s.job_id, s.depends_on, s.type) for s in w.steps],
                         [("extract", sub.jobs["extract"], [], t),
                          ("load", sub.jobs["load"], ["extract"], t)])
        load = self.c.get(sub.jobs["load"])
        self.assertEqual((load.workflow, load.step, load.status, load.depends_on, load.timeout_s),
                         (sub.id, "load", "waiting", [sub.jobs["extract"]], 30))
        self.assertEqual([x.id for x in self.c.workflows.list(name=name)], [sub.id])
        self.assertEqual(list(self.c.workflows.list(name=name, status="succeeded")), [])
        again = self.c.workflows.submit(name, steps, idempotency_key=key)
        self.assertEqual((again.id, again.jobs, again.replayed), (sub.id, sub.jobs, True))
        with self.assertRaises(jobd.BadRequest) as e:
            self.c.workflows.submit(name, [{"ref": "a", "type": t, "depends_on": ["b"]},
                                           {"ref": "b", "type": t, "depends_on": ["a"]}])
        self.assertTrue((e.exception.field or "").startswith("steps["), e.exception.field)
        with self.assertRaises(jobd.NotFound):
            self.c.workflows.get(2_000_000_000)

    def test_enqueue_debounce_unique(self) -> None:
        q, t, k = unique("deb"), unique("deb.type"), unique("deb-key")
        d1 = self.c.enqueue(t, {"n": 1}, queue=q, debounce=(k, "1h"))
        d2 = self.c.enqueue(t, {"n": 2}, queue=q, debounce={"key": k, "for": 7200})
        self.assertEqual((d1.debounced, d2.debounced, d2.id, d2.payload), (False, True, d1.id, {"n": 2}))
        assert d2.run_at is not None
        ahead = (d2.run_at - dt.datetime.now(dt.timezone.utc)).total_seconds()
        self.assertAlmostEqual(ahead, 7200, delta=60)
        u1 = self.c.enqueue(t, queue=q, unique=(k + "-u", dt.timedelta(hours=1)))
        u2 = self.c.enqueue(t, {"other": True}, queue=q, unique=(k + "-u", "1h"))
        self.assertEqual((u1.replayed, u2.replayed, u2.id), (False, True, u1.id))
        with self.assertRaises(jobd.BadRequest) as e:
            self.c.enqueue(t, queue=q, debounce=(k, "1h"), idempotency_key=k)
        self.assertEqual(e.exception.code, "invalid_field")

    def test_enqueue_group(self) -> None:
        q, t = unique("grp"), unique("grp.type")
        a = self.c.enqueue(t, queue=q, group="tenant-a")
        self.assertEqual((a.group, self.c.get(a.id).group), ("tenant-a", "tenant-a"))
        self.assertIsNone(self.c.enqueue(t, queue=q).group)
        ids = self.c.enqueue_many([{"type": t, "queue": q, "group": "tenant-b"},
                                   {"type": t, "queue": q, "group": "tenant-b"}, (t, None)])
        self.assertEqual([self.c.get(i).group for i in ids], ["tenant-b", "tenant-b", None])
        with self.assertRaises(jobd.BadRequest) as e:
            self.c.enqueue(t, queue=q, group="no spaces")
        self.assertEqual((e.exception.code, e.exception.field), ("invalid_field", "group"))
        self.assertEqual(sorted(j.id for j in self.c.jobs(queue=q, group="tenant-b")),
                         sorted(ids[:2]))
        gs = self.c.queues.groups(q)
        self.assertEqual([(g.group, g.pending, g.running) for g in gs],
                         [("tenant-b", 2, 0), (None, 1, 0), ("tenant-a", 1, 0)])
        self.assertEqual(len(self.c.queues.groups(q, limit=1)), 1)
        qu = self.c.queues.put(q, group_max_running=2, group_rate=(5, "1s"))
        self.assertEqual((qu.group_max_running, qu.group_rate), (2, {"limit": 5, "per": "1s"}))
        qu = self.c.queues.put(q, group_max_running=None)
        self.assertEqual((qu.group_max_running, qu.group_rate), (None, {"limit": 5, "per": "1s"}))

    def test_workflow_ops(self) -> None:
        q, t, wfs = unique("wfops"), unique("wfops.type"), self.c.workflows
        sub = wfs.submit(unique("wfops"), [{"ref": "a", "type": t, "queue": q},
                                           {"ref": "b", "type": t, "queue": q, "depends_on": ["a"]}])
        a, b = sub.jobs["a"], sub.jobs["b"]
        added = wfs.add_steps(sub.id, [{"ref": "x", "type": t, "queue": q, "depends_on": ["a"]}],
                              before=["b"])
        self.assertEqual(list(added), ["x"])
        self.assertEqual(self.c.get(b).depends_on, sorted([a, added["x"]]))
        self.assertEqual([s.ref for s in wfs.get(sub.id).steps], ["a", "b", "x"])
        with self.assertRaises(jobd.Conflict) as e:
            wfs.add_steps(sub.id, [{"ref": "y", "type": t, "queue": q}], before=["a"])
        self.assertEqual((e.exception.code, e.exception.field), ("step_not_waiting", "before[0]"))
        with self.assertRaises(jobd.Conflict) as e:
            wfs.delete(sub.id)
        self.assertEqual(e.exception.code, "workflow_running")
        w = wfs.cancel(sub.id)
        self.assertEqual((w.status, w.counts["cancelled"]), ("failed", 3))
        w = wfs.retry(sub.id)
        self.assertEqual((w.status, {s.ref: s.status for s in w.steps}),
                         ("running", {"a": "pending", "b": "waiting", "x": "waiting"}))
        wfs.cancel(sub.id)
        wfs.delete(sub.id)
        with self.assertRaises(jobd.NotFound):
            wfs.get(sub.id)
        with self.assertRaises(jobd.NotFound):
            self.c.get(a)

    def test_get(self) -> None:
        j = self.c.enqueue(unique("get.type"), [1, "two", None], queue=unique("get"))
        got = self.c.get(j.id)
        self.assertEqual((got.id, got.payload, got.status), (j.id, [1, "two", None], "pending"))
        with self.assertRaises(jobd.NotFound) as e:
            self.c.get(2_000_000_000)
        self.assertEqual((e.exception.status, e.exception.code), (404, "not_found"))

    def test_wait_result(self) -> None:
        q, t = unique("wait"), unique("wait.type")
        j = self.c.enqueue(t, {"x": 2}, queue=q)
        self.run_jobs(q, t, lambda job, ctx: {"double": job.payload["x"] * 2})
        done = self.c.wait(j.id, timeout=harness.DEADLINE)
        self.assertEqual((done.status, done.result), ("succeeded", {"double": 4}))
        idle = self.c.enqueue(unique("nobody.type"), queue=unique("nobody"))
        t0 = dt.datetime.now()
        still = self.c.wait(idle.id, timeout=0.5)
        self.assertEqual(still.status, "pending")
        self.assertGreaterEqual((dt.datetime.now() - t0).total_seconds(), 0.45)

    def test_list_paging(self) -> None:
        t, q = unique("page.type"), unique("page")
        ids = self.c.enqueue_many([{"type": t, "queue": q, "payload": i} for i in range(130)])
        seen = [j.id for j in self.c.jobs(status="pending", queue=q, page_size=50)]
        self.assertEqual(sorted(seen), sorted(ids))
        self.assertEqual(len(seen), len(set(seen)))
        self.assertEqual(seen, sorted(seen, reverse=True))  # newest first
        self.assertEqual(list(self.c.jobs(status="running", queue=q)), [])

    def test_cancel(self) -> None:
        q, t = unique("cancel"), unique("cancel.type")
        j = self.c.enqueue(t, queue=q)
        self.assertEqual(self.c.cancel(j.id).status, "cancelled")
        done = self.c.enqueue(t, queue=q)
        self.run_jobs(q, t, lambda job, ctx: None)
        wait_until(lambda: self.c.get(done.id).status == "succeeded", "the job to succeed")
        with self.assertRaises(jobd.Conflict) as e:
            self.c.cancel(done.id)
        self.assertEqual(e.exception.code, "invalid_state")

    def test_cancels_parked(self) -> None:
        import threading
        import time
        q, t = unique("cancels"), unique("cancels.type")
        release = threading.Event()
        self.addCleanup(release.set)
        self.run_jobs(q, t, lambda job, ctx: release.wait(30))
        j = self.c.enqueue(t, queue=q)
        wait_until(lambda: self.c.get(j.id).status == "running", "the job to run")
        self.assertEqual(self.c.cancels([j.id]), [])
        got: list = []
        waiter = threading.Thread(target=lambda: got.append(self.c.cancels([j.id, j.id], wait=20)))
        t0 = time.monotonic()
        waiter.start()
        time.sleep(0.3)  # parked by now, most likely; either way the answer is the same
        self.c.cancel(j.id)
        waiter.join(30)
        self.assertEqual(got, [[j.id]])
        self.assertLess(time.monotonic() - t0, 10)  # not the 20 s wait
        release.set()

    def test_retry(self) -> None:
        q, t = unique("retry"), unique("retry.type")
        j = self.c.enqueue(t, queue=q, max_attempts=1)

        def boom(job: jobd.Job, ctx: jobd.Context) -> None:
            raise jobd.Permanent("no")
        w = self.run_jobs(q, t, boom)
        wait_until(lambda: self.c.get(j.id).status == "dead", "the job to go dead")
        w.stop()
        w.join(30)
        again = self.c.retry(j.id)
        self.assertEqual(again.status, "pending")
        self.assertEqual(again.attempt_floor, again.attempt)
        with self.assertRaises(jobd.Conflict):
            self.c.retry(j.id)
        self.c.delete(j.id)
        with self.assertRaises(jobd.NotFound):
            self.c.get(j.id)

    def test_schedules(self) -> None:
        s = self.c.schedules
        name, t, q = unique("sched"), unique("sched.type"), unique("sched-q")
        created = s.put(name, "0 3 * * *", t, {"r": 1}, timezone="Europe/Berlin", queue=q,
                        priority=2, max_attempts=4, catchup="skip")
        self.assertEqual((created.name, created.cron, created.timezone, created.type,
                          created.payload, created.queue, created.priority,
                          created.max_attempts, created.catchup, created.paused),
                         (name, "0 3 * * *", "Europe/Berlin", t, {"r": 1}, q, 2, 4, "skip",
                          False))
        self.assertEqual(s.put(name, "0 4 * * *", t, queue=q).cron, "0 4 * * *")
        self.assertEqual(s.get(name).cron, "0 4 * * *")
        self.assertIn(name, [x.name for x in s.list()])
        self.assertTrue(s.pause(name).paused)
        self.assertFalse(s.resume(name).paused)
        job = s.trigger(name)
        self.assertEqual((job.schedule, job.type, job.queue), (name, t, q))
        self.assertEqual(self.c.get(job.id).schedule, name)
        nxt = s.next(name, count=3)
        self.assertEqual(len(nxt), 3)
        self.assertTrue(all(x.hour == 4 and x.tzinfo is not None for x in nxt))
        with self.assertRaises(jobd.Conflict):
            s.create(name, "* * * * *", t)
        other = unique("sched")
        self.assertEqual(s.create(other, "*/5 * * * *", t).name, other)
        s.delete(name)
        s.delete(other)
        with self.assertRaises(jobd.NotFound):
            s.get(name)
        with self.assertRaises(jobd.BadRequest) as e:
            s.put(unique("sched"), "0 25 * * *", t)
        self.assertEqual(e.exception.field, "cron.hour")

    def test_queues(self) -> None:
        qs = self.c.queues
        q = unique("queues")
        self.c.enqueue(unique("queues.type"), queue=q)
        # On PostgreSQL the counts come from a cache about 1 s old (docs/API.md, Queues).
        got = wait_until(lambda: (lambda x: x if x and x.pending == 1 else None)(qs.get(q)),
                         "the queue listed with its job")
        self.assertFalse(got.paused)
        self.assertTrue(qs.pause(q).paused)
        self.assertTrue(next(x for x in qs.list() if x.name == q).paused)
        self.assertFalse(qs.resume(q).paused)
        lim = qs.put(q, max_running=3, rate=(10, "1s"))
        self.assertEqual((lim.max_running, lim.rate), (3, {"limit": 10, "per": "1s"}))
        lim = qs.put(q, rate=None)
        self.assertEqual((lim.max_running, lim.rate), (3, None))
        self.assertIsNone(qs.put(q, max_running=None).max_running)

    def test_stats_and_workers(self) -> None:
        q, t = unique("stats"), unique("stats.type")
        j = self.c.enqueue(t, queue=q)
        w = self.run_jobs(q, t, lambda job, ctx: 1)
        self.c.wait(j.id, timeout=harness.DEADLINE)
        st = self.c.stats(since="5m", step="1m", queue=q)
        self.assertEqual(st["step_s"], 60)
        self.assertEqual(sum(p["enqueued"] for p in st["series"]), 1)
        self.assertEqual(sum(p["succeeded"] for p in st["series"]), 1)
        ws = wait_until(lambda: [x for x in self.c.workers() if x.id == w.id], "the worker")
        self.assertEqual(ws[0].state, "active")
        self.assertEqual(self.c.whoami()["role"], "admin")
        self.assertTrue(self.c.healthy())
        atts = self.c.attempts(j.id)
        self.assertEqual([(a.attempt, a.outcome) for a in atts], [(1, "succeeded")])
        res = self.c.bulk("cancel", queue=q, status="pending")
        self.assertEqual(res["matched"], 0)

    def test_auth_token(self) -> None:
        st = harness.Store("sqlite")
        self.addCleanup(st.close)
        tokens = os.path.join(st.dir, "tokens")
        with open(tokens, "w") as f:
            f.write("py-admin-token-0123456789 admin\npy-read-token-00000000001 read\n")
        os.chmod(tokens, 0o600)
        srv = harness.Server(st.url, ["--tokens", tokens])
        self.addCleanup(srv.stop)
        with mock.patch.dict(os.environ, {"JOBD_SERVER": srv.url}, clear=False):
            os.environ.pop("JOBD_TOKEN", None)
            anon = jobd.Client()
            self.assertEqual(anon.server, srv.url)
            with self.assertRaises(jobd.Unauthorized) as e:
                anon.enqueue("auth.type")
            self.assertEqual((e.exception.status, e.exception.code), (401, "unauthorized"))
            os.environ["JOBD_TOKEN"] = "py-admin-token-0123456789"
            c = jobd.Client()
            self.assertEqual(c.whoami(), {"role": "admin", "tokens": True, "token_sent": True})
            self.assertEqual(c.enqueue("auth.type").status, "pending")
            ro = jobd.Client(token="py-read-token-00000000001")
            with self.assertRaises(jobd.Forbidden) as e2:
                ro.enqueue("auth.type")
            self.assertEqual(e2.exception.code, "forbidden")


if __name__ == "__main__":
    unittest.main()
