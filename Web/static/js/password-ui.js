// The account's password (#password-settings, in the account menu): the current one, then the
// new one twice. The server counts a wrong current password as a failed sign-in and, once the
// password changed, ends the account's other sessions (docs/WEB.md, "Sessions end"). The local
// account has none: it signs in with the keybag's passcode, changed with `tresor passcode change`.

import { api, ApiError } from './api.js';
import { byId, h, waitText } from './dom.js';
import { showMessage } from './banner.js';
import { field, modal } from './passphrase-ui.js';

/** Opens the password dialog. Returns the dialog. */
export function openPasswordChange() {
  const feedback = h('p', { id: 'password-change-message', class: 'form-message', role: 'status', 'aria-live': 'polite' });
  const form = h('form', { id: 'password-change-form', class: 'dialog-form', novalidate: true, on: { submit: async (event) => {
    event.preventDefault();
    const currentPassword = byId('current-password').value;
    const newPassword = byId('new-password').value;
    const newPasswordAgain = byId('new-password-again').value;
    if (!currentPassword) return void (feedback.textContent = 'Enter your current password.');
    if (newPassword !== newPasswordAgain) return void (feedback.textContent = 'The two new passwords are not the same.');
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    feedback.textContent = 'Working…';
    try {
      const { endedSessions } = await api.post('/account/password', { currentPassword, newPassword, newPasswordAgain });
      dialog.close();
      const others = endedSessions === 1 ? ' One other session was signed out.' : endedSessions > 1 ? ` ${endedSessions} other sessions were signed out.` : '';
      showMessage(`Password changed.${others}`, 'info');
    } catch (error) {
      feedback.textContent = describe(error);
    } finally {
      button.disabled = false;
    }
  } } },
  field('current-password', 'Current password', { type: 'password', autocomplete: 'current-password' }),
  field('new-password', 'New password', { type: 'password', autocomplete: 'new-password', minlength: '8' }),
  field('new-password-again', 'New password again', { type: 'password', autocomplete: 'new-password', minlength: '8' }),
  h('div', { class: 'dialog-actions' }, h('button', { id: 'password-save', class: 'button primary', type: 'submit' }, 'Change Password')));
  const dialog = modal('password-change-dialog', 'Change Password', form, feedback);
  return dialog;
}

function describe(error) {
  if (!(error instanceof ApiError)) return error.message;
  switch (error.code) {
    case 'authFailed': return 'The current password is wrong.';
    case 'throttled': return `Too many wrong passwords. Try again in ${error.retryAfterSeconds ? waitText(error.retryAfterSeconds) : 'a few minutes'}.`;
    default: return `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`;
  }
}
