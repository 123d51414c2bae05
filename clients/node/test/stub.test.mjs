// stub.test.mjs — what needs a server that misbehaves on purpose: a stub
// HTTP server (node:http) answering every error code of clients/cases.json,
// dropping connections and answering 503.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { caseTest, cases } from "./lib/cases.mjs";
import { startServer } from "./lib/server.mjs";
import * as jobd from "../dist/index.js";

const KIND_CLASS = {
  BadRequest: jobd.BadRequestError, Unauthorized: jobd.UnauthorizedError, Forbidden: jobd.ForbiddenError,
  NotFound: jobd.NotFoundError, Conflict: jobd.ConflictError, StaleAttempt: jobd.StaleAttemptError,
  Unavailable: jobd.UnavailableError, ServerError: jobd.ServerError,
};

let stub, url;
/** What the stub does next for a path: a queue of actions ("drop", or [status, body]). */
const plan = new Map();
const hits = new Map();

before(async () => {
  stub = http.createServer((req, res) => {
    const path = req.url.split("?")[0];
    hits.set(`${req.method} ${path}`, (hits.get(`${req.method} ${path}`) ?? 0) + 1);
    req.resume();
    req.on("end", () => {
      const m = /^\/v1\/jobs\/(\d+)$/.exec(path);
      const q = plan.get(`${req.method} ${path}`);
      const act = q?.length ? q.shift() : null;
      if (act === "drop") return req.socket.destroy();
      if (act) {
        res.writeHead(act[0], { "content-type": "application/json" });
        return res.end(JSON.stringify(act[1]));
      }
      if (m && req.method === "GET" && Number(m[1]) < 1000) {
        const e = cases.error_codes[Number(m[1])];
        res.writeHead(e.status, { "content-type": "application/json" });
        return res.end(JSON.stringify({ error: { code: e.code, message: `stub says ${e.code}`, field: `f_${e.code}` } }));
      }
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "not_found", message: "no route", field: null } }));
    });
  });
  await new Promise((r) => stub.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${stub.address().port}`;
});

after(() => new Promise((r) => { stub.closeAllConnections?.(); stub.close(r); }));

const JOB = { id: 5000, type: "t", status: "pending" };

caseTest("errors_typed", async () => {
  const c = new jobd.Client({ server: url, retries: 0 });
  for (const [i, e] of cases.error_codes.entries()) {
    await assert.rejects(c.get(i), (err) => {
      const cls = KIND_CLASS[e.kind];
      assert.ok(cls, `no class for kind ${e.kind}`);
      assert.ok(err instanceof cls, `${e.code}: ${err.name} is not ${cls.name}`);
      assert.ok(err instanceof jobd.JobdError);
      assert.equal(err.name, cls.name);
      assert.equal(err.status, e.status);
      assert.equal(err.code, e.code);
      assert.equal(err.message, `stub says ${e.code}`);
      assert.equal(err.field, `f_${e.code}`);
      return true;
    });
  }
  // A BadRequest from a real server names the field.
  const srv = await startServer();
  try {
    const real = new jobd.Client(srv.url);
    await assert.rejects(real.enqueue("t", {}, { priority: "high" }), (err) => {
      assert.ok(err instanceof jobd.BadRequestError);
      assert.equal(err.code, "invalid_field");
      assert.equal(err.field, "priority");
      return true;
    });
    await assert.rejects(real.enqueue("t", {}, { prioritee: 1 }), (err) => {
      assert.equal(err.code, "unknown_field");
      assert.equal(err.field, "prioritee");
      return true;
    });
  } finally {
    await srv.stop();
  }
});

caseTest("retry_safe_requests", async () => {
  const c = new jobd.Client({ server: url, retryBase: "10ms", retryCap: "50ms" });
  const unavailable = [503, { error: { code: "store_unavailable", message: "down", field: null } }];
  // A GET meets a dropped connection, then a 503, then succeeds.
  plan.set("GET /v1/jobs/5000", ["drop", unavailable, [200, JOB]]);
  assert.deepEqual(await c.get(5000), JOB);
  assert.equal(hits.get("GET /v1/jobs/5000"), 3);
  // An enqueue without a key is not sent again after a 503 (nor after a drop).
  plan.set("POST /v1/jobs", [unavailable, [201, JOB]]);
  await assert.rejects(c.enqueue("t", {}), jobd.UnavailableError);
  assert.equal(hits.get("POST /v1/jobs"), 1);
  plan.set("POST /v1/jobs", ["drop", [201, JOB]]);
  await assert.rejects(c.enqueue("t", {}), jobd.NetworkError);
  assert.equal(hits.get("POST /v1/jobs"), 2);
  // With a key it is.
  plan.set("POST /v1/jobs", [unavailable, "drop", [201, JOB]]);
  assert.deepEqual(await c.enqueue("t", {}, { idempotency_key: "k" }), JOB);
  assert.equal(hits.get("POST /v1/jobs"), 5);
  // Retries end: a GET that keeps meeting 503 gives up with the error.
  plan.set("GET /v1/jobs/5001", Array(10).fill(unavailable));
  const few = new jobd.Client({ server: url, retryBase: "1ms", retries: 2 });
  await assert.rejects(few.get(5001), jobd.UnavailableError);
  assert.equal(hits.get("GET /v1/jobs/5001"), 3);
  // Nothing listens: a NetworkError, status 0.
  const dead = new jobd.Client({ server: "http://127.0.0.1:9", retries: 1, retryBase: "1ms" });
  await assert.rejects(dead.get(1), (e) => e instanceof jobd.NetworkError && e.status === 0);
});
