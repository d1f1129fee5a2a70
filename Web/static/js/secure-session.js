// The browser's secure session (SPEC §4.3): the passphrase keys entered on this page and the
// locked notes open right now. Everything lives in this module's memory as non-extractable
// CryptoKeys; `lockNow` drops all of it, revokes the notes' object URLs and tells the views
// to put placeholders back. Nothing here touches the DOM or storage.

import { api, ApiError } from './api.js';
import { derivePassphraseKey, unwrapNoteKey, verifies, WrongPassphraseError } from './locked-crypto.js';
import { fromBase64 } from './bytes.js';

/** passphrase id → its passphrase key (AES-KW, non-extractable). */
const passphraseKeys = new Map();
/** note id → { noteKey, objectURLs: Set<string> } for each open locked note (its text lives only in the editor). */
const openNotes = new Map();
const lockListeners = new Set();
let reportedOpen = false;
let reportedAt = 0;
/** The server forgets a browser's "open" after a while (its longest auto-lock time): say it again this often. */
const reportAgainMs = 60_000;
/** The keybag's state from the last `GET /api/status`: no locked note opens while it is locked. */
let keybagState = 'unlocked';
/** passphrase id → time (ms) before which the server asked us not to try again. */
const waitUntil = new Map();

/** Called with the reason after everything was dropped (so views replace open notes by placeholders). */
export function onLock(listener) {
  lockListeners.add(listener);
}

export function passphraseKey(passphraseID) {
  return passphraseKeys.get(passphraseID) || null;
}

export function isOpen() {
  return passphraseKeys.size > 0 || openNotes.size > 0;
}

export function forgetPassphraseKey(passphraseID) {
  passphraseKeys.delete(passphraseID);
  if (!isOpen()) reportSession(false);
}

export function rememberPassphraseKey(passphraseID, key) {
  passphraseKeys.set(passphraseID, key);
  reportSession(true);
}

/** The open locked note `id`, or null. */
export function openNote(id) {
  return openNotes.get(id) || null;
}

export function rememberOpenNote(id, entry) {
  openNotes.set(id, { objectURLs: new Set(), ...entry });
  reportSession(true);
}

/** Closes one open note (its text and key dropped, its object URLs revoked). */
export function closeNote(id) {
  const entry = openNotes.get(id);
  if (!entry) return;
  for (const url of entry.objectURLs) URL.revokeObjectURL(url);
  entry.objectURLs.clear();
  entry.noteKey = null;
  openNotes.delete(id);
}

/** Lock Now: every key and every open note's plaintext dropped, then the views are told. */
export function lockNow(reason = 'lockNow') {
  const hadSomething = isOpen() || reportedOpen;
  for (const id of [...openNotes.keys()]) closeNote(id);
  passphraseKeys.clear();
  for (const listener of lockListeners) listener(reason);
  if (hadSomething) reportSession(false);
}

/** Repeats an open session's report now and then (called by the status poll). */
export function keepSessionReported() {
  if (reportedOpen && isOpen() && Date.now() - reportedAt >= reportAgainMs) reportSession(true, { again: true });
}

function reportSession(open, { again = false } = {}) {
  if (open === reportedOpen && !again) return;
  reportedOpen = open;
  reportedAt = Date.now();
  // The widget redacts private fields unless a session is open; a failed report is not fatal.
  api.post('/secure-session', { open }).catch(() => {});
}

/** Called by the status poll. */
export function setKeybagState(state) {
  keybagState = state;
}

/** Seconds to wait before the passphrase `passphraseID` may be tried again (0 if none). */
export function secondsToWait(passphraseID) {
  const until = waitUntil.get(passphraseID) || 0;
  return Math.max(0, Math.ceil((until - Date.now()) / 1000));
}

/**
 * Checks a typed passphrase for the passphrase `passphraseID` (with its `salt` and
 * `iterations`) against a `verifier` or, for imported Apple passphrases, a note's
 * `wrappedKey`, and reports the entry to the server (which counts wrong entries, gives the hint
 * from the third on and says how long to wait). Only whether it was right is reported.
 *
 * Returns `{ ok: true, key }` or `{ ok: false, failedAttempts, hint, retryAfterSeconds }`.
 */
export async function enterPassphrase(passphrase, { passphraseID, salt, iterations, verifier, wrappedKey }) {
  if (keybagState !== 'unlocked') {
    throw new Error('Tresor is locked on this computer. Unlock it (tresor unlock) to open locked notes.');
  }
  const wait = secondsToWait(passphraseID);
  if (wait > 0) return { ok: false, retryAfterSeconds: wait, hint: null, failedAttempts: null };
  const key = await derivePassphraseKey(passphrase, asBytes(salt), iterations);
  let ok;
  if (verifier) {
    ok = await verifies(key, asBytes(verifier));
  } else {
    try {
      await unwrapNoteKey(asBytes(wrappedKey), key);
      ok = true;
    } catch (error) {
      if (!(error instanceof WrongPassphraseError)) throw error;
      ok = false;
    }
  }
  let outcome = {};
  try {
    outcome = (await api.post('/passphrase/attempts', { passphraseID, succeeded: ok })) || {};
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'throttled') throw error;
    outcome = { retryAfterSeconds: error.retryAfterSeconds, hint: error.hint, failedAttempts: error.failedAttempts };
    ok = false; // the server refused the entry: do not open anything with it
  }
  if (outcome.retryAfterSeconds) waitUntil.set(passphraseID, Date.now() + outcome.retryAfterSeconds * 1000);
  if (!ok) {
    return {
      ok: false,
      failedAttempts: outcome.failedAttempts ?? null,
      hint: outcome.hint ?? null,
      retryAfterSeconds: outcome.retryAfterSeconds ?? null,
    };
  }
  waitUntil.delete(passphraseID);
  rememberPassphraseKey(passphraseID, key);
  return { ok: true, key };
}

export function asBytes(value) {
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string') return fromBase64(value);
  throw new Error('missing binary field');
}
