// api.js — every call the page makes: the HTTP API with the user's token
// as a Bearer header (kept in sessionStorage, so it ends with the tab and
// no cookie is ever sent: no CSRF). Errors carry the API's status and code.
const KEY = 'jobd.token';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function savedToken() {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function saveToken(token) {
  try {
    if (token) sessionStorage.setItem(KEY, token);
    else sessionStorage.removeItem(KEY);
  } catch {
    /* storage disabled: the token lives until the page is left */
  }
}

let token = savedToken();

export function setToken(t) {
  token = t;
  saveToken(t);
}

export function hasToken() {
  return !!token;
}

// The Authorization header of the token, if any (the event stream's fetch).
export function authHeaders() {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

// Calls the API; resolves with the parsed JSON (null for 204), or rejects
// with an ApiError. signal aborts it (a view that is left).
export async function call(method, path, body, signal) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'network', 'the server cannot be reached');
  }
  if (res.status === 204) return null;
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) {
    const err = data && data.error ? data.error : {};
    throw new ApiError(res.status, err.code || 'http_' + res.status,
      err.message || `the server answered ${res.status}`);
  }
  return data;
}

export const get = (path, signal) => call('GET', path, undefined, signal);

// A text/plain answer (an attempt's log): its text, or null for a 404
// (nothing kept); other failures reject with an ApiError, as call does.
export async function getText(path, signal) {
  const headers = { Accept: 'text/plain' };
  if (token) headers.Authorization = `Bearer ${token}`;
  let res;
  try {
    res = await fetch(path, { headers, signal, credentials: 'omit', cache: 'no-store' });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'network', 'the server cannot be reached');
  }
  if (res.status === 404) return null;
  if (!res.ok) throw new ApiError(res.status, 'http_' + res.status, `the server answered ${res.status}`);
  return res.text();
}
export const post = (path, body) => call('POST', path, body === undefined ? {} : body);
export const del = (path) => call('DELETE', path);

// A query string from an object, leaving out empty values.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, v);
  }
  const s = q.toString();
  return s ? '?' + s : '';
}

export const enc = encodeURIComponent;
