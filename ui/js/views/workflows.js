// workflows.js — the workflow list (GET /v1/workflows, newest first, docs/API.md,
// Workflows): a row a workflow with its name, status, its steps by status,
// created and finished, each linking to its graph (#/workflows/ID). Filters
// (status, exact name) live in the URL; paged by cursor (after=). A page of
// the API looks at PAGE workflows and keeps those of the status asked for,
// so a filtered page may hold fewer, even none, with a next page after it.
import { html } from '../html.js';
import { app, update } from '../state.js';
import { get, query } from '../api.js';
import { link, go } from '../route.js';
import { ago, num, when } from '../format.js';
import { Badge, Empty, Pager } from '../widgets.js';

const PAGE = 50;
export const STEP_STATUSES = ['waiting', 'pending', 'running', 'succeeded', 'dead', 'cancelled'];

export async function load(route, signal) {
  const { status, name, after } = route.params;
  const r = await get(`/v1/workflows${query({ status, name, after, limit: PAGE })}`, signal);
  update({ data: { workflows: r.workflows || [], next: r.next || null } });
}

// A step's change moves a count: an event of a job of some workflow
// reloads the list (at most every 250 ms; docs/DASHBOARD.md, Live).
export function live() {
  return { match: (ev) => ev.workflow !== null && ev.workflow !== undefined, slow: true };
}

// The steps by status, those not zero, each in its status colour.
export function Counts({ counts }) {
  const c = counts || {};
  const parts = STEP_STATUSES.filter((s) => c[s] > 0);
  if (!parts.length) return html`<span class="muted">no steps</span>`;
  return html`<span class="wf-counts">${parts.map((s) => html`<span key=${s}
    class=${'count s-' + s} data-count=${s}>${num(c[s])} ${s}</span>`)}</span>`;
}

function total(counts) {
  return STEP_STATUSES.reduce((n, s) => n + ((counts && counts[s]) || 0), 0);
}

function applyFilters(ev) {
  ev.preventDefault();
  const f = ev.target.elements;
  go('workflows', { status: f.status.value, name: f.name.value.trim() });
}

function Filters({ p }) {
  return html`<div class="filters">
    <form class="filter-form" onSubmit=${applyFilters} key=${location.hash}>
      <label>Status <select name="status">
        <option value="" selected=${!p.status}>any</option>
        ${['running', 'succeeded', 'failed'].map((s) => html`<option value=${s}
          selected=${p.status === s}>${s}</option>`)}
      </select></label>
      <label>Name <input name="name" defaultValue=${p.name || ''} size="20" maxLength="200"
        placeholder="exact name" /></label>
      <button type="submit" class="primary">Filter</button>
      <a href=${link('workflows')} class="button">Clear</a>
    </form>
  </div>`;
}

function Row({ w }) {
  return html`<tr data-workflow=${w.id}>
    <td class="num"><a href=${`#/workflows/${w.id}`}>${w.id}</a></td>
    <td><a href=${`#/workflows/${w.id}`}>${w.name}</a></td>
    <td><${Badge} s=${w.status} /></td>
    <td class="num">${num(total(w.counts))}</td>
    <td><${Counts} counts=${w.counts} /></td>
    <td title=${when(w.created_at)}>${ago(w.created_at)}</td>
    <td title=${when(w.finished_at)}>${w.finished_at ? ago(w.finished_at) : '—'}</td>
  </tr>`;
}

export function view() {
  const p = app.route.params;
  const d = app.data;
  const filtered = p.status || p.name;
  return html`<section>
    <h1>Workflows</h1>
    <${Filters} p=${p} />
    ${!d.workflows ? html`<p class="muted">Loading…</p>`
      : !d.workflows.length ? html`<${Empty}>${filtered || p.after
        ? html`<p>No workflow on this page matches. ${d.next ? 'Older ones may: see the next page.' : ''}
            <a href=${link('workflows')}>Clear the filters</a>.</p>`
        : html`<p>No workflows yet. Submit one with <code>jobd workflow submit etl.json</code>
            (docs/CLI.md) or <code>POST /v1/workflows</code> (docs/API.md, Workflows).</p>`}<//>`
      : html`<div class="scroll"><table class="workflows">
          <thead><tr><th scope="col" class="num">ID</th><th scope="col">Name</th>
            <th scope="col">Status</th><th scope="col" class="num">Steps</th>
            <th scope="col">By status</th><th scope="col">Created</th><th scope="col">Finished</th></tr></thead>
          <tbody>${d.workflows.map((w) => html`<${Row} key=${w.id} w=${w} />`)}</tbody>
        </table></div>
        <p class="muted">${num(d.workflows.length)} on this page, newest first.</p>`}
    ${d.workflows && (d.workflows.length > 0 || d.next) &&
      html`<${Pager} view="workflows" p=${p} next=${d.next} />`}
  </section>`;
}
