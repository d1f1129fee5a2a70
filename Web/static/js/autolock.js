// Auto-lock (docs/WEB.md, "Locked notes in the browser"): the secure session ends when the page has
// been hidden for `autoLock.hiddenSeconds` (`desktopHiddenSeconds` on a desktop browser — one with
// a fine pointer), after `autoLock.idleSeconds` without input, and as soon as `GET /api/status`
// (polled every 5 s) says the keybag is not unlocked.

import { api } from './api.js';
import { isOpen, keepSessionReported, lockNow, setKeybagState } from './secure-session.js';

const statusPollMs = 5000;
const defaults = { hiddenSeconds: 180, desktopHiddenSeconds: 480, idleSeconds: 480 };

let stopCurrent = null;
let pollNow = null;

/** Asks `GET /api/status` now (a live update said the keybag changed). */
export function checkStatusNow() {
  pollNow?.();
}

/** Starts watching; `onStatus(status)` gets every status answer. Returns a stop function. */
export function startAutoLock(autoLock, { onStatus } = {}) {
  stopAutoLock();
  const settings = { ...defaults, ...(autoLock || {}) };
  const isDesktop = window.matchMedia('(pointer: fine)').matches;
  const hiddenLimitMs = (isDesktop ? settings.desktopHiddenSeconds : settings.hiddenSeconds) * 1000;
  const idleLimitMs = settings.idleSeconds * 1000;

  let lastInput = Date.now();
  let hiddenSince = document.hidden ? Date.now() : null;
  let hiddenTimer = null;

  const lockIfOpen = (reason) => {
    if (isOpen()) lockNow(reason);
  };
  const onInput = () => { lastInput = Date.now(); };
  const onVisibility = () => {
    clearTimeout(hiddenTimer);
    if (document.hidden) {
      hiddenSince = Date.now();
      // Timers of hidden pages are throttled, so the check on return below is what counts;
      // this one locks on time when the browser lets it run.
      hiddenTimer = setTimeout(() => lockIfOpen('hidden'), hiddenLimitMs);
    } else {
      if (hiddenSince !== null && Date.now() - hiddenSince >= hiddenLimitMs) lockIfOpen('hidden');
      hiddenSince = null;
      lastInput = Date.now();
    }
  };
  const inputEvents = ['keydown', 'pointerdown', 'pointermove', 'wheel', 'touchstart', 'input'];
  for (const name of inputEvents) window.addEventListener(name, onInput, { passive: true, capture: true });
  document.addEventListener('visibilitychange', onVisibility);

  const idleCheck = setInterval(() => {
    if (Date.now() - lastInput >= idleLimitMs) lockIfOpen('idle');
    if (hiddenSince !== null && Date.now() - hiddenSince >= hiddenLimitMs) lockIfOpen('hidden');
  }, 1000);

  let polling = true;
  const poll = async () => {
    if (!polling) return;
    try {
      const status = await api.get('/status');
      if (status) setKeybagState(status.keybag);
      if (status && status.keybag !== 'unlocked') lockIfOpen('keybag');
      else keepSessionReported();
      onStatus?.(status);
    } catch {
      // Unreachable daemon: nothing new to learn; the next poll tries again.
    }
  };
  poll();
  pollNow = poll;
  const statusTimer = setInterval(poll, statusPollMs);

  stopCurrent = () => {
    polling = false;
    pollNow = null;
    clearInterval(statusTimer);
    clearInterval(idleCheck);
    clearTimeout(hiddenTimer);
    for (const name of inputEvents) window.removeEventListener(name, onInput, { capture: true });
    document.removeEventListener('visibilitychange', onVisibility);
  };
  return stopCurrent;
}

export function stopAutoLock() {
  stopCurrent?.();
  stopCurrent = null;
}
