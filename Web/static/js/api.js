// The JSON API of docs/WEB.md. A session is two halves: an HttpOnly cookie the browser sends
// on its own — to every port of 127.0.0.1, so to other local users' servers too — and the
// origin token, which only this page holds (localStorage is per origin: scheme, host and
// port) and sends with every request. Every request other than GET carries the CSRF token too.

import { toBase64 } from './bytes.js';

// localStorage, not sessionStorage: every tab of this origin (the widget page too) shares the
// session, as they share the cookie (docs/WEB.md, "The origin token").
const originTokenKey = 'tresor.originToken';
// Where the origin token lives when storage is refused.
let memoryOriginToken = null;
let csrfToken = null;
const unauthorizedListeners = new Set();

/** An error the server answered with: `{code, message}` and, when they apply, the extra fields. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message || `The server answered ${status}.`);
    this.name = 'ApiError';
    this.status = status;
    this.code = body?.code || 'unknown';
    this.retryAfterSeconds = body?.retryAfterSeconds ?? null;
    this.hint = body?.hint ?? null;
    this.failedAttempts = body?.failedAttempts ?? null;
  }
}

/** Keeps the token from login, registration or `GET /api/session` (in memory only). */
export function setCsrfToken(token) {
  csrfToken = token || null;
}

/**
 * Keeps (or, with null, forgets) the origin token of a sign-in or registration answer. The page
 * trusts only a session it started itself: a cookie planted by another port comes without it.
 */
export function setOriginToken(token) {
  try {
    if (token) window.localStorage.setItem(originTokenKey, token);
    else window.localStorage.removeItem(originTokenKey);
  } catch {
    // Storage refused (a private window's quota): the session lasts as long as this page.
    memoryOriginToken = token || null;
  }
}

function originToken() {
  try {
    return window.localStorage.getItem(originTokenKey) ?? memoryOriginToken;
  } catch {
    return memoryOriginToken;
  }
}

/** Whether this page holds a session of its own (else it is signed out, whatever cookie it has). */
export function hasOriginToken() {
  return Boolean(originToken());
}

const keepaliveBytes = 60 * 1024;
let unloading = false;
window.addEventListener('pagehide', () => { unloading = true; });
window.addEventListener('beforeunload', () => { unloading = true; });
window.addEventListener('pageshow', () => { unloading = false; });

/** Whether the page is going: hidden, or being reloaded or closed. */
function leaving() {
  return unloading || document.visibilityState === 'hidden';
}

/** Called when the server says the session is gone (401 `unauthorized`). */
export function onUnauthorized(listener) {
  unauthorizedListeners.add(listener);
}

/**
 * One API request. `body` is sent as JSON unless it is a Blob/ArrayBuffer/typed array (raw
 * upload); `raw: true` returns the response bytes instead of JSON.
 */
export async function request(method, path, { body, query, headers: extra = {}, raw = false, quietUnauthorized = false } = {}) {
  const url = new URL(`/api${path}`, window.location.origin);
  for (const [name, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, value);
  }
  const headers = { Accept: 'application/json', ...extra };
  const sentOriginToken = originToken();
  if (sentOriginToken) headers['X-Tresor-Origin-Token'] = sentOriginToken;
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['X-Tresor-CSRF'] = csrfToken;
  let payload;
  if (body instanceof Blob || body instanceof ArrayBuffer || ArrayBuffer.isView(body)) {
    payload = body;
    headers['Content-Type'] = 'application/octet-stream';
  } else if (body !== undefined) {
    payload = JSON.stringify(body, (key, value) => (value instanceof Uint8Array ? toBase64(value) : value));
    headers['Content-Type'] = 'application/json';
  }
  // A request made as the page goes (a save when it is hidden, reloaded or closed) outlives it;
  // the browser takes such requests up to 64 KiB.
  const keepalive = leaving() && (payload === undefined || (typeof payload === 'string' && payload.length < keepaliveBytes));
  let response;
  try {
    response = await fetch(url, { method, headers, body: payload, credentials: 'same-origin', cache: 'no-store', keepalive });
  } catch {
    throw new ApiError(0, { code: 'offline', message: 'Tresor is not reachable. Is the daemon running?' });
  }
  if (!response.ok) {
    let details = null;
    try { details = await response.json(); } catch { details = null; }
    const error = new ApiError(response.status, details);
    if (error.retryAfterSeconds === null && response.headers.get('Retry-After')) {
      error.retryAfterSeconds = Number(response.headers.get('Retry-After')) || null;
    }
    if (response.status === 401 && error.code === 'unauthorized' && sentOriginToken && originToken() === sentOriginToken) {
      // The session is over: its token is worthless (unless another tab signed in meanwhile).
      setOriginToken(null);
    }
    if (response.status === 401 && error.code !== 'authFailed' && !quietUnauthorized) {
      for (const listener of unauthorizedListeners) listener(error);
    }
    throw error;
  }
  if (raw) return new Uint8Array(await response.arrayBuffer());
  if (response.status === 204) return null;
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

/**
 * Opens a streamed GET (the live updates of `GET /api/events`) with the session's headers —
 * `fetch`, since `EventSource` cannot send the origin token. Answers the Response; `signal`
 * aborts it.
 */
export async function openStream(path, { signal } = {}) {
  const headers = { Accept: 'text/event-stream' };
  const token = originToken();
  if (token) headers['X-Tresor-Origin-Token'] = token;
  const response = await fetch(new URL(`/api${path}`, window.location.origin), {
    headers, signal, credentials: 'same-origin', cache: 'no-store',
  });
  if (response.status === 401) {
    for (const listener of unauthorizedListeners) listener(new ApiError(401, { code: 'unauthorized' }));
  }
  return response;
}

export const api = {
  get: (path, options) => request('GET', path, options),
  post: (path, body, options) => request('POST', path, { ...options, body }),
  patch: (path, body) => request('PATCH', path, { body }),
  put: (path, body) => request('PUT', path, { body }),
  delete: (path) => request('DELETE', path),
};

/** A path segment, percent-encoded (ids and names come from the server or the user). */
export function segment(value) {
  return encodeURIComponent(String(value));
}
