// The non-intrusive banner at the top of the page (#error) and the toolbar's loading spinner.

import { byId } from './dom.js';

let hideTimer = null;
let loadingCount = 0;

/** Shows a message in #error; `kind` "error" (default) or "info". Hides itself after a while. */
export function showMessage(message, kind = 'error') {
  const banner = byId('error');
  if (!banner) return;
  byId('error-message').textContent = message;
  banner.dataset.kind = kind;
  banner.hidden = false;
  clearTimeout(hideTimer);
  hideTimer = setTimeout(hideMessage, kind === 'error' ? 10000 : 4000);
}

export function showError(error) {
  const text = error?.message || String(error);
  // Server messages start in lower case ("account \"x\" not found"): make them sentences.
  showMessage(text.charAt(0).toUpperCase() + text.slice(1), 'error');
}

export function hideMessage() {
  const banner = byId('error');
  if (banner) banner.hidden = true;
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
}
