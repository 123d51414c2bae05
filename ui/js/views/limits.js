// limits.js — the admin's form for a queue's limits (PUT /v1/queues/{name}):
// at most N running across every worker, and at most N starts per window.
// A blank field removes that limit (null).
import { html } from '../html.js';
import { app, update, refresh } from '../state.js';
import { call, enc } from '../api.js';
import { act } from '../widgets.js';

function save(ev, q) {
  ev.preventDefault();
  const f = ev.target.elements;
  const mr = f.max_running.value.trim();
  const lim = f.rate_limit.value.trim();
  const per = f.rate_per.value.trim();
  if ((lim === '') !== (per === '')) {
    update({ notice: { text: 'A rate needs both a number of jobs and a window (e.g. 100 per 1m).', bad: true } });
    return;
  }
  const body = {
    max_running: mr === '' ? null : Number(mr),
    rate: lim === '' ? null : { limit: Number(lim), per },
  };
  act({
    fn: async () => {
      await call('PUT', `/v1/queues/${enc(q.name)}`, body);
      update({ editing: null });
      return `Limits of queue ${q.name} saved.`;
    },
    done: refresh,
  });
}

export function LimitsForm({ q }) {
  const r = q.rate || {};
  return html`<form class="limits" key=${q.name} onSubmit=${(ev) => save(ev, q)}
    aria-label=${`Limits of queue ${q.name}`}>
    <h2>Limits of ${q.name}</h2>
    <label>At most running <input name="max_running" type="number" min="1"
      defaultValue=${q.max_running ?? ''} placeholder="no limit" size="8" /></label>
    <label>Starts <input name="rate_limit" type="number" min="1" defaultValue=${r.limit ?? ''}
      placeholder="no limit" size="8" /></label>
    <label>per <input name="rate_per" defaultValue=${r.per ?? ''} placeholder="1m" size="6" /></label>
    <button type="submit" class="primary" disabled=${app.busy}>Save</button>
    <button type="button" onClick=${() => update({ editing: null })}>Cancel</button>
    <p class="muted">Blank removes a limit. Limits hold jobs back (pending and due); they never fail them.</p>
  </form>`;
}
