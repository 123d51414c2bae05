// process.test.mjs — workers as real child processes (test/fixtures/
// worker.mjs): SIGKILL mid-job (the lease runs out, the reaper hands the
// job on) and SIGTERM (the drain).
import { before, after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { caseTest } from "./lib/cases.mjs";
import { startServer, until, here } from "./lib/server.mjs";
import { Client, Worker } from "../dist/index.js";

let srv, c;
const children = new Set();

before(async () => {
  srv = await startServer({ args: ["--reap-interval", "250ms", "--backoff-base", "100ms", "--backoff-cap", "200ms"] });
  c = new Client(srv.url);
});

after(async () => {
  for (const ch of children) ch.kill("SIGKILL");
  await srv?.stop();
});

/** A worker child; .lines holds what it printed, .exit resolves to its exit code. */
function child(env) {
  const ch = spawn(process.execPath, [join(here, "..", "fixtures", "worker.mjs")], {
    env: { ...process.env, JOBD_SERVER: srv.url, ...env }, stdio: ["ignore", "pipe", "inherit"],
  });
  children.add(ch);
  ch.lines = [];
  let buf = "";
  ch.stdout.on("data", (d) => {
    buf += d;
    for (let i; (i = buf.indexOf("\n")) >= 0; buf = buf.slice(i + 1)) ch.lines.push(buf.slice(0, i));
  });
  ch.exit = new Promise((r) => ch.on("exit", (code, sig) => { children.delete(ch); r(code ?? sig); }));
  return ch;
}

describe("worker processes", { concurrency: true }, () => {
  caseTest("worker_kill9_reaped", async () => {
    const j = await c.enqueue("p.kill9", { n: 1 }, { max_attempts: 3 });
    const a = child({ TYPE: "p.kill9", MODE: "hang", LEASE: "2" });
    await until(() => a.lines.includes(`started ${j.id}`), 20000, "the first worker to start the job");
    a.kill("SIGKILL");
    assert.equal(await a.exit, "SIGKILL");
    const w = new Worker({ client: c, handleSignals: false, lease: 2 });
    w.handle("p.kill9", (job) => ({ attempt: job.attempt }));
    const r = w.run();
    try {
      const done = await c.wait(j.id, { timeout: 30 });
      assert.equal(done.status, "succeeded");
      assert.equal(done.attempt, 2);
      assert.deepEqual(done.result, { attempt: 2 });
      const at = await c.attempts(j.id);
      assert.equal(at[0].outcome, "reaped");
    } finally {
      await w.stop();
      await r;
    }
  });

  caseTest("worker_sigterm_drain", async () => {
    const j = await c.enqueue("p.drain", { n: 1 });
    const b = child({ TYPE: "p.drain", MODE: "slow", SLOW_MS: "1500", LEASE: "5" });
    await until(() => b.lines.includes(`started ${j.id}`), 20000, "the worker to start the job");
    const second = await c.enqueue("p.drain", { n: 2 });
    b.kill("SIGTERM");
    assert.equal(await b.exit, 0);
    const done = await c.get(j.id);
    assert.equal(done.status, "succeeded");
    assert.deepEqual(done.result, { done: j.id, aborted: false });
    const left = await c.get(second.id);
    assert.equal(left.status, "pending");
    assert.equal(left.attempt, 0, "the draining worker claimed nothing more");
    assert.ok(b.lines.some((l) => l.startsWith("exiting")));
    assert.ok(!(await c.workers()).some((x) => x.pid === b.pid), "withdrawn");
    await c.cancel(second.id);
  });
});

test("the README's first job and first worker (examples/) run end to end", async () => {
  const { readFileSync } = await import("node:fs");
  const { execFile } = await import("node:child_process");
  const ex = join(here, "..", "..", "examples");
  const readme = readFileSync(join(here, "..", "..", "README.md"), "utf8");
  for (const f of ["first-job.mjs", "first-worker.mjs"])
    assert.ok(readme.includes(readFileSync(join(ex, f), "utf8").trim()), `README.md shows examples/${f} as it is`);
  const s = await startServer();
  const env = { ...process.env, JOBD_SERVER: s.url };
  delete env.JOBD_TOKEN;
  const w = spawn(process.execPath, [join(ex, "first-worker.mjs")], { env, stdio: ["ignore", "ignore", "inherit"] });
  const exit = new Promise((r) => w.on("exit", (code, sig) => r(code ?? sig)));
  try {
    const out = await new Promise((resolve, reject) =>
      execFile(process.execPath, [join(ex, "first-job.mjs")], { env, timeout: 60000 },
               (err, stdout) => (err ? reject(err) : resolve(stdout))));
    assert.match(out, /^succeeded \{"attempt":1,"greeting":"hello, world","job":1\}\n$/);
  } finally {
    w.kill("SIGTERM");
    assert.equal(await exit, 0);
    await s.stop();
  }
});
