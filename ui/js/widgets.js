// widgets.js — small shared pieces: status badges, the confirmation
// dialog, the notice line, act(), which runs one action with its
// confirmation and reports its outcome, and the pager of the paged lists.
import { html } from './html.js';
import { app, update } from './state.js';
import { link } from './route.js';

// "First page" / "Next page" links of a list paged by ?after= (jobs,
// schedules, workers): p is the view's params, next the answer's "next".
export function Pager({ view, p, next }) {
  return html`<nav class="pager" aria-label="Pages">
    ${p.after && html`<a class="button" href=${link(view, { ...p, after: '' })}>First page</a>`}
    ${next && html`<a class="button" href=${link(view, { ...p, after: next })}>Next page</a>`}
  </nav>`;
}

export function Badge({ s }) {
  return html`<span class=${'badge s-' + s}>${s}</span>`;
}

// A job's status badge, and "cancel requested" beside it while its running
// attempt is being stopped (docs/API.md, The job object).
export function JobBadge({ j }) {
  return html`<${Badge} s=${j.status} />${j.cancel_requested &&
    html` <span class="badge s-cancelled">cancel requested</span>`}`;
}

// A running job's progress (docs/API.md, "The job object"): a bar when it
// reported a percent, and its message; nothing for a job not running or
// silent. A <progress> element: no inline style, which the CSP forbids.
export function Progress({ j }) {
  const p = j.progress;
  if (j.status !== 'running' || !p) return null;
  const pct = typeof p.percent === 'number' ? p.percent : null;
  return html`<span class="job-progress" title=${p.at ? `reported ${p.at}` : ''}>
    ${pct !== null && html`<progress max="100" value=${pct}>${pct}%</progress>
      <span class="pct">${Math.round(pct)}%</span>`}
    ${p.message && html`<span class="msg">${p.message}</span>`}
  </span>`;
}

const focusMe = (el) => el && el.focus();

// Closes the confirmation and gives the focus back to what opened it.
function close(c) {
  update({ confirm: null });
  const t = c.trigger;
  if (t && t.isConnected) setTimeout(() => t.focus(), 0);
}

// A modal dialog: Tab and Shift+Tab cycle through its buttons and never
// leave it, Escape cancels, and the focus returns to the trigger on close.
export function Confirm() {
  const c = app.confirm;
  if (!c) return null;
  const no = () => close(c);
  const yes = () => {
    close(c);
    run(c.run, c.done);
  };
  const key = (ev) => {
    if (ev.key === 'Escape') {
      ev.preventDefault();
      no();
    } else if (ev.key === 'Tab') {
      const all = [...ev.currentTarget.querySelectorAll('button')];
      const i = all.indexOf(document.activeElement);
      const next = (i + (ev.shiftKey ? -1 : 1) + all.length) % all.length;
      ev.preventDefault();
      all[next].focus();
    }
  };
  return html`<div class="overlay" onKeyDown=${key}>
    <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="confirm-text">
      <p id="confirm-text">${c.text}</p>
      <div class="actions">
        <button onClick=${no}>Cancel</button>
        <button class=${c.danger ? 'danger' : 'primary'} ref=${focusMe} onClick=${yes}>${c.yes}</button>
      </div>
    </div>
  </div>`;
}

export function Notice() {
  const n = app.notice;
  if (!n) return null;
  return html`<p class=${n.bad ? 'notice bad' : 'notice'} role="status">${n.text}</p>`;
}

async function run(fn, done) {
  update({ busy: true });
  try {
    const text = await fn();
    update({ notice: { text, bad: false }, busy: false });
  } catch (e) {
    update({ notice: { text: `Failed: ${e.message}`, bad: true }, busy: false });
  }
  if (done) done();
}

// Runs fn (async, resolving to a sentence for the notice line) after a
// confirmation when text is given; done() follows either way (a refresh).
export function act({ text, yes, danger, fn, done }) {
  if (text) update({ confirm: { text, yes, danger, run: fn, done, trigger: document.activeElement } });
  else run(fn, done);
}

export function Empty({ children }) {
  return html`<div class="empty">${children}</div>`;
}
