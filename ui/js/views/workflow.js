// workflow.js — one workflow (GET /v1/workflows/{id}, docs/API.md,
// Workflows): its status, times and steps by status, and its graph as an
// SVG laid out by dag.js — a box a step, coloured by its status with the
// jobs view's colours, labelled with its ref and type and linking to its
// job; an edge from each parent to its child, coloured by the parent's
// status (green: that dependency is met). The graph scrolls inside its box,
// so a workflow of hundreds of steps stays usable. Actions as the job view
// has them: cancel (a step has not ended), retry (a step is dead or
// cancelled), delete (every step has ended; an admin token, as the route).
import { html } from '../html.js';
import { app, update, refresh } from '../state.js';
import { get, post, del } from '../api.js';
import { link } from '../route.js';
import { ago, when } from '../format.js';
import { can } from '../roles.js';
import { act, Badge, Empty } from '../widgets.js';
import { layout, BOX_W, BOX_H } from '../dag.js';
import { Counts, STEP_STATUSES } from './workflows.js';

// The layout of the steps last drawn, kept while the graph's shape (refs and
// edges) is the same: a refresh that only changes statuses lays out nothing.
let cache = { key: '', g: null };
// The workflow this page deleted: not asked for again (a refresh or an
// event may come before the hash change that leaves its page, and the
// browser logs every 404 it gets).
let deleted = null;

export async function load(route, signal) {
  if (route.id === deleted) {
    update({ data: { missing: true } });
    return;
  }
  try {
    const w = await get(`/v1/workflows/${route.id}`, signal);
    update({ data: { w } });
  } catch (e) {
    if (e.status !== 404) throw e;
    update({ data: { missing: true } });
  }
}

// An event of one of its steps reloads it, also of a step added since the
// last load (an event names its job's workflow: docs/API.md, GET
// /v1/events); a finished workflow waits for nothing.
export function live(route) {
  const w = app.data.w;
  if (!w || w.status !== 'running') return null;
  return { match: (ev) => String(ev.workflow) === route.id, slow: true };
}

function graphOf(steps) {
  const key = JSON.stringify(steps.map((s) => [s.ref, s.depends_on]));
  if (cache.key !== key) cache = { key, g: layout(steps) };
  return cache.g;
}

// The first n characters of s, with "…" when cut (the whole in the tooltip).
function cut(s, n) {
  const t = String(s ?? '');
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}

function Node({ s, n }) {
  const label = `Step ${s.ref}, ${s.type}, ${s.status}, job ${s.job_id}`;
  return html`<a href=${`#/jobs/${s.job_id}`} class=${'wf-node s-' + s.status}
      data-ref=${s.ref} data-job=${s.job_id} aria-label=${label}>
    <title>${label}</title>
    <rect x=${n.x} y=${n.y} width=${BOX_W} height=${BOX_H} rx="6" />
    <text class="ref" x=${n.x + 10} y=${n.y + 19}>${cut(s.ref, 24)}</text>
    <text class="type" x=${n.x + 10} y=${n.y + 36}>${cut(s.type, 20)} · ${s.status}</text>
  </a>`;
}

function Graph({ steps }) {
  const g = graphOf(steps);
  return html`<div class="wf-graph" tabindex="0" aria-label="The steps as a graph; it scrolls">
    <svg width=${g.width} height=${g.height} viewBox=${`0 0 ${g.width} ${g.height}`}
      role="img" aria-label=${`${steps.length} steps and ${g.edges.length} dependencies`}>
      <defs><marker id="wf-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7"
        markerHeight="7" orient="auto"><path class="wf-arrow" d="M0,0 L8,4 L0,8 z" /></marker></defs>
      <g class="wf-edges">${g.edges.map((e) => html`<path key=${`${e.from}-${e.to}`}
        class=${'wf-edge s-' + steps[e.from].status} d=${e.d} marker-end="url(#wf-arrow)"
        data-from=${steps[e.from].ref} data-to=${steps[e.to].ref} />`)}</g>
      <g class="wf-nodes">${steps.map((s, i) => html`<${Node} key=${s.ref} s=${s} n=${g.nodes[i]} />`)}</g>
    </svg>
  </div>`;
}

function action(w, verb) {
  const n = w.steps.length;
  const ask = {
    cancel: `Cancel every step of workflow ${w.id} that has not ended? Running ones are asked to stop.`,
    retry: null,
    delete: `Delete workflow ${w.id} and the jobs of its ${n} step${n === 1 ? '' : 's'}?`,
  }[verb];
  act({
    text: ask,
    yes: verb === 'delete' ? 'Delete workflow' : 'Cancel steps',
    danger: true,
    fn: async () => {
      if (verb === 'delete') {
        await del(`/v1/workflows/${w.id}`);
        deleted = String(w.id);
        location.hash = link('workflows');
        return `Workflow ${w.id} deleted.`;
      }
      await post(`/v1/workflows/${w.id}/${verb}`);
      return `Workflow ${w.id}: ${verb} done.`;
    },
    done: verb === 'delete' ? null : refresh, // a delete leaves the page
  });
}

function Actions({ w }) {
  if (!can('write')) return null;
  const c = w.counts || {};
  const b = [];
  if ((c.dead || 0) + (c.cancelled || 0) > 0) b.push(['retry', 'Retry']);
  if (w.status === 'running') b.push(['cancel', 'Cancel']);
  if (w.status !== 'running' && can('admin')) b.push(['delete', 'Delete']); // admin, as DELETE /v1/jobs/{id}
  return html`<div class="actions">${b.map(([v, label]) => html`<button
    class=${v === 'delete' ? 'danger' : v === 'retry' ? 'primary' : ''} disabled=${app.busy}
    onClick=${() => action(w, v)}>${label}</button>`)}</div>`;
}

function Legend() {
  return html`<p class="wf-legend muted">${STEP_STATUSES.map((s) => html`<span key=${s}
    class=${'key s-' + s}>${s}</span>`)}<span>· a box links to its step's job</span></p>`;
}

export function view() {
  const d = app.data;
  const id = app.route.id;
  if (d.missing) {
    return html`<section><h1>Workflow ${id}</h1><${Empty}><p>There is no workflow ${id}: it may
      have been deleted or pruned. <a href=${link('workflows')}>Back to the workflows</a>.</p><//></section>`;
  }
  if (!d.w) return html`<section><h1>Workflow ${id}</h1><p class="muted">Loading…</p></section>`;
  const w = d.w;
  return html`<section class="workflow">
    <p><a href=${link('workflows')}>← Workflows</a></p>
    <h1>Workflow ${w.id}: ${w.name} <${Badge} s=${w.status} /></h1>
    <${Actions} w=${w} />
    <dl class="fields">
      <div class="field"><dt>Steps</dt><dd><${Counts} counts=${w.counts} /></dd></div>
      <div class="field"><dt>Created</dt><dd title=${w.created_at}>${when(w.created_at)} (${ago(w.created_at)})</dd></div>
      <div class="field"><dt>Finished</dt><dd title=${w.finished_at || ''}>${w.finished_at
        ? `${when(w.finished_at)} (${ago(w.finished_at)})` : '—'}</dd></div>
    </dl>
    <h2>Graph</h2>
    ${w.steps.length ? html`<${Legend} /><${Graph} steps=${w.steps} />`
      : html`<${Empty}><p>No steps listed: their jobs were deleted.</p><//>`}
  </section>`;
}
