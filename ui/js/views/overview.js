// overview.js — every queue (counts by status, oldest due pending age,
// limits, the last minute's throughput, a warning naming the types of its
// pending jobs no live worker handles) with pause/resume, and the last hour's
// throughput chart from GET /v1/stats (a server without that route gets a
// note instead of the chart).
import { html } from '../html.js';
import { app, update, refresh } from '../state.js';
import { get, post, enc } from '../api.js';
import { link } from '../route.js';
import { age, num } from '../format.js';
import { can } from '../roles.js';
import { act, Empty } from '../widgets.js';
import { Chart } from '../chart.js';
import { LimitsForm } from './limits.js';

export async function load(route, signal) {
  const q = await get('/v1/queues', signal);
  let stats = null;
  try {
    stats = await get('/v1/stats?since=1h&step=1m', signal);
  } catch (e) {
    if (e.status !== 404) throw e;
    stats = { missing: true };
  }
  update({ data: { queues: q.queues || [], stats } });
}

// Every status change moves a count (docs/DASHBOARD.md, Live).
export function live() {
  return { match: () => true, slow: true };
}

function rateText(r) {
  if (!r) return null;
  const per = typeof r.per === 'number' ? age(r.per) : String(r.per);
  return `${r.limit} per ${per}`;
}

function limits(q) {
  const parts = [];
  if (q.max_running !== undefined && q.max_running !== null) parts.push(`≤ ${q.max_running} running`);
  const r = rateText(q.rate);
  if (r) parts.push(r);
  return parts.length ? parts.join(', ') : 'none';
}

function throughput(q) {
  const t = q.throughput_1m;
  if (!t) return '—';
  return `${t.succeeded || 0} ok / ${(t.failed || 0) + (t.dead || 0)} failed`;
}

function pause(q) {
  const verb = q.paused ? 'resume' : 'pause';
  act({
    fn: async () => {
      await post(`/v1/queues/${enc(q.name)}/${verb}`);
      return `Queue ${q.name} ${q.paused ? 'resumed' : 'paused'}.`;
    },
    done: refresh,
  });
}

function count(q, status) {
  const n = q[status] || 0;
  if (!n) return html`<td class="num zero" data-count=${status}>0</td>`;
  return html`<td class="num" data-count=${status}><a href=${link('jobs', { queue: q.name, status })}
    aria-label=${`${n} ${status} jobs in ${q.name}`}>${num(n)}</a></td>`;
}

// How long the oldest due job has waited; "none due" when every pending
// job is scheduled for later (oldest_pending_age_s is null), linking to them.
function oldest(q) {
  if (!q.pending) return html`<td class="num zero">—</td>`;
  if (q.oldest_pending_age_s === null || q.oldest_pending_age_s === undefined) {
    return html`<td class="num muted"><a href=${link('jobs', { queue: q.name, status: 'pending',
      due: 'false' })} title="Every pending job is scheduled for later">none due</a></td>`;
  }
  return html`<td class="num">${age(q.oldest_pending_age_s)}</td>`;
}

// The types of the queue's pending jobs that no live worker handles.
function unhandled(q) {
  const t = q.unhandled_types || [];
  if (!t.length) return null;
  return html`<span class="unhandled" role="note">⚠ no live worker handles ${t.join(', ')}</span>`;
}

function Row({ q, write }) {
  return html`<tr data-queue=${q.name}>
    <th scope="row"><a href=${link('jobs', { queue: q.name })}>${q.name}</a>
      ${q.paused && html` <span class="badge s-paused">paused</span>`}${unhandled(q)}</th>
    ${count(q, 'pending')}${count(q, 'running')}${count(q, 'succeeded')}
    ${count(q, 'dead')}${count(q, 'cancelled')}
    ${oldest(q)}
    <td>${limits(q)}</td>
    <td>${throughput(q)}</td>
    ${write && html`<td class="row-actions"><button disabled=${app.busy} onClick=${() => pause(q)}
      aria-label=${`${q.paused ? 'Resume' : 'Pause'} queue ${q.name}`}>
      ${q.paused ? 'Resume' : 'Pause'}</button>
      ${can('admin') && html`<button onClick=${() => update({ editing: q.name })}
        aria-label=${`Limits of queue ${q.name}`}>Limits</button>`}</td>`}
  </tr>`;
}

function Queues({ queues }) {
  if (!queues.length) {
    return html`<${Empty}><p>No queues yet: a queue appears with its first job.</p>
      <p>Submit one with <code>jobd submit hello --payload '{"name":"world"}'</code>
      or <code>POST /v1/jobs</code>.</p><//>`;
  }
  const write = can('write');
  const editing = can('admin') && queues.find((q) => q.name === app.editing);
  return html`<div class="scroll"><table class="queues">
    <thead><tr><th scope="col">Queue</th><th scope="col" class="num">Pending</th>
      <th scope="col" class="num">Running</th><th scope="col" class="num">Succeeded</th>
      <th scope="col" class="num">Dead</th><th scope="col" class="num">Cancelled</th>
      <th scope="col" class="num">Oldest pending</th><th scope="col">Limits</th>
      <th scope="col">Last minute</th>${write && html`<th scope="col">Actions</th>`}</tr></thead>
    <tbody>${queues.map((q) => html`<${Row} key=${q.name} q=${q} write=${write} />`)}</tbody>
  </table></div>
  ${editing && html`<${LimitsForm} q=${editing} />`}`;
}

export function view() {
  const d = app.data;
  if (!d.queues) return html`<section><h1>Overview</h1><p class="muted">Loading…</p></section>`;
  return html`<section>
    <h1>Overview</h1>
    <h2>Throughput</h2>
    ${d.stats && d.stats.missing
      ? html`<p class="muted">This server has no <code>GET /v1/stats</code>: no chart.</p>`
      : d.stats && html`<${Chart} stats=${d.stats} />`}
    <h2>Queues</h2>
    <${Queues} queues=${d.queues} />
  </section>`;
}
