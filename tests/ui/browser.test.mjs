// browser.test.mjs — the dashboard's browser suite, run by
// tests/integration/test_ui_browser.sh against a live `jobd server` (with
// an embedded worker and tokens) in headless chromium. Each step drives the
// page as a user would and checks the result against the HTTP API. Every
// page records console errors, page errors and CSP violations; there must
// be none at the end. UI_SCREENSHOTS=1 writes docs/ui/*.png at 1280x800.
import { chromium } from 'playwright-core';
import { unlinkSync, mkdirSync, writeFileSync } from 'node:fs';
import { workflowSuite } from './workflows.mjs';

const URL0 = process.env.JOBD_URL;
const ADMIN = process.env.ADMIN_TOKEN;
const READ = process.env.READ_TOKEN;
const SHOTS = process.env.UI_SCREENSHOTS === '1' ? process.env.SHOTS_DIR : null;
const T0 = Date.now();

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

function ok(step) {
  console.log(`ok ${((Date.now() - T0) / 1000).toFixed(1)}s ${step}`);
}

async function api(method, path, body, token = ADMIN) {
  const res = await fetch(URL0 + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
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

// ---- the browser, with every page watched for errors ----
const problems = [];
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});

// opts.ignore(line): a problem line this page is expected to log;
// opts.token: the tab is signed in with it.
async function newPage(opts = {}) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const note = (line) => {
    if (!(opts.ignore && opts.ignore(line))) problems.push(line);
  };
  const page = await ctx.newPage();
  if (opts.token) await page.addInitScript((t) => sessionStorage.setItem('jobd.token', t), opts.token);
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const where = m.location().url || '';
    note(`console: ${m.text()} (${where})`);
  });
  page.on('pageerror', (e) => note(`page error: ${e.message}`));
  page.on('dialog', (d) => {
    note(`a dialog opened: ${d.message()}`);
    d.dismiss();
  });
  return page;
}

async function cspOf(page) {
  return page.evaluate(() => window.__csp);
}

async function shot(page, name) {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.waitForTimeout(300);
  await page.screenshot({ path: `${SHOTS}/${name}.png` });
}

async function signIn(page, token) {
  await page.goto(`${URL0}/ui/`);
  await page.waitForSelector('#token');
  await page.fill('#token', token);
  await page.press('#token', 'Enter');
  await page.waitForSelector('nav[aria-label=Main]');
}

// ---- data: three jobs that die, one with a hostile payload, a schedule ----
const dead = [];
for (let i = 0; i < 3; i++) {
  dead.push((await api('POST', '/v1/jobs', { type: 'ui.flaky', payload: { n: i } })).body.id);
}
const XSS = '<img src=x onerror=alert(1)>';
const xssJob = (await api('POST', '/v1/jobs', { type: 'echo', payload: { name: XSS } })).body.id;
check((await api('POST', '/v1/schedules', {
  name: 'ui-nightly', cron: '0 3 * * *', timezone: 'Europe/Paris', type: 'echo',
})).status === 201, 'schedule created');
await until('three dead jobs', async () =>
  (await api('GET', '/v1/jobs?status=dead')).body.jobs.length === 3);
await until('the echo job to succeed', async () =>
  (await api('GET', `/v1/jobs/${xssJob}`)).body.status === 'succeeded');
ok('data: 3 dead jobs, a hostile payload, a schedule');

const page = await newPage();

// ---- token prompt and login ----
await page.goto(`${URL0}/ui/`);
await page.waitForSelector('#token');
await shot(page, 'login');
await page.fill('#token', 'not-the-right-token-000');
await page.press('#token', 'Enter');
await page.waitForSelector('.login .error');
check((await page.textContent('.login .error')).includes('not valid'), 'a bad token is refused');
await page.fill('#token', ADMIN);
await page.click('.login button[type=submit]');
await page.waitForSelector('table.queues');
check(await page.evaluate(() => sessionStorage.getItem('jobd.token')) === ADMIN, 'token in sessionStorage');
check((await page.context().cookies()).length === 0, 'no cookies');
ok('token prompt, bad token refused, login');

// ---- overview counts equal the API's ----
{
  const queues = (await api('GET', '/v1/queues')).body.queues;
  check(queues.length > 0, 'queues listed');
  for (const q of queues) {
    for (const s of ['pending', 'running', 'succeeded', 'dead', 'cancelled']) {
      const cell = `tr[data-queue="${q.name}"] td[data-count=${s}]`;
      await until(`${q.name} ${s} = ${q[s]}`, async () =>
        (await page.textContent(cell)).replace(/,/g, '').trim() === String(q[s]));
    }
  }
  // The chart's totals are the API's for the same hour.
  await until('the chart totals equal GET /v1/stats', async () => {
    const st = (await api('GET', '/v1/stats?since=1h&step=1m')).body.series;
    const sum = (k) => st.reduce((n, b) => n + (b[k] || 0), 0);
    const cap = await page.textContent('figure.chart figcaption');
    return sum('dead') === 3 && cap.includes(`${sum('succeeded')} succeeded`) &&
      cap.includes(`${sum('dead')} dead`);
  });
  // The axis labels are page text beside the stretched SVG, not inside it
  // (where they would be stretched with the bars).
  check(await page.$$eval('figure.chart svg text', (l) => l.length) === 0, 'no text in the SVG');
  check((await page.textContent('figure.chart .x-ticks')).includes('now'), 'x axis labelled');
  ok('overview counts equal GET /v1/queues, chart totals GET /v1/stats');
}

// ---- live refresh: three windows of seconds, each on a page of its own and
// side by side (each counts only its own page's requests; nothing changes a
// job meanwhile): (a) with the event stream open, a poll every 10 s only;
// (b) without the stream, every 2 s while visible, none while hidden, one at
// a time; (c) a stream that opens and then ends: the poll is fast again ----
const isView = (r) => r.url().includes('/v1/') && !r.url().includes('/v1/events');

// (a) the stream open: no poll in 5 s.
async function streamOpen(p) {
  const stream = p.waitForResponse((r) => r.url().includes('/v1/events'));
  await p.reload();
  check((await stream).status() === 200, 'the overview opens the event stream');
  await p.waitForSelector('table.queues');
  await p.waitForTimeout(1000); // the reload on the stream's opening
  const seen = [];
  const onReq = (r) => {
    if (isView(r)) seen.push(r.url());
  };
  p.on('request', onReq);
  await p.waitForTimeout(5000);
  p.off('request', onReq);
  check(seen.length === 0, `no poll within 5 s while the stream is open (no job changed), saw ${seen}`);
  return 'live refresh: the event stream open, no poll in 5 s';
}

// (b) the stream's route answering 503: the browser's own lines about the
// 503s are expected on this page from here on (quiet.on: newPage's ignore).
async function noStream(p, quiet) {
  quiet.on = true;
  await p.route('**/v1/events*', (r) => r.fulfill({
    status: 503, contentType: 'application/json',
    body: '{"error":{"code":"busy","message":"no stream in this test"}}',
  }));
  await p.goto(`${URL0}/ui/`);
  await p.waitForSelector('table.queues');
  const seen = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const onReq = (r) => {
    if (!isView(r)) return;
    seen.push(Date.now());
    maxInFlight = Math.max(maxInFlight, ++inFlight);
  };
  const onDone = (r) => {
    if (isView(r)) inFlight--;
  };
  p.on('request', onReq);
  p.on('requestfinished', onDone);
  p.on('requestfailed', onDone);
  await p.waitForTimeout(5000);
  const visible = seen.length;
  await p.evaluate(() => {
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
    document.dispatchEvent(new Event('visibilitychange'));
  });
  await p.waitForTimeout(300);
  const before = seen.length;
  await p.waitForTimeout(3000);
  const hidden = seen.length - before;
  await p.evaluate(() => {
    delete document.hidden;
    document.dispatchEvent(new Event('visibilitychange'));
  });
  await until('a refresh once visible again', async () => seen.length > before);
  p.off('request', onReq);
  p.off('requestfinished', onDone);
  p.off('requestfailed', onDone);
  await p.unroute('**/v1/events*');
  const perLoad = 2; // queues, then stats
  check(visible >= 2 * perLoad && visible <= 3 * perLoad,
    `two or three refreshes in 5 s, saw ${visible} requests`);
  check(hidden === 0, `no request while hidden, saw ${hidden}`);
  check(maxInFlight === 1, `one request in flight at most, saw ${maxInFlight}`);
  return `no stream: ${visible} requests in 5 s visible, 0 hidden, 1 in flight at most`;
}

// (c) a stream that opens and then ends; then the real one opens again.
async function streamEnds(p) {
  await p.route('**/v1/events*', (r) => r.fulfill({
    status: 200, contentType: 'text/event-stream', body: ': connected\nretry: 1000\n\n',
  }));
  await p.goto(`${URL0}/ui/`);
  await p.waitForSelector('table.queues');
  const seen = [];
  const onReq = (r) => {
    if (isView(r)) seen.push(r.url());
  };
  p.on('request', onReq);
  await p.waitForTimeout(5000);
  p.off('request', onReq);
  await p.unroute('**/v1/events*');
  check(seen.length >= 2 * 2, `two refreshes or more in 5 s once the stream ended, saw ${seen.length} requests`);
  const stream = p.waitForResponse((r) => r.url().includes('/v1/events'));
  await p.reload();
  check((await stream).status() === 200, 'the stream opens again');
  await p.waitForSelector('table.queues');
  return `a stream that ends: ${seen.length} requests in 5 s; the stream opens again`;
}

{
  // (b) and (c) are tabs signed in already (the admin token in their
  // sessionStorage, as the login leaves it: checked above), opened by
  // their windows with the stream's route in place.
  const quiet = { on: false };
  const pb = await newPage({ ignore: (line) => quiet.on && line.includes('/v1/events'), token: ADMIN });
  const pc = await newPage({ token: ADMIN });
  const steps = await Promise.all([streamOpen(page), noStream(pb, quiet), streamEnds(pc)]);
  for (const s of steps) ok(s);
  for (const p of [pb, pc]) {
    problems.push(...(await cspOf(p)).map((c) => `CSP violation: ${c}`));
    await p.context().close();
  }
}

// ---- filter to dead jobs, bulk retry, watch them succeed ----
{
  await page.click('nav >> text=Jobs');
  await page.waitForSelector('form.filter-form');
  await page.selectOption('select[name=status]', 'dead');
  await page.click('form.filter-form button[type=submit]');
  await until('the URL to carry the filter', async () => page.url().includes('status=dead'));
  await until('three dead rows', async () => await page.locator('table.jobs tbody tr').count() === 3);
  await page.goBack();
  await until('back: the filter gone', async () => !page.url().includes('status=dead'));
  await until('four rows again', async () => await page.locator('table.jobs tbody tr').count() === 4);
  await page.goForward();
  await until('forward: three dead rows', async () =>
    await page.locator('table.jobs tbody tr').count() === 3);
  await page.check('input[aria-label="Select every job on this page"]');
  await page.click('.bulk >> text=Retry');
  await page.waitForSelector('.dialog');
  // The dialog keeps the focus: Tab and Shift+Tab cycle through its buttons,
  // Escape cancels and gives the focus back to the button that opened it.
  const where = () => page.evaluate(() => {
    const a = document.activeElement;
    return { dialog: !!(a && a.closest('.dialog')), bulk: !!(a && a.closest('.bulk')),
      text: a ? a.textContent.trim() : '' };
  });
  const seen = new Set();
  for (const k of ['Tab', 'Tab', 'Tab', 'Shift+Tab', 'Shift+Tab', 'Shift+Tab']) {
    await page.keyboard.press(k);
    const w = await where();
    check(w.dialog, `after ${k} the focus is still in the dialog: ${JSON.stringify(w)}`);
    seen.add(w.text);
  }
  check(seen.has('Cancel') && seen.size === 2, `Tab reaches both buttons: ${[...seen]}`);
  await page.keyboard.press('Escape');
  await until('Escape to close the dialog', async () => (await page.$('.dialog')) === null);
  // The focus goes back in a task of its own (widgets.js close(): setTimeout
  // after the render that removed the dialog), which a loaded machine may run
  // after this script's next look: wait for it, do not look once.
  let back = null;
  await until('the focus to return to Retry', async () => {
    back = await where();
    return back.bulk && back.text === 'Retry';
  }).catch(() => {});
  check(back.bulk && back.text === 'Retry', `the focus is back on Retry: ${JSON.stringify(back)}`);
  ok('the confirmation traps the focus, Escape cancels, the focus returns to its trigger');
  await page.click('.bulk >> text=Retry');
  await page.waitForSelector('.dialog');
  const text = await page.textContent('.dialog p');
  check(text.includes('Retry 3 selected jobs'), `the confirmation states the count: ${text}`);
  unlinkSync(process.env.BROKEN_FLAG); // the upstream is fixed
  await page.keyboard.press('Enter'); // the confirm button has the focus
  await page.waitForSelector('.notice');
  const notice = await page.textContent('.notice');
  check(notice.includes('3 matched, 3 changed, 0 skipped'), `bulk outcome: ${notice}`);
  for (const id of dead) {
    await until(`job ${id} to succeed`, async () =>
      (await api('GET', `/v1/jobs/${id}`)).body.status === 'succeeded');
  }
  await until('no dead rows left', async () => await page.locator('table.jobs tbody tr').count() === 0);
  await page.waitForSelector('.empty');
  ok('filter to dead, bulk retry of 3 with a stated count, all succeeded');
}

// ---- search: the box finds jobs by text; a spent scan budget says so ----
{
  await page.click('nav >> text=Jobs');
  await page.waitForSelector('form.filter-form');
  await page.fill('input[name=q]', 'UI.FLA');
  await page.click('form.filter-form button[type=submit]');
  await until('the URL to carry the search', async () => page.url().includes('q=UI.FLA'));
  await until('the three ui.flaky rows', async () => {
    const rows = await page.$$eval('table.jobs tbody tr td:nth-child(3)', (t) => t.map((x) => x.textContent));
    return rows.length === 3 && rows.every((t) => t === 'ui.flaky');
  });
  check((await page.$('.partial')) === null, 'a whole search shows no partial note');
  await page.goto(`${URL0}/ui/#/jobs?q=ui.flaky&scan=1`);
  await page.waitForSelector('.partial');
  const note = (await page.textContent('.partial')).replace(/\s+/g, ' ');
  check(note.includes('stopped at its scan budget'), `the partial note: ${note}`);
  check((await page.$('.pager >> text=Next page')) !== null, 'a partial search offers the next page');
  ok('search box: 3 ui.flaky jobs found by text; scan=1 says the search stopped early');
}

// ---- a job: its attempts and errors ----
{
  await page.goto(`${URL0}/ui/#/jobs/${dead[0]}`);
  await page.waitForSelector('ol.timeline');
  await until('two attempts', async () => await page.locator('ol.timeline > li').count() === 2);
  const items = await page.$$eval('ol.timeline > li', (l) => l.map((e) => e.textContent));
  check(items[0].includes('dead') && items[0].includes('upstream refused the request (attempt 1)'),
    `first attempt dead with its error: ${items[0]}`);
  check(items[1].includes('succeeded'), `second attempt succeeded: ${items[1]}`);
  const atts = (await api('GET', `/v1/jobs/${dead[0]}/attempts`)).body.attempts;
  check(items[0].includes(atts[0].worker_id), 'the attempt shows its worker');
  check((await page.textContent('pre.json')).includes('"n": 0'), 'payload pretty-printed');
  // It succeeded: attempt 1's error is shown neutral, with its number, not as "Last error".
  const h = await page.textContent('h2.earlier');
  check(h.includes('Error of attempt 1'), `the earlier error names its attempt: ${h}`);
  check((await page.textContent('pre.earlier-error')).includes('upstream refused'), 'its text');
  check((await page.$$('section.job > pre.error-text')).length === 0,
    'no red last-error block for a succeeded job (the failed attempt keeps its own)');
  check(!(await page.textContent('main')).includes('Last error'), 'no "Last error" heading');
  await shot(page, 'job');
  ok('job view: timeline with outcome, worker and error; the earlier error neutral');
}

// ---- a queue's busiest groups (docs/MODEL.md, Groups) ----
{
  const jobs = [];
  for (let i = 0; i < 4; i++) jobs.push({ type: 'report.render', queue: 'tenants', group: 'acme' });
  jobs.push({ type: 'report.render', queue: 'tenants', group: 'globex' });
  const made = await api('POST', '/v1/jobs/batch', { jobs });
  check(made.status === 201, 'grouped jobs enqueued');
  await page.goto(`${URL0}/ui/#/jobs?queue=tenants`);
  await page.waitForSelector('.groups .group[data-group=acme]');
  const text = await page.textContent('.groups');
  check(text.indexOf('acme') < text.indexOf('globex'), `busiest group first: ${text}`);
  check(text.includes('4 pending'), `acme's pending count: ${text}`);
  for (const j of made.body.jobs) await api('DELETE', `/v1/jobs/${j.id}`);
  ok('jobs of a queue: its busiest groups, busiest first');
}

// ---- jobs due later, types nobody handles, earlier errors in the list ----
{
  const soon = (await api('POST', '/v1/jobs', { type: 'echo', queue: 'default', in: '12m' })).body.id;
  const later = (await api('POST', '/v1/jobs', { type: 'echo', queue: 'later', in: '1h' })).body.id;
  const late = (await api('POST', '/v1/jobs', { type: 'report.render', queue: 'reports' })).body.id;
  const qs = await until('the queues to list them', async () => {
    const q = (await api('GET', '/v1/queues')).body.queues;
    const by = Object.fromEntries(q.map((x) => [x.name, x]));
    return by.later && by.reports && by.reports.unhandled_types.length ? by : null;
  });
  check(qs.later.oldest_pending_age_s === null, 'a queue with only a job due later: null');
  check(JSON.stringify(qs.reports.unhandled_types) === '["report.render"]', 'reports: unhandled type');
  await page.goto(`${URL0}/ui/#/`);
  await page.waitForSelector('tr[data-queue=reports] .unhandled');
  const warn = await page.textContent('tr[data-queue=reports] .unhandled');
  check(warn.includes('no live worker handles report.render'), `the warning names the type: ${warn}`);
  check((await page.$$('tr[data-queue=default] .unhandled')).length === 0, 'no warning on default');
  const old = await page.textContent('tr[data-queue=later] td:nth-of-type(6)');
  check(old.includes('none due'), `oldest pending of a queue with nothing due: ${old}`);
  await shot(page, 'overview');
  ok('overview: a warning naming the unhandled type; "none due" for a job due in an hour');

  await page.goto(`${URL0}/ui/#/jobs`);
  await page.waitForSelector('table.jobs');
  const cell = async (id) => {
    const r = await page.$(`table.jobs tbody tr:has(a[href="#/jobs/${id}"])`);
    return r ? (await r.$eval('td.run-at', (e) => e.textContent)).trim() : '';
  };
  await until('the RUN AT of the scheduled jobs', async () =>
    /^in (11m( \d+s)?|12m)$/.test(await cell(soon)) && /^in (59m( \d+s)?|1h)$/.test(await cell(later)));
  await until('the RUN AT of the due job', async () =>
    /^(\d+m )?\d+s late$|^\d+m late$/.test(await cell(late)));
  check(await cell(dead[0]) === '—', 'no RUN AT for a succeeded job');
  const prev = await page.$(`table.jobs tbody tr:has(a[href="#/jobs/${dead[0]}"])`);
  check((await prev.$$('td.err')).length === 0, 'a succeeded job has no red error cell');
  const e = await prev.$eval('td.earlier-err', (x) => x.textContent);
  check(/attempt 1:\s+upstream refused/.test(e), `the earlier error with its attempt: ${e}`);
  await shot(page, 'jobs');
  await page.selectOption('select[name=status]', 'pending:later');
  await page.click('form.filter-form button[type=submit]');
  await until('the URL to carry due=false', async () => page.url().includes('due=false'));
  const want = (await api('GET', '/v1/jobs?due=false')).body.jobs.map((j) => j.id);
  check(JSON.stringify(want) === JSON.stringify([later, soon]), `due=false in the API: ${want}`);
  await until('the scheduled jobs only', async () => JSON.stringify(await page.$$eval(
    'table.jobs tbody td.num a', (l) => l.map((a) => Number(a.textContent)))) === JSON.stringify(want));
  await page.selectOption('select[name=status]', 'pending:due');
  await page.click('form.filter-form button[type=submit]');
  await until('the URL to carry due=true', async () => page.url().includes('due=true'));
  await until('the due job only', async () => JSON.stringify(await page.$$eval(
    'table.jobs tbody td.num a', (l) => l.map((a) => Number(a.textContent)))) === `[${late}]`);
  for (const id of [soon, later, late]) await api('DELETE', `/v1/jobs/${id}`);
  ok('jobs: RUN AT "in 12m" / "Ns late", the due filter, an earlier error neutral with its attempt');
}

// ---- pause and resume a queue ----
{
  await page.goto(`${URL0}/ui/#/`);
  const btn = 'button[aria-label="Pause queue default"]';
  await page.click(btn);
  await until('paused in the API', async () =>
    (await api('GET', '/v1/queues')).body.queues.find((q) => q.name === 'default').paused);
  await page.waitForSelector('tr[data-queue=default] .s-paused');
  await page.click('button[aria-label="Resume queue default"]');
  await until('resumed in the API', async () =>
    !(await api('GET', '/v1/queues')).body.queues.find((q) => q.name === 'default').paused);
  await page.waitForSelector(btn);
  ok('pause and resume a queue');
}

// ---- queue limits (admin): set through the form, then removed ----
if (![404, 405].includes((await api('PUT', '/v1/queues/default', {})).status)) {
  await page.click('button[aria-label="Limits of queue default"]');
  await page.fill('form.limits input[name=max_running]', '3');
  await page.fill('form.limits input[name=rate_limit]', '100');
  await page.fill('form.limits input[name=rate_per]', '1m');
  await page.click('form.limits button[type=submit]');
  const q = await until('limits saved', async () => {
    const x = (await api('GET', '/v1/queues')).body.queues.find((y) => y.name === 'default');
    return x.max_running === 3 && x.rate && x.rate.limit === 100 ? x : null;
  });
  await until('limits shown', async () =>
    (await page.textContent('tr[data-queue=default]')).includes('≤ 3 running'));
  await page.click('button[aria-label="Limits of queue default"]');
  await page.fill('form.limits input[name=max_running]', '');
  await page.fill('form.limits input[name=rate_limit]', '');
  await page.fill('form.limits input[name=rate_per]', '');
  await page.click('form.limits button[type=submit]');
  await until('limits removed', async () => {
    const x = (await api('GET', '/v1/queues')).body.queues.find((y) => y.name === 'default');
    return x.max_running === null && x.rate === null;
  });
  ok(`queue limits set (${q.max_running} running, ${q.rate.limit}/${q.rate.per}) and removed`);
} else {
  console.log('skip queue limits: this server has no PUT /v1/queues/{name}');
}

// ---- schedules: next five firings, trigger ----
{
  await page.click('nav >> text=Schedules');
  await page.click('a >> text=ui-nightly');
  await until('the URL names the schedule', async () => page.url().includes('name=ui-nightly'));
  await page.waitForSelector('.detail table tbody tr');
  const rows = await page.$$eval('.detail table tbody tr', (l) => l.map((e) => e.textContent));
  check(rows.length === 5, `five firings, saw ${rows.length}`);
  check(rows.every((r) => /03:00:00 (CET|CEST|GMT\+1|GMT\+2)/.test(r) && /0[12]:00:00 UTC/.test(r)),
    `firings at 03:00 Paris and in UTC: ${rows[0]}`);
  const next = (await api('GET', '/v1/schedules/ui-nightly/next?count=5')).body.next;
  check(next.length === 5, 'the API gives five firings');
  await page.click('button[aria-label="Trigger schedule ui-nightly now"]');
  await page.waitForSelector('.notice');
  check((await page.textContent('.notice')).includes('triggered'), 'trigger notice');
  const made = await until('the job it made', async () => {
    const j = (await api('GET', '/v1/jobs?schedule=ui-nightly')).body.jobs;
    return j.length === 1 ? j[0] : null;
  });
  await page.waitForSelector(`.detail a[href="#/jobs/${made.id}"]`);
  await shot(page, 'schedules');
  ok('schedule: five next firings in Paris and UTC; trigger made a job');
}

// ---- a hostile payload is text ----
{
  await page.goto(`${URL0}/ui/#/jobs/${xssJob}`);
  await page.waitForSelector('pre.json');
  check((await page.textContent('pre.json')).includes(XSS), 'the payload shows as text');
  check((await page.$$('img[src=x]')).length === 0, 'no element made from the payload');
  ok('a payload of <img src=x onerror=alert(1)> is text');
}

// ---- workers ----
{
  await page.click('nav >> text=Workers');
  await page.waitForSelector('table.workers tbody tr');
  const w = (await api('GET', '/v1/workers')).body.workers;
  const rows = await page.$$('table.workers tbody tr');
  check(rows.length === w.length, `one row a worker (${rows.length} vs ${w.length})`);
  await shot(page, 'workers');
  ok('workers listed');
}

// ---- paging: schedules and workers a page of 100 at a time ----
async function rowsOf(sel) {
  return page.$$eval(sel, (l) => l.map((e) => e.querySelector('th').textContent));
}
// fn(item) for every item, eight requests at a time.
async function eachOf(items, fn) {
  const next = items[Symbol.iterator]();
  const lane = async () => {
    for (let it = next.next(); !it.done; it = next.next()) await fn(it.value);
  };
  await Promise.all(Array.from({ length: 8 }, lane));
}
async function allOf(path, key) {
  const out = [];
  let after = null;
  do {
    const r = (await api('GET', `${path}?limit=1000${after ? `&after=${encodeURIComponent(after)}` : ''}`)).body;
    out.push(...r[key]);
    after = r.next;
  } while (after);
  return out;
}
{
  const names = [];
  for (let i = 0; i <= 100; i++) names.push(`ui-page-${String(i).padStart(3, '0')}`);
  await eachOf(names, async (name) => check((await api('POST', '/v1/schedules', { name,
    cron: '0 4 * * *', type: 'echo', payload: { big: 'x'.repeat(1000) } })).status === 201,
  `schedule ${name} created`));
  const all = (await allOf('/v1/schedules', 'schedules')).map((s) => s.name);
  check(all.length === 102, `102 schedules over the pages, saw ${all.length}`);
  await page.goto(`${URL0}/ui/#/schedules`);
  await until('a page of 100 schedules', async () =>
    await page.locator('table.schedules tbody tr').count() === 100);
  check(JSON.stringify(await rowsOf('table.schedules tbody tr')) === JSON.stringify(all.slice(0, 100)),
    'the first page is the first 100 by name');
  await page.click('nav.pager >> text=Next page');
  await until('the second page', async () =>
    JSON.stringify(await rowsOf('table.schedules tbody tr')) === JSON.stringify(all.slice(100)));
  check(page.url().includes('after='), 'the page is in the URL');
  check((await page.$$('nav.pager >> text=Next page')).length === 0, 'no page after the last');
  await page.click('nav.pager >> text=First page');
  await until('the first page again', async () =>
    await page.locator('table.schedules tbody tr').count() === 100);
  // a schedule chosen by link shows its firings though it is not on the first page
  await page.goto(`${URL0}/ui/#/schedules?name=ui-page-100`);
  await page.waitForSelector('.detail[aria-label="Schedule ui-page-100"] table tbody tr');
  // Leave the schedule's view before deleting it: its refresh would ask for
  // a schedule that is gone, a 404 the page rightly logs.
  await page.goto(`${URL0}/ui/#/workers`);
  await page.waitForSelector('table.workers');
  await eachOf(names, (name) => api('DELETE', `/v1/schedules/${name}`));

  const ids = [];
  for (let i = 0; i <= 100; i++) ids.push(`ui-fake-${String(i).padStart(3, '0')}`);
  await eachOf(ids, async (id) => check((await api('POST', '/v1/workers', { id,
    hostname: 'fake', heartbeat_ms: 600000, types: ['echo'] })).status === 200, `worker ${id} announced`));
  const ws = (await allOf('/v1/workers', 'workers')).map((w) => w.id);
  check(ws.length > 101, `every worker over the pages (${ws.length})`);
  await page.goto(`${URL0}/ui/#/workers`);
  await until('a page of 100 workers', async () =>
    await page.locator('table.workers tbody tr').count() === 100);
  await page.click('nav.pager >> text=Next page');
  await until('the other workers on the second page', async () =>
    await page.locator('table.workers tbody tr').count() === ws.length - 100);
  const second = await rowsOf('table.workers tbody tr');
  check(second.every((id) => ws.slice(100).includes(id)), `the second page: ${second}`);
  await eachOf(ids, (id) => api('POST', `/v1/workers/${id}/withdraw`, {}));
  ok('schedules and workers: pages of 100, Next and First page, a chosen schedule off the page');
}

// ---- a running job's progress: a bar and its message, in the list and the job ----
{
  const id = (await api('POST', '/v1/jobs', { type: 'ui.progress' })).body.id;
  await until('the job to report its progress', async () =>
    (await api('GET', `/v1/jobs/${id}`)).body.progress?.percent === 40);
  await page.goto(`${URL0}/ui/#/jobs?type=ui.progress`);
  await page.waitForSelector('table.jobs progress');
  const cell = (await page.textContent('table.jobs tbody tr')).replace(/\s+/g, ' ');
  check(cell.includes('running') && cell.includes('resizing image 4 of 10'),
    `the list shows the running job's message: ${cell}`);
  check(await page.$eval('table.jobs progress', (p) => p.value === 40 && p.max === 100),
    'the list shows a bar at 40 %');
  await page.goto(`${URL0}/ui/#/jobs/${id}`);
  await page.waitForSelector('section.job .job-progress progress');
  check(await page.$eval('section.job .job-progress progress', (p) => p.value === 40),
    'the job view shows a bar at 40 %');
  const txt = await page.textContent('section.job .job-progress');
  check(txt.includes('40%') && txt.includes('resizing image 4 of 10'), `the job's progress: ${txt}`);
  await shot(page, 'job-progress');
  writeFileSync(process.env.PROGRESS_FLAG, '');
  await until('the progress job to succeed', async () =>
    (await api('GET', `/v1/jobs/${id}`)).body.status === 'succeeded');
  // the view refreshes itself: the bar goes with the run
  await until('no bar once the job is done', async () =>
    (await page.$('section.job .job-progress')) === null && (await page.$('section.job .s-succeeded')));
  ok('progress: a bar and the message on a running job, in the list and the job view');
}

// ---- the event stream: a job's page shows its end at once, not at the
// next poll (10 s while the stream is open) ----
{
  const id = (await api('POST', '/v1/jobs', { type: 'ui.hold' })).body.id;
  await until('the hold job to run', async () =>
    (await api('GET', `/v1/jobs/${id}`)).body.status === 'running');
  await page.goto(`${URL0}/ui/#/jobs/${id}`);
  await page.waitForSelector('section.job .s-running');
  // A fresh page, so the stream is opened by this view.
  const stream = page.waitForResponse((r) => r.url().includes('/v1/events'));
  await page.reload();
  check((await stream).status() === 200, 'the running job\'s page opens the event stream');
  await page.waitForSelector('section.job .s-running');
  writeFileSync(process.env.HOLD_FLAG, '');
  await until('the hold job to succeed', async () =>
    (await api('GET', `/v1/jobs/${id}`)).body.status === 'succeeded', 15000);
  const t = Date.now();
  try {
    await page.waitForSelector('section.job .s-succeeded', { timeout: 1500 });
  } catch {
    throw new Error('check failed: the job page did not show succeeded within 1.5 s of it');
  }
  ok(`event stream: the job's page showed succeeded ${Date.now() - t} ms after it`);
}

// ---- attempt logs: a tab per finished attempt, each with its own log ----
{
  const id = (await api('POST', '/v1/jobs', { type: 'ui.logs', max_attempts: 3 })).body.id;
  await until('the logs job to succeed on its second attempt', async () =>
    (await api('GET', `/v1/jobs/${id}`)).body.status === 'succeeded', 30000);
  await page.goto(`${URL0}/ui/#/jobs/${id}`);
  await page.waitForSelector('section.job pre.attempt-log');
  const tabs = await page.$$eval('.attempt-logs [role=tab]', (b) => b.map((x) => x.textContent.trim()));
  check(tabs.join(',') === 'Attempt 1,Attempt 2', `a tab per attempt: ${tabs}`);
  const second = await page.textContent('pre.attempt-log');
  check(second.includes('resized to 640x480') && !second.includes('Traceback'),
    `the latest attempt's log is shown first: ${second}`);
  await page.click('.attempt-logs [role=tab]:has-text("Attempt 1")');
  await page.waitForSelector('pre.attempt-log[data-attempt="1"]');
  const first = await page.textContent('pre.attempt-log');
  check(first.includes('ConnectionResetError') && first.includes('Traceback'),
    `attempt 1's own log: ${first}`);
  check(await page.$eval('.attempt-logs [role=tab][aria-selected=true]', (b) => b.textContent.trim())
    === 'Attempt 1', 'the tab shown is marked selected');
  await shot(page, 'job-attempt-log');
  // a job of a handler that wrote nothing to stderr: its tab says so
  const quiet = (await api('POST', '/v1/jobs', { type: 'echo', payload: { hi: 1 } })).body.id;
  await until('the echo job to succeed', async () =>
    (await api('GET', `/v1/jobs/${quiet}`)).body.status === 'succeeded');
  await page.goto(`${URL0}/ui/#/jobs/${quiet}`);
  await page.waitForSelector('.attempt-logs .log-none');
  ok('attempt logs: a tab per attempt, each showing its own stderr; none kept says so');
}

// ---- a read-only token: no action buttons; a forged action is 403 ----
// (The tab stays open: the workflow views are checked in it too.)
const ro = await newPage();
{
  await signIn(ro, READ);
  for (const v of ['', 'jobs', `jobs/${dead[1]}`, 'schedules?name=ui-nightly', 'workers']) {
    await ro.goto(`${URL0}/ui/#/${v}`);
    await ro.waitForSelector('main section h1');
    await ro.waitForTimeout(400);
    const buttons = await ro.$$eval('main button', (l) => l.map((b) => b.textContent.trim()));
    const acts = buttons.filter((b) => /^(Pause|Resume|Retry|Cancel|Delete|Trigger|Limits)$/.test(b));
    check(acts.length === 0, `#/${v}: no action buttons for read, saw ${acts}`);
    check((await ro.$$('main input[type=checkbox]')).length === 0, `#/${v}: no selection`);
  }
  check((await api('POST', '/v1/queues/default/pause', {}, READ)).status === 403, 'pause is 403');
  check((await api('POST', '/v1/jobs/bulk', { action: 'retry', filter: { status: 'dead' } }, READ))
    .status === 403, 'bulk retry is 403');
  check((await api('POST', `/v1/jobs/${dead[1]}/retry`, {}, READ)).status === 403, 'retry is 403');
  problems.push(...(await cspOf(ro)).map((c) => `CSP violation: ${c}`));
  ok('read token: no action on any view; forged actions 403');
}

// ---- phone width ----
{
  await page.setViewportSize({ width: 390, height: 800 });
  await page.goto(`${URL0}/ui/#/jobs`);
  await page.waitForSelector('table.jobs');
  const over = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
  check(over <= 0, `no sideways scroll of the page at 390 px (${over} px over)`);
  await page.setViewportSize({ width: 1280, height: 800 });
  ok('phone width: tables scroll inside their box');
}

// ---- workflows: the list, the graph, its actions (workflows.mjs) ----
await workflowSuite({ page, ro, api, until, check, ok, shot, URL0, problems });

problems.push(...(await cspOf(page)).map((c) => `CSP violation: ${c}`));
await browser.close();
if (problems.length) {
  console.log(problems.join('\n'));
  throw new Error(`${problems.length} console errors or CSP violations`);
}
ok('no console errors, page errors or CSP violations');
