// The browser's secure session (docs/WEB.md, "Locked notes in the browser"): the passphrase keys
// entered on this page and the locked notes open right now. Everything lives in this module's
// memory as non-extractable CryptoKeys, with the proofs the server asks for before a change
// (docs/SECURITY.md, "Locked-note integrity on the web"); `lockNow` drops all of it, revokes the
// notes' object URLs and tells the views to put placeholders back. Nothing here touches the DOM or
// storage.

import { api, ApiError, request, segment } from './api.js';
import { derivePassphrase, unwrapNoteKey, verifies, WrongPassphraseError } from './locked-crypto.js';
import { fromBase64 } from './bytes.js';

/** passphrase id → { key (AES-KW, non-extractable), proof (the bytes the server checks) }. */
const passphraseKeys = new Map();
/** note id → { noteKey, noteProof, objectURLs: Set<string> } for each open locked note (its text lives only in the editor). */
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
  return passphraseKeys.get(passphraseID)?.key || null;
}

/** `{passphraseID, proof}` for a passphrase entered here, or null: what proof-guarded requests carry. */
export function passphraseProof(passphraseID) {
  const entry = passphraseKeys.get(passphraseID);
  return entry ? { passphraseID, proof: entry.proof } : null;
}

export function isOpen() {
  return passphraseKeys.size > 0 || openNotes.size > 0;
}

export function forgetPassphraseKey(passphraseID) {
  const entry = passphraseKeys.get(passphraseID);
  if (entry) entry.proof.fill(0);
  passphraseKeys.delete(passphraseID);
  if (!isOpen()) reportSession(false);
}

export function rememberPassphraseKey(passphraseID, key, proof) {
  passphraseKeys.set(passphraseID, { key, proof });
  reportSession(true);
}

/**
 * A proof-guarded request: answers 401 `wrongPassphrase` / `passphraseRequired` are about the
 * passphrase, not the web session, so they must not sign the page out.
 */
export function provedRequest(method, path, body) {
  return request(method, path, { body, quietUnauthorized: true });
}

/**
 * The wrapped key of locked note `noteID`: from `locked` while the server hands it out without
 * a proof (a passphrase from before proofs), else fetched with the proof of its passphrase.
 */
export async function wrappedKeyOf(noteID, locked) {
  if (locked.wrappedKey) return asBytes(locked.wrappedKey);
  const proof = passphraseProof(locked.passphraseID);
  if (!proof) throw new WrongPassphraseError();
  try {
    const answer = await provedRequest('POST', `/notes/${segment(noteID)}/wrapped-key`, proof);
    return asBytes(answer.wrappedKey);
  } catch (error) {
    if (error instanceof ApiError && (error.code === 'wrongPassphrase' || error.code === 'passphraseRequired')) throw new WrongPassphraseError();
    throw error;
  }
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
  entry.noteProof?.fill(0);
  entry.noteProof = null;
  openNotes.delete(id);
}

/**
 * Lock Now: every key and every open note's plaintext dropped, then the views are told. Lock
 * Now and auto-lock (`idle`, `hidden`) are told to the server, which closes the locked notes
 * of the account's other pages too (docs/WEB.md, "Live updates"); a lock that came from
 * elsewhere (`elsewhere`, `keybag`, `signOut`) is not passed on again.
 */
export function lockNow(reason = 'lockNow') {
  const hadSomething = isOpen() || reportedOpen;
  for (const id of [...openNotes.keys()]) closeNote(id);
  for (const entry of passphraseKeys.values()) entry.proof.fill(0);
  passphraseKeys.clear();
  for (const listener of lockListeners) listener(reason);
  if (hadSomething || reason === 'lockNow') reportSession(false, { reason, again: reason === 'lockNow' });
}

/** Repeats an open session's report now and then (called by the status poll). */
export function keepSessionReported() {
  if (reportedOpen && isOpen() && Date.now() - reportedAt >= reportAgainMs) reportSession(true, { again: true });
}

function reportSession(open, { again = false, reason = undefined } = {}) {
  if (open === reportedOpen && !again) return;
  reportedOpen = open;
  reportedAt = Date.now();
  // The widget redacts private fields unless a session is open; a failed report is not fatal.
  api.post('/secure-session', { open, reason }).catch(() => {});
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
 * Enters a typed passphrase for the passphrase `passphraseID` (with its `salt` and
 * `iterations`): derives the key and its proof and sends the proof (`POST /passphrase/proof`).
 * The server decides whether it was right and counts wrong ones (hint from the third, waits
 * from the fifth) — the page never reports "right" or "wrong" itself. A passphrase from
 * before proofs (`hasProof` false) is first checked here against its `verifier` or, for
 * imported Apple passphrases, a note's `wrappedKey`; a right one records its proof
 * (`establish`), a wrong one is sent so that it counts.
 *
 * Returns `{ ok: true, key }` or `{ ok: false, failedAttempts, hint, retryAfterSeconds }`.
 */
export async function enterPassphrase(passphrase, { passphraseID, salt, iterations, verifier, wrappedKey, hasProof }) {
  if (keybagState !== 'unlocked') {
    throw new Error('Tresor is locked on this computer. Unlock it (tresor unlock) to open locked notes.');
  }
  const wait = secondsToWait(passphraseID);
  if (wait > 0) return { ok: false, retryAfterSeconds: wait, hint: null, failedAttempts: null };
  const { key, proof } = await derivePassphrase(passphrase, asBytes(salt), iterations);
  let establish = false;
  if (!hasProof) {
    if (verifier) {
      establish = await verifies(key, asBytes(verifier));
    } else if (wrappedKey) {
      try {
        await unwrapNoteKey(asBytes(wrappedKey), key);
        establish = true;
      } catch (error) {
        if (!(error instanceof WrongPassphraseError)) throw error;
      }
    }
  }
  try {
    await provedRequest('POST', '/passphrase/proof', { passphraseID, proof, establish });
  } catch (error) {
    proof.fill(0);
    if (!(error instanceof ApiError) || !['wrongPassphrase', 'throttled', 'passphraseRequired'].includes(error.code)) throw error;
    if (error.retryAfterSeconds) waitUntil.set(passphraseID, Date.now() + error.retryAfterSeconds * 1000);
    return { ok: false, failedAttempts: error.failedAttempts, hint: error.hint, retryAfterSeconds: error.retryAfterSeconds };
  }
  waitUntil.delete(passphraseID);
  rememberPassphraseKey(passphraseID, key, proof);
  return { ok: true, key };
}

export function asBytes(value) {
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string') return fromBase64(value);
  throw new Error('missing binary field');
}
