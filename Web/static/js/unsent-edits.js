// Unsent edits (docs/WEB.md, "Unsent edits"): an edit of an unlocked note whose save failed for
// a reason that passes — no connection, the server down, a full disk, the session ended — is
// kept and sent again, with the version it was made from (the server merges it), also after the
// note was left and after signing in again as the same account. Kept in this page's memory
// only, never in the browser's storage; a locked note's edit is never kept past its secure
// session.

import { showError } from './banner.js';
import { saveUnlocked } from './note-sync.js';

/** noteID → { accountID, from: {revision, title, body}, edit: {title?, body?} }. */
const edits = new Map();
const firstRetryMs = 3000;
const longestRetryMs = 30000;
let retryMs = firstRetryMs;
let timer = null;
let currentAccount = () => null;
let sent = () => {};

/** Whether a save that failed with `error` may succeed later unchanged. */
export function passes(error) {
  if (error?.status === 0 || error?.status >= 500) return true;
  if (error?.status === 401 && error.code === 'unauthorized') return true;
  return error?.code === 'diskFull' || error?.code === 'diskReadOnly';
}

/** Keeps an edit of an unlocked note to send again (a newer one of the note replaces it). */
export function keepUnsent(noteID, accountID, from, edit) {
  if (!accountID) return;
  edits.set(noteID, { accountID, from, edit });
  schedule();
}

/** Takes back the unsent edit of `noteID` of `accountID`, if any: the editor shows and sends it. */
export function takeUnsent(noteID, accountID) {
  const entry = edits.get(noteID);
  if (!entry || entry.accountID !== accountID) return null;
  edits.delete(noteID);
  return entry;
}

/** Whether any edit waits to be sent. */
export function hasUnsent() {
  return edits.size > 0;
}

/**
 * Sends what waits of the account signed in now (another account's edits are dropped: they are
 * not this person's); `onSent` runs after each one the server took.
 */
export async function sendUnsent() {
  clearTimeout(timer);
  timer = null;
  const accountID = currentAccount();
  if (!accountID) return;
  for (const [noteID, entry] of [...edits]) {
    if (entry.accountID !== accountID) {
      edits.delete(noteID);
      continue;
    }
    edits.delete(noteID);
    try {
      await saveUnlocked(noteID, entry.from, entry.edit);
      retryMs = firstRetryMs;
      sent(noteID);
    } catch (error) {
      if (passes(error)) {
        // Unless the note was edited (and kept) again meanwhile.
        if (!edits.has(noteID)) edits.set(noteID, entry);
        retryMs = Math.min(retryMs * 2, longestRetryMs);
      } else {
        showError(error);
      }
    }
  }
  if (edits.size > 0) schedule();
}

function schedule() {
  if (timer === null) timer = setTimeout(sendUnsent, retryMs);
}

/**
 * Sends again when the connection comes back and on a timer. `accountID` says who is signed in
 * (null: nobody); `onSent(noteID)` after each edit the server took.
 */
export function installUnsentEdits({ accountID, onSent }) {
  currentAccount = accountID;
  sent = onSent;
  window.addEventListener('online', () => sendUnsent());
}
