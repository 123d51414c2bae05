// main.js — the frame of the dashboard: sign-in, navigation, the
// confirmation dialog and the notice line, and which view is shown. A view
// module exports load(route, signal) (fills app.data; its requests one at a
// time) and view() (renders app.data); main runs load through a Poller.
// A view may also export live(route): after each load, null (the event
// stream does not help it) or { match(ev), slow } — an event it matches
// reloads it at once (at most every 250 ms), and while the stream is
// healthy and slow is true its poll slows to 10 s (docs/DASHBOARD.md, Live).
import { html, render } from './html.js';
import { app, update, setRenderer, setRefresher } from './state.js';
import { get, setToken, hasToken, ApiError } from './api.js';
import { parseHash, link } from './route.js';
import { Poller, FAST_MS, SLOW_MS } from './poll.js';
import * as events from './events.js';
import * as overview from './views/overview.js';
import * as jobs from './views/jobs.js';
import * as job from './views/job.js';
import * as workflows from './views/workflows.js';
import * as workflow from './views/workflow.js';
import * as schedules from './views/schedules.js';
import * as workers from './views/workers.js';
import { Login } from './views/login.js';
import { Confirm, Notice } from './widgets.js';

const VIEWS = { overview, jobs, job, workflows, workflow, schedules, workers };
const NAV = [
  ['overview', 'Overview'], ['jobs', 'Jobs'], ['workflows', 'Workflows'], ['schedules', 'Schedules'],
  ['workers', 'Workers'],
];
// A view that belongs under another's nav entry.
const NAV_OF = { job: 'jobs', workflow: 'workflows' };
let poller = null;
let live = null; // the current view's live(route) after its last load
const EVENT_GAP_MS = 250;
let lastEventLoad = 0;
let eventTimer = null;

// An event for the view shown: reload it now, or 250 ms after the last
// reload an event caused.
function eventReload() {
  if (eventTimer) return;
  const wait = Math.max(0, lastEventLoad + EVENT_GAP_MS - Date.now());
  eventTimer = setTimeout(() => {
    eventTimer = null;
    lastEventLoad = Date.now();
    if (poller) poller.now();
  }, wait);
}

// After a load of view v: follow the stream if v wants it, else let it go.
// A change of the stream's health reloads at once: on opening, the changes
// made between the last load and the stream's start; on losing it, those
// it may have missed (and the poll is fast again).
function follow(v, route) {
  live = v.live ? v.live(route) : null;
  if (!live) {
    events.unwatch();
    return;
  }
  events.watch({ match: live.match, onEvent: eventReload, onHealth: () => poller && poller.now() });
}

function period() {
  return live && live.slow && events.isHealthy() ? SLOW_MS : FAST_MS;
}

// Asks the server who the token is; shows the sign-in on 401.
async function whoami() {
  try {
    const me = await get('/v1/whoami');
    if (me.role === 'none') {
      // whoami needs no token: it says a token is needed, without a 401.
      if (hasToken()) setToken(null);
      const error = me.token_sent ? 'That token is not valid on this server.' : null;
      update({ auth: { token: false, role: null, tokens: true, checked: true, error } });
      return false;
    }
    update({ auth: { token: hasToken(), role: me.role, tokens: me.tokens, checked: true, error: null } });
    return true;
  } catch (e) {
    const error = e instanceof ApiError && e.status === 401
      ? (hasToken() ? 'That token is not valid on this server.' : null)
      : e.message;
    if (e.status === 401) setToken(null);
    update({ auth: { token: false, role: null, tokens: true, checked: true, error } });
    return false;
  }
}

async function signIn(token) {
  setToken(token.trim());
  if (await whoami()) startView();
}

function signOut() {
  setToken(null);
  if (poller) poller.stop();
  poller = null;
  live = null;
  events.close();
  update({ auth: { token: false, role: null, tokens: true, checked: true, error: null }, data: {} });
}

setRefresher(() => {
  if (poller) poller.now();
});

function startView() {
  if (poller) poller.stop();
  poller = null;
  live = null;
  const route = parseHash(location.hash);
  update({ route, data: {}, error: null, confirm: null });
  const v = VIEWS[route.view];
  if (!v || !app.auth.role) {
    events.unwatch();
    return;
  }
  const load = async (signal) => {
    await v.load(route, signal);
    if (!signal.aborted) follow(v, route);
  };
  poller = new Poller(load, (e) => {
    if (e && e.status === 401) {
      signOut();
      update({ auth: { ...app.auth, error: 'The token was refused; sign in again.' } });
    } else if (app.error !== e) {
      update({ error: e });
    }
  }, period);
  poller.now();
}

function Nav() {
  const cur = NAV_OF[app.route.view] || app.route.view;
  return html`<nav aria-label="Main">
    ${NAV.map(([v, label]) => html`<a href=${link(v)} class=${cur === v ? 'on' : ''}
      aria-current=${cur === v ? 'page' : undefined}>${label}</a>`)}
  </nav>`;
}

function Header() {
  const a = app.auth;
  return html`<header class="top">
    <a class="skip" href="#main" onClick=${skip}>Skip to content</a>
    <a class="brand" href="#/"><img src="icon.svg" alt="" width="20" height="20" /> jobd</a>
    ${a.role && html`<${Nav} />`}
    <div class="me">
      ${a.role && html`<span class="role" title="What this token may do">role: ${a.role}</span>`}
      ${a.role && a.tokens && html`<button class="link" onClick=${signOut}>Sign out</button>`}
    </div>
  </header>`;
}

function skip(ev) {
  ev.preventDefault();
  const m = document.getElementById('main');
  if (m) m.focus();
}

function Missing() {
  return html`<section><h1>No such page</h1>
    <p>The dashboard has <a href="#/">Overview</a>, <a href="#/jobs">Jobs</a>,
    <a href="#/workflows">Workflows</a>, <a href="#/schedules">Schedules</a> and
    <a href="#/workers">Workers</a>.</p></section>`;
}

function Body() {
  if (!app.auth.checked) return html`<p class="boot">Connecting…</p>`;
  if (!app.auth.role) return html`<${Login} error=${app.auth.error} onSubmit=${signIn} />`;
  const v = VIEWS[app.route.view];
  return v ? html`<${v.view} />` : html`<${Missing} />`;
}

function App() {
  return html`<${Header} />
    <main id="main" tabindex="-1">
      ${app.error && html`<p class="error" role="alert">${errorText(app.error)}</p>`}
      <${Notice} />
      <${Body} />
    </main>
    <${Confirm} />`;
}

function errorText(e) {
  if (e.status === 403) return `Not allowed for this token: ${e.message}`;
  if (e.status === 0) return 'The jobd server cannot be reached; retrying every 2 seconds.';
  return `The server answered ${e.status}: ${e.message}`;
}

const root = document.getElementById('app');
root.textContent = ''; // the boot message; Preact owns #app from here
setRenderer(() => render(html`<${App} />`, root));
window.addEventListener('hashchange', () => {
  app.selected = new Set();
  update({ notice: null, editing: null });
  startView();
});
whoami().then((ok) => (ok ? startView() : update()));
