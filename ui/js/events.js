// events.js — the page's one stream of job status changes, GET /v1/events
// (docs/API.md, GET /v1/events; docs/DASHBOARD.md, Live). Read with fetch()
// and a ReadableStream, not EventSource: the API calls carry the token as a
// Bearer header (api.js), which EventSource cannot send. One watcher at a
// time (the view shown): it hears the events it matches and whether the
// stream is healthy (answered 200 and still open). A stream that fails or
// ends is opened again after 2 s, doubling up to 60 s (back to 2 s after one
// that stayed open 30 s); one silent for 45 s is closed and opened again
// (the server comments every 15 s); one no view wants
// is closed after LINGER_MS, so moving between views keeps it.
import { authHeaders } from './api.js';

const LINGER_MS = 30000;
const SILENT_MS = 45000; // the server writes a keepalive after 15 s without events
const RETRY_MIN_MS = 2000;
const RETRY_MAX_MS = 60000;

let watcher = null; // { match(ev) → bool, onEvent(ev), onHealth(bool) }
let ctl = null; // the open stream's AbortController
let healthy = false;
let retryMs = RETRY_MIN_MS;
let retryTimer = null;
let lingerTimer = null;

export function isHealthy() {
  return healthy;
}

// Makes w the watcher (replacing any other) and opens the stream if it is
// not open. w stays the caller's; the stream only calls its functions.
export function watch(w) {
  watcher = w;
  clearTimeout(lingerTimer);
  lingerTimer = null;
  if (!ctl && !retryTimer) open();
}

// No view wants the stream: it closes after LINGER_MS unless one does.
export function unwatch() {
  watcher = null;
  if (lingerTimer || (!ctl && !retryTimer)) return;
  lingerTimer = setTimeout(close, LINGER_MS);
}

// Closes the stream now (signing out).
export function close() {
  watcher = null;
  clearTimeout(lingerTimer);
  clearTimeout(retryTimer);
  lingerTimer = retryTimer = null;
  if (ctl) ctl.abort();
  ctl = null;
  setHealth(false);
}

function setHealth(h) {
  if (healthy === h) return;
  healthy = h;
  if (watcher) watcher.onHealth(h);
}

async function open() {
  const mine = new AbortController();
  ctl = mine;
  let silence = null;
  let openedAt = 0;
  const quiet = () => {
    clearTimeout(silence);
    silence = setTimeout(() => mine.abort(), SILENT_MS);
  };
  try {
    const res = await fetch('/v1/events', {
      headers: { Accept: 'text/event-stream', ...authHeaders() },
      signal: mine.signal,
      credentials: 'omit',
      cache: 'no-store',
    });
    const type = res.headers.get('Content-Type') || '';
    if (!res.ok || !res.body || !type.startsWith('text/event-stream')) return;
    quiet();
    openedAt = Date.now();
    setHealth(true);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    let data = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      quiet();
      buf += value;
      const lines = buf.split(/\r\n|\r|\n/);
      buf = lines.pop();
      for (const line of lines) {
        if (line === '') {
          if (data.length) dispatch(data.join('\n'));
          data = [];
        } else if (line.startsWith('data:')) {
          data.push(line.slice(5).replace(/^ /, ''));
        }
      }
    }
  } catch {
    /* a network error, or aborted: closed below */
  } finally {
    clearTimeout(silence);
    if (ctl === mine) {
      // It ended by itself (or fell silent): poll fast, and try again.
      ctl = null;
      setHealth(false);
      // One that stayed up a while starts the backoff over.
      if (openedAt && Date.now() - openedAt > LINGER_MS) retryMs = RETRY_MIN_MS;
      if (watcher || lingerTimer) {
        retryTimer = setTimeout(() => {
          retryTimer = null;
          if (watcher) open();
        }, retryMs);
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
      }
    }
  }
}

function dispatch(text) {
  let ev;
  try {
    ev = JSON.parse(text);
  } catch {
    return;
  }
  if (watcher && watcher.match(ev)) watcher.onEvent(ev);
}
