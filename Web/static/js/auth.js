// Sign in, registration (the password typed twice) and a forgotten password set with the
// owner's reset code. The session is an HttpOnly cookie set
// by the server plus the origin token of the answer, kept in this origin's storage (api.js);
// the CSRF token is kept in memory.

import { api, ApiError, setCsrfToken, setOriginToken } from './api.js';
import { byId, waitText } from './dom.js';
import { showMessage, hideMessage } from './banner.js';

const namePattern = /^[a-z0-9._-]{1,32}$/;

/** Wires the three forms; `onSignedIn()` runs after a successful login, registration or reset. */
export function installAuth({ onSignedIn }) {
  byId('show-register').addEventListener('click', () => showForm('register'));
  byId('show-login').addEventListener('click', () => showForm('login'));
  byId('show-reset').addEventListener('click', () => showForm('reset'));
  byId('show-login-from-reset').addEventListener('click', () => showForm('login'));

  byId('login-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const name = byId('login-name').value.trim().toLowerCase();
    const password = byId('login-password').value;
    if (!name || !password) {
      showMessage('Enter your account name and password.');
      return;
    }
    await submit('login-submit', async () => {
      const answer = await api.post('/session', { name, password });
      byId('login-password').value = '';
      setOriginToken(answer.originToken);
      setCsrfToken(answer.csrfToken);
      await onSignedIn();
    });
  });

  byId('register-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const name = byId('register-name').value.trim().toLowerCase();
    const password = byId('register-password').value;
    const passwordAgain = byId('register-password-again').value;
    const invite = byId('register-invite').value.trim();
    // Every problem at once, each field marked: not one per try.
    const problems = [
      !namePattern.test(name) && ['register-name', 'Account names are 1–32 letters, digits, dots, dashes or underscores.'],
      new TextEncoder().encode(password).length < 8 && ['register-password', 'Choose a password of at least 8 characters.'],
      password !== passwordAgain && ['register-password-again', 'The two passwords are not the same.'],
      byId('register-invite').required && !invite && ['register-invite', 'Type the invite code the owner of this computer gave you.'],
    ].filter(Boolean);
    for (const id of ['register-name', 'register-password', 'register-password-again', 'register-invite']) {
      byId(id).removeAttribute('aria-invalid');
    }
    if (problems.length) {
      for (const [id] of problems) byId(id).setAttribute('aria-invalid', 'true');
      showMessage(problems.map(([, text]) => text).join(' '));
      byId(problems[0][0]).focus();
      return;
    }
    await submit('register-submit', async () => {
      const answer = await api.post('/accounts', invite ? { name, password, passwordAgain, invite } : { name, password, passwordAgain });
      byId('register-password').value = '';
      byId('register-password-again').value = '';
      byId('register-invite').value = '';
      setOriginToken(answer.originToken);
      setCsrfToken(answer.csrfToken);
      await onSignedIn();
    });
  });

  installPasswordReset(onSignedIn);
}

/** The reset form: the name, the owner's code and the new password twice, every problem at once. */
function installPasswordReset(onSignedIn) {
  const fields = ['reset-name', 'reset-code', 'reset-password', 'reset-password-again'];
  byId('reset-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const name = byId('reset-name').value.trim().toLowerCase();
    const code = byId('reset-code').value.trim();
    const newPassword = byId('reset-password').value;
    const newPasswordAgain = byId('reset-password-again').value;
    const problems = [
      !namePattern.test(name) && ['reset-name', 'Account names are 1–32 letters, digits, dots, dashes or underscores.'],
      !code && ['reset-code', 'Type the reset code the owner of this server gave you.'],
      new TextEncoder().encode(newPassword).length < 8 && ['reset-password', 'Choose a password of at least 8 characters.'],
      newPassword !== newPasswordAgain && ['reset-password-again', 'The two passwords are not the same.'],
    ].filter(Boolean);
    for (const id of fields) byId(id).removeAttribute('aria-invalid');
    if (problems.length) {
      for (const [id] of problems) byId(id).setAttribute('aria-invalid', 'true');
      showMessage(problems.map(([, text]) => text).join(' '));
      byId(problems[0][0]).focus();
      return;
    }
    await submit('reset-submit', async () => {
      const answer = await api.post('/account/password-reset', { name, code, newPassword, newPasswordAgain });
      for (const id of ['reset-code', 'reset-password', 'reset-password-again']) byId(id).value = '';
      setOriginToken(answer.originToken);
      setCsrfToken(answer.csrfToken);
      await onSignedIn();
    }, 'The account name or reset code is wrong, or the code was used or has expired: ask the owner for a new one.');
  });
}

async function submit(buttonID, work, wrong = 'The account name or password is wrong.') {
  const button = byId(buttonID);
  button.disabled = true;
  hideMessage();
  try {
    await work();
  } catch (error) {
    showMessage(describe(error, wrong));
  } finally {
    button.disabled = false;
  }
}

function describe(error, wrong) {
  if (!(error instanceof ApiError)) return error.message;
  switch (error.code) {
    case 'authFailed': return wrong;
    case 'throttled': return `Too many attempts. Try again in ${error.retryAfterSeconds ? waitText(error.retryAfterSeconds) : 'a few seconds'}.`;
    case 'nameTaken': case 'conflict': return error.message || 'That account name is taken.';
    default: return error.message;
  }
}

export function showForm(which) {
  for (const form of ['login', 'register', 'reset']) byId(`${form}-form`).hidden = which !== form;
  byId(`${which}-name`).focus();
  if (which === 'register') showInviteFieldWhereNeeded();
}

/**
 * Asks the server how one registers there: the invite field is shown, and required, only where
 * the owner's invite is needed. Should the server not say, the field stays, marked optional.
 */
async function showInviteFieldWhereNeeded() {
  let needsInvite;
  try {
    ({ needsInvite } = await api.get('/registration'));
  } catch {
    return;
  }
  for (const id of ['register-invite-label', 'register-invite', 'register-invite-help']) byId(id).hidden = !needsInvite;
  byId('register-invite-optional').hidden = needsInvite;
  byId('register-invite').required = needsInvite;
}
