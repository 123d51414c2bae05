// state.js — the one state object of the page and its re-render. Views
// read `app` and call update(); a render is batched into one per task, so
// a burst of changes paints once.
export const app = {
  route: { view: 'overview', params: {}, id: null },
  auth: { token: null, role: null, tokens: false, checked: false, error: null },
  data: {},          // the current view's data, replaced on each refresh
  error: null,       // the last failed request of the current view
  notice: null,      // the last action's outcome ({text, bad})
  confirm: null,     // an open confirmation ({text, yes, run})
  selected: new Set(), // job ids selected in the jobs view
  busy: false,       // an action is being sent
  editing: null,     // the queue whose limits form is open (overview)
};

let renderer = null;
let pending = false;

export function setRenderer(fn) {
  renderer = fn;
}

export function update(patch) {
  if (patch) Object.assign(app, patch);
  if (pending || !renderer) return;
  pending = true;
  queueMicrotask(() => {
    pending = false;
    renderer();
  });
}

let refresher = null;

export function setRefresher(fn) {
  refresher = fn;
}

// Reloads the current view now (after an action), through its poller.
export function refresh() {
  if (refresher) refresher();
}
