// schedules.js — the schedules, a page of PAGE at a time by name
// (#/schedules?after=NAME), with cron, zone, next and last firing, paused,
// and pause/resume/trigger; the selected one (#/schedules?name=N, on the
// page or not) also shows its next five firings in its own zone and in UTC
// (GET /v1/schedules/{name}/next) and the jobs it made.
import { html } from '../html.js';
import { app, update, refresh } from '../state.js';
import { get, post, enc, query } from '../api.js';
import { link } from '../route.js';
import { ago, when } from '../format.js';
import { can } from '../roles.js';
import { act, Badge, Empty, Pager } from '../widgets.js';

const PAGE = 100;

// The chosen schedule: from the page, else read on its own (null if none).
async function chosenOf(list, name, signal) {
  const s = list.find((x) => x.name === name);
  if (s) return s;
  try {
    return await get(`/v1/schedules/${enc(name)}`, signal);
  } catch (e) {
    if (e.status === 404) return null;
    throw e;
  }
}

export async function load(route, signal) {
  const p = route.params;
  const r = await get(`/v1/schedules${query({ limit: PAGE, after: p.after })}`, signal);
  const data = { schedules: r.schedules || [], next: r.next || null };
  const name = p.name;
  if (name) data.chosen = await chosenOf(data.schedules, name, signal);
  if (data.chosen) {
    data.firings = (await get(`/v1/schedules/${enc(name)}/next?count=5`, signal)).next || [];
    const jobs = await get(`/v1/jobs${query({ schedule: name, limit: 10 })}`, signal);
    data.jobs = jobs.jobs || [];
  }
  update({ data });
}

function doAction(s, verb) {
  act({
    fn: async () => {
      const r = await post(`/v1/schedules/${enc(s.name)}/${verb}`);
      if (verb === 'trigger') return `Schedule ${s.name} triggered: job ${r.id} is due now.`;
      return `Schedule ${s.name} ${verb === 'pause' ? 'paused' : 'resumed'}.`;
    },
    done: refresh,
  });
}

function Actions({ s }) {
  if (!can('write')) return null;
  const verb = s.paused ? 'resume' : 'pause';
  return html`<td class="row-actions">
    <button disabled=${app.busy} onClick=${() => doAction(s, verb)}
      aria-label=${`${s.paused ? 'Resume' : 'Pause'} schedule ${s.name}`}>${s.paused ? 'Resume' : 'Pause'}</button>
    <button disabled=${app.busy} onClick=${() => doAction(s, 'trigger')}
      aria-label=${`Trigger schedule ${s.name} now`}>Trigger</button>
  </td>`;
}

function Row({ s, chosen }) {
  return html`<tr class=${chosen ? 'sel' : ''}>
    <th scope="row"><a href=${link('schedules', { after: app.route.params.after, name: s.name })}
      aria-current=${chosen ? 'true' : undefined}>${s.name}</a></th>
    <td><code>${s.cron}</code></td>
    <td>${s.timezone}</td>
    <td>${s.type}</td>
    <td>${s.queue}</td>
    <td>${s.paused ? html`<span class="badge s-paused">paused</span>` : 'active'}</td>
    <td title=${s.next_run_at || ''}>${s.paused ? '—' : ago(s.next_run_at)}</td>
    <td title=${s.last_fired_at || ''}>${ago(s.last_fired_at)}</td>
    <${Actions} s=${s} />
  </tr>`;
}

function Detail({ s, next, jobs }) {
  return html`<section class="detail" aria-label=${`Schedule ${s.name}`}>
    <h2>${s.name}: next five firings</h2>
    ${s.paused && html`<p class="muted">Paused: these are the firings if it is resumed.</p>`}
    <div class="scroll"><table>
      <thead><tr><th scope="col">In ${s.timezone}</th><th scope="col">In UTC</th></tr></thead>
      <tbody>${next.map((t) => html`<tr key=${t}><td>${when(t, s.timezone)}</td><td>${when(t)}</td></tr>`)}</tbody>
    </table></div>
    <h2>Jobs it made</h2>
    ${jobs.length
      ? html`<ul class="plain">${jobs.map((j) => html`<li key=${j.id}>
          <a href=${`#/jobs/${j.id}`}>Job ${j.id}</a> <${Badge} s=${j.status} />
          <span class="muted">for ${when(j.scheduled_for || j.created_at)}</span></li>`)}</ul>
        <p><a href=${link('jobs', { schedule: s.name })}>All jobs of ${s.name}</a></p>`
      : html`<p class="muted">None yet: it makes one at each firing (or press Trigger).</p>`}
  </section>`;
}

export function view() {
  const d = app.data;
  if (!d.schedules) return html`<section><h1>Schedules</h1><p class="muted">Loading…</p></section>`;
  const p = app.route.params;
  const chosen = d.chosen || null;
  return html`<section>
    <h1>Schedules</h1>
    ${!d.schedules.length && !p.after
      ? html`<${Empty}><p>No schedules yet. Create one with
          <code>jobd schedule add nightly '0 3 * * *' report.build</code>
          or <code>POST /v1/schedules</code>.</p><//>`
      : html`<div class="scroll"><table class="schedules">
          <thead><tr><th scope="col">Name</th><th scope="col">Cron</th><th scope="col">Zone</th>
            <th scope="col">Type</th><th scope="col">Queue</th><th scope="col">State</th>
            <th scope="col">Next</th><th scope="col">Last fired</th>
            ${can('write') && html`<th scope="col">Actions</th>`}</tr></thead>
          <tbody>${d.schedules.map((s) => html`<${Row} key=${s.name} s=${s}
            chosen=${chosen !== null && s.name === chosen.name} />`)}</tbody>
        </table></div>
        <p class="muted">${d.schedules.length} on this page, by name.</p>
        <${Pager} view="schedules" p=${{ after: p.after }} next=${d.next} />
        ${chosen && d.firings
          ? html`<${Detail} s=${chosen} next=${d.firings} jobs=${d.jobs || []} />`
          : html`<p class="muted">Choose a schedule to see its next firings and its jobs.</p>`}`}
  </section>`;
}
