// client.test.mjs — the Client cases of clients/cases.json against a real
// `jobd server` (test/lib/server.mjs: SQLite or PostgreSQL).
import { before, after, test } from "node:test";
import assert from "node:assert/strict";
import { caseTest } from "./lib/cases.mjs";
import { startServer, until } from "./lib/server.mjs";
import { Client, Worker, Permanent, NotFoundError, ConflictError, UnauthorizedError, ForbiddenError,
         BadRequestError } from "../dist/index.js";

let srv, c, w, run;

before(async () => {
  srv = await startServer();
  c = new Client(srv.url);
  w = new Worker({ client: c, handleSignals: false, id: "client-suite" });
  w.handle("c.ok", (job) => ({ echo: job.payload }));
  w.handle("c.dead", () => { throw new Permanent("no way"); });
  run = w.run();
});

after(async () => {
  await w?.stop();
  await run;
  await srv?.stop();
});

caseTest("enqueue_every_field", async () => {
  const runAt = new Date(Date.now() + 3600_000);
  runAt.setMilliseconds(250);
  const j = await c.enqueue("email.send", { to: "a@b.c", n: [1, 2.5] }, {
    queue: "mail", priority: 7, run_at: runAt, max_attempts: 3, idempotency_key: "every-field-1", timeout: "1m30s",
  });
  assert.equal(j.type, "email.send");
  assert.deepEqual(j.payload, { n: [1, 2.5], to: "a@b.c" });
  assert.equal(j.queue, "mail");
  assert.equal(j.priority, 7);
  assert.equal(j.run_at, runAt.toISOString());
  assert.equal(j.max_attempts, 3);
  assert.equal(j.idempotency_key, "every-field-1");
  assert.equal(j.timeout_s, 90);
  assert.equal(j.status, "pending");
  const again = await c.get(j.id);
  assert.deepEqual(again, j);
  const k = await c.enqueue("email.send", null, { timeout: 0.25, run_at: "2030-01-01T01:00:00+01:00" });
  assert.equal(k.timeout_s, 0.25);
  assert.equal(k.run_at, "2030-01-01T00:00:00.000Z");
  assert.equal(k.payload, null);
});

caseTest("enqueue_in", async () => {
  for (const [delay, ms] of [["90s", 90_000], [2.5, 2500], ["1h30m", 5_400_000]]) {
    const j = await c.enqueue("later", {}, { in: delay, queue: "later" });
    const d = Date.parse(j.run_at) - Date.parse(j.created_at);
    // Both are the server's clock, but created_at is its commit's time
    // (group commit, docs/API.md POST /v1/jobs): allow for the wait.
    assert.ok(Math.abs(d - ms) <= 250, `in ${delay}: run_at is ${d} ms after created_at, not ${ms}`);
  }
  await assert.rejects(c.enqueue("later", {}, { in: "soon" }), TypeError);
});

caseTest("enqueue_traceparent", async () => {
  const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const j = await c.enqueue("traced", {}, { queue: "traced", traceparent: tp });
  assert.equal(j.traceparent, tp);
  assert.equal((await c.get(j.id)).traceparent, tp);
  assert.equal((await c.enqueue("traced", {}, { queue: "traced" })).traceparent, null);
  const many = await c.enqueueMany([{ type: "traced", queue: "traced", traceparent: tp }, { type: "traced", queue: "traced" }]);
  assert.deepEqual(await Promise.all(many.map(async (m) => (await c.get(m.id)).traceparent)), [tp, null]);
  await assert.rejects(c.enqueue("traced", {}, { traceparent: "00-nope" }), (e) => {
    assert.ok(e instanceof BadRequestError);
    assert.equal(e.code, "invalid_field");
    assert.equal(e.field, "traceparent");
    return true;
  });
});

caseTest("enqueue_idempotent_replay", async () => {
  const a = await c.enqueue("idem", { order: 1 }, { idempotency_key: "order-1", queue: "idem" });
  const b = await c.enqueue("idem", { order: 1 }, { idempotency_key: "order-1", queue: "idem" });
  assert.equal(b.id, a.id);
  const all = [];
  for await (const j of c.jobs({ queue: "idem" })) all.push(j);
  assert.equal(all.length, 1);
  await assert.rejects(c.enqueue("idem", { order: 2 }, { idempotency_key: "order-1", queue: "idem" }), (e) => {
    assert.ok(e instanceof ConflictError);
    assert.equal(e.status, 409);
    assert.equal(e.code, "idempotency_conflict");
    return true;
  });
});

caseTest("enqueue_many", async () => {
  // 2,500: three requests of at most 1,000, in flight together; the answer
  // keeps the order of the list, and ids grow within each request
  const items = Array.from({ length: 2500 }, (_, i) => ({ type: "many", payload: { i }, queue: "many", priority: i % 3 }));
  const jobs = await c.enqueueMany(items);
  assert.equal(jobs.length, 2500);
  jobs.forEach((j, i) => {
    assert.deepEqual(j.payload, { i });
    if (i % 1000 > 0) assert.ok(j.id > jobs[i - 1].id, "ids in order within a request");
  });
  assert.equal(new Set(jobs.map((j) => j.id)).size, 2500);
  for (const j of [jobs[0], jobs[1234], jobs[2499]]) assert.deepEqual(await c.get(j.id), j);
  let n = 0;
  for await (const j of c.jobs({ queue: "many", page_size: 1000 })) n += j.type === "many" ? 1 : 0;
  assert.equal(n, 2500);
  await assert.rejects(c.enqueueMany([{ type: "many" }, { type: "bad type!" }]), (e) => {
    assert.ok(e instanceof BadRequestError);
    assert.equal(e.field, "jobs[1].type");
    return true;
  });
  assert.deepEqual(await c.enqueueMany([]), []);
});

caseTest("enqueue_depends_on", async () => {
  const q = `deps-${process.pid}`;
  const p1 = await c.enqueue("nobody.runs.this", {}, { queue: q });
  const p2 = await c.enqueue("nobody.runs.this", {}, { queue: q });
  const child = await c.enqueue("deps.child", {}, { queue: q, depends_on: [p2.id, p1.id] });
  assert.equal(child.status, "waiting");
  assert.deepEqual(child.depends_on, [p1.id, p2.id]);
  assert.equal(child.on_parent_failure, "cancel");
  assert.equal(child.workflow, null);
  assert.equal(child.step, null);
  assert.deepEqual((await c.get(child.id)).depends_on, [p1.id, p2.id]);
  // a queue counts its waiting jobs (on PostgreSQL about a second late)
  await until(async () => {
    const queue = (await c.queues.list()).find((x) => x.name === q);
    return queue?.waiting === 1 && queue?.pending === 2;
  }, 20000, "the queue to count 1 waiting, 2 pending");
  // a parent that does not succeed: cancel (the default) or run anyway
  const px = await c.enqueue("nobody.runs.this", {}, { queue: q });
  const cc = await c.enqueue("deps.child", {}, { queue: q, depends_on: [px.id], on_parent_failure: "cancel" });
  const cr = await c.enqueue("deps.child", {}, { queue: q, depends_on: [px.id], on_parent_failure: "run" });
  const many = await c.enqueueMany([
    { type: "deps.child", queue: q, depends_on: [px.id], on_parent_failure: "run" }, { type: "deps.child", queue: q }]);
  assert.deepEqual(many.map((j) => [j.status, j.depends_on, j.on_parent_failure]),
                   [["waiting", [px.id], "run"], ["pending", [], "cancel"]]);
  await c.cancel(px.id);
  assert.equal((await c.get(cc.id)).status, "cancelled");
  assert.equal((await c.get(cr.id)).status, "pending");
  assert.equal((await c.get(many[0].id)).status, "pending");
  // the parents succeed (this file's worker runs c.ok): the child is released
  const ok1 = await c.enqueue("c.ok", 1);
  const released = await c.enqueue("deps.child", {}, { queue: q, depends_on: [ok1.id] });
  await until(async () => (await c.get(released.id)).status === "pending", 20000, "the child to be released");
  await assert.rejects(c.enqueue("deps.child", {}, { queue: q, depends_on: [2_000_000_000] }), (e) => {
    assert.ok(e instanceof BadRequestError);
    assert.equal(e.code, "invalid_field");
    assert.equal(e.field, "depends_on");
    return true;
  });
  for (const id of [p1.id, p2.id, child.id]) await c.cancel(id).catch(() => {});
});

caseTest("workflows", async () => {
  const name = `wf-${process.pid}-${Date.now()}`;
  const key = `${name}-key`;
  const steps = [{ ref: "extract", type: "wf.step", queue: "wf", payload: { day: 6 } },
                 { ref: "load", type: "wf.step", queue: "wf", depends_on: ["extract"], timeout: "30s" }];
  const sub = await c.workflows.submit({ name, idempotency_key: key, steps });
  assert.deepEqual(Object.keys(sub.jobs).sort(), ["extract", "load"]);
  const wf = await c.workflows.get(sub.id);
  assert.equal(wf.id, sub.id);
  assert.equal(wf.name, name);
  assert.equal(wf.status, "running");
  assert.equal(wf.finished_at, null);
  assert.equal(wf.counts.pending, 1);
  assert.equal(wf.counts.waiting, 1);
  assert.deepEqual(wf.steps.map((s) => [s.ref, s.job_id, s.type, s.depends_on]),
                   [["extract", sub.jobs.extract, "wf.step", []], ["load", sub.jobs.load, "wf.step", ["extract"]]]);
  const load = await c.get(sub.jobs.load);
  assert.deepEqual([load.workflow, load.step, load.status, load.depends_on, load.timeout_s],
                   [sub.id, "load", "waiting", [sub.jobs.extract], 30]);
  assert.deepEqual((await c.workflows.list({ name })).workflows.map((w) => w.id), [sub.id]);
  assert.deepEqual((await c.workflows.list({ name, status: "succeeded" })).workflows, []);
  const again = await c.workflows.submit({ name, idempotency_key: key, steps });
  assert.deepEqual(again, sub);
  await assert.rejects(c.workflows.submit({ name, steps: [
    { ref: "a", type: "wf.step", depends_on: ["b"] }, { ref: "b", type: "wf.step", depends_on: ["a"] }] }), (e) => {
    assert.ok(e instanceof BadRequestError);
    assert.match(e.field, /^steps\[/);
    return true;
  });
  await assert.rejects(c.workflows.get(2_000_000_000), NotFoundError);
});

caseTest("enqueue_debounce_unique", async () => {
  const q = `deb-${process.pid}`;
  const k = `${q}-${Date.now()}`;
  const d1 = await c.enqueue("deb.type", { n: 1 }, { queue: q, debounce: { key: k, for: "1h" } });
  const d2 = await c.enqueue("deb.type", { n: 2 }, { queue: q, debounce: { key: k, for: "2h" } });
  assert.equal(d2.id, d1.id);
  assert.deepEqual(d2.payload, { n: 2 });
  assert.ok(Math.abs(Date.parse(d2.run_at) - Date.now() - 7200_000) < 60_000, d2.run_at);
  const u1 = await c.enqueue("deb.type", {}, { queue: q, unique: { key: `${k}-u`, for: "1h" } });
  const u2 = await c.enqueue("deb.type", { other: true }, { queue: q, unique: { key: `${k}-u`, for: "1h" } });
  assert.equal(u2.id, u1.id);
  assert.deepEqual(u2.payload, {});
  await assert.rejects(c.enqueue("deb.type", {}, { queue: q, debounce: { key: k, for: "1h" }, idempotency_key: k }),
                       (e) => e instanceof BadRequestError && e.code === "invalid_field");
});

caseTest("enqueue_group", async () => {
  const q = `grp-${process.pid}`;
  const a = await c.enqueue("grp.type", {}, { queue: q, group: "tenant-a" });
  assert.equal(a.group, "tenant-a");
  assert.equal((await c.get(a.id)).group, "tenant-a");
  assert.equal((await c.enqueue("grp.type", {}, { queue: q })).group, null);
  const many = await c.enqueueMany([{ type: "grp.type", queue: q, group: "tenant-b" },
                                    { type: "grp.type", queue: q, group: "tenant-b" }]);
  assert.deepEqual(many.map((j) => j.group), ["tenant-b", "tenant-b"]);
  const listed = [];
  for await (const j of c.jobs({ queue: q, group: "tenant-b" })) listed.push(j.id);
  assert.deepEqual(listed, many.map((j) => j.id).reverse());
  await assert.rejects(c.enqueue("grp.type", {}, { queue: q, group: "no spaces" }), (e) => {
    assert.ok(e instanceof BadRequestError);
    assert.deepEqual([e.code, e.field], ["invalid_field", "group"]);
    return true;
  });
  assert.deepEqual(await c.queues.groups(q), [{ group: "tenant-b", pending: 2, running: 0 },
                                              { group: null, pending: 1, running: 0 },
                                              { group: "tenant-a", pending: 1, running: 0 }]);
  assert.equal((await c.queues.groups(q, { limit: 1 })).length, 1);
  let qu = await c.queues.put(q, { group_max_running: 2, group_rate: { limit: 5, per: "1s" } });
  assert.deepEqual([qu.group_max_running, qu.group_rate], [2, { limit: 5, per: "1s" }]);
  qu = await c.queues.put(q, { group_max_running: null });
  assert.deepEqual([qu.group_max_running, qu.group_rate], [null, { limit: 5, per: "1s" }]);
});

caseTest("workflow_ops", async () => {
  const q = `wfops-${process.pid}`;
  const wfs = c.workflows;
  const sub = await wfs.submit({ name: `${q}-${Date.now()}`, steps: [
    { ref: "a", type: "wfops.step", queue: q }, { ref: "b", type: "wfops.step", queue: q, depends_on: ["a"] }] });
  const { a, b } = sub.jobs;
  const added = await wfs.addSteps(sub.id, [{ ref: "x", type: "wfops.step", queue: q, depends_on: ["a"] }], ["b"]);
  assert.deepEqual(Object.keys(added.jobs), ["x"]);
  assert.deepEqual((await c.get(b)).depends_on, [a, added.jobs.x].sort((m, n) => m - n));
  assert.deepEqual((await wfs.get(sub.id)).steps.map((s) => s.ref), ["a", "b", "x"]);
  await assert.rejects(wfs.addSteps(sub.id, [{ ref: "y", type: "wfops.step", queue: q }], ["a"]), (e) => {
    assert.ok(e instanceof ConflictError);
    assert.deepEqual([e.code, e.field], ["step_not_waiting", "before[0]"]);
    return true;
  });
  await assert.rejects(wfs.delete(sub.id), (e) => e instanceof ConflictError && e.code === "workflow_running");
  let wf = await wfs.cancel(sub.id);
  assert.deepEqual([wf.status, wf.counts.cancelled], ["failed", 3]);
  wf = await wfs.retry(sub.id);
  assert.equal(wf.status, "running");
  assert.deepEqual(Object.fromEntries(wf.steps.map((s) => [s.ref, s.status])), { a: "pending", b: "waiting", x: "waiting" });
  await wfs.cancel(sub.id);
  await wfs.delete(sub.id);
  await assert.rejects(wfs.get(sub.id), NotFoundError);
  await assert.rejects(c.get(a), NotFoundError);
});

caseTest("get", async () => {
  const j = await c.enqueue("get.me", { x: 1 }, { queue: "get" });
  const g = await c.get(j.id);
  assert.equal(g.id, j.id);
  assert.equal(g.type, "get.me");
  await assert.rejects(c.get(987654321), (e) => {
    assert.ok(e instanceof NotFoundError);
    assert.equal(e.status, 404);
    assert.equal(e.code, "not_found");
    assert.ok(e.message.length > 0);
    return true;
  });
});

caseTest("wait_result", async () => {
  const j = await c.enqueue("c.ok", { hello: "world" });
  const done = await c.wait(j.id, { timeout: 20 });
  assert.equal(done.status, "succeeded");
  assert.deepEqual(done.result, { echo: { hello: "world" } });
  const idle = await c.enqueue("nobody.runs.this", {});
  const t0 = Date.now();
  const still = await c.wait(idle.id, { timeout: 0.3 });
  assert.equal(still.status, "pending");
  assert.ok(Date.now() - t0 >= 250, "waited about as long as asked");
});

caseTest("list_paging", async () => {
  await c.enqueueMany(Array.from({ length: 130 }, (_, i) => ({ type: "page", payload: { i }, queue: "paging" })));
  await c.enqueue("page", {}, { queue: "paging-other" });
  const seen = new Set();
  let n = 0;
  for await (const j of c.jobs({ status: "pending", queue: "paging", page_size: 50 })) {
    assert.equal(j.queue, "paging");
    seen.add(j.id);
    n++;
  }
  assert.equal(n, 130);
  assert.equal(seen.size, 130);
  const page = await c.listJobs({ queue: "paging", limit: 50 });
  assert.equal(page.jobs.length, 50);
  assert.ok(page.next);
});

caseTest("cancel", async () => {
  const p = await c.enqueue("nobody.runs.this", {}, { queue: "cancel" });
  const x = await c.cancel(p.id);
  assert.equal(x.status, "cancelled");
  assert.equal((await c.get(p.id)).status, "cancelled");
  const s = await c.enqueue("c.ok", 1);
  assert.equal((await c.wait(s.id, { timeout: 20 })).status, "succeeded");
  await assert.rejects(c.cancel(s.id), (e) => {
    assert.ok(e instanceof ConflictError);
    assert.equal(e.code, "invalid_state");
    return true;
  });
});

caseTest("retry", async () => {
  const d = await c.enqueue("c.dead", {}, { max_attempts: 5 });
  const dead = await c.wait(d.id, { timeout: 20 });
  assert.equal(dead.status, "dead");
  const r = await c.retry(d.id);
  assert.equal(r.status, "pending");
  assert.equal(r.attempt_floor, r.attempt);
  await c.cancel(r.id).catch(() => {});
  // A job that is not dead or cancelled cannot be retried. Not r: this file's
  // worker may already have claimed it and failed it dead again.
  const idle = await c.enqueue("nobody.runs.this", {}, { queue: "retry-idle" });
  await assert.rejects(c.retry(idle.id), ConflictError);
  await c.cancel(idle.id);
  const gone = await c.enqueue("nobody.runs.this", {}, { queue: "del" });
  await c.delete(gone.id);
  await assert.rejects(c.get(gone.id), NotFoundError);
});

caseTest("schedules", async () => {
  const s = await c.schedules.put("nightly", { cron: "0 3 * * *", type: "report.build", timezone: "Europe/Berlin",
                                              payload: { full: true }, queue: "reports" });
  assert.equal(s.name, "nightly");
  assert.equal(s.timezone, "Europe/Berlin");
  assert.equal(s.paused, false);
  assert.equal((await c.schedules.get("nightly")).cron, "0 3 * * *");
  assert.ok((await c.schedules.list()).some((x) => x.name === "nightly"));
  await c.schedules.create({ name: "other", cron: "*/5 * * * *", type: "x" });
  await assert.rejects(c.schedules.create({ name: "other", cron: "*/5 * * * *", type: "x" }), ConflictError);
  assert.equal((await c.schedules.pause("nightly")).paused, true);
  assert.equal((await c.schedules.resume("nightly")).paused, false);
  const job = await c.schedules.trigger("nightly");
  assert.equal(job.schedule, "nightly");
  assert.equal(job.type, "report.build");
  assert.deepEqual((await c.get(job.id)).payload, { full: true });
  const next = await c.schedules.next("nightly", 3);
  assert.equal(next.timezone, "Europe/Berlin");
  assert.equal(next.next.length, 3);
  await c.schedules.delete("nightly");
  await assert.rejects(c.schedules.get("nightly"), NotFoundError);
  await assert.rejects(c.schedules.put("x", { cron: "61 * * * *", type: "x" }), (e) => {
    assert.ok(e instanceof BadRequestError);
    assert.match(e.field, /^cron/);
    return true;
  });
});

caseTest("queues", async () => {
  await c.enqueue("nobody.runs.this", {}, { queue: "qq" });
  // On PostgreSQL the counts come from a cache about a second old (docs/API.md, GET /v1/queues).
  const q = await until(async () => (await c.queues.list()).find((x) => x.name === "qq" && x.pending === 1),
                        10000, "the queue listed with its job");
  assert.equal(q.paused, false);
  assert.equal((await c.queues.pause("qq")).paused, true);
  assert.equal((await c.queues.list()).find((x) => x.name === "qq").paused, true);
  assert.equal((await c.queues.resume("qq")).paused, false);
  const lim = await c.queues.put("qq", { max_running: 5, rate: { limit: 10, per: "1s" } });
  assert.equal(lim.max_running, 5);
  assert.deepEqual(lim.rate, { limit: 10, per: "1s" });
  assert.equal((await c.queues.put("qq", { rate: null })).rate, null);
  assert.equal((await c.queues.pause("empty-queue")).paused, true);
});

caseTest("stats_and_workers", async () => {
  await c.enqueue("c.ok", {});
  const st = await c.stats({ since: "10m", step: "1m" });
  assert.equal(st.step_s, 60);
  assert.equal(st.series.length, 10);
  assert.ok(st.series.reduce((a, p) => a + p.enqueued, 0) >= 1);
  const ws = await until(async () => (await c.workers()).find((x) => x.id === "client-suite"), 10000, "the worker listed");
  assert.equal(ws.state, "active");
  assert.deepEqual([...ws.types].sort(), ["c.dead", "c.ok"]);
  assert.equal((await c.whoami()).role, "admin");
  assert.equal(await c.health(), true);
  assert.match(await c.metrics(), /jobd_jobs_enqueued_total/);
  assert.ok(Array.isArray(await c.attempts((await c.enqueue("c.ok", {})).id)));
});

caseTest("auth_token", async () => {
  const admin = "node-admin-token-0123456789";
  const reader = "node-read-token-0123456789";
  const s = await startServer({ tokens: [`${admin} admin`, `${reader} read`] });
  const saved = { server: process.env.JOBD_SERVER, token: process.env.JOBD_TOKEN };
  try {
    const none = new Client({ server: s.url, token: null });
    await assert.rejects(none.enqueue("t", {}), (e) => {
      assert.ok(e instanceof UnauthorizedError);
      assert.equal(e.status, 401);
      assert.equal(e.code, "unauthorized");
      return true;
    });
    assert.equal((await none.whoami()).role, "none");
    process.env.JOBD_SERVER = s.url;
    process.env.JOBD_TOKEN = admin;
    const fromEnv = new Client();
    assert.equal(fromEnv.transport.server, s.url);
    assert.equal((await fromEnv.whoami()).role, "admin");
    const j = await fromEnv.enqueue("t", { via: "env" });
    assert.equal((await fromEnv.get(j.id)).id, j.id);
    const ro = new Client({ token: reader });
    assert.equal((await ro.get(j.id)).id, j.id);
    await assert.rejects(ro.enqueue("t", {}), ForbiddenError);
  } finally {
    for (const [k, v] of [["JOBD_SERVER", saved.server], ["JOBD_TOKEN", saved.token]]) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await s.stop();
  }
});

// GET /v1/cancels (docs/API.md, Hearing of a cancel): a parked ask answers
// once the running job's cancel is requested, naming it.
test("cancels: a parked ask hears of a running job's cancel", async () => {
  const j = await c.enqueue("c.cancels", {}, { queue: "cancels" });
  const claimed = await c.claim({ worker_id: "cancels-test", queues: ["cancels"], types: ["c.cancels"], limit: 1, lease_s: 60 });
  assert.equal(claimed.jobs[0].id, j.id);
  assert.deepEqual(await c.cancels([j.id]), []);
  const asked = c.cancels([j.id], { waitMs: 20_000 });
  const t0 = Date.now();
  await c.cancel(j.id);
  assert.deepEqual(await asked, [j.id]);
  assert.ok(Date.now() - t0 < 10_000, "the parked ask answered with the cancel, not at its end");
});

// GET /v1/events (docs/API.md, Events): the iterator sees a job's changes in
// order, and a resume from an event's id gets exactly what came after.
test("events: a job's changes, in order, and a resume", async () => {
  const ac = new AbortController();
  const seen = [];
  const it = c.events({ type: "c.events" }, { signal: ac.signal });
  const first = it.next(); /* connects */
  await until(async () => Number((/\njobd_event_clients (\d+)/.exec(await c.metrics()) ?? [])[1]) >= 1, 10_000);
  const j = await c.enqueue("c.events", {}, { queue: "events" });
  const claimed = await c.claim({ worker_id: "events-test", queues: ["events"], types: ["c.events"], limit: 1, lease_s: 60 });
  await c.complete(j.id, { attempt: claimed.jobs[0].attempt, lease_token: claimed.jobs[0].lease_token });
  seen.push((await first).value);
  for await (const e of it) {
    seen.push(e);
    if (seen.length === 3) break;
  }
  assert.deepEqual(seen.map((e) => [e.job, e.from, e.to]),
                   [[j.id, null, "pending"], [j.id, "pending", "running"], [j.id, "running", "succeeded"]]);
  assert.ok(seen[0].event < seen[1].event && seen[1].event < seen[2].event);
  const again = [];
  for await (const e of c.events({ job: j.id }, { lastEventId: seen[0].event, signal: ac.signal })) {
    again.push(e.event);
    if (again.length === 2) break;
  }
  assert.deepEqual(again, [seen[1].event, seen[2].event]);
  ac.abort();
  await assert.rejects(c.events({}, { lastEventId: 999_999_999 }).next(), (e) => e.code === "gone");
});
