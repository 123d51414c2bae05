// job.js — one job: its fields, payload and result pretty-printed (as
// text), its last error (neutral for a job that then succeeded), the
// attempt history as a timeline (worker, duration, outcome, error), a running job's progress
// (a bar and its message), a tab per finished attempt showing its log (the kept end
// of an exec handler's stderr, fetched for the tab shown only, and kept once read:
// a finished attempt's log does not change), and the actions its status allows
// (retry dead or cancelled; cancel pending or running; delete anything not running).
// A step of a workflow links to the workflow's graph.
import { html } from '../html.js';
import { app, update, refresh } from '../state.js';
import { get, getText, post, del } from '../api.js';
import { link } from '../route.js';
import { ago, when, duration, pretty } from '../format.js';
import { can } from '../roles.js';
import { act, Badge, Empty, JobBadge, Progress } from '../widgets.js';

export async function load(route, signal) {
  let job;
  try {
    job = await get(`/v1/jobs/${route.id}`, signal);
  } catch (e) {
    if (e.status !== 404) throw e;
    update({ data: { missing: true } });
    return;
  }
  const a = await get(`/v1/jobs/${route.id}/attempts`, signal);
  const attempts = a.attempts || [];
  update({ data: { job, attempts } });
  await loadLog(route.id, attempts, signal);
}

// A pending or running job follows its own events; a finished one has
// nothing to wait for. A running job's progress is not an event, so it
// keeps the fast poll while it reports one (docs/DASHBOARD.md, Live).
export function live(route) {
  const j = app.data.job;
  if (!j || (j.status !== 'pending' && j.status !== 'running')) return null;
  return { match: (ev) => String(ev.job) === route.id, slow: !(j.status === 'running' && j.progress) };
}

// Logs read so far, by "job/attempt": the text, or null when none was kept.
const logs = new Map();
// The attempt whose log tab is shown, by job (default: the latest finished).
const shown = new Map();

function finished(attempts) {
  return attempts.filter((a) => a.outcome !== 'running');
}

async function loadLog(id, attempts, signal) {
  const done = finished(attempts);
  if (!done.length) return;
  const n = shown.get(id) ?? done[done.length - 1].attempt;
  const key = `${id}/${n}`;
  if (logs.has(key)) return;
  // Only a log the attempt kept (log_bytes): no request that is sure to be a 404.
  const a = done.find((x) => x.attempt === n);
  logs.set(key, a && a.log_bytes != null
    ? await getText(`/v1/jobs/${id}/attempts/${n}/log`, signal) : null);
  update({});
}

function showLog(id, n) {
  shown.set(id, n);
  update({});
  if (!logs.has(`${id}/${n}`)) refresh();
}

function Logs({ j, attempts }) {
  const done = finished(attempts);
  if (!done.length) return null;
  const n = shown.get(String(j.id)) ?? done[done.length - 1].attempt;
  const key = `${j.id}/${n}`;
  const text = logs.get(key);
  return html`<div class="attempt-logs"><h2>Logs</h2>
    <div class="tabs" role="tablist">${done.map((a) => html`<button role="tab"
      aria-selected=${a.attempt === n ? 'true' : 'false'}
      class=${a.attempt === n ? 'tab on' : 'tab'}
      onClick=${() => showLog(String(j.id), a.attempt)}>Attempt ${a.attempt}</button>`)}</div>
    ${!logs.has(key) ? html`<p class="muted">Loading…</p>`
      : text === null || text === ''
        ? html`<p class="muted log-none">Attempt ${n} kept no log: its handler wrote nothing to
            stderr, or is not an exec handler (docs/WORKER.md, Attempt logs).</p>`
        : html`<pre class="attempt-log" data-attempt=${n}>${text}</pre>`}
  </div>`;
}

function action(j, verb) {
  const gone = verb === 'delete';
  act({
    text: gone ? `Delete job ${j.id} and its attempt history?` : null,
    yes: 'Delete job',
    danger: true,
    fn: async () => {
      if (gone) {
        await del(`/v1/jobs/${j.id}`);
        location.hash = link('jobs');
        return `Job ${j.id} deleted.`;
      }
      const r = await post(`/v1/jobs/${j.id}/${verb}`);
      return `Job ${j.id}: ${verb} done, now ${r.status}.`;
    },
    done: gone ? null : refresh, // a delete leaves the page: nothing to reload
  });
}

function Actions({ j }) {
  if (!can('write')) return null;
  const b = [];
  if (j.status === 'dead' || j.status === 'cancelled') b.push(['retry', 'Retry']);
  if (j.status === 'pending' || j.status === 'running') b.push(['cancel', 'Cancel']);
  if (j.status !== 'running') b.push(['delete', 'Delete']);
  return html`<div class="actions">${b.map(([v, label]) => html`<button
    class=${v === 'delete' ? 'danger' : v === 'retry' ? 'primary' : ''} disabled=${app.busy}
    onClick=${() => action(j, v)}>${label}</button>`)}</div>`;
}

function Field({ k, children }) {
  return html`<div class="field"><dt>${k}</dt><dd>${children}</dd></div>`;
}

function Time({ t }) {
  return t ? html`<span title=${t}>${when(t)} (${ago(t)})</span>` : '—';
}

function Fields({ j }) {
  return html`<dl class="fields">
    <${Field} k="Status"><${JobBadge} j=${j} /><//>
    <${Field} k="Type">${j.type}<//>
    <${Field} k="Queue"><a href=${link('jobs', { queue: j.queue })}>${j.queue}</a><//>
    <${Field} k="Attempt">${j.attempt} of ${j.max_attempts}<//>
    <${Field} k="Priority">${j.priority}<//>
    <${Field} k="Idempotency key">${j.idempotency_key ?? '—'}<//>
    <${Field} k="Workflow">${j.workflow
      ? html`<a class="workflow-link" href=${`#/workflows/${j.workflow}`}>workflow ${j.workflow}</a>,
          step ${j.step}` : '—'}<//>
    <${Field} k="Schedule">${j.schedule
      ? html`<a href=${link('schedules', { name: j.schedule })}>${j.schedule}</a>` : '—'}<//>
    <${Field} k="Worker">${j.worker_id ?? '—'}<//>
    <${Field} k="Created"><${Time} t=${j.created_at} /><//>
    <${Field} k="Run at"><${Time} t=${j.run_at} /><//>
    <${Field} k="Started"><${Time} t=${j.started_at} /><//>
    <${Field} k="Finished"><${Time} t=${j.finished_at} /><//>
    <${Field} k="Timeout">${j.timeout_s ? `${j.timeout_s}s` : '—'}<//>
  </dl>`;
}

function Attempt({ a }) {
  return html`<li class=${'attempt o-' + a.outcome}>
    <div class="head">
      <strong>Attempt ${a.attempt}</strong> <${Badge} s=${a.outcome} />
      <span>on ${a.worker_id || 'unknown worker'}</span>
      <span>${when(a.started_at)}</span>
      <span>${a.finished_at ? `took ${duration(a.duration_s)}` : 'still running'}</span>
    </div>
    ${a.error && html`<pre class="error-text">${a.error}</pre>`}
  </li>`;
}

// The job's last error: red while it stands; for a job that then succeeded
// it is an earlier attempt's, shown neutral with that attempt's number (the
// latest failed attempt of the history; docs/DASHBOARD.md).
function LastError({ j, attempts }) {
  if (!j.last_error) return null;
  if (j.status !== 'succeeded') {
    return html`<h2>Last error</h2><pre class="error-text">${j.last_error}</pre>`;
  }
  const failed = attempts.filter((a) => a.error && a.outcome !== 'succeeded');
  const n = failed.length ? failed[failed.length - 1].attempt : j.attempt - 1;
  return html`<h2 class="earlier">Error of attempt ${n}, before the job succeeded</h2>
    <pre class="earlier-error">${j.last_error}</pre>`;
}

export function view() {
  const d = app.data;
  const id = app.route.id;
  if (d.missing) {
    return html`<section><h1>Job ${id}</h1><${Empty}><p>There is no job ${id}: it may have
      been deleted or pruned. <a href=${link('jobs')}>Back to the jobs</a>.</p><//></section>`;
  }
  if (!d.job) return html`<section><h1>Job ${id}</h1><p class="muted">Loading…</p></section>`;
  const j = d.job;
  return html`<section class="job">
    <p><a href=${link('jobs')}>← Jobs</a></p>
    <h1>Job ${j.id} <${JobBadge} j=${j} /></h1>
    <${Actions} j=${j} />
    <${Fields} j=${j} />
    ${j.status === 'running' && j.progress && html`<div class="progress-block"><h2>Progress</h2>
      <${Progress} j=${j} /></div>`}
    <${LastError} j=${j} attempts=${d.attempts} />
    <div class="two">
      <div><h2>Payload</h2><pre class="json">${pretty(j.payload)}</pre></div>
      <div><h2>Result</h2><pre class="json">${pretty(j.result)}</pre></div>
    </div>
    <h2>Attempts</h2>
    ${d.attempts.length
      ? html`<ol class="timeline">${d.attempts.map((a) => html`<${Attempt} key=${a.attempt} a=${a} />`)}</ol>`
      : html`<${Empty}><p>No attempt yet: the job has not started. It runs when a worker
          for queue ${j.queue} and type ${j.type} is free.</p><//>`}
    <${Logs} j=${j} attempts=${d.attempts} />
  </section>`;
}
