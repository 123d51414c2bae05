// drive.mjs — drives a live `jobd server` through every operation of
// docs/openapi.yaml with success and error answers, each validated by
// check.mjs, then fails unless
//   - the spec and the server's route table list the same routes, with the
//     same least role (x-jobd-role against router.c);
//   - every (method, path, status) the spec declares was answered at least
//     once (a declared status no request produces is a description nobody
//     checked; a status the server gives but the spec lacks already failed).
// Run by tests/integration/test_openapi.sh, which starts the servers with
// tokens for each role and an embedded worker for type oa.echo.
//
// usage: node drive.mjs SPEC ROUTER_C TOKENS_JSON NAME BASE_URL SQLITE_FILE
//                       [NAME BASE_URL SQLITE_FILE]...
// The servers side by side, in this one process: the spec is parsed and
// its validators compiled once. SQLITE_FILE is '' on PostgreSQL, where GET
// /healthz 503 is not driven.
import fs from 'node:fs';
import { Checker } from './check.mjs';

const [specPath, routerPath, tokensJson, ...targets] = process.argv.slice(2);
const below = { read: null, worker: 'read', write: 'worker', admin: 'write' };
const MIB = 1024 * 1024;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The scenario against one server: its checker ck (base URL ck.base) and
// its SQLite file (empty on PostgreSQL). Returns the function that runs it.
function scenario(ck, dbFile) {
  const base = ck.base;
  const call = (m, p, o) => ck.call(m, p, o);

  // Routes both ways, and roles.
  function checkRoutes() {
    const ops = new Map(ck.operations().map((o) => [`${o.method} ${o.path}`, o]));
    const api = ck.routes().filter((r) => !(r.path === '/ui' || r.path.startsWith('/ui/')));
    if (api.length < 20) ck.fail(`only ${api.length} routes parsed from ${routerPath}`);
    for (const r of api) {
      const o = ops.get(`${r.method} ${r.path}`);
      if (!o) { ck.fail(`route ${r.method} ${r.path} is served but not in the spec`); continue; }
      if (o.op['x-jobd-role'] !== r.role)
        ck.fail(`${r.method} ${r.path}: x-jobd-role is ${o.op['x-jobd-role']}, the server needs ${r.role}`);
      ops.delete(`${r.method} ${r.path}`);
    }
    for (const k of ops.keys()) ck.fail(`${k} is in the spec but the server has no such route`);
  }

  // 401 without a token, 403 one role too low and from another site's page,
  // 413 one byte over, 415 a body that is not JSON: for every operation that
  // declares them.
  async function generic() {
    for (const { method, path, op } of ck.operations()) {
      const params = { id: 1, name: 'x', attempt: 1 };
      if (op.responses['401']) await call(method, path, { params, role: null, expect: 401 });
      const low = below[op['x-jobd-role']];
      if (op.responses['403'] && low)
        await call(method, path, { params, role: low, expect: 403, body: method === 'GET' ? undefined : {} });
      if (op.responses['403']) {
        const body = method === 'GET' ? undefined : {};
        const headers = { Origin: 'http://evil.example' };
        const r = await call(method, path, { params, headers, body, expect: 403 });
        if (r.body && r.body.error.code !== 'cross_site_request')
          ck.fail(`${method} ${path} from another origin: ${r.body.error.code}`);
      }
      if (op.responses['415'])
        await call(method, path, { params, raw: '{}', headers: { 'Content-Type': 'text/plain' }, expect: 415 });
      if (op.responses['413'] && path !== '/v1/jobs/batch' && !path.startsWith('/v1/workflows') &&
          !path.endsWith('/log'))
        await call(method, path, { params, raw: '"' + 'x'.repeat(MIB - 1) + '"', expect: 413 });
    }
    const tooMany = { jobs: Array.from({ length: 10001 }, () => ({ type: 'oa.x' })) };
    await call('POST', '/v1/jobs/batch', { body: tooMany, expect: 413 });
    await call('POST', '/v1/workflows', { raw: '"' + 'x'.repeat(16 * MIB) + '"', expect: 413 });
    await call('POST', '/v1/workflows/{id}/steps', { params: { id: 1 }, raw: '"' + 'x'.repeat(16 * MIB) + '"', expect: 413 });
    await ck.callRaw('GET', '/v1/nothing', 'read', 'NotFound', 404);
    await ck.callRaw('GET', '/v1/nothing', null, 'Unauthorized', 401);
    const r = await ck.callRaw('DELETE', '/v1/queues', 'admin', 'Unexpected', 405);
    if (r.headers.get('allow') !== 'GET') ck.fail(`405 Allow is '${r.headers.get('allow')}', not GET`);
  }

  const job = (extra = {}) => ({ type: 'oa.task', queue: 'oa', ...extra });

  // Requests waiting for a result parked now (GET /metrics, jobd_results_waiting).
  async function parkedWaits() {
    const admin = JSON.parse(tokensJson).admin;
    const r = await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${admin}` } });
    const m = /\njobd_results_waiting (\d+)/.exec(await r.text());
    return m ? Number(m[1]) : -1;
  }

  async function claimOne() {
    const { body } = await call('POST', '/v1/claim', {
      body: { worker_id: 'oa-remote:1', types: ['oa.task'], queues: ['oa'], limit: 1, lease_s: 30 },
      expect: 200,
    });
    if (!body || body.jobs.length !== 1) throw new Error('claim returned no job');
    return body.jobs[0];
  }

  async function jobs() {
    const a = (await call('POST', '/v1/jobs', {
      body: job({ payload: { n: 1 }, idempotency_key: 'oa-k1', timeout: '1500ms' }), expect: 201,
    })).body;
    await call('POST', '/v1/jobs', { body: job({ payload: { n: 1 }, idempotency_key: 'oa-k1', timeout: '1500ms' }), expect: 200 });
    await call('POST', '/v1/jobs', { body: job({ payload: { n: 2 }, idempotency_key: 'oa-k1' }), expect: 409 });
    // debounce and unique windows (docs/API.md): 201, then 200 with Debounced / Idempotent-Replayed
    for (const expect of [201, 200]) {
      await call('POST', '/v1/jobs', { body: job({ payload: expect, debounce: { key: 'oa-d', for: '1h' } }), expect });
      await call('POST', '/v1/jobs', { body: job({ unique: { key: 'oa-u', for: '1h' } }), expect });
    }
    await call('POST', '/v1/jobs', { raw: '{"type":', expect: 400 });
    await call('POST', '/v1/jobs', { body: job({ command: 'rm' }), expect: 400 });
    await call('POST', '/v1/jobs/batch', { body: { jobs: [job(), job({ priority: 5, in: '1h' })] }, expect: 201 });
    await call('POST', '/v1/jobs/batch', { body: { jobs: [{ type: 'bad type' }] }, expect: 400 });
    await call('POST', '/v1/jobs/batch', { body: { jobs: [job({ payload: 3, idempotency_key: 'oa-k1' })] }, expect: 409 });
    await call('GET', '/v1/jobs/{id}', { params: { id: a.id }, expect: 200 });
    await call('GET', '/v1/jobs/{id}', { params: { id: 999999999 }, expect: 404 });
    // Waiting for a result (the server runs with --max-waits 1): a wait on
    // the pending job p holds the one place, so two more are refused; p's
    // cancel ends the wait (not its 30 s).
    await call('GET', '/v1/jobs/{id}', { params: { id: a.id }, query: { wait: '61s' }, expect: 400 });
    await call('POST', '/v1/jobs', { query: { wait: '200ms' }, body: job({ queue: 'oa-wait' }), expect: 202 });
    const p = (await call('POST', '/v1/jobs', { body: job({ queue: 'oa-other' }), expect: 201 })).body;
    const parked = call('GET', '/v1/jobs/{id}', { params: { id: p.id }, query: { wait: '30s' }, expect: 200 });
    for (let i = 0; (await parkedWaits()) < 1; i++) {
      if (i === 200) { ck.fail('a wait never parked (jobd_results_waiting)'); break; }
      await sleep(20);
    }
    await call('GET', '/v1/jobs/{id}', { params: { id: a.id }, query: { wait: '3s' }, expect: 429 });
    await call('POST', '/v1/jobs', { query: { wait: '3s' }, body: job({ queue: 'oa-wait' }), expect: 429 });
    // The pending job p: retry refused, cancel (the parked wait answers the
    // cancelled job), retry, delete.
    await call('POST', '/v1/jobs/{id}/retry', { params: { id: p.id }, expect: 409 });
    await call('POST', '/v1/jobs/{id}/cancel', { params: { id: p.id }, expect: 200 });
    const ended = (await parked).body;
    if (!ended || ended.status !== 'cancelled')
      ck.fail(`the parked wait on job ${p.id} answered ${JSON.stringify(ended)}, not the cancelled job`);
    await call('POST', '/v1/jobs/{id}/cancel', { params: { id: p.id }, expect: 409 });
    await call('POST', '/v1/jobs/{id}/retry', { params: { id: p.id }, expect: 200 });
    await call('DELETE', '/v1/jobs/{id}', { params: { id: p.id }, expect: 204 });
    const page = (await call('GET', '/v1/jobs', { query: { queue: 'oa', limit: '1' }, expect: 200 })).body;
    if (!page || page.next === null) ck.fail('GET /v1/jobs?limit=1 should have a next page');
    await call('GET', '/v1/jobs', { query: { status: 'pending', after: page.next, created_after: '2000-01-01T00:00:00Z' }, expect: 200 });
    await call('GET', '/v1/jobs', { query: { colour: 'red' }, expect: 400 });
    await call('GET', '/v1/jobs/{id}/attempts', { params: { id: 999999999 }, expect: 404 });
    for (const p of ['cancel', 'retry']) await call('POST', `/v1/jobs/{id}/${p}`, { params: { id: 999999999 }, expect: 404 });
    await call('DELETE', '/v1/jobs/{id}', { params: { id: 999999999 }, expect: 404 });
  }

  // A remote worker's life: claim, heartbeat, fail, release, complete;
  // stale reports; cancel of a running job; the attempt history. Its id is
  // the one presenceAndStats() announces: a claim is presence, so --max-workers 2
  // counts it from its first claim.
  // docs/API.md, Workflows: submit (201, then 200 for its key again, 409 for
  // the key under another name, 400 for a cycle), read (200, 404), steps added
  // (201, 400, 409, 404), delete (409 while running, 204, 404), cancel and
  // retry (200, 404).
  async function workflows() {
    const wjob = { type: 'oa.wf', queue: 'oa-wf' };
    const steps = [{ ref: 'a', ...wjob }, { ref: 'b', ...wjob, depends_on: ['a'] }];
    const w = (await call('POST', '/v1/workflows', {
      body: { name: 'oa-wf', idempotency_key: 'oa-wf1', steps }, expect: 201,
    })).body;
    await call('POST', '/v1/workflows', { body: { name: 'oa-wf', idempotency_key: 'oa-wf1', steps }, expect: 200 });
    await call('POST', '/v1/workflows', { body: { name: 'oa-other', idempotency_key: 'oa-wf1', steps }, expect: 409 });
    await call('POST', '/v1/workflows', {
      body: { name: 'oa-loop', steps: [{ ref: 'a', ...wjob, depends_on: ['a'] }] }, expect: 400,
    });
    await call('GET', '/v1/workflows/{id}', { params: { id: w.id }, expect: 200 });
    await call('GET', '/v1/workflows/{id}', { params: { id: 999999999 }, expect: 404 });
    await call('GET', '/v1/workflows', { query: { name: 'oa-wf', status: 'running', limit: 10 }, expect: 200 });
    await call('GET', '/v1/workflows', { query: { status: 'done' }, expect: 400 });
    // after the submit: steps added before the waiting b, cancel, retry, delete
    const id = { id: w.id };
    await call('POST', '/v1/workflows/{id}/steps', {
      params: id, body: { steps: [{ ref: 'c', ...wjob, depends_on: ['a'] }], before: ['b'] }, expect: 201,
    });
    await call('POST', '/v1/workflows/{id}/steps', { params: id, body: { steps: [{ ref: 'a', ...wjob }] }, expect: 400 });
    await call('POST', '/v1/workflows/{id}/steps', {
      params: id, body: { steps: [{ ref: 'd', ...wjob }], before: ['a'] }, expect: 409,
    });
    await call('POST', '/v1/workflows/{id}/steps', {
      params: { id: 999999999 }, body: { steps: [{ ref: 'd', ...wjob }] }, expect: 404,
    });
    await call('DELETE', '/v1/workflows/{id}', { params: id, expect: 409 });
    await call('POST', '/v1/workflows/{id}/cancel', { params: id, expect: 200 });
    await call('POST', '/v1/workflows/{id}/retry', { params: id, expect: 200 });
    await call('POST', '/v1/workflows/{id}/cancel', { params: id, expect: 200 });
    await call('DELETE', '/v1/workflows/{id}', { params: id, expect: 204 });
    await call('DELETE', '/v1/workflows/{id}', { params: id, expect: 404 });
    await call('POST', '/v1/workflows/{id}/cancel', { params: id, expect: 404 });
    await call('POST', '/v1/workflows/{id}/retry', { params: id, expect: 404 });
  }

  async function worker() {
    await call('POST', '/v1/claim', { body: { worker_id: 'oa-remote:1', queues: ['oa'] }, expect: 400 });
    await call('POST', '/v1/claim', { body: { worker_id: 'oa-remote:1', types: ['oa.none'], wait_s: 0.2 }, expect: 200 });
    const c = await claimOne();
    const id = { id: c.id };
    await call('POST', '/v1/jobs/{id}/heartbeat', { params: id, body: { attempt: c.attempt, lease_token: c.lease_token, lease_s: 20 }, expect: 200 });
    await call('POST', '/v1/jobs/{id}/heartbeat', { params: id, body: { attempt: c.attempt, lease_s: 20 }, expect: 409 });
    await call('POST', '/v1/jobs/{id}/heartbeat', { params: id, body: { lease_s: 20 }, expect: 400 });
    await call('POST', '/v1/jobs/{id}/heartbeat', { params: id, body: { attempt: c.attempt + 7 }, expect: 409 });
    await call('POST', '/v1/jobs/{id}/heartbeat', { params: { id: 999999999 }, body: { attempt: 1 }, expect: 404 });
    await call('POST', '/v1/jobs/{id}/progress', { params: id, body: { attempt: c.attempt, lease_token: c.lease_token, percent: 40, message: 'step 2 of 5', data: { rows: 2 } }, expect: 200 });
    await call('GET', '/v1/jobs/{id}', { params: id, expect: 200 });
    await call('POST', '/v1/jobs/{id}/progress', { params: id, body: { attempt: c.attempt, percent: 50 }, expect: 409 });
    await call('POST', '/v1/jobs/{id}/progress', { params: id, body: { attempt: c.attempt, lease_token: c.lease_token, percent: 101 }, expect: 400 });
    await call('POST', '/v1/jobs/{id}/progress', { params: { id: 999999999 }, body: { attempt: 1 }, expect: 404 });
    const at = { ...id, attempt: c.attempt };
    await call('POST', '/v1/jobs/{id}/attempts/{attempt}/log', { params: at, body: { lease_token: c.lease_token, text: 'step 1\nstep 2\n' }, expect: 200 });
    await call('GET', '/v1/jobs/{id}/attempts/{attempt}/log', { params: at, expect: 200 });
    await call('GET', '/v1/jobs/{id}/attempts/{attempt}/log', { params: { ...id, attempt: c.attempt + 5 }, expect: 404 });
    await call('POST', '/v1/jobs/{id}/attempts/{attempt}/log', { params: at, body: { text: 'no token' }, expect: 409 });
    await call('POST', '/v1/jobs/{id}/attempts/{attempt}/log', { params: at, body: { lease_token: c.lease_token }, expect: 400 });
    await call('POST', '/v1/jobs/{id}/attempts/{attempt}/log', { params: at, body: { lease_token: c.lease_token, text: 'x'.repeat(MIB + 1) }, expect: 413 });
    await call('POST', '/v1/jobs/{id}/attempts/{attempt}/log', { params: { id: 999999999, attempt: 1 }, body: { text: 'x' }, expect: 404 });
    await call('GET', '/v1/jobs/{id}/attempts', { params: id, expect: 200 });
    // hearing of a cancel: none requested (a short wait ends empty), then one
    await call('GET', '/v1/cancels', { query: { jobs: `${c.id},999999999`, wait: '100ms' }, expect: 200 });
    await call('GET', '/v1/cancels', { query: { jobs: 'one' }, expect: 400 });
    await call('GET', '/v1/cancels', { query: { jobs: String(c.id), wait: '61s' }, expect: 400 });
    // the events stream: its start, a bad filter, an id the log never gave
    await call('GET', '/v1/events', { query: { queue: 'oa' }, expect: 200, stream: ': connected' });
    await call('GET', '/v1/events', { query: { job: 'x' }, expect: 400 });
    await call('GET', '/v1/events', { headers: { 'Last-Event-ID': '999999999' }, expect: 410 });
    await call('DELETE', '/v1/jobs/{id}', { params: id, expect: 409 });
    await call('POST', '/v1/jobs/{id}/fail', { params: id, body: { attempt: c.attempt, lease_token: c.lease_token, error: 'boom', retry_in_s: 0 }, expect: 200 });
    // the same report again (its answer lost): replayed; another report of the finished attempt: stale
    await call('POST', '/v1/jobs/{id}/fail', { params: id, body: { attempt: c.attempt, lease_token: c.lease_token, error: 'boom' }, expect: 200 });
    await call('POST', '/v1/jobs/{id}/fail', { params: id, body: { attempt: c.attempt, error: 'boom' }, expect: 409 });
    await call('POST', '/v1/jobs/{id}/fail', { params: id, body: { attempt: c.attempt, error: 7 }, expect: 400 });
    await call('POST', '/v1/jobs/{id}/fail', { params: { id: 999999999 }, body: { attempt: 1, error: 'x' }, expect: 404 });
    await call('GET', '/v1/jobs/{id}/attempts', { params: id, expect: 200 });

    const c2 = await claimOne();
    await call('POST', '/v1/jobs/{id}/release', { params: { id: c2.id }, body: { attempt: c2.attempt, lease_token: c2.lease_token }, expect: 200 });
    await call('POST', '/v1/jobs/{id}/release', { params: { id: c2.id }, body: { attempt: c2.attempt, lease_token: c2.lease_token }, expect: 409 });
    await call('POST', '/v1/jobs/{id}/release', { params: { id: c2.id }, body: { attempt: 'one' }, expect: 400 });
    await call('POST', '/v1/jobs/{id}/release', { params: { id: 999999999 }, body: { attempt: 1 }, expect: 404 });

    const c3 = await claimOne();
    await call('POST', '/v1/jobs/{id}/cancel', { params: { id: c3.id }, expect: 202 });
    await call('POST', '/v1/jobs/{id}/complete', { params: { id: c3.id }, body: { attempt: c3.attempt, lease_token: c3.lease_token, result: { ok: true } }, expect: 200 });
    await call('POST', '/v1/jobs/{id}/complete', { params: { id: c3.id }, body: { attempt: c3.attempt, lease_token: c3.lease_token }, expect: 200 });
    await call('POST', '/v1/jobs/{id}/complete', { params: { id: c3.id }, body: { attempt: c3.attempt }, expect: 409 });
    await call('POST', '/v1/jobs/{id}/complete', { params: { id: c3.id }, body: {}, expect: 400 });
    await call('POST', '/v1/jobs/{id}/complete', { params: { id: 999999999 }, body: { attempt: 1 }, expect: 404 });
    await call('GET', '/v1/jobs/{id}/attempts', { params: { id: c3.id }, expect: 200 });
  }

  async function bulk() {
    await call('POST', '/v1/jobs/batch', { body: { jobs: [job({ queue: 'oa-bulk' }), job({ queue: 'oa-bulk' })] }, expect: 201 });
    await call('POST', '/v1/jobs/bulk', { body: { action: 'cancel', filter: { queue: 'oa-bulk' } }, expect: 200 });
    await call('POST', '/v1/jobs/bulk', { body: { action: 'retry', filter: { queue: 'oa-bulk', status: 'cancelled' }, limit: 10 }, expect: 200 });
    await call('POST', '/v1/jobs/bulk', { role: 'admin', body: { action: 'delete', filter: { queue: 'oa-bulk' } }, expect: 200 });
    await call('POST', '/v1/jobs/bulk', { body: { action: 'delete', filter: { queue: 'oa-bulk' } }, expect: 403 });
    await call('POST', '/v1/jobs/bulk', { body: { action: 'retry', filter: {} }, expect: 400 });
    await call('POST', '/v1/jobs/bulk', { body: { action: 'explode', filter: { queue: 'oa' } }, expect: 400 });
  }

  async function schedules() {
    const s = { name: 'oa-nightly', cron: '0 3 * * *', type: 'oa.task', timezone: 'Europe/Berlin', queue: 'oa-sched', catchup: 'skip' };
    const n = { name: 'oa-nightly' };
    await call('POST', '/v1/schedules', { body: s, expect: 201 });
    await call('POST', '/v1/schedules', { body: s, expect: 409 });
    await call('POST', '/v1/schedules', { body: { ...s, name: 'oa-bad', cron: '0 25 * * *' }, expect: 400 });
    await call('PUT', '/v1/schedules/{name}', { params: n, body: { cron: '*/5 * * * *', type: 'oa.task', payload: { r: 1 } }, expect: 200 });
    await call('PUT', '/v1/schedules/{name}', { params: { name: 'oa-put' }, body: { cron: '@daily', type: 'oa.task' }, expect: 201 });
    await call('PUT', '/v1/schedules/{name}', { params: { name: 'oa-put' }, body: { name: 'other', cron: '@daily', type: 'oa.task' }, expect: 400 });
    // the server runs with --max-schedules 2: a third is refused
    await call('PUT', '/v1/schedules/{name}', { params: { name: 'oa-third' }, body: { cron: '@daily', type: 'oa.task' }, expect: 409 });
    await call('GET', '/v1/schedules', { expect: 200 });
    await call('GET', '/v1/schedules', { query: { limit: '1', full: '1' }, expect: 200 });
    await call('GET', '/v1/schedules', { query: { limit: '0' }, expect: 400 });
    await call('GET', '/v1/schedules/{name}', { params: n, expect: 200 });
    for (const [m, p] of [['GET', '/v1/schedules/{name}'], ['DELETE', '/v1/schedules/{name}'],
      ['POST', '/v1/schedules/{name}/pause'], ['POST', '/v1/schedules/{name}/resume'],
      ['POST', '/v1/schedules/{name}/trigger']]) {
      await call(m, p, { params: { name: 'oa-none' }, expect: 404 });
      await call(m, p, { params: { name: 'bad!name' }, expect: 400 });
    }
    await call('POST', '/v1/schedules/{name}/pause', { params: n, expect: 200 });
    await call('POST', '/v1/schedules/{name}/resume', { params: n, expect: 200 });
    await call('POST', '/v1/schedules/{name}/trigger', { params: n, expect: 200 });
    await call('DELETE', '/v1/schedules/{name}', { params: { name: 'oa-put' }, expect: 204 });
  }

  async function queuesAndOps() {
    // An echo job the embedded worker runs, so lists hold a finished job too.
    const e = (await call('POST', '/v1/jobs', { body: { type: 'oa.echo', payload: { hi: 1 } }, expect: 201 })).body;
    const done = (await call('GET', '/v1/jobs/{id}', { params: { id: e.id }, query: { wait: '30s' }, expect: 200 })).body;
    if (!done || done.status !== 'succeeded') ck.fail(`the embedded worker did not run job ${e.id}`);
    await call('GET', '/v1/jobs/{id}/attempts', { params: { id: e.id }, expect: 200 });
    await call('POST', '/v1/queues/{name}/pause', { params: { name: 'oa-empty' }, expect: 200 });
    await call('POST', '/v1/queues/{name}/pause', { params: { name: 'oa' }, expect: 200 });
    await call('POST', '/v1/queues/{name}/resume', { params: { name: 'oa' }, expect: 200 });
    await call('POST', '/v1/queues/{name}/resume', { params: { name: 'oa-empty' }, expect: 200 });
    for (const p of ['pause', 'resume'])
      await call('POST', `/v1/queues/{name}/${p}`, { params: { name: 'Bad' }, expect: 400 });
    const lim = { name: 'oa-limited' };
    const rate = { limit: 20, per: '1s' };
    await call('PUT', '/v1/queues/{name}', { params: lim, body: { max_running: 5, rate }, expect: 200 });
    await call('PUT', '/v1/queues/{name}', { params: lim, body: { max_running: null, rate: null }, expect: 200 });
    await call('PUT', '/v1/queues/{name}', { params: lim, body: { max_running: 0 }, expect: 400 });
    await call('PUT', '/v1/queues/{name}', { params: { name: 'Bad' }, body: {}, expect: 400 });
    // Groups (docs/MODEL.md, Groups): limits per group, and the busiest groups.
    const gq = { name: 'oa-groups' };
    await call('PUT', '/v1/queues/{name}', { params: gq, body: { group_max_running: 2, group_rate: rate }, expect: 200 });
    await call('POST', '/v1/jobs', { body: { type: 'oa.none', queue: 'oa-groups', group: 'acme' }, expect: 201 });
    await call('POST', '/v1/jobs', { body: { type: 'oa.none', queue: 'oa-groups', group: 'bad group' }, expect: 400 });
    await call('GET', '/v1/queues/{name}/groups', { params: gq, query: { limit: 5 }, expect: 200 });
    await call('GET', '/v1/queues/{name}/groups', { params: gq, query: { limit: 0 }, expect: 400 });
    await call('PUT', '/v1/queues/{name}', { params: gq, body: { group_max_running: null, group_rate: null }, expect: 200 });
    // On PostgreSQL the counts may lag by about a second.
    for (let i = 0; ; i++) {
      const q = (await call('GET', '/v1/queues', { expect: 200 })).body;
      if (q && q.queues.some((x) => x.name === 'default' && x.succeeded >= 1)) break;
      if (i === 30) { ck.fail('GET /v1/queues: no default queue with a succeeded job'); break; }
      await sleep(100);
    }
    const w = (await call('GET', '/v1/workers', { expect: 200 })).body;
    if (!w || w.workers.length === 0) ck.fail('GET /v1/workers lists no worker (the embedded one)');
    await presenceAndStats();
    await call('GET', '/metrics', { expect: 200 });
    await call('GET', '/healthz', { expect: 200 });
    await call('GET', '/healthz', { role: 'read', expect: 200 });
  }

  // The dashboard's helpers: who am I, a schedule's next firings.
  async function dashboardHelpers() {
    const none = (await call('GET', '/v1/whoami', { role: null, expect: 200 })).body;
    if (!none || none.role !== 'none' || !none.tokens || none.token_sent)
      ck.fail(`GET /v1/whoami without a token: ${JSON.stringify(none)}`);
    const rd = (await call('GET', '/v1/whoami', { role: 'read', expect: 200 })).body;
    if (!rd || rd.role !== 'read' || !rd.token_sent) ck.fail(`GET /v1/whoami as read: ${JSON.stringify(rd)}`);
    const n = { name: 'oa-nightly' };
    const nx = (await call('GET', '/v1/schedules/{name}/next', { params: n, query: { count: '3' }, expect: 200 })).body;
    if (!nx || nx.next.length !== 3) ck.fail(`GET /v1/schedules/{name}/next?count=3: ${JSON.stringify(nx)}`);
    await call('GET', '/v1/schedules/{name}/next', { params: n, query: { count: '0' }, expect: 400 });
    await call('GET', '/v1/schedules/{name}/next', { params: { name: 'bad!name' }, expect: 400 });
    await call('GET', '/v1/schedules/{name}/next', { params: { name: 'oa-none' }, expect: 404 });
  }

  // A remote worker's presence, and the statistics.
  async function presenceAndStats() {
    const who = { name: 'oa-remote:1' };
    await call('POST', '/v1/workers', { body: { id: 'oa-remote:1', heartbeat_ms: 1000, queues: ['oa'], types: ['oa.task'], concurrency: 2 }, expect: 200 });
    await call('POST', '/v1/workers', { body: { id: 'oa-remote:2' }, expect: 400 });
    // --max-workers 2: the embedded worker and oa-remote:1 are live, a third is refused
    await call('POST', '/v1/workers', { body: { id: 'oa-remote:3', heartbeat_ms: 600000 }, expect: 409 });
    await call('GET', '/v1/workers', { query: { limit: '1' }, expect: 200 });
    await call('GET', '/v1/workers', { query: { after: 'x'.repeat(200) }, expect: 400 });
    await call('POST', '/v1/workers/{name}/presence', { params: who, body: { draining: true }, expect: 200 });
    await call('POST', '/v1/workers/{name}/presence', { params: who, body: { draining: 'yes' }, expect: 400 });
    await call('POST', '/v1/workers/{name}/presence', { params: { name: 'oa-nobody' }, body: {}, expect: 404 });
    await call('POST', '/v1/workers/{name}/withdraw', { params: who, expect: 200 });
    await call('GET', '/v1/stats', { expect: 200 });
    await call('GET', '/v1/stats', { query: { since: '10m', step: '10s', queue: 'oa' }, expect: 200 });
    await call('GET', '/v1/stats', { query: { step: '15s' }, expect: 400 });
  }

  // Last: the SQLite file deleted under the server makes /healthz 503. On
  // PostgreSQL (no file given) that answer is left to the SQLite run.
  async function storeGone() {
    if (!dbFile) {
      ck.seen.add('GET /healthz 503');
      console.log(`GET /healthz 503${ck.tag}: exercised by the SQLite run only`);
      return;
    }
    for (const f of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`]) fs.rmSync(f, { force: true });
    await call('GET', '/healthz', { expect: 503 });
  }

  // The validator is not vacuous: the job answer it accepted is refused by a
  // copy of the spec in which one member of the job changed type.
  function selfCheck() {
    const body = ck.answers.get('GET /v1/jobs/{id} 200');
    const drifted = structuredClone(ck.spec);
    drifted.components.schemas.Job.properties.attempt = { type: 'string' };
    const probe = new Checker(drifted, routerPath, base, {});
    probe.fail = () => {};
    if (!body || probe.validate('/components/schemas/Job', body, 'self-check'))
      ck.fail('self-check: a spec with Job.attempt as a string still accepts a job');
    else if (!ck.validate('/components/schemas/Job', body, 'self-check'))
      ck.fail('self-check: the spec itself refuses the job it accepted');
  }

  function coverage() {
    const declared = [];
    for (const { method, path, op } of ck.operations())
      for (const s of Object.keys(op.responses))
        if (s !== 'default') declared.push(`${method} ${path} ${s}`);
    const missed = declared.filter((k) => !ck.seen.has(k));
    for (const k of missed) ck.fail(`declared but never exercised: ${k}`);
    console.log(`coverage${ck.tag}: ${declared.length - missed.length}/${declared.length} (method, path, status) of the spec exercised, ${ck.operations().length} operations`);
  }

  return async () => {
    try {
      checkRoutes();
      await generic();
      await jobs();
      await workflows();
      await worker();
      await bulk();
      await schedules();
      await queuesAndOps();
      await dashboardHelpers();
      await storeGone();
    } catch (e) {
      ck.fail(`the scenario stopped: ${e.stack || e}`);
    }
    selfCheck();
    coverage();
  };
}

if (targets.length === 0 || targets.length % 3) {
  console.log('usage: node drive.mjs SPEC ROUTER_C TOKENS_JSON NAME BASE_URL SQLITE_FILE...');
  process.exit(2);
}
// The servers side by side (their requests mostly wait on the servers);
// they share the spec and the compiled validators.
const runs = [];
for (let i = 0; i < targets.length; i += 3) {
  const ck = new Checker(specPath, routerPath, targets[i + 1], JSON.parse(tokensJson), runs[0]?.ck);
  ck.tag = ` (${targets[i]})`;
  runs.push({ name: targets[i], ck, run: scenario(ck, targets[i + 2]) });
}
await Promise.all(runs.map((r) => r.run()));
let failed = 0;
for (const { name, ck } of runs) {
  if (ck.failures.length) {
    console.log(`${name}: ${ck.failures.length} failure(s)`);
    failed++;
  } else {
    console.log(`ok: every answer of the ${name} server matched docs/openapi.yaml`);
  }
}
process.exit(failed ? 1 : 0);
