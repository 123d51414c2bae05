// workflows.mjs — the workflow views in the browser suite (run by
// browser.test.mjs with its page and helpers, against the same server; its
// worker runs ui.wf.hold until WF_GO_FLAG exists and ui.wf.fail, dead at
// once, while WF_BROKEN_FLAG exists). A diamond a -> b, c -> d, submitted
// through the API: a succeeds, b runs, c is dead, d waits. Checked: the
// list links to the graph; the SVG has a box a step with its status class
// and an edge a dependency coloured by its parent, laid out by layers; a
// box links to its job, whose page links back; the graph follows the
// steps' events (within 1.5 s, the poll being every 10 s); retry, cancel and delete through the buttons; a read
// token sees none of them; 300 steps stay usable (the graph scrolls in its
// box, the page does not). UI_SCREENSHOTS=1: docs/ui/workflow.png.
import { writeFileSync, unlinkSync } from 'node:fs';

export async function workflowSuite(t) {
  // ro: a tab signed in with a read token (browser.test.mjs, read token).
  const { page, ro, api, until, check, ok, shot, URL0, problems } = t;
  const boxes = () => page.$$eval('svg a.wf-node', (l) => Object.fromEntries(l.map((a) =>
    [a.dataset.ref, { cls: a.getAttribute('class'), job: Number(a.dataset.job),
      x: Number(a.querySelector('rect').getAttribute('x')) }])));
  const status = (cls) => (cls.match(/\bs-([a-z]+)/) || [])[1];
  const stepStatus = async (id, ref) =>
    (await api('GET', `/v1/workflows/${id}`)).body.steps.find((s) => s.ref === ref).status;

  writeFileSync(process.env.WF_BROKEN_FLAG, '');
  const r = await api('POST', '/v1/workflows', { name: 'nightly-etl', steps: [
    { ref: 'extract', type: 'echo', payload: { day: '2026-12-06' } },
    { ref: 'transform', type: 'ui.wf.hold', depends_on: ['extract'] },
    { ref: 'enrich', type: 'ui.wf.fail', depends_on: ['extract'] },
    { ref: 'load', type: 'echo', depends_on: ['transform', 'enrich'] },
  ] });
  check(r.status === 201, `the diamond submitted: ${JSON.stringify(r.body)}`);
  const id = r.body.id;
  const jobs = r.body.jobs;
  await until('transform running and enrich dead', async () =>
    await stepStatus(id, 'transform') === 'running' && await stepStatus(id, 'enrich') === 'dead');

  // ---- the list links to the graph ----
  await page.click('nav >> text=Workflows');
  await page.waitForSelector(`tr[data-workflow="${id}"]`);
  const row = (await page.textContent(`tr[data-workflow="${id}"]`)).replace(/\s+/g, ' ');
  check(row.includes('nightly-etl') && row.includes('running') && row.includes('1 waiting') &&
    row.includes('1 running') && row.includes('1 succeeded') && row.includes('1 dead'),
  `the row: name, status and counts: ${row}`);
  await page.click(`tr[data-workflow="${id}"] >> text=nightly-etl`);
  await until('the URL of the graph', async () => page.url().endsWith(`#/workflows/${id}`));
  await page.waitForSelector('svg a.wf-node');
  ok('workflows list: name, status, counts; a click opens the graph');

  // ---- the graph: boxes with status classes, edges, layers ----
  const b = await boxes();
  const want = { extract: 'succeeded', transform: 'running', enrich: 'dead', load: 'waiting' };
  for (const [ref, st] of Object.entries(want)) {
    check(b[ref] && status(b[ref].cls) === st, `box ${ref} is ${st}: ${b[ref] && b[ref].cls}`);
    check(b[ref].job === jobs[ref], `box ${ref} is job ${jobs[ref]}`);
  }
  check(b.extract.x < b.transform.x && b.transform.x === b.enrich.x && b.enrich.x < b.load.x,
    `by layers, left to right: ${JSON.stringify(b)}`);
  const edges = await page.$$eval('svg path.wf-edge', (l) => l.map((p) =>
    `${p.dataset.from}>${p.dataset.to}:${p.getAttribute('class').replace('wf-edge ', '')}`).sort());
  check(JSON.stringify(edges) === JSON.stringify(['enrich>load:s-dead', 'extract>enrich:s-succeeded',
    'extract>transform:s-succeeded', 'transform>load:s-running']), `the edges: ${edges}`);
  const text = await page.textContent('svg a.wf-node[data-ref=enrich]');
  check(text.includes('enrich') && text.includes('ui.wf.fail'), `a box's label: ${text}`);
  await shot(page, 'workflow');
  ok('graph: 4 boxes with their status classes, 4 edges coloured by parent, in 3 layers');

  // ---- a box links to its job; the job links back ----
  await page.click('svg a.wf-node[data-ref=enrich]');
  await until('the job page of enrich', async () => page.url().endsWith(`#/jobs/${jobs.enrich}`));
  await page.waitForSelector('section.job a.workflow-link');
  check((await page.textContent('section.job .fields')).includes('step enrich'), 'the job names its step');
  await page.click('section.job a.workflow-link');
  await until('back on the graph', async () => page.url().endsWith(`#/workflows/${id}`));
  await page.waitForSelector('svg a.wf-node');
  ok('a box opens its job; the job links to its workflow');

  // ---- live: transform ends, so load is cancelled (enrich is dead) ----
  // The event stream is open (the poll is then every 10 s): the graph shows
  // the change within 1.5 s of it only if the step's event reloaded it.
  writeFileSync(process.env.WF_GO_FLAG, '');
  await until('load cancelled in the API', async () => await stepStatus(id, 'load') === 'cancelled');
  const t1 = Date.now();
  await until('load cancelled in the graph', async () =>
    status((await boxes()).load.cls) === 'cancelled', 1500);
  const lag = Date.now() - t1;
  await page.waitForSelector('section.workflow h1 .s-failed');
  ok(`the graph follows its steps' events: load cancelled ${lag} ms after it, the workflow failed`);

  // The actions' routes, or a server without them ("no route": 404 naming no field).
  const probe = await api('POST', '/v1/workflows/999999/retry', {});
  if (probe.status === 404 && probe.body?.error?.field === 'id') {
    // ---- retry: enrich runs again and succeeds, then load ----
    unlinkSync(process.env.WF_BROKEN_FLAG);
    await page.click('section.workflow .actions >> text=Retry');
    await until('the workflow to succeed', async () =>
      (await api('GET', `/v1/workflows/${id}`)).body.status === 'succeeded', 20000);
    await until('every box green', async () =>
      Object.values(await boxes()).every((x) => status(x.cls) === 'succeeded'));
    // ---- delete, after a confirmation ----
    await page.click('section.workflow .actions >> text=Delete');
    await page.waitForSelector('.dialog');
    check((await page.textContent('.dialog p')).includes('4 steps'), 'the confirmation counts the steps');
    await page.click('.dialog button:has-text("Delete workflow")');
    await until('the list again', async () => page.url().endsWith('#/workflows'));
    check((await api('GET', `/v1/workflows/${id}`)).status === 404, 'deleted in the API');
    // ---- cancel ----
    unlinkSync(process.env.WF_GO_FLAG);
    const h = await api('POST', '/v1/workflows', { name: 'held', steps: [
      { ref: 'hold', type: 'ui.wf.hold' }, { ref: 'after', type: 'echo', depends_on: ['hold'] }] });
    await page.goto(`${URL0}/ui/#/workflows/${h.body.id}`);
    await page.waitForSelector('svg a.wf-node[data-ref=hold].s-running');
    await page.click('section.workflow .actions >> text=Cancel');
    await page.waitForSelector('.dialog');
    await page.click('.dialog button:has-text("Cancel steps")');
    await until('both steps cancelled in the graph', async () =>
      Object.values(await boxes()).every((x) => status(x.cls) === 'cancelled'), 15000);
    ok('retry, delete (confirmed) and cancel through the buttons');
  } else {
    writeFileSync(process.env.WF_GO_FLAG, '');
    console.log('skip workflow actions: this server has no POST /v1/workflows/{id}/retry');
  }

  // ---- a read token: no action ----
  {
    const any = (await api('GET', '/v1/workflows')).body.workflows[0];
    await ro.goto(`${URL0}/ui/#/workflows/${any.id}`);
    await ro.waitForSelector('svg a.wf-node');
    await ro.waitForTimeout(300);
    const acts = await ro.$$eval('main button', (l) => l.map((x) => x.textContent.trim())
      .filter((x) => /^(Retry|Cancel|Delete)$/.test(x)));
    check(acts.length === 0, `a read token sees no workflow action: ${acts}`);
    problems.push(...(await ro.evaluate(() => window.__csp)).map((c) => `CSP violation: ${c}`));
    await ro.context().close();
    ok('read token: the graph without actions');
  }

  // ---- 300 steps: a fan-out and its join ----
  {
    const steps = [{ ref: 'split', type: 'ui.none' }];
    for (let i = 0; i < 298; i++) steps.push({ ref: `part-${i}`, type: 'ui.none', depends_on: ['split'] });
    steps.push({ ref: 'join', type: 'ui.none', depends_on: steps.slice(1).map((s) => s.ref) });
    const big = await api('POST', '/v1/workflows', { name: 'fan-out', steps });
    check(big.status === 201, 'the 300 steps submitted');
    const t0 = Date.now();
    await page.goto(`${URL0}/ui/#/workflows/${big.body.id}`);
    await until('300 boxes', async () => await page.locator('svg a.wf-node').count() === 300);
    const ms = Date.now() - t0;
    check(await page.$$eval('svg path.wf-edge', (l) => l.length) === 596, '596 edges');
    const box = await page.$eval('.wf-graph', (g) => ({ sh: g.scrollHeight, ch: g.clientHeight }));
    check(box.sh > box.ch * 2, `the graph scrolls in its box: ${JSON.stringify(box)}`);
    const over = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    check(over <= 0, `the page does not scroll sideways (${over} px over)`);
    await page.$eval('svg a.wf-node[data-ref=part-297]', (a) => a.scrollIntoView());
    await page.click('svg a.wf-node[data-ref=part-297]');
    await until('the job of part-297', async () =>
      page.url().endsWith(`#/jobs/${big.body.jobs['part-297']}`));
    await api('POST', `/v1/workflows/${big.body.id}/cancel`, {});
    ok(`300 steps: drawn in ${ms} ms, the graph scrolls in its box, a far box opens its job`);
  }
}
