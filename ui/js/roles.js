// roles.js — the API's roles in increasing power (docs/API.md): each may
// do what the ones before it may. The page offers an action only when the
// token's role allows its route; the server checks again (403).
import { app } from './state.js';

const ORDER = ['read', 'worker', 'write', 'admin'];

export function roleAtLeast(role, need) {
  return ORDER.indexOf(role) >= 0 && ORDER.indexOf(role) >= ORDER.indexOf(need);
}

// True if the signed-in token may take actions that need role `need`.
export function can(need) {
  return roleAtLeast(app.auth.role, need);
}
