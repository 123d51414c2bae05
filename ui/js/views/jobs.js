// jobs.js — the job list: filters (status, pending due now or scheduled
// for later, queue, type, schedule, created between, a search text:
// docs/API.md, Search) kept in the URL, when each pending job may run
// (RUN AT), find by id or idempotency key, cursor paging
// (GET /v1/jobs, newest first), and bulk retry/cancel/delete of the
// selected jobs (POST /v1/jobs/bulk with their ids, after a confirmation
// that states the count). Filtered by a queue, the queue's busiest
// groups (GET /v1/queues/{name}/groups: docs/MODEL.md, Groups) above the list.
import { html } from '../html.js';
import { app, update, refresh } from '../state.js';
import { get, post, query, enc } from '../api.js';
import { link, go } from '../route.js';
import { ago, num, runAt } from '../format.js';
import { can } from '../roles.js';
import { act, Empty, JobBadge, Pager, Progress } from '../widgets.js';

const PAGE = 50;
const FILTERS = ['q', 'status', 'due', 'queue', 'type', 'schedule', 'created_after', 'created_before', 'key'];
const STATUSES = ['pending', 'running', 'succeeded', 'dead', 'cancelled'];
// The status choices: the pending ones split by due (GET /v1/jobs?due=),
// each as [value, label, status, due].
const CHOICES = [
  ['pending', 'pending', 'pending', ''],
  ['pending:due', 'pending, due now', 'pending', 'true'],
  ['pending:later', 'pending, scheduled later', 'pending', 'false'],
  ...STATUSES.slice(1).map((s) => [s, s, s, '']),
];

export async function load(route, signal) {
  const p = {};
  // scan: a search's budget (docs/API.md, Search), from the URL only.
  for (const k of [...FILTERS, 'after', 'scan']) if (route.params[k]) p[k] = route.params[k];
  const groups = p.queue
    ? get(`/v1/queues/${enc(p.queue)}/groups?limit=5`, signal).catch(() => ({ groups: [] }))
    : Promise.resolve({ groups: [] });
  const [r, g] = await Promise.all([get(`/v1/jobs${query({ ...p, limit: PAGE })}`, signal), groups]);
  update({ data: { jobs: r.jobs || [], next: r.next || null, partial: !!r.partial,
    groups: (g.groups || []).filter((x) => x.group !== null) } });
}

// The queue's busiest groups, when its jobs have groups.
function Groups({ groups }) {
  if (!groups || !groups.length) return null;
  return html`<p class="groups muted" aria-label="Busiest groups">Busiest groups:
    ${groups.map((g, i) => html`${i ? ', ' : ' '}<span class="group" data-group=${g.group}>
      <strong>${g.group}</strong> ${num(g.pending)} pending, ${num(g.running)} running</span>`)}</p>`;
}

// A change of a job of the filters' queue and type may add, drop or change
// a row; a running job's progress is not an event, so a page showing one
// keeps the fast poll (docs/DASHBOARD.md, Live).
export function live(route) {
  const { queue, type } = route.params;
  const shown = app.data.jobs || [];
  return {
    match: (ev) => (!queue || ev.queue === queue) && (!type || ev.type === type),
    slow: !shown.some((j) => j.status === 'running' && j.progress),
  };
}

// "2026-12-03T15:04" (local, datetime-local) <-> RFC 3339.
function toInput(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const off = d.getTimezoneOffset() * 60000;
  return new Date(d.getTime() - off).toISOString().slice(0, 16);
}

function fromInput(v) {
  return v ? new Date(v).toISOString() : '';
}

function applyFilters(ev) {
  ev.preventDefault();
  const f = ev.target.elements;
  const c = CHOICES.find((x) => x[0] === f.status.value) || ['', '', '', ''];
  go('jobs', {
    q: f.q.value.trim(), status: c[2], due: c[3], queue: f.queue.value.trim(), type: f.type.value.trim(),
    schedule: f.schedule.value.trim(), created_after: fromInput(f.created_after.value),
    created_before: fromInput(f.created_before.value),
  });
}

function find(ev) {
  ev.preventDefault();
  const v = ev.target.elements.find.value.trim();
  if (!v) return;
  if (/^[1-9][0-9]{0,17}$/.test(v)) location.hash = `#/jobs/${v}`;
  else go('jobs', { key: v });
}

function Filters({ p }) {
  const due = p.status === 'pending' || !p.status ? p.due || '' : '';
  return html`<div class="filters">
    <form class="filter-form" onSubmit=${applyFilters} key=${location.hash}>
      <label>Search <input name="q" type="search" defaultValue=${p.q || ''} size="16"
        placeholder="type, key, payload, error" maxLength="200"
        aria-label="Search jobs by text in their type, idempotency key, payload or last error" /></label>
      <label>Status <select name="status">
        <option value="" selected=${!p.status && !p.due}>any</option>
        ${CHOICES.map(([v, label, s, d]) => html`<option value=${v}
          selected=${(p.status || (p.due ? 'pending' : '')) === s && due === d}>${label}</option>`)}
      </select></label>
      <label>Queue <input name="queue" defaultValue=${p.queue || ''} size="10" /></label>
      <label>Type <input name="type" defaultValue=${p.type || ''} size="12" /></label>
      <label>Schedule <input name="schedule" defaultValue=${p.schedule || ''} size="10" /></label>
      <label>Created after <input name="created_after" type="datetime-local"
        defaultValue=${toInput(p.created_after)} /></label>
      <label>before <input name="created_before" type="datetime-local"
        defaultValue=${toInput(p.created_before)} /></label>
      <button type="submit" class="primary">Filter</button>
      <a href=${link('jobs')} class="button">Clear</a>
    </form>
    <form class="find-form" onSubmit=${find} role="search">
      <label>Find <input name="find" placeholder="job id or idempotency key" size="24"
        aria-label="Find a job by id or idempotency key" /></label>
      <button type="submit">Go</button>
    </form>
  </div>`;
}

function toggle(id) {
  const s = new Set(app.selected);
  if (s.has(id)) s.delete(id);
  else s.add(id);
  update({ selected: s });
}

function toggleAll(jobs) {
  const all = jobs.length > 0 && jobs.every((j) => app.selected.has(j.id));
  update({ selected: all ? new Set() : new Set(jobs.map((j) => j.id)) });
}

const VERBS = {
  retry: ['Retry', 'Dead or cancelled ones go back to pending, due now; others are skipped.'],
  cancel: ['Cancel', 'Pending ones are cancelled, running ones asked to stop; others are skipped.'],
  delete: ['Delete', 'They are removed with their attempt history; running ones are skipped.'],
};

function bulk(action) {
  const ids = [...app.selected];
  const [verb, what] = VERBS[action];
  const n = ids.length;
  act({
    text: `${verb} ${n} selected job${n === 1 ? '' : 's'}? ${what}`,
    yes: `${verb} ${n} job${n === 1 ? '' : 's'}`,
    danger: action !== 'retry',
    fn: async () => {
      const r = await post('/v1/jobs/bulk', { action, filter: { ids } });
      update({ selected: new Set() });
      return `${verb}: ${r.matched} matched, ${r.changed} changed, ${r.skipped} skipped.`;
    },
    done: refresh,
  });
}

function Bulk() {
  const n = app.selected.size;
  if (!can('write')) return null;
  return html`<div class="bulk" aria-label="Bulk actions">
    <span>${n} selected</span>
    <button disabled=${!n || app.busy} onClick=${() => bulk('retry')}>Retry</button>
    <button disabled=${!n || app.busy} onClick=${() => bulk('cancel')}>Cancel</button>
    ${can('admin') && html`<button class="danger" disabled=${!n || app.busy}
      onClick=${() => bulk('delete')}>Delete</button>`}
  </div>`;
}

function Row({ j, write }) {
  const sel = app.selected.has(j.id);
  return html`<tr class=${sel ? 'sel' : ''}>
    ${write && html`<td><input type="checkbox" checked=${sel} onChange=${() => toggle(j.id)}
      aria-label=${`Select job ${j.id}`} /></td>`}
    <td class="num"><a href=${`#/jobs/${j.id}`}>${j.id}</a></td>
    <td>${j.type}</td>
    <td>${j.queue}</td>
    <td><${JobBadge} j=${j} /> <${Progress} j=${j} /></td>
    <td class="num">${j.attempt}/${j.max_attempts}</td>
    <td class="run-at" title=${j.run_at}>${runAt(j)}</td>
    <td title=${j.created_at}>${ago(j.created_at)}</td>
    <${ErrorCell} j=${j} />
  </tr>`;
}

// The job's last error: red while it stands, neutral for a job that then
// succeeded, where it is an earlier attempt's (the attempt before the one
// that succeeded; docs/DASHBOARD.md).
function ErrorCell({ j }) {
  if (!j.last_error) return html`<td></td>`;
  if (j.status !== 'succeeded') return html`<td class="err" title=${j.last_error}>${j.last_error}</td>`;
  const n = j.attempt - 1;
  return html`<td class="earlier-err" title=${`Attempt ${n} failed: ${j.last_error}`}>
    <span class="muted">attempt ${n}:</span> ${j.last_error}</td>`;
}

function Table({ jobs }) {
  const write = can('write');
  const all = jobs.length > 0 && jobs.every((j) => app.selected.has(j.id));
  return html`<div class="scroll"><table class="jobs">
    <thead><tr>
      ${write && html`<th scope="col"><input type="checkbox" checked=${all}
        onChange=${() => toggleAll(jobs)} aria-label="Select every job on this page" /></th>`}
      <th scope="col" class="num">ID</th><th scope="col">Type</th><th scope="col">Queue</th>
      <th scope="col">Status</th><th scope="col" class="num">Attempt</th>
      <th scope="col">Run at</th><th scope="col">Created</th><th scope="col">Error</th>
    </tr></thead>
    <tbody>${jobs.map((j) => html`<${Row} key=${j.id} j=${j} write=${write} />`)}</tbody>
  </table></div>`;
}

export function view() {
  const p = app.route.params;
  const d = app.data;
  const filtered = FILTERS.some((k) => p[k]);
  return html`<section>
    <h1>Jobs</h1>
    <${Filters} p=${p} />
    <${Groups} groups=${d.groups} />
    ${!d.jobs ? html`<p class="muted">Loading…</p>`
      : !d.jobs.length ? html`<${Empty}>${filtered
        ? html`<p>No job matches these filters. <a href=${link('jobs')}>Clear them</a> to see every job.</p>`
        : html`<p>No jobs yet. Submit one with <code>jobd submit hello --payload '{"name":"world"}'</code>.</p>`}<//>`
      : html`<${Bulk} /><${Table} jobs=${d.jobs} />
        <p class="muted">${num(d.jobs.length)} on this page, newest first.</p>`}
    ${d.jobs && d.partial && html`<p class="muted partial" role="status">The search stopped at
      its scan budget: older jobs were not examined. ${d.next ? 'Next page searches further back.' : ''}</p>`}
    ${d.jobs && (d.jobs.length > 0 || d.next) && html`<${Pager} view="jobs" p=${p} next=${d.next} />`}
  </section>`;
}
