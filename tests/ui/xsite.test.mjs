// xsite.test.mjs — hostile web pages against a `jobd server` without
// tokens, in headless chromium (run by tests/integration/test_ui_xsite.sh;
// the rules: src/api/xsite.h). A page served on another loopback origin
// (another port of 127.0.0.1: "same-site", and localhost: cross-site)
// tries what needs no CORS preflight: `no-cors` text/plain POSTs that
// enqueue, bulk-delete, bulk-cancel, cancel and pause, and a text/plain
// form that posts JSON-looking fields. A page under a DNS name that
// resolves to the server (DNS rebinding, via chromium's resolver rules) is
// same-origin with it and tries to read and write. Afterwards the store is
// exactly as before (read through the API), the server's access log shows
// each attempt arrived and was refused, and the dashboard itself still
// works: it lists the queue and pauses and resumes it.
import { chromium } from 'playwright-core';
import http from 'node:http';
import fs from 'node:fs';

const URL0 = process.env.JOBD_URL;
const PORT = new URL(URL0).port;
const LOG = process.env.SERVER_LOG;
const REBOUND = 'rebound.example'; // resolved to 127.0.0.1 by the browser only
const T0 = Date.now();

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}
function ok(step) {
  console.log(`ok ${((Date.now() - T0) / 1000).toFixed(1)}s ${step}`);
}
async function api(method, path, body) {
  const res = await fetch(URL0 + path, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
// Polls fn() until it returns something true: first after 10 ms, the
// interval doubling up to 100 ms, so a condition met at once is seen at once.
async function until(what, fn, ms = 15000) {
  const end = Date.now() + ms;
  for (let delay = 10; ; delay = Math.min(2 * delay, 100)) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, delay));
  }
}
// The statuses the server's access log shows for method and path, in order.
function answered(method, path) {
  const re = new RegExp(`method=${method} path=${path.replace(/[/.]/g, '\\$&')} status=(\\d+) `);
  return fs.readFileSync(LOG, 'utf8').split('\n').map((l) => re.exec(l)).filter(Boolean)
    .map((m) => Number(m[1]));
}
const logged = (method, path, status) => answered(method, path).filter((s) => s === status).length;

// ---- the store before: one pending job, the queue running ----
const victim = (await api('POST', '/v1/jobs', { type: 'xsite.victim', in: '1h' })).body;
check(victim && victim.status === 'pending', 'the victim job was created');
const before = (await api('GET', '/v1/jobs')).body.jobs;

// ---- the attacker's site: a page that fires everything, then says so ----
const ATTACK = `<!doctype html><title>cat pictures</title><script>
(async () => {
  const t = new URLSearchParams(location.search).get('t');
  const plain = { 'Content-Type': 'text/plain' };
  const tries = [
    ['/v1/jobs', plain, JSON.stringify({ type: 'xsite.evil', payload: { from: location.origin } })],
    ['/v1/jobs/bulk', plain, JSON.stringify({ action: 'delete', filter: { queue: 'default' } })],
    ['/v1/jobs/bulk', plain, JSON.stringify({ action: 'cancel', filter: { queue: 'default' } })],
    ['/v1/jobs/${victim.id}/cancel', {}, undefined],
    ['/v1/queues/default/pause', {}, undefined],
  ];
  const out = [];
  for (const [p, headers, body] of tries) {
    try {
      const r = await fetch(t + p, { method: 'POST', mode: 'no-cors', headers, body });
      out.push(r.type);
    } catch (e) {
      out.push('error');
    }
  }
  document.title = 'done ' + out.join(',');
})();
</script>`;
// The oldest way: a text/plain form whose field name and value make JSON.
const FORM = (t) => `<!doctype html><form method=post enctype=text/plain action="${t}/v1/jobs">
<input name='{"type":"xsite.form","payload":{"a":"' value='"}}'></form>
<script>document.forms[0].submit()</script>`;
const evil = http.createServer((req, res) => {
  const u = new URL(req.url, 'http://x');
  res.setHeader('Content-Type', 'text/html');
  res.end(u.pathname === '/form' ? FORM(u.searchParams.get('t')) : ATTACK);
});
await new Promise((r) => evil.listen(0, '127.0.0.1', r));
const EVIL = evil.address().port;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
    `--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`],
});
const ctx = await browser.newContext();
const page = await ctx.newPage();

try {
  // ---- pages of other loopback origins ----
  for (const origin of [`http://127.0.0.1:${EVIL}`, `http://localhost:${EVIL}`]) {
    const paths = { '/v1/jobs': 1, '/v1/jobs/bulk': 2, [`/v1/jobs/${victim.id}/cancel`]: 1,
      '/v1/queues/default/pause': 1 };
    const n = Object.fromEntries(Object.keys(paths).map((p) => [p, answered('POST', p).length]));
    await page.goto(`${origin}/?t=${encodeURIComponent(URL0)}`);
    await page.waitForFunction(() => document.title.startsWith('done '), null, { timeout: 15000 });
    const title = await page.title();
    check(title === 'done opaque,opaque,opaque,opaque,opaque', `every try was sent: ${title}`);
    // Each reached the server and was refused there (not stopped by the browser).
    await until(`${origin}: the tries in the access log`, async () =>
      Object.entries(paths).every(([p, k]) => answered('POST', p).length === n[p] + k));
    for (const p of Object.keys(paths)) {
      const got = answered('POST', p).slice(n[p]);
      check(got.every((st) => st === 403), `${origin}: POST ${p} was answered ${got}`);
    }
    ok(`${origin}: no-cors enqueue, bulk delete and cancel, cancel, pause sent and refused (403)`);

    const nForm = logged('POST', '/v1/jobs', 403);
    const resp = await Promise.all([
      page.waitForResponse((r) => r.url().startsWith(URL0) && r.request().method() === 'POST'),
      page.goto(`${origin}/form?t=${encodeURIComponent(URL0)}`),
    ]).then(([r]) => r);
    check(resp.status() === 403, `the form post was answered ${resp.status()}`);
    // The access log's line is written once the answer has gone out, so it
    // may come a moment after the browser has the answer.
    await until(`${origin}: the form post in the access log`, async () =>
      logged('POST', '/v1/jobs', 403) === nForm + 1);
    ok(`${origin}: a text/plain form posting JSON is refused (403)`);
  }

  // ---- DNS rebinding: a page whose name now resolves to the server ----
  const rebound = `http://${REBOUND}:${PORT}`;
  const first = await page.goto(`${rebound}/ui/`);
  check(first.status() === 403, `the dashboard under ${REBOUND} was answered ${first.status()}`);
  const got = await page.evaluate(async () => {
    const read = await fetch('/v1/jobs');
    const write = await fetch('/v1/jobs', {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'xsite.rebound' }),
    });
    return { read: read.status, body: await read.text(), write: write.status };
  });
  check(got.read === 403 && got.write === 403, `same-origin under ${REBOUND}: ${JSON.stringify(got)}`);
  check(!got.body.includes('xsite.victim'), 'the rebound page read a job');
  check(got.body.includes('host_not_allowed'), `the refusal says why: ${got.body}`);
  ok(`DNS rebinding (${REBOUND}:${PORT}): reading and writing refused (403 host_not_allowed)`);

  // ---- nothing changed ----
  const after = (await api('GET', '/v1/jobs')).body.jobs;
  check(JSON.stringify(after) === JSON.stringify(before),
    `the jobs changed: ${JSON.stringify(after).slice(0, 400)}`);
  const q = (await api('GET', '/v1/queues')).body.queues.find((x) => x.name === 'default');
  check(q && !q.paused, 'the queue was paused');
  ok('the store is as before: one pending job, the queue running');

  // ---- the dashboard itself still works (same origin: Origin = Host) ----
  await page.goto(`${URL0}/ui/`);
  await page.waitForSelector('tr[data-queue=default]');
  await page.click('button[aria-label="Pause queue default"]');
  await until('paused through the dashboard', async () =>
    (await api('GET', '/v1/queues')).body.queues.find((x) => x.name === 'default').paused);
  await page.click('button[aria-label="Resume queue default"]');
  await until('resumed through the dashboard', async () =>
    !(await api('GET', '/v1/queues')).body.queues.find((x) => x.name === 'default').paused);
  ok('the dashboard lists the queue, pauses and resumes it');
} finally {
  await browser.close();
  evil.close();
}
