// The signed-in app: folders | notes (pinned first) | editor, like iCloud Notes, plus the
// locked-note flows (lock, open, re-wrap) and the toolbar (search, Lock Now, passphrase
// settings, sign out).

import { api, ApiError, segment, setCsrfToken, setOriginToken } from './api.js';
import { byId, h, icon, replaceChildren, shortDate } from './dom.js';
import { busy, showError, showMessage } from './banner.js';
import { NoteEditor } from './editor.js';
import { lockableKinds, attachmentBytes } from './attachments.js';
import {
  asBytes, closeNote, forgetPassphraseKey, isOpen, lockNow, onLock, openNote, passphraseKey, passphraseProof, provedRequest,
  rememberOpenNote, wrappedKeyOf,
} from './secure-session.js';
import {
  newNoteKey, noteProof, openNoteText, rewrapNoteKey, sealAttachment, sealNoteText, unwrapNoteKey, WrongPassphraseError,
} from './locked-crypto.js';
import { currentPassphraseKey, loadPassphraseState, openPassphraseSettings } from './passphrase-ui.js';
import { checkStatusNow, startAutoLock, stopAutoLock } from './autolock.js';
import { startLiveUpdates } from './live-updates.js';
import { showAccountInitial } from './account-menu.js';
import { openPasswordChange } from './password-ui.js';
import { hasUnsent, installUnsentEdits, sendUnsent } from './unsent-edits.js';

const allNotes = 'all';
const sharedWithMe = 'shared';
const recentlyDeleted = 'deleted';
const dayMs = 86_400_000;

/**
 * For reads of one kind that may answer out of order: each call begins a read and returns a
 * check that stays true until the next read of that kind begins.
 */
function latestOnly() {
  let begun = 0;
  return () => {
    const read = ++begun;
    return () => read === begun;
  };
}

export class NotesApp {
  constructor({ onSignedOut }) {
    this.onSignedOut = onSignedOut;
    this.account = null;
    this.folders = [];
    this.notes = [];
    this.folder = allNotes;
    this.search = '';
    this.selectedID = null;
    this.passphraseState = null;
    this.editor = new NoteEditor(byId('editor'), this);
    this.listTimer = null;
    // Reads of the list or the folders may answer out of order (a search typed on, a save's
    // reload, live updates): only the last one asked is shown.
    this.listRead = latestOnly();
    this.foldersRead = latestOnly();
    this.wire();
    installUnsentEdits({ accountID: () => this.account?.id ?? null, onSent: () => this.listChanged() });
    this.saveWhenLeaving();
    onLock(() => this.afterLock());
  }

  /**
   * What is typed is sent before the page goes: hidden (a phone's app switch, which may end the
   * tab), reloaded or closed — in requests that outlive the page (js/api.js) — and coming back
   * online sends what waits. A page with an edit the server refused until now asks before it goes.
   */
  saveWhenLeaving() {
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'hidden') this.editor.flush();
    });
    window.addEventListener('pagehide', () => this.editor.flush());
    window.addEventListener('beforeunload', (event) => {
      this.editor.flush();
      if (hasUnsent() || this.editor.hasFailedSave()) event.preventDefault();
    });
    window.addEventListener('online', () => this.editor.flush());
  }

  wire() {
    byId('new-note').append(icon('plus'));
    byId('new-note').addEventListener('click', () => this.createNote());
    byId('empty-recently-deleted').addEventListener('click', () => this.emptyRecentlyDeleted());
    byId('back-to-folders').addEventListener('click', () => goUp('folders'));
    byId('back-to-list').addEventListener('click', () => {
      this.editor.flush();
      goUp('list');
    });
    // The browser's Back and Forward between the panes a phone showed (showPane).
    window.addEventListener('popstate', (event) => {
      const pane = event.state?.pane;
      if (!paneDepth.hasOwnProperty(pane) || document.body.dataset.screen !== 'app') return;
      if (pane !== 'note') this.editor.flush();
      document.body.dataset.pane = pane;
    });
    byId('lock-now').prepend(icon('lock'));
    byId('lock-now').addEventListener('click', () => {
      this.editor.flush();
      lockNow('lockNow');
      showMessage('Locked notes are hidden again and their keys forgotten.', 'info');
    });
    byId('sign-out').addEventListener('click', () => this.signOut());
    byId('passphrase-settings').addEventListener('click', () => this.passphraseSettings());
    byId('password-settings').addEventListener('click', () => openPasswordChange());
    let searchTimer = null;
    const searchChanged = () => {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(() => {
        this.search = byId('search').value.trim();
        this.loadNotes();
      }, 250);
    };
    byId('search').addEventListener('input', searchChanged);
    byId('search').addEventListener('search', searchChanged); // the field's own clear button
    // A link to one note followed while the app is open (the widget's row in this tab).
    window.addEventListener('hashchange', () => { if (this.account) this.openLinkedNote(); });
    byId('new-folder').addEventListener('click', () => {
      byId('new-folder-form').hidden = false;
      byId('new-folder-name').focus();
    });
    byId('new-folder-name').addEventListener('keydown', (event) => {
      if (event.key === 'Escape') byId('new-folder-form').hidden = true;
    });
    byId('new-folder-form').addEventListener('submit', (event) => {
      event.preventDefault();
      const name = byId('new-folder-name').value.trim();
      if (!name) return;
      busy(async () => {
        const folder = await api.post('/folders', { name });
        byId('new-folder-name').value = '';
        byId('new-folder-form').hidden = true;
        await this.loadFolders();
        if (folder?.id) this.selectFolder(folder.id);
      });
    });
  }

  /** Shows the app for `session` (`GET /api/session`). */
  async start(session) {
    this.account = session.account;
    byId('account-name').textContent = session.account.isLocal ? 'On My Computer' : session.account.name;
    // The local account signs in with the keybag's passcode: it has no password to change here.
    byId('password-settings').hidden = Boolean(session.account.isLocal);
    byId('account-name').title = `Signed in as ${session.account.name}`;
    showAccountInitial(byId('account-name').textContent);
    this.folder = allNotes;
    this.search = '';
    byId('search').value = '';
    this.selectedID = null;
    this.editor.showEmpty();
    showPane('list');
    startAutoLock(session.autoLock, { onStatus: (status) => this.showStatus(status) });
    this.stopLiveUpdates?.();
    let connectedBefore = false;
    this.stopLiveUpdates = startLiveUpdates({
      // After a reconnect, whatever was missed meanwhile.
      connected: () => {
        if (connectedBefore) this.reload();
        connectedBefore = true;
      },
      note: (event) => this.noteChangedElsewhere(event),
      folders: () => this.loadFolders(),
      lock: () => {
        if (!isOpen()) return;
        lockNow('elsewhere');
        showMessage('Locked notes were locked in another window.', 'info');
      },
      keybag: () => checkStatusNow(),
      // A server's instance may have missed events (its database connection was lost): read again.
      resync: () => this.reload(),
      signedOut: () => this.onSessionEnded?.(),
    });
    await Promise.all([this.loadFolders(), this.loadNotes(), this.loadPassphrase()]);
    // Edits the last session could not send — the same account's, signed in again — go now.
    sendUnsent();
    this.openLinkedNote();
  }

  /**
   * A link to one note (`/#note=ID`, the widget's rows): it opens once signed in — and, while
   * Tresor is locked since it started, once the owner has unlocked it.
   */
  async openLinkedNote() {
    const linked = /^#note=(.+)$/.exec(location.hash);
    if (linked) {
      history.replaceState(history.state, '', location.pathname + location.search);
      this.linkedNote = decodeURIComponent(linked[1]);
    }
    if (!this.linkedNote || this.waitingForContent) return;
    const id = this.linkedNote;
    this.linkedNote = null;
    if (!this.notes.some((note) => note.id === id)) {
      // Not in the list shown (another folder, a search): shown in All Notes when it is one of them.
      let summary = null;
      try { summary = (await api.get(`/notes/${segment(id)}`)).summary; } catch { /* not this account's */ }
      if (!summary || summary.deleted) {
        showMessage('That note is not among your notes: it may be in Recently Deleted, or no longer shared with you.', 'info');
        return;
      }
      this.folder = allNotes;
      this.search = '';
      byId('search').value = '';
      this.renderFolders();
      await this.loadNotes();
    }
    await this.select(id);
  }

  /**
   * A live update about note `id` (docs/WEB.md, "Live updates"): the list is read again, and
   * the open note takes the change in — merged with what is being typed, never replacing it.
   */
  async noteChangedElsewhere({ id, kind, revision }) {
    this.listChanged();
    if (['created', 'deleted', 'restored', 'deletedForGood'].includes(kind)) this.loadFolders();
    if (!id || id !== this.selectedID) return;
    const shown = this.editor.shown;
    if (kind === 'changed' && shown?.noteID === id) {
      if (revision && Number(revision) <= shown.revision()) return; // our own save
      try {
        const detail = await api.get(`/notes/${segment(id)}`);
        if (this.editor.shown !== shown || detail.summary.deleted) return this.showNote(id);
        let body = detail.body ?? '';
        if (shown.isLocked) {
          const opened = openNote(id);
          if (!opened?.noteKey || !detail.locked) return this.showNote(id);
          body = await openNoteText(opened.noteKey, {
            iv: asBytes(detail.locked.iv), tag: asBytes(detail.locked.tag), ciphertext: asBytes(detail.locked.ciphertext),
          }, detail.locked.bodyFormat);
        } else if (detail.summary.lock) {
          return this.showNote(id);
        }
        if (this.editor.shown === shown) shown.rebase({ revision: detail.summary.revision, title: detail.summary.title, body });
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) this.showNote(id);
      }
      return;
    }
    if (kind === 'changed' && !shown) {
      this.showNote(id); // a placeholder: its title may have changed
      return;
    }
    // Created or restored: this page did it, and shows it already.
    if (kind === 'created' || kind === 'restored') return;
    // Locked, unlocked, shared, unshared, deleted…: the note is shown afresh (a save waiting
    // for its pause goes first).
    this.editor.flush();
    await this.editor.saving;
    if (kind === 'deletedForGood' || kind === 'unshared') {
      try {
        await api.get(`/notes/${segment(id)}`);
      } catch {
        // What was typed and could no longer be saved is not dropped with the note: its writer
        // may keep it as a note of their own.
        const lost = shown?.noteID === id && !shown.isLocked && this.editor.hasFailedSave() ? shown.text() : null;
        closeNote(id);
        this.selectedID = null;
        this.editor.showEmpty(kind === 'unshared' ? 'This note is no longer shared with you.' : 'This note was deleted.');
        if (lost) this.offerLostEdit(lost, kind);
        return;
      }
    }
    await this.showNote(id);
  }

  async signOut() {
    this.editor.flush();
    await this.editor.saving;
    lockNow('signOut');
    stopAutoLock();
    try { await api.delete('/session'); } catch { /* signed out either way */ }
    this.stop();
    this.onSignedOut();
  }

  /** Forgets everything of the account (the session ended or was signed out). */
  stop() {
    this.stopLiveUpdates?.();
    this.stopLiveUpdates = null;
    stopAutoLock();
    lockNow('signOut');
    this.editor.showEmpty();
    this.account = null;
    this.waitingForContent = false;
    this.notes = [];
    this.folders = [];
    replaceChildren(byId('note-list'));
    replaceChildren(byId('folder-list'));
  }

  /**
   * The keybag banner (docs/WEB.md, "While Tresor is locked"): what each account can do. The
   * local account — the owner, whose password is the passcode — unlocks here; every other
   * account is told that the owner must unlock Tresor, and stays signed in meanwhile.
   */
  showStatus(status) {
    const banner = byId('keybag-banner');
    if (status.contentAvailable && this.waitingForContent) {
      // The list was refused while nothing could be read (locked since Tresor started): read it
      // now, and open a note a link named meanwhile.
      this.waitingForContent = false;
      this.reload().then(() => this.openLinkedNote());
    }
    if (status.keybag === 'unlocked' || (status.contentAvailable && status.keybag !== 'locked')) {
      banner.hidden = true;
      banner.dataset.state = 'unlocked';
      return;
    }
    if (banner.dataset.state === status.keybag && !banner.hidden) return; // keep a passcode being typed
    banner.dataset.state = status.keybag;
    if (status.keybag === 'notInitialized') {
      replaceChildren(banner, 'Tresor is not set up on this computer yet (run “tresor init”).');
    } else if (this.account?.isLocal) {
      const passcode = h('input', {
        id: 'keybag-passcode', type: 'password', autocomplete: 'current-password', 'aria-label': 'Passcode', placeholder: 'Passcode',
      });
      replaceChildren(banner,
        h('form', { class: 'keybag-unlock', 'data-testid': 'keybag-unlock', on: { submit: (event) => {
          event.preventDefault();
          busy(async () => {
            // Signing in as local with the passcode unlocks the keybag; the new session replaces this one.
            const answer = await api.post('/session', { name: 'local', password: passcode.value });
            passcode.value = '';
            setOriginToken(answer.originToken);
            setCsrfToken(answer.csrfToken);
            checkStatusNow();
            await this.reload();
          });
        } } },
        h('span', {}, 'Tresor is locked on this computer. Enter your passcode to unlock it.'),
        passcode,
        h('button', { id: 'keybag-unlock', class: 'button small primary', type: 'submit' }, 'Unlock')));
    } else {
      replaceChildren(banner, h('span', { 'data-testid': 'keybag-owner-must-unlock' },
        'Tresor is locked on this computer, so your notes cannot be read right now. Its owner must unlock it; you stay signed in and can go on once they have.'));
    }
    banner.hidden = false;
  }

  async loadPassphrase() {
    try {
      this.passphraseState = await loadPassphraseState();
    } catch (error) {
      this.passphraseState = null;
      if (!(error instanceof ApiError) || error.status !== 423) showError(error);
    }
    return this.passphraseState;
  }

  async loadFolders() {
    const isLatest = this.foldersRead();
    try {
      const folders = await api.get('/folders');
      if (!isLatest()) return;
      this.folders = Array.isArray(folders) ? folders : folders?.folders || [];
    } catch (error) {
      if (!isLatest()) return;
      if (!this.refusedWhileLocked(error)) showError(error);
    }
    this.renderFolders();
  }

  async loadNotes() {
    const query = { search: this.search || undefined };
    if (this.folder !== allNotes && this.folder !== sharedWithMe) query.folder = this.folder;
    const isLatest = this.listRead();
    try {
      if (this.folder === recentlyDeleted) {
        const { notes } = await api.get('/recently-deleted');
        if (!isLatest()) return;
        this.notes = notes;
        this.renderList();
        return;
      }
      const folder = this.folder;
      const { notes } = await api.get('/notes', { query });
      if (!isLatest()) return;
      this.notes = folder === sharedWithMe ? notes.filter((note) => note.owner) : notes;
      this.waitingForContent = false;
    } catch (error) {
      if (!isLatest()) return;
      if (!this.refusedWhileLocked(error)) showError(error);
      this.notes = [];
    }
    this.renderList();
  }

  /**
   * Whether `error` is the server saying nothing can be read until the owner unlocks Tresor
   * (423): the keybag banner says so already, and the list is read again once it can be.
   */
  refusedWhileLocked(error) {
    if (!(error instanceof ApiError) || error.status !== 423) return false;
    this.waitingForContent = true;
    checkStatusNow();
    return true;
  }

  /** Reloads the list soon (after an autosave: several saves in a row make one reload). */
  listChanged() {
    clearTimeout(this.listTimer);
    this.listTimer = setTimeout(() => this.loadNotes(), 300);
  }

  /** Reloads folders, list and the open note. */
  async reload() {
    await Promise.all([this.loadFolders(), this.loadNotes()]);
    if (this.selectedID) await this.showNote(this.selectedID);
  }

  renderFolders() {
    const list = byId('folder-list');
    const item = (key, label, iconName, count, extra = {}) => h('li', { class: 'folder-item' },
      h('button', {
        class: ['folder-button', this.folder === key && 'selected'], type: 'button', 'data-folder': key,
        'aria-current': this.folder === key ? 'true' : null, ...extra,
        on: { click: () => this.selectFolder(key) },
      }, icon(iconName), h('span', { class: 'folder-name' }, label), count === null ? null : h('span', { class: 'folder-count' }, String(count))));
    const rows = [
      h('li', { class: 'folder-section' }, this.account?.isLocal ? 'On My Computer' : 'Tresor'),
      item(allNotes, 'All Notes', 'notes', null, { id: 'folder-all' }),
      item(sharedWithMe, 'Shared with Me', 'shared', null, { id: 'folder-shared', 'data-testid': 'shared-with-me-folder' }),
      item(recentlyDeleted, 'Recently Deleted', 'trash', null, { id: 'folder-recently-deleted', 'data-testid': 'recently-deleted-folder' }),
    ];
    if (this.folders.length) rows.push(h('li', { class: 'folder-section' }, 'Folders'));
    for (const folder of this.folders) {
      const row = item(folder.id, folder.name, 'folder', folder.noteCount, { 'data-testid': 'folder' });
      row.append(h('button', {
        class: 'icon-button folder-delete', type: 'button', 'data-testid': 'delete-folder', 'data-folder': folder.id,
        'aria-label': `Delete folder ${folder.name}`, title: 'Delete folder (its notes stay in Notes)',
        on: { click: () => busy(async () => {
          // Its notes stay (in Notes), but where they were is gone: asked first, as Apple Notes asks.
          const notes = folder.noteCount === 1 ? 'its note stays' : `its ${folder.noteCount} notes stay`;
          if (folder.noteCount > 0 && !window.confirm(`Delete the folder “${folder.name}”? ${notes[0].toUpperCase()}${notes.slice(1)}, in Notes.`)) return;
          await api.delete(`/folders/${segment(folder.id)}`);
          if (this.folder === folder.id) this.folder = allNotes;
          await this.reload();
        }) },
      }, icon('trash')));
      rows.push(row);
    }
    replaceChildren(list, rows);
  }

  selectFolder(key) {
    this.folder = key;
    showPane('list');
    if (key === recentlyDeleted && this.search) {
      this.search = '';
      byId('search').value = '';
    }
    this.renderFolders();
    this.loadNotes();
  }

  listTitle() {
    if (this.search) return `Results for “${this.search}”`;
    if (this.folder === allNotes) return 'All Notes';
    if (this.folder === sharedWithMe) return 'Shared with Me';
    if (this.folder === recentlyDeleted) return 'Recently Deleted';
    return this.folders.find((folder) => folder.id === this.folder)?.name || 'Notes';
  }

  renderList() {
    byId('list-title').textContent = this.listTitle();
    byId('empty-recently-deleted').hidden = this.folder !== recentlyDeleted || !this.notes.length;
    byId('new-note').hidden = this.folder === recentlyDeleted || Boolean(this.waitingForContent);
    byId('new-folder').hidden = Boolean(this.waitingForContent);
    const list = byId('note-list');
    const sorted = [...this.notes].sort((a, b) => (b.isPinned - a.isPinned) || (new Date(b.modified) - new Date(a.modified)));
    if (!sorted.length) {
      const message = this.waitingForContent ? 'Your notes appear here once Tresor is unlocked on this computer.'
        : this.search ? 'No notes match your search.'
        : this.folder === sharedWithMe ? 'Notes other people share with you appear here.'
          : this.folder === recentlyDeleted ? 'Deleted notes stay here for 30 days.'
            : 'No notes yet. Write one with +.';
      replaceChildren(list, h('li', { class: 'list-empty', 'data-testid': 'note-list-empty' }, message));
      return;
    }
    const rows = [];
    const pinned = sorted.filter((note) => note.isPinned);
    if (pinned.length) rows.push(h('li', { class: 'list-section' }, 'Pinned'));
    pinned.forEach((note) => rows.push(this.noteRow(note)));
    const others = sorted.filter((note) => !note.isPinned);
    if (pinned.length && others.length) rows.push(h('li', { class: 'list-section' }, 'Notes'));
    others.forEach((note) => rows.push(this.noteRow(note)));
    replaceChildren(list, rows);
  }

  noteRow(note) {
    // Like Notes: the first line after the title (a locked note shows none).
    const detailText = note.deleted ? daysLeft(note.deleted)
      : note.lock ? 'Locked' : note.preview || (note.owner ? `Shared by ${note.owner}` : 'No additional text');
    return h('li', {
      class: ['note-item', note.id === this.selectedID && 'selected'], 'data-testid': 'note-item', 'data-note-id': note.id,
      'data-pinned': String(Boolean(note.isPinned)), 'data-locked': String(Boolean(note.lock)), 'data-shared': String(Boolean(note.isShared)),
    },
    h('button', { class: 'note-button', type: 'button', 'aria-current': note.id === this.selectedID ? 'true' : null, on: { click: () => this.select(note.id) } },
      h('span', { class: 'note-item-title', 'data-testid': 'note-title' },
        note.isPinned ? icon('pin') : null, note.lock ? icon('lock') : null, note.isShared ? icon('shared') : null,
        h('span', { class: 'note-item-text' }, note.title)),
      h('span', { class: 'note-item-detail' },
        h('span', { class: 'note-item-date' }, shortDate(note.modified)),
        h('span', { class: 'note-item-sub' }, detailText),
        note.attachmentCount ? h('span', { class: 'note-item-attachments' }, icon('paperclip'), String(note.attachmentCount)) : null)));
  }

  async select(id) {
    this.editor.flush();
    // The note shown before lets go of its key and blob: URLs (the passphrase key stays, so it
    // opens again without asking while the session lasts).
    if (this.selectedID && this.selectedID !== id) closeNote(this.selectedID);
    this.selectedID = id;
    showPane('note');
    this.renderList();
    await this.showNote(id);
    // A locked note chosen on purpose: the passphrase is what comes next (on a phone, its keyboard).
    const passphraseField = byId('passphrase-input');
    if (this.selectedID === id && passphraseField && !passphraseField.disabled && !passphraseField.closest('dialog')) passphraseField.focus();
  }

  /** Shows note `id` in the editor: opened with the session's key when it is locked and the key is here. */
  async showNote(id) {
    let detail;
    try {
      detail = await api.get(`/notes/${segment(id)}`);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        this.selectedID = null;
        this.editor.showEmpty('This note is no longer here.');
        this.loadNotes();
      } else {
        showError(error);
      }
      return;
    }
    if (this.selectedID !== id) return; // another note was chosen meanwhile
    if (detail.summary.deleted) {
      closeNote(id);
      this.editor.showDeleted(detail, daysLeft(detail.summary.deleted));
      return;
    }
    if (!detail.summary.lock) {
      closeNote(id);
      this.editor.show(detail);
      return;
    }
    const locked = detail.locked;
    const key = passphraseKey(locked.passphraseID);
    if (!key) {
      closeNote(id);
      this.editor.showPlaceholder(detail);
      return;
    }
    await this.openedLocked(detail, key);
  }

  /** Opens locked note `detail` with passphrase key `key` (just typed or from the session). */
  async openedLocked(detail, key) {
    const { summary, locked } = detail;
    try {
      let opened = openNote(summary.id);
      if (!opened?.noteKey) {
        // The wrapped key comes only for the passphrase's proof (docs/SECURITY.md); the note
        // proof made from it is what a save presents.
        const wrappedKey = await wrappedKeyOf(summary.id, locked);
        opened = { noteKey: await unwrapNoteKey(wrappedKey, key), noteProof: await noteProof(wrappedKey, key) };
      }
      const text = await openNoteText(opened.noteKey, {
        iv: asBytes(locked.iv), tag: asBytes(locked.tag), ciphertext: asBytes(locked.ciphertext),
      }, locked.bodyFormat);
      if (this.selectedID !== summary.id || !passphraseKey(locked.passphraseID)) return; // moved on, or locked meanwhile
      rememberOpenNote(summary.id, { noteKey: opened.noteKey, noteProof: opened.noteProof });
      this.editor.show(detail, { text });
    } catch (error) {
      if (error instanceof WrongPassphraseError) {
        // The passphrase changed elsewhere since it was entered here: ask again.
        forgetPassphraseKey(locked.passphraseID);
        this.editor.showPlaceholder(detail);
      } else {
        showError(error);
        this.editor.showPlaceholder(detail);
      }
    }
  }

  /** After Lock Now / auto-lock: the open locked note becomes a placeholder again. */
  afterLock() {
    if (!this.selectedID) return;
    const note = this.notes.find((candidate) => candidate.id === this.selectedID);
    if (note?.lock || byId('note-body')?.closest('[data-testid=open-locked-note]')) {
      // Remove the text from the page at once, then show the placeholder.
      this.editor.showEmpty('Locked.');
      this.showNote(this.selectedID);
    }
  }

  /** Offers to keep `lost` ({title, body}), typed in a note that went away, as a new note. */
  offerLostEdit(lost, kind) {
    const why = kind === 'unshared' ? 'the note is no longer shared with you' : 'the note was deleted';
    showMessage(`Your last edit of “${lost.title}” could not be saved: ${why}.`, 'error', { action: { label: 'Keep as My Note', run: async () => {
      const summary = await busy(() => api.post('/notes', { title: lost.title || 'Untitled', body: lost.body }));
      if (!summary) return;
      await this.loadNotes();
      await this.select(summary.id);
    } }, stays: true });
  }

  async createNote() {
    this.editor.flush();
    await busy(async () => {
      const body = { title: '', body: '' };
      if (this.folder !== allNotes && this.folder !== sharedWithMe) body.folderID = this.folder;
      const summary = await api.post('/notes', body);
      if (this.search) {
        this.search = '';
        byId('search').value = '';
      }
      if (this.folder === sharedWithMe) this.folder = allNotes;
      this.selectedID = summary.id;
      showPane('note');
      await Promise.all([this.loadNotes(), this.loadFolders()]);
      await this.showNote(summary.id);
      byId('note-title')?.focus();
    });
  }

  async noteDeleted(id) {
    closeNote(id);
    if (this.selectedID === id) {
      this.selectedID = null;
      this.editor.showEmpty();
      goUp('list');
    }
    await Promise.all([this.loadNotes(), this.loadFolders()]);
  }

  /** Restores a note from Recently Deleted and shows it where it lives again. */
  async restoreNote(id) {
    await busy(async () => {
      await api.post(`/notes/${segment(id)}/restore`);
      showMessage('Restored.', 'info');
      this.folder = allNotes;
      this.renderFolders();
      await Promise.all([this.loadNotes(), this.loadFolders()]);
      await this.select(id);
    });
  }

  /** Deletes a note in Recently Deleted for good (after asking). */
  async deleteForGood(id) {
    if (!window.confirm('Delete this note for good? This cannot be undone.')) return;
    await busy(async () => {
      await api.delete(`/recently-deleted/${segment(id)}`);
      await this.noteDeleted(id);
    });
  }

  async emptyRecentlyDeleted() {
    if (!window.confirm('Delete every note in Recently Deleted for good? This cannot be undone.')) return;
    await busy(async () => {
      await api.delete('/recently-deleted');
      this.selectedID = null;
      this.editor.showEmpty();
      await this.loadNotes();
    });
  }

  async passphraseSettings() {
    const state = await busy(() => loadPassphraseState());
    if (!state) return;
    this.passphraseState = state;
    openPassphraseSettings(state, { onChanged: () => this.afterPassphraseChange() });
  }

  async afterPassphraseChange() {
    await this.loadPassphrase();
    await this.reload();
  }

  /**
   * Locks `summary` in this browser: a new note key wrapped under the current passphrase, the
   * body and the attachments sealed and checked to open, then `POST /lock` with ciphertext only.
   */
  async lockNote(summary, blockedReason) {
    if (blockedReason) {
      showMessage(blockedReason);
      return;
    }
    const state = await busy(() => loadPassphraseState());
    if (!state) return;
    this.passphraseState = state;
    if (!state.isSet) {
      openPassphraseSettings(state, {
        onChanged: async () => {
          await this.afterPassphraseChange();
          await this.lockNote(summary);
        },
      });
      return;
    }
    const key = await currentPassphraseKey(state, 'Enter your passphrase to lock this note.');
    if (!key) return;
    await busy(async () => {
      await this.editor.saving;
      const detail = await api.get(`/notes/${segment(summary.id)}`);
      const notLockable = (detail.attachments || []).filter((attachment) => !lockableKinds.has(attachment.kind));
      if (notLockable.length) {
        throw new Error(`This note cannot be locked: ${notLockable.map((a) => `“${a.name}” is a ${a.kind} attachment`).join(', ')}. Remove it first.`);
      }
      const { noteKey, wrappedKey, noteProof: proofOfNote, noteProofHash } = await newNoteKey(key);
      const sealed = await sealNoteText(noteKey, detail.body ?? '');
      const attachments = [];
      for (const attachment of detail.attachments || []) {
        const bytes = await attachmentBytes(summary.id, attachment, null);
        attachments.push({ id: attachment.id, chunks: await sealAttachment(noteKey, attachment.id, bytes) });
        bytes.fill(0);
      }
      await provedRequest('POST', `/notes/${segment(summary.id)}/lock`, {
        passphraseProof: passphraseProof(state.current.id), wrappedKey, noteProofHash,
        iv: sealed.iv, tag: sealed.tag, ciphertext: sealed.ciphertext, attachments,
      });
      rememberOpenNote(summary.id, { noteKey, noteProof: proofOfNote });
      showMessage('Note locked. It stays open here until you use Lock Now.', 'info');
      await this.reload();
    });
  }

  /** Re-wraps an open note of an earlier passphrase under the current one. */
  async rewrap(detail) {
    const state = await busy(() => loadPassphraseState());
    if (!state?.current) return;
    this.passphraseState = state;
    const { summary, locked } = detail;
    const fromKey = passphraseKey(locked.passphraseID);
    if (!fromKey) {
      showMessage('Open the note again first.');
      return;
    }
    const toKey = await currentPassphraseKey(state, 'Enter your current passphrase to re-lock this note with it.');
    if (!toKey) return;
    await busy(async () => {
      const fresh = await api.get(`/notes/${segment(summary.id)}`);
      const oldWrapped = await wrappedKeyOf(summary.id, fresh.locked);
      const wrappedKey = await rewrapNoteKey(oldWrapped, fromKey, toKey);
      // Check the new wrapping opens the same note before sending it.
      const noteKey = await unwrapNoteKey(wrappedKey, toKey);
      await openNoteText(noteKey, {
        iv: asBytes(fresh.locked.iv), tag: asBytes(fresh.locked.tag), ciphertext: asBytes(fresh.locked.ciphertext),
      }, fresh.locked.bodyFormat);
      await provedRequest('POST', `/notes/${segment(summary.id)}/rewrap`, {
        passphraseProof: passphraseProof(state.current.id), wrappedKey, noteProof: await noteProof(oldWrapped, fromKey),
        earlierPassphraseProof: passphraseProof(locked.passphraseID) || undefined,
      });
      showMessage('The note now opens with your current passphrase.', 'info');
      await this.reload();
    });
  }
}

/** "29 days left" for a note deleted at `deleted` (ISO 8601). */
function daysLeft(deleted) {
  const left = Math.max(0, Math.ceil((new Date(deleted).getTime() + 30 * dayMs - Date.now()) / dayMs));
  return left === 1 ? '1 day left' : `${left} days left`;
}

/** On a phone, which pane shows (folders, list or note); wider screens show all three. */
/** How far down each pane a phone shows one at a time is: Back goes up one (docs/WEB.md, "Phones"). */
const paneDepth = { folders: 0, list: 1, note: 2 };
/** The widths at which one pane shows at a time (css/small-screens.css). */
const onePaneAtATime = window.matchMedia('(max-width: 700px)');

/**
 * Shows `pane` on a phone. Going down a pane is a step of the browser's history, so that its
 * Back — Android's too — goes up one instead of leaving the app.
 */
function showPane(pane) {
  const current = document.body.dataset.pane;
  document.body.dataset.pane = pane;
  if (onePaneAtATime.matches && current && paneDepth[pane] > paneDepth[current]) {
    history.replaceState({ ...history.state, pane: current }, '');
    history.pushState({ pane, pushed: true }, '');
  }
}

/** Goes up to `pane`: back through the history step that came down, where there is one. */
function goUp(pane) {
  const step = history.state;
  if (step?.pushed && step.pane === document.body.dataset.pane && paneDepth[pane] < paneDepth[step.pane]) {
    history.back();
  } else {
    showPane(pane);
  }
}
