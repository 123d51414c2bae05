// worker.test.mjs — the Worker cases of clients/cases.json in this process
// against a real `jobd server`, run at once (each its own job types).
import { before, after, describe } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { caseTest } from "./lib/cases.mjs";
import { startServer, until } from "./lib/server.mjs";
import { Client, Worker, Permanent } from "../dist/index.js";

let srv, c;

before(async () => {
  srv = await startServer({ args: ["--backoff-base", "100ms", "--backoff-cap", "300ms", "--reap-interval", "500ms"] });
  c = new Client(srv.url);
});

after(async () => {
  await srv?.stop();
});

/** Runs fn with a started worker (options, {type: handler}), then stops it. */
async function withWorker(opts, handlers, fn) {
  const w = new Worker({ client: c, handleSignals: false, ...opts });
  for (const [t, h] of Object.entries(handlers)) w.handle(t, h);
  const r = w.run();
  try {
    return await fn(w);
  } finally {
    await w.stop();
    await r;
  }
}

function deferred() {
  let resolve;
  const p = new Promise((r) => { resolve = r; });
  return { p, resolve };
}

const sleep = (ms, signal) => new Promise((resolve, reject) => {
  const t = setTimeout(resolve, ms);
  signal?.addEventListener("abort", () => { clearTimeout(t); reject(signal.reason); }, { once: true });
});

describe("worker", { concurrency: true }, () => {
  caseTest("worker_complete", async () => {
    await withWorker({}, { "w.add": (job) => ({ sum: job.payload.a + job.payload.b }) }, async (w) => {
      const j = await c.enqueue("w.add", { a: 2, b: 3 });
      const done = await c.wait(j.id, { timeout: 20 });
      assert.equal(done.status, "succeeded");
      assert.deepEqual(done.result, { sum: 5 });
      assert.equal(done.attempt, 1);
      assert.equal(done.worker_id, w.id);
      const none = await c.enqueue("w.add", { a: 1, b: 1 });
      assert.equal((await c.wait(none.id, { timeout: 20 })).status, "succeeded");
    });
  });

  caseTest("worker_heartbeat_long_job", async () => {
    let beats = 0;
    await withWorker({ lease: 2 }, {
      "w.long": async (job, ctx) => {
        await sleep(6000, ctx.signal);
        return { slept: 6 };
      },
    }, async (w) => {
      const j = await c.enqueue("w.long", {});
      const t0 = Date.now();
      const done = await c.wait(j.id, { timeout: 30 });
      assert.equal(done.status, "succeeded", JSON.stringify(done));
      assert.equal(done.attempt, 1);
      assert.ok(Date.now() - t0 >= 5500);
      assert.equal((await c.attempts(j.id)).length, 1);
      beats = w.counts.lost;
    });
    assert.equal(beats, 0);
  });

  caseTest("worker_error_retried", async () => {
    await withWorker({}, {
      "w.flaky": (job) => {
        if (job.attempt === 1) throw new Error("upstream said no (attempt 1)");
        return { ok: job.attempt };
      },
    }, async () => {
      const j = await c.enqueue("w.flaky", {}, { max_attempts: 5 });
      const done = await c.wait(j.id, { timeout: 30 });
      assert.equal(done.status, "succeeded");
      assert.equal(done.attempt, 2);
      assert.deepEqual(done.result, { ok: 2 });
      assert.match(done.last_error, /upstream said no \(attempt 1\)/);
      const at = await c.attempts(j.id);
      assert.equal(at[0].outcome, "failed");
    });
  });

  caseTest("worker_permanent_dead", async () => {
    await withWorker({}, { "w.perm": () => { throw new Permanent("the card was declined"); } }, async () => {
      const j = await c.enqueue("w.perm", {}, { max_attempts: 10 });
      const done = await c.wait(j.id, { timeout: 20 });
      assert.equal(done.status, "dead");
      assert.equal(done.attempt, 1);
      assert.match(done.last_error, /the card was declined/);
    });
  });

  caseTest("worker_timeout", async () => {
    const seen = deferred();
    await withWorker({ lease: 10 }, {
      "w.slow": async (job, ctx) => {
        try {
          await sleep(20000, ctx.signal);
        } finally {
          seen.resolve(ctx.reason);
        }
      },
    }, async () => {
      const j = await c.enqueue("w.slow", {}, { timeout: "1s", max_attempts: 1 });
      const t0 = Date.now();
      assert.equal(await seen.p, "timeout");
      const done = await c.wait(j.id, { timeout: 20 });
      assert.ok(Date.now() - t0 < 10000);
      assert.equal(done.status, "dead");
      assert.match(done.last_error, /timed out/);
      const at = await c.attempts(j.id);
      assert.equal(at.length, 1);
      assert.match(at[0].error, /timed out/);
    });
  });

  caseTest("worker_cancel_reaches_handler", async () => {
    const started = deferred();
    const seen = deferred();
    await withWorker({ lease: 3 }, {
      "w.cancel": async (job, ctx) => {
        started.resolve();
        try {
          await sleep(30000, ctx.signal);
        } finally {
          seen.resolve({ reason: ctx.reason, cancelled: ctx.cancelled, at: Date.now() });
        }
      },
    }, async () => {
      const j = await c.enqueue("w.cancel", {});
      await started.p;
      const t0 = Date.now();
      const r = await c.cancel(j.id);
      assert.equal(r.status, "running");
      const s = await seen.p;
      assert.equal(s.reason, "cancelled");
      assert.equal(s.cancelled, true);
      assert.ok(s.at - t0 < 3000, "within the next heartbeat (1 s)");
      const done = await c.wait(j.id, { timeout: 20 });
      assert.equal(done.status, "cancelled");
    });
  });

  caseTest("worker_report_retried", async () => {
    // A proxy in front of the server that forwards the first completion,
    // then drops the connection instead of answering it.
    const target = new URL(srv.url);
    let completes = 0;
    const proxy = http.createServer((req, res) => {
      const chunks = [];
      req.on("data", (d) => chunks.push(d));
      req.on("end", () => {
        const isComplete = /\/complete$/.test(req.url);
        const n = isComplete ? ++completes : 0;
        const up = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method,
                                  headers: req.headers }, (ur) => {
          const body = [];
          ur.on("data", (d) => body.push(d));
          ur.on("end", () => {
            if (n === 1) return req.socket.destroy();
            res.writeHead(ur.statusCode, ur.headers);
            res.end(Buffer.concat(body));
          });
        });
        up.end(Buffer.concat(chunks));
      });
    });
    await new Promise((r) => proxy.listen(0, "127.0.0.1", r));
    try {
      const pc = new Client(`http://127.0.0.1:${proxy.address().port}`);
      const w = new Worker({ client: pc, handleSignals: false });
      w.handle("w.report", () => ({ charged: 1 }));
      const r = w.run();
      try {
        const j = await c.enqueue("w.report", {});
        const done = await c.wait(j.id, { timeout: 20 });
        assert.equal(done.status, "succeeded");
        assert.equal(done.attempt, 1);
        assert.deepEqual(done.result, { charged: 1 });
        await until(() => w.counts.succeeded === 1, 10000, "the worker to count the completion");
        assert.ok(completes >= 2, "the completion was sent again");
        assert.ok(w.counts.reportRetries >= 1);
        assert.equal(w.counts.lost, 0, "the repeat that met stale_attempt was not an error");
        assert.equal((await c.attempts(j.id)).length, 1);
      } finally {
        await w.stop();
        await r;
      }
    } finally {
      proxy.closeAllConnections?.();
      await new Promise((r) => proxy.close(r));
    }
  });

  caseTest("worker_release_unstarted", async () => {
    const jobs = await c.enqueueMany([1, 2, 3].map((i) => ({ type: "w.rel", payload: { i }, priority: 3 - i })));
    const started = deferred();
    const finish = deferred();
    const w = new Worker({ client: c, handleSignals: false, concurrency: 1, prefetch: 2, shutdownGrace: 10 });
    w.handle("w.rel", async (job) => {
      started.resolve(job.id);
      await finish.p;
      return { i: job.payload.i };
    });
    const r = w.run();
    const first = await started.p;
    assert.equal(first, jobs[0].id);
    await until(async () => (await Promise.all(jobs.map((j) => c.get(j.id)))).every((j) => j.status === "running"),
                10000, "all three claimed");
    const stopping = w.stop();
    finish.resolve();
    await stopping;
    await r;
    assert.equal((await c.get(jobs[0].id)).status, "succeeded");
    for (const j of jobs.slice(1)) {
      const g = await c.get(j.id);
      assert.equal(g.status, "pending");
      assert.equal(g.attempt, 1);
      assert.equal(g.attempt_floor, 1);
      assert.equal(g.worker_id, null);
    }
    assert.equal(w.counts.released, 2);
    await c.bulk("cancel", { type: "w.rel", status: "pending" });
  });

  caseTest("worker_presence", async () => {
    const w = new Worker({ client: c, handleSignals: false, queues: ["pres-a", "pres-b"], concurrency: 3,
                           id: "presence-test-worker" });
    w.handle("w.pres.one", () => 1).handle("w.pres.two", () => 2);
    const r = w.run();
    // its first claim lists it before its own announce lands (a claim is
    // presence, docs/API.md): wait for the announce, which names its pid
    const me = await until(async () => (await c.workers()).find((x) => x.id === "presence-test-worker" &&
                                                                   x.pid === process.pid),
                           10000, "the worker to be listed");
    assert.deepEqual([...me.queues].sort(), ["pres-a", "pres-b"]);
    assert.deepEqual([...me.types].sort(), ["w.pres.one", "w.pres.two"]);
    assert.equal(me.concurrency, 3);
    assert.equal(me.state, "active");
    assert.equal(me.pid, process.pid);
    await w.stop();
    await r;
    assert.ok(!(await c.workers()).some((x) => x.id === "presence-test-worker"), "withdrawn when it stops");
  });

  caseTest("worker_parents", async () => {
    await withWorker({}, {
      "w.parent": (job) => ({ v10: job.payload.v * 10 }),
      "w.child": (job, ctx) => ctx.parents.map((p) => [p.id, p.step, p.type, p.status, p.result]),
    }, async () => {
      const p1 = await c.enqueue("w.parent", { v: 1 });
      const p2 = await c.enqueue("w.parent", { v: 2 });
      const child = await c.enqueue("w.child", {}, { depends_on: [p2.id, p1.id] });
      const lone = await c.enqueue("w.child", {});
      const done = await c.wait(child.id, { timeout: 30 });
      assert.equal(done.status, "succeeded");
      assert.deepEqual(done.result, [[p1.id, null, "w.parent", "succeeded", { v10: 10 }],
                                     [p2.id, null, "w.parent", "succeeded", { v10: 20 }]]);
      assert.deepEqual((await c.wait(lone.id, { timeout: 30 })).result, []);
    });
  });

  caseTest("worker_progress", async () => {
    const goOn = deferred();
    let saved, took;
    await withWorker({}, {
      "w.progress": async (job, ctx) => {
        saved = ctx;
        took = await ctx.progress(40, "3 of 8 files", { done: 3 });
        await Promise.race([goOn.p, sleep(30_000, ctx.signal)]);
        return "ok";
      },
    }, async () => {
      const j = await c.enqueue("w.progress", {});
      const running = await until(async () => { const x = await c.get(j.id); return x.progress ? x : null; }, 20000,
                                  "the job's progress");
      assert.equal(running.status, "running");
      assert.deepEqual([running.progress.percent, running.progress.message, running.progress.data],
                       [40, "3 of 8 files", { done: 3 }]);
      goOn.resolve();
      await until(() => took !== undefined, 20000, "the progress call's answer");
      assert.equal(took, true);
      assert.equal((await c.wait(j.id, { timeout: 30 })).status, "succeeded");
      // the attempt is over: its progress is stale, said (false) but not thrown
      assert.equal(await saved.progress(90, "late"), false);
      await assert.rejects(saved.progress(101), RangeError);
    });
  });
});
