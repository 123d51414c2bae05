// route.js — the stable links of the dashboard live in the URL fragment:
//   #/  #/jobs?status=&queue=&type=&schedule=  #/jobs/ID  #/schedules  #/workers
//   #/workflows?status=&name=  #/workflows/ID
// so a link can be shared and the back button walks the filters.
const VIEWS = ['jobs', 'workflows', 'schedules', 'workers'];
const ID = /^[1-9][0-9]{0,17}$/;

export function parseHash(hash) {
  const h = (hash || '').replace(/^#\/?/, '');
  const qi = h.indexOf('?');
  const path = qi < 0 ? h : h.slice(0, qi);
  const params = Object.fromEntries(new URLSearchParams(qi < 0 ? '' : h.slice(qi + 1)));
  const parts = path.split('/').filter(Boolean);
  if (parts[0] === 'jobs' && parts[1] && ID.test(parts[1])) {
    return { view: 'job', id: parts[1], params };
  }
  if (parts[0] === 'workflows' && parts[1] && ID.test(parts[1])) {
    return { view: 'workflow', id: parts[1], params };
  }
  if (VIEWS.includes(parts[0]) && parts.length === 1) return { view: parts[0], params, id: null };
  if (parts.length === 0) return { view: 'overview', params, id: null };
  return { view: 'missing', params, id: null };
}

// The link of a view with params (empty values left out).
export function link(view, params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, v);
  }
  const s = q.toString();
  const base = view === 'overview' ? '#/' : `#/${view}`;
  return s ? `${base}?${s}` : base;
}

export function go(view, params) {
  location.hash = link(view, params);
}
