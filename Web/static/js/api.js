// The JSON API of docs/WEB.md. Every request other than GET carries the CSRF token; the
// session itself is an HttpOnly cookie the browser sends on its own.

import { toBase64 } from './bytes.js';

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

/** Called when the server says the session is gone (401 `unauthorized`). */
export function onUnauthorized(listener) {
  unauthorizedListeners.add(listener);
}

/**
 * One API request. `body` is sent as JSON unless it is a Blob/ArrayBuffer/typed array (raw
 * upload); `raw: true` returns the response bytes instead of JSON.
 */
export async function request(method, path, { body, query, raw = false, quietUnauthorized = false } = {}) {
  const url = new URL(`/api${path}`, window.location.origin);
  for (const [name, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, value);
  }
  const headers = { Accept: 'application/json' };
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['X-Tresor-CSRF'] = csrfToken;
  let payload;
  if (body instanceof Blob || body instanceof ArrayBuffer || ArrayBuffer.isView(body)) {
    payload = body;
    headers['Content-Type'] = 'application/octet-stream';
  } else if (body !== undefined) {
    payload = JSON.stringify(body, (key, value) => (value instanceof Uint8Array ? toBase64(value) : value));
    headers['Content-Type'] = 'application/json';
  }
  let response;
  try {
    response = await fetch(url, { method, headers, body: payload, credentials: 'same-origin', cache: 'no-store' });
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
