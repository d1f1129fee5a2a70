// Tresor Notes — the web client (docs/WEB.md). Plain ES modules, no build step.
//
// Stable hooks for the browser tests (ids unless marked [data-testid=…]):
//   banner ........ #error (#error-message, #error-dismiss), #loading, #keybag-banner
//   sign in ....... #auth-screen, #login-form, #login-name, #login-password, #login-submit, #show-register
//   register ...... #register-form, #register-name, #register-password, #register-password-again,
//                   #register-submit, #show-login
//   toolbar ....... #app-screen, #search, #lock-now, #passphrase-settings, #password-settings, #account-name,
//                   #sign-out (on a phone the last four behind #account-menu-button, in #account-menu)
//   folders ....... #folder-list, #folder-all, #folder-shared, [data-testid=folder][data-folder=ID],
//                   [data-testid=delete-folder], #new-folder, #new-folder-form, #new-folder-name
//   notes list .... #note-list, #list-title, #new-note, [data-testid=note-item][data-note-id=ID]
//                   (data-pinned, data-locked, data-shared), [data-testid=note-title],
//                   [data-testid=note-list-empty]
//   editor ........ #editor, [data-testid=editor-empty], #note-title, #note-body,
//                   #save-status (data-state = dirty|saving|saved|error), #note-meta, #pin-note,
//                   #note-folder, #attach-file (input type=file), #lock-note, #delete-note,
//                   [data-testid=note-sheet] / [data-testid=open-locked-note],
//                   [data-testid=locked-open], [data-testid=shared-with-me]
//   attachments ... #attachment-list, [data-testid=attachment], [data-testid=attachment-image] (img, blob: URL),
//                   [data-testid=attachment-name], [data-testid=attachment-download], [data-testid=remove-attachment]
//   sharing ....... #share-panel, #share-name, #share-button, #participant-list,
//                   [data-testid=participant][data-name=NAME], [data-testid=remove-participant]
//   locked notes .. [data-testid=locked-placeholder] (data-note-id), [data-testid=placeholder-title],
//                   #passphrase-input, #passphrase-submit, #passphrase-message, #passphrase-hint,
//                   [data-testid=earlier-passphrase], [data-testid=rewrap-offer], #rewrap-note,
//                   #passphrase-dialog (#passphrase-cancel) when a passphrase is needed to lock/re-wrap
//   passphrase .... #passphrase-settings-dialog, #passphrase-set-form, #passphrase-change-form,
//   settings        #passphrase-reset-form, #passphrase-mode-change, #passphrase-mode-reset,
//                   #current-passphrase, #account-password, #new-passphrase, #new-passphrase-again,
//                   #new-passphrase-hint, #passphrase-save, #passphrase-settings-message
//   password ...... #password-settings (hidden for the local account), #password-change-dialog,
//                   #password-change-form, #current-password, #new-password, #new-password-again,
//                   #password-save, #password-change-message
//   revisions ..... a save's outcome shows in #save-status; a conflict copy is named in the banner
//   recently del. . #folder-recently-deleted, #empty-recently-deleted, [data-testid=deleted-note],
//                   [data-testid=deleted-note-sheet], #deleted-body, #restore-note, #delete-for-good,
//                   [data-testid=undo] (the banner's Undo after a delete, move or unshare)
//   formatting .... #note-body (contenteditable; its `value` is the Markdown), [data-block=…]
//                   lines, [data-testid=format-bar], #format-bold, #format-check, … (js/rich-editor.js)
//   phones ........ body[data-pane=folders|list|note], #back-to-folders, #back-to-list
//   keybag locked . #keybag-banner: [data-testid=keybag-unlock] (#keybag-passcode, #keybag-unlock)
//                   for the local account, [data-testid=keybag-owner-must-unlock] for others
//   widget page ... see js/widget.js

import { api, ApiError, hasOriginToken, onUnauthorized, setCsrfToken, setOriginToken } from './api.js';
import { byId } from './dom.js';
import { installBanner, showError, showMessage } from './banner.js';
import { installAuth, showForm } from './auth.js';
import { installAccountMenu } from './account-menu.js';
import { NotesApp } from './notes-app.js';

let notesApp = null;

function showScreen(which) {
  byId('boot').hidden = true;
  byId('auth-screen').hidden = which !== 'auth';
  byId('app-screen').hidden = which !== 'app';
  document.body.dataset.screen = which;
}

function showSignIn() {
  setCsrfToken(null);
  setOriginToken(null);
  showScreen('auth');
  showForm('login');
}

/**
 * Loads the session (account, CSRF token, auto-lock settings) and shows the app. Without an
 * origin token of its own the page is signed out, whatever cookie the browser holds: a cookie
 * another port of 127.0.0.1 planted must not sign this page into the planter's account.
 */
async function enterApp() {
  if (!hasOriginToken()) throw new ApiError(401, { code: 'unauthorized', message: 'Sign in first.' });
  const session = await api.get('/session', { quietUnauthorized: true });
  setCsrfToken(session.csrfToken);
  showScreen('app');
  await notesApp.start(session);
}

async function boot() {
  installBanner();
  installAccountMenu();
  notesApp = new NotesApp({ onSignedOut: showSignIn });
  installAuth({ onSignedIn: enterApp });
  const sessionEnded = () => {
    if (document.body.dataset.screen !== 'app') return;
    const wasLocal = notesApp.account?.isLocal;
    notesApp.stop();
    showSignIn();
    // The local account's sessions end when Tresor locks (docs/WEB.md, "Sessions end").
    showMessage(wasLocal
      ? 'Tresor was locked or your session ended. Sign in as “local” with your passcode to unlock it.'
      : 'Your session ended. Please sign in again.');
  };
  onUnauthorized(sessionEnded);
  notesApp.onSessionEnded = sessionEnded;
  try {
    await enterApp();
  } catch (error) {
    showSignIn();
    if (!(error instanceof ApiError && error.status === 401)) showError(error);
  }
}

boot();
