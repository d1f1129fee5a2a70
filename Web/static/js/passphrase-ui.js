// Asking for a passphrase (to open a locked note, to lock one, to re-wrap one) and the
// passphrase settings: set the first one, change it (needs the current one) and reset it
// (needs the account password). The passphrase itself never leaves this page: the server gets
// salts, iteration counts, verifiers, proof hashes and wrapped keys, and a proof of the
// current passphrase for a change.

import { api, ApiError, segment } from './api.js';
import { byId, h, icon, longDate, waitText } from './dom.js';
import { newPassphrase, rewrapNoteKey, unwrapNoteKey } from './locked-crypto.js';
import {
  enterPassphrase, passphraseKey, passphraseProof, provedRequest, rememberPassphraseKey, secondsToWait, wrappedKeyOf,
} from './secure-session.js';
import { showMessage } from './banner.js';

export const fallbackIterations = 600_000;

/** The account's passphrase state (`GET /api/passphrase`). */
export function loadPassphraseState() {
  return api.get('/passphrase');
}

/** "locked with an earlier passphrase (hint: …, set on …)" for a LockInfo that is not current, else null. */
export function earlierPassphraseText(lock) {
  if (!lock || lock.isCurrent) return null;
  const parts = [];
  if (lock.hint) parts.push(`hint: ${lock.hint}`);
  if (lock.setOn) parts.push(`set on ${longDate(lock.setOn)}`);
  const from = lock.source === 'tresor' ? 'an earlier passphrase' : 'a passphrase imported from Apple Notes';
  return `This note is locked with ${from}${parts.length ? ` (${parts.join(', ')})` : ''}.`;
}

/**
 * A passphrase form: #passphrase-input, #passphrase-submit, #passphrase-hint (the hint the
 * server gives from the third wrong entry) and #passphrase-message. `passphrase` names what
 * checks it (see secure-session `enterPassphrase`); `onOpened(key)` runs when it was right.
 */
export function passphraseForm({ title, message, detail, passphrase, onOpened, onCancel, submitLabel = 'Open' }) {
  const input = h('input', {
    // A password manager may fill it and a phone shows its plain text keyboard, without
    // capitals or corrections added to what is typed; Enter opens.
    id: 'passphrase-input', type: 'password', autocomplete: 'current-password', inputmode: 'text', autocapitalize: 'none',
    autocorrect: 'off', spellcheck: 'false', enterkeyhint: 'go',
    'aria-describedby': 'passphrase-message passphrase-hint',
  });
  const submit = h('button', { id: 'passphrase-submit', class: 'button primary', type: 'submit' }, submitLabel);
  const feedback = h('p', { id: 'passphrase-message', class: 'form-message', role: 'status', 'aria-live': 'polite' });
  const hint = h('p', { id: 'passphrase-hint', class: 'passphrase-hint', 'data-testid': 'passphrase-hint', hidden: true });
  let countdown = null;

  const showHint = (text) => {
    if (!text) return;
    hint.textContent = `Hint: ${text}`;
    hint.hidden = false;
  };
  const waitFor = (seconds) => {
    clearInterval(countdown);
    const until = Date.now() + seconds * 1000;
    const tick = () => {
      const left = Math.ceil((until - Date.now()) / 1000);
      if (left <= 0 || !input.isConnected) {
        clearInterval(countdown);
        input.disabled = false;
        submit.disabled = false;
        if (left <= 0) feedback.textContent = '';
        return;
      }
      input.disabled = true;
      submit.disabled = true;
      feedback.textContent = `Too many wrong entries. Try again in ${waitText(left)}.`;
    };
    tick();
    countdown = setInterval(tick, 1000);
  };

  const form = h('form', {
    class: 'passphrase-form', 'data-testid': 'passphrase-form', novalidate: true,
    on: {
      submit: async (event) => {
        event.preventDefault();
        const typed = input.value;
        if (!typed) {
          feedback.textContent = 'Enter the passphrase.';
          input.focus();
          return;
        }
        submit.disabled = true;
        input.disabled = true;
        feedback.textContent = 'Checking…';
        let outcome;
        try {
          outcome = await enterPassphrase(typed, passphrase);
        } catch (error) {
          feedback.textContent = error.message;
          submit.disabled = false;
          input.disabled = false;
          return;
        }
        input.value = '';
        if (outcome.ok) {
          feedback.textContent = '';
          clearInterval(countdown);
          try {
            await onOpened(outcome.key);
          } finally {
            // Usually gone by now; a form kept for another try (the note's placeholder shown
            // again) takes input again.
            submit.disabled = false;
            input.disabled = false;
          }
          return;
        }
        submit.disabled = false;
        input.disabled = false;
        feedback.textContent = 'Wrong passphrase.';
        showHint(outcome.hint);
        if (outcome.retryAfterSeconds) waitFor(outcome.retryAfterSeconds);
        else input.focus();
      },
    },
  },
  h('div', { class: 'locked-icon' }, icon('lock')),
  title ? h('h2', { class: 'locked-title' }, title) : null,
  message ? h('p', { class: 'locked-message', 'data-testid': 'earlier-passphrase' }, message) : null,
  detail || null,
  h('label', { for: 'passphrase-input', class: 'visually-hidden' }, 'Passphrase'),
  h('div', { class: 'passphrase-row' }, input, submit),
  feedback,
  hint,
  onCancel ? h('button', { id: 'passphrase-cancel', class: 'link', type: 'button', on: { click: onCancel } }, 'Cancel') : null);

  const wait = secondsToWait(passphrase.passphraseID);
  if (wait > 0) waitFor(wait);
  queueMicrotask(() => { if (!input.disabled) input.focus(); });
  return form;
}

/** A modal dialog (a <dialog>, removed from the page when it closes). Returns the dialog. */
export function modal(id, titleText, ...content) {
  byId(id)?.remove();
  const dialog = h('dialog', { id, class: 'dialog', 'aria-labelledby': `${id}-title` },
    h('div', { class: 'dialog-header' },
      h('h2', { id: `${id}-title`, class: 'dialog-title' }, titleText),
      h('button', { class: 'icon-button', type: 'button', 'aria-label': 'Close', on: { click: () => dialog.close() } }, icon('close'))),
    ...content);
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  // Typing starts in the first field, not on × (which showModal would focus, being first).
  dialog.querySelector('input:not([type=hidden]):not([disabled]), textarea, select')?.focus();
  return dialog;
}

/**
 * Asks for the account's current passphrase in a dialog (to lock a note or re-wrap one) and
 * resolves with its key, or null when cancelled. Uses the session's key when it is open.
 */
export function currentPassphraseKey(state, reason) {
  const current = state?.current;
  if (!current) return Promise.resolve(null);
  const known = passphraseKey(current.id);
  if (known) return Promise.resolve(known);
  return new Promise((resolve) => {
    let settled = false;
    const dialog = modal('passphrase-dialog', 'Enter Your Passphrase',
      passphraseForm({
        message: reason,
        passphrase: passphraseToEnter(current),
        submitLabel: 'OK',
        onOpened: async (key) => { settled = true; resolve(key); dialog.close(); },
        onCancel: () => dialog.close(),
      }));
    dialog.addEventListener('close', () => { if (!settled) resolve(null); });
  });
}

/** The fewest characters advised for a notes passphrase (the CLI advises the same). */
const advisedPassphraseLength = 8;

/**
 * The passphrase settings dialog: set (when none), change or reset. `onChanged()` runs after
 * the server accepted a new passphrase.
 */
export function openPassphraseSettings(state, { onChanged }) {
  const iterations = state.minimumIterations > 0 ? state.minimumIterations : fallbackIterations;
  const feedback = h('p', { id: 'passphrase-settings-message', class: 'form-message', role: 'status', 'aria-live': 'polite' });
  const newFields = () => [
    field('new-passphrase', 'New passphrase', { type: 'password', autocomplete: 'new-password' }),
    field('new-passphrase-again', 'New passphrase again', { type: 'password', autocomplete: 'new-password' }),
    field('new-passphrase-hint', 'Hint (optional)', { maxlength: '256', autocomplete: 'off' }),
  ];
  const readNew = () => {
    const passphrase = byId('new-passphrase').value;
    const again = byId('new-passphrase-again').value;
    const hint = byId('new-passphrase-hint').value.trim();
    if (!passphrase) throw new Error('Enter a passphrase.');
    if (passphrase !== again) throw new Error('The two passphrases are not the same.');
    if (hint && hint === passphrase) throw new Error('The hint cannot be the passphrase itself.');
    // The server keeps every locked note sealed: whoever gets a copy can guess offline.
    const length = [...passphrase].length;
    if (length < advisedPassphraseLength && !window.confirm(
      `A passphrase of ${length} character${length === 1 ? '' : 's'} is guessed quickly by anyone who gets a copy of a locked note, and the server keeps one. Use it anyway?`)) {
      throw new Error(`Choose a longer passphrase: ${advisedPassphraseLength} characters or more, or a few words.`);
    }
    return { passphrase, hint: hint || undefined };
  };
  const run = (work) => async (event) => {
    event.preventDefault();
    const button = event.target.querySelector('button[type=submit]');
    button.disabled = true;
    feedback.textContent = 'Working…';
    try {
      const done = await work();
      if (done === false) return;
      dialog.close();
      showMessage(done, 'info');
      await onChanged();
    } catch (error) {
      feedback.textContent = error.message;
    } finally {
      button.disabled = false;
    }
  };

  let body;
  if (!state.isSet) {
    body = h('form', { id: 'passphrase-set-form', class: 'dialog-form', novalidate: true, on: { submit: run(async () => {
      const { passphrase, hint } = readNew();
      const made = await newPassphrase(passphrase, iterations);
      await api.post('/passphrase', { salt: made.salt, iterations, verifier: made.verifier, proofHash: made.proofHash, hint });
      const fresh = await loadPassphraseState();
      if (fresh.current) rememberPassphraseKey(fresh.current.id, made.key, made.proof);
      return 'Passphrase set. You can lock notes now.';
    }) } },
    h('p', { class: 'dialog-text' }, 'Locked notes are encrypted in this browser with your passphrase. If you forget it, notes locked with it cannot be read — not even by Tresor.'),
    ...newFields(),
    h('div', { class: 'dialog-actions' }, h('button', { id: 'passphrase-save', class: 'button primary', type: 'submit' }, 'Set Passphrase')));
  } else {
    const change = h('form', { id: 'passphrase-change-form', class: 'dialog-form', novalidate: true, on: { submit: run(async () => {
      const typedCurrent = byId('current-passphrase').value;
      const { passphrase, hint } = readNew();
      const current = state.current;
      const check = await enterPassphrase(typedCurrent, passphraseToEnter(current));
      if (!check.ok) {
        const parts = ['The current passphrase is wrong.'];
        if (check.hint) parts.push(`Hint: ${check.hint}`);
        if (check.retryAfterSeconds) parts.push(`Try again in ${waitText(check.retryAfterSeconds)}.`);
        throw new Error(parts.join(' '));
      }
      const made = await newPassphrase(passphrase, iterations);
      await changePassphrase(current.id, check.key, made, hint);
      const fresh = await loadPassphraseState();
      if (fresh.current) rememberPassphraseKey(fresh.current.id, made.key, made.proof);
      return 'Passphrase changed. Your locked notes open with the new one.';
    }) } },
    field('current-passphrase', 'Current passphrase', { type: 'password', autocomplete: 'current-password' }),
    ...newFields(),
    h('div', { class: 'dialog-actions' }, h('button', { id: 'passphrase-save', class: 'button primary', type: 'submit' }, 'Change Passphrase')));

    const reset = h('form', { id: 'passphrase-reset-form', class: 'dialog-form', novalidate: true, hidden: true, on: { submit: run(async () => {
      const accountPassword = byId('account-password').value;
      if (!accountPassword) throw new Error('Enter your account password.');
      const { passphrase, hint } = readNew();
      const made = await newPassphrase(passphrase, iterations);
      await api.post('/passphrase/reset', {
        accountPassword, salt: made.salt, iterations, verifier: made.verifier, proofHash: made.proofHash, hint,
      });
      const fresh = await loadPassphraseState();
      if (fresh.current) rememberPassphraseKey(fresh.current.id, made.key, made.proof);
      return 'Passphrase reset. New notes lock with it; notes locked before still open with the old one.';
    }) } },
    h('p', { class: 'dialog-text' }, 'Forgot your passphrase? Set a new one for notes you lock from now on. Notes locked before keep their old passphrase and still open with it.'),
    field('account-password', 'Account password', { type: 'password', autocomplete: 'current-password' }));
    // Reset and change each need their own new-passphrase fields; only the visible form has them.
    const tabs = h('div', { class: 'segmented', role: 'tablist' },
      h('button', { id: 'passphrase-mode-change', type: 'button', role: 'tab', 'aria-selected': 'true', on: { click: () => show('change') } }, 'Change'),
      h('button', { id: 'passphrase-mode-reset', type: 'button', role: 'tab', 'aria-selected': 'false', on: { click: () => show('reset') } }, 'Reset'));
    const show = (mode) => {
      feedback.textContent = '';
      const [visible, other] = mode === 'change' ? [change, reset] : [reset, change];
      // Move the new-passphrase fields and the button into the visible form (ids stay unique).
      const moving = ['new-passphrase', 'new-passphrase-again', 'new-passphrase-hint'].map((id) => byId(id).closest('.field'));
      const actions = other.querySelector('.dialog-actions');
      visible.append(...moving, actions);
      byId('passphrase-save').textContent = mode === 'change' ? 'Change Passphrase' : 'Reset Passphrase';
      visible.hidden = false;
      other.hidden = true;
      tabs.querySelectorAll('[role=tab]').forEach((tab) => tab.setAttribute('aria-selected', String(tab.id === `passphrase-mode-${mode}`)));
    };
    body = h('div', {}, tabs, change, reset);
  }
  const dialog = modal('passphrase-settings-dialog', state.isSet ? 'Passphrase for Locked Notes' : 'Set a Passphrase', body, feedback);
  if (state.isSet && state.current) {
    dialog.querySelector('.dialog-header').after(h('p', { class: 'dialog-meta' },
      `Current passphrase set on ${longDate(state.current.setOn)}${state.current.hasHint ? ', with a hint' : ''}.`));
  }
  return dialog;
}

/** What `enterPassphrase` needs of a PassphraseRecord (`verifier` only before proofs). */
function passphraseToEnter(current) {
  return {
    passphraseID: current.id, salt: current.salt, iterations: current.iterations, verifier: current.verifier, hasProof: current.hasProof,
  };
}

/** A labelled input of a dialog form. */
export function field(id, label, attributes) {
  return h('div', { class: 'field' }, h('label', { for: id }, label), h('input', { id, ...attributes }));
}

/**
 * Re-wraps every own note locked with passphrase `fromID` under the new passphrase and sends the
 * change in one request with the proof of the current passphrase (the server refuses it with
 * `conflict` unless it names exactly those notes, e.g. when one was locked meanwhile: then it
 * is tried once more). The wrapped keys themselves are handed out only for that proof.
 */
async function changePassphrase(fromID, fromKey, made, hint) {
  for (let attempt = 0; ; attempt += 1) {
    const { notes } = await api.get('/notes');
    const locked = notes.filter((note) => note.lock && note.lock.passphraseID === fromID && !note.owner);
    const rewrapped = [];
    for (const note of locked) {
      const detail = await api.get(`/notes/${segment(note.id)}`);
      const wrappedKey = await rewrapNoteKey(await wrappedKeyOf(note.id, detail.locked), fromKey, made.key);
      await unwrapNoteKey(wrappedKey, made.key); // it opens with the new passphrase before it is sent
      rewrapped.push({ id: note.id, wrappedKey });
    }
    try {
      await provedRequest('POST', '/passphrase/change', {
        passphraseProof: passphraseProof(fromID), salt: made.salt, iterations: made.iterations, verifier: made.verifier,
        proofHash: made.proofHash, hint, notes: rewrapped,
      });
      return;
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'conflict' || attempt > 0) throw error;
    }
  }
}
