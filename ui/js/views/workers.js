// workers.js — the workers that announced themselves (GET /v1/workers), a
// page of PAGE at a time by id (#/workers?after=ID): active, draining or
// gone, what each serves, the jobs it holds, last seen. A page is shown
// active first.
import { html } from '../html.js';
import { app, update } from '../state.js';
import { get, query } from '../api.js';
import { ago, when } from '../format.js';
import { Badge, Empty, Pager } from '../widgets.js';

const ORDER = { active: 0, draining: 1, gone: 2 };
const PAGE = 100;

export async function load(route, signal) {
  const r = await get(`/v1/workers${query({ limit: PAGE, after: route.params.after })}`, signal);
  const workers = (r.workers || []).slice().sort((a, b) =>
    (ORDER[a.state] ?? 3) - (ORDER[b.state] ?? 3) || String(a.id).localeCompare(String(b.id)));
  update({ data: { workers, next: r.next || null } });
}

function list(v) {
  return Array.isArray(v) && v.length ? v.join(', ') : 'all';
}

function Row({ w }) {
  const running = w.running || [];
  return html`<tr>
    <th scope="row">${w.id}</th>
    <td><${Badge} s=${w.state} /></td>
    <td>${w.hostname} <span class="muted">pid ${w.pid}</span></td>
    <td>${list(w.queues)}</td>
    <td>${list(w.types)}</td>
    <td class="num">${running.length}/${w.concurrency}</td>
    <td>${running.length
      ? running.map((id, i) => html`${i ? ', ' : ''}<a key=${id} href=${`#/jobs/${id}`}>${id}</a>`)
      : html`<span class="muted">none</span>`}</td>
    <td title=${when(w.last_seen_at)}>${ago(w.last_seen_at)}</td>
    <td title=${when(w.started_at)}>${ago(w.started_at)}</td>
    <td>${w.version}</td>
  </tr>`;
}

export function view() {
  const d = app.data;
  const p = app.route.params;
  if (!d.workers) return html`<section><h1>Workers</h1><p class="muted">Loading…</p></section>`;
  const active = d.workers.filter((w) => w.state === 'active').length;
  return html`<section>
    <h1>Workers</h1>
    ${!d.workers.length && !p.after
      ? html`<${Empty}><p>No workers yet: start one with
          <code>jobd worker --config worker.ini</code>, or run the server with
          <code>--worker-config worker.ini</code> (docs/WORKER.md).</p><//>`
      : html`<p class="muted">${active} active of ${d.workers.length} on this page; gone workers stay listed for an hour.</p>
        <div class="scroll"><table class="workers">
          <thead><tr><th scope="col">Worker</th><th scope="col">State</th><th scope="col">Host</th>
            <th scope="col">Queues</th><th scope="col">Types</th><th scope="col" class="num">Busy</th>
            <th scope="col">Jobs held</th><th scope="col">Last seen</th><th scope="col">Started</th>
            <th scope="col">Version</th></tr></thead>
          <tbody>${d.workers.map((w) => html`<${Row} key=${w.id} w=${w} />`)}</tbody>
        </table></div>
        <${Pager} view="workers" p=${{ after: p.after }} next=${d.next} />`}
  </section>`;
}
