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
      await adopt(answer, onSignedIn);
    });
  });

  byId('register-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const name = byId('register-name').value.trim().toLowerCase();
    const password = byId('register-password').value;
    const passwordAgain = byId('register-password-again').value;
    const invite = byId('register-invite').value.trim();
    if (problemsShown([
      ...choiceProblems('register', name, password, passwordAgain),
      ['register-invite', byId('register-invite').required && !invite && 'Type the invite code the owner of this computer gave you.'],
    ])) return;
    await submit('register-submit', async () => {
      const answer = await api.post('/accounts', invite ? { name, password, passwordAgain, invite } : { name, password, passwordAgain });
      byId('register-password').value = '';
      byId('register-password-again').value = '';
      byId('register-invite').value = '';
      await adopt(answer, onSignedIn);
    });
  });

  installPasswordReset(onSignedIn);
}

/** The reset form: the name, the owner's code and the new password twice, every problem at once. */
function installPasswordReset(onSignedIn) {
  byId('reset-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const name = byId('reset-name').value.trim().toLowerCase();
    const code = byId('reset-code').value.trim();
    const newPassword = byId('reset-password').value;
    const newPasswordAgain = byId('reset-password-again').value;
    const [nameProblem, ...passwordProblems] = choiceProblems('reset', name, newPassword, newPasswordAgain);
    if (problemsShown([
      nameProblem, ['reset-code', !code && 'Type the reset code the owner of this server gave you.'], ...passwordProblems,
    ])) return;
    await submit('reset-submit', async () => {
      const answer = await api.post('/account/password-reset', { name, code, newPassword, newPasswordAgain });
      for (const id of ['reset-code', 'reset-password', 'reset-password-again']) byId(id).value = '';
      await adopt(answer, onSignedIn);
    }, 'The account name or reset code is wrong, or the code was used or has expired: ask the owner for a new one.');
  });
}

/**
 * The rules of a name and a password chosen twice, for the form whose field ids start with
 * `form`: `[field id, problem or false]` for its name, password and password again.
 */
function choiceProblems(form, name, password, again) {
  return [
    [`${form}-name`, !namePattern.test(name) && 'Account names are 1–32 letters, digits, dots, dashes or underscores.'],
    [`${form}-password`, new TextEncoder().encode(password).length < 8 && 'Choose a password of at least 8 characters.'],
    [`${form}-password-again`, password !== again && 'The two passwords are not the same.'],
  ];
}

/**
 * Every problem at once, each field marked — not one per try. `checks` are `[field id, problem
 * or false]`, in the form's order. Returns whether any was found (and said).
 */
function problemsShown(checks) {
  for (const [id] of checks) byId(id).removeAttribute('aria-invalid');
  const problems = checks.filter(([, problem]) => problem);
  if (!problems.length) return false;
  for (const [id] of problems) byId(id).setAttribute('aria-invalid', 'true');
  showMessage(problems.map(([, problem]) => problem).join(' '));
  byId(problems[0][0]).focus();
  return true;
}

/** Keeps a signed-in answer's tokens (api.js), then goes on as signed in. */
async function adopt(answer, onSignedIn) {
  setOriginToken(answer.originToken);
  setCsrfToken(answer.csrfToken);
  await onSignedIn();
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
