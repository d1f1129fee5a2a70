// The non-intrusive banner at the top of the page (#error) and the toolbar's loading spinner.

import { byId } from './dom.js';

let hideTimer = null;
let loadingCount = 0;
let currentAction = null;

/**
 * Shows a message in #error; `kind` "error" (default) or "info". Hides itself after a while.
 * `action` ({label, run}) adds a button — Undo after a delete, a move or an unshare — that runs
 * once and hides the message. `stays`: it waits for its button or the next message (what it
 * offers would be lost with it).
 */
export function showMessage(message, kind = 'error', { action = null, stays = false } = {}) {
  const banner = byId('error');
  if (!banner) return;
  byId('error-message').textContent = message;
  banner.dataset.kind = kind;
  banner.hidden = false;
  currentAction = action;
  const button = byId('banner-action');
  if (button) {
    button.hidden = !action;
    button.textContent = action?.label || '';
  }
  clearTimeout(hideTimer);
  if (!stays) hideTimer = setTimeout(hideMessage, action ? 10000 : kind === 'error' ? 10000 : 4000);
}

/** A message with an Undo button: `undo` puts back what was just done. */
export function offerUndo(message, undo) {
  showMessage(message, 'info', { action: { label: 'Undo', run: undo } });
}

export function showError(error) {
  // A request under way when the session ended fails with "sign in first": the sign-in screen
  // already says why the session ended, and that message stays.
  if (error?.code === 'unauthorized' && document.body.dataset.screen !== 'app') return;
  const text = error?.message || String(error);
  // Server messages start in lower case ("account \"x\" not found"): make them sentences.
  showMessage(text.charAt(0).toUpperCase() + text.slice(1), 'error');
}

export function hideMessage() {
  const banner = byId('error');
  if (banner) banner.hidden = true;
  currentAction = null;
}

/** Runs `work` with the spinner shown; errors go to the banner (and are rethrown only if asked). */
export async function busy(work, { rethrow = false } = {}) {
  setLoading(1);
  try {
    return await work();
  } catch (error) {
    showError(error);
    if (rethrow) throw error;
    return undefined;
  } finally {
    setLoading(-1);
  }
}

function setLoading(delta) {
  loadingCount = Math.max(0, loadingCount + delta);
  const spinner = byId('loading');
  if (spinner) spinner.hidden = loadingCount === 0;
}

export function installBanner() {
  byId('error-dismiss')?.addEventListener('click', hideMessage);
  byId('banner-action')?.addEventListener('click', () => {
    const action = currentAction;
    currentAction = null;
    hideMessage();
    if (action) busy(action.run);
  });
}
