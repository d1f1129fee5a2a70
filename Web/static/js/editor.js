// The editor pane (#editor): one note at a time — an unlocked note, an open locked note (its
// body re-sealed in this browser on every save), or the placeholder of a locked note
// ([data-testid=locked-placeholder]) asking for the passphrase. Edits save themselves after a
// short pause. The whole pane is rebuilt on every change of note or lock state, so nothing of a
// locked note's text stays in the page once it is locked again.

import { api, segment } from './api.js';
import { h, icon, longDate, replaceChildren } from './dom.js';
import { openNote, passphraseProof } from './secure-session.js';
import { attachmentSection, lockableKinds, uploadFiles } from './attachments.js';
import { sharePanel } from './sharing.js';
import { busy, offerUndo, showError, showMessage } from './banner.js';
import { merge, mergeValue } from './merge.js';
import { saveLockedBody, saveUnlocked } from './note-sync.js';
import { createRichEditor, formatBar } from './rich-editor.js';
import { earlierPassphraseText, passphraseForm } from './passphrase-ui.js';
import { keepUnsent, passes, takeUnsent } from './unsent-edits.js';

const saveDelayMs = 600;
/** How long a save refused by a full or read-only disk waits before it is tried again. */
const diskRetryMs = 15000;
/** How long a save that failed for another passing reason (offline, the server down) waits. */
const retryMs = 3000;

export class NoteEditor {
  /**
   * `app` gives: account, folders, passphraseState, and the actions listChanged(),
   * noteDeleted(id), lockNote(summary), openedLocked(detail, key), rewrap(detail), reload().
   */
  constructor(container, app) {
    this.container = container;
    this.app = app;
    this.noteID = null;
    this.pending = null; // the save waiting for its pause: { timer, run }
    this.saving = Promise.resolve();
    this.objectURLs = new Set(); // blob: URLs of an unlocked note's attachments
  }

  /** Nothing selected: an empty state. */
  showEmpty(message = 'Select a note, or create one.') {
    this.flush();
    this.reset(null);
    replaceChildren(this.container, h('div', { class: 'empty-state', 'data-testid': 'editor-empty' },
      icon('notes'), h('p', {}, message)));
  }

  /** Drops everything of the note shown before (its object URLs, its pending save). */
  reset(noteID) {
    for (const url of this.objectURLs) URL.revokeObjectURL(url);
    this.objectURLs.clear();
    this.noteID = noteID;
    this.shown = null;
    this.placeholder = null;
  }

  /** Saves now whatever is waiting for its pause (before switching notes, locking, signing out). */
  flush() {
    if (!this.pending) return;
    const { timer, run } = this.pending;
    clearTimeout(timer);
    this.pending = null;
    run();
  }

  /** Whether the shown note's last save failed (its edit is still only in the page). */
  hasFailedSave() {
    return this.container.querySelector('#save-status')?.dataset.state === 'error';
  }

  /** Drops a waiting save without running it (after the note was deleted). */
  discard() {
    if (this.pending) clearTimeout(this.pending.timer);
    this.pending = null;
  }

  /**
   * A note in Recently Deleted: read only, with Restore and Delete for Good. A locked one
   * shows its title only (it opens once restored).
   */
  showDeleted(detail, remaining) {
    this.flush();
    this.reset(detail.summary.id);
    const { summary } = detail;
    replaceChildren(this.container,
      h('div', { class: 'editor-toolbar' },
        this.metaLine(summary),
        h('div', { class: 'toolbar-spacer' }),
        h('button', {
          id: 'restore-note', class: 'button', type: 'button', 'data-testid': 'restore-note',
          on: { click: () => this.app.restoreNote(summary.id) },
        }, 'Restore'),
        h('button', {
          id: 'delete-for-good', class: 'button danger', type: 'button', 'data-testid': 'delete-for-good',
          on: { click: () => this.app.deleteForGood(summary.id) },
        }, 'Delete for Good')),
      h('div', { class: 'note-banner', 'data-testid': 'deleted-note' }, icon('trash'),
        h('span', {}, `In Recently Deleted: ${remaining}, then it is deleted for good. Restore it to edit it.`)),
      h('article', { class: 'note-sheet deleted', 'data-note-id': summary.id, 'data-testid': 'deleted-note-sheet' },
        h('p', { class: 'note-date' }, longDate(summary.modified)),
        h('h1', { class: 'placeholder-note-title' }, summary.title),
        summary.lock
          ? h('p', { class: 'locked-deleted' }, icon('lock'), ' Locked. Restore it to open it with its passphrase.')
          : readOnlyBody(detail.body ?? '')));
  }

  /** A locked note that is not open: its title, why it is locked, and the passphrase form. */
  showPlaceholder(detail) {
    const previous = this.placeholder;
    this.flush();
    this.reset(detail.summary.id);
    const { summary, locked } = detail;
    const lock = summary.lock || {};
    const earlier = earlierPassphraseText(lock);
    const passphrase = {
      passphraseID: locked.passphraseID, salt: locked.salt, iterations: locked.iterations, wrappedKey: locked.wrappedKey,
      hasProof: locked.hasProof,
    };
    // The same note's placeholder shown again — its row chosen again while the last showing was
    // still loading (after Lock Now), a live update about the note (its title may have changed) —
    // keeps its passphrase form while it asks for the same passphrase: what is being typed, a
    // check under way and a wait after wrong entries are not wiped. The form opens the note as it
    // is now.
    const formKey = JSON.stringify([summary.id, earlier, passphrase]);
    const kept = previous?.formKey === formKey && previous.form.isConnected ? previous.form : null;
    const hadFocus = Boolean(kept?.contains(document.activeElement));
    const form = kept || passphraseForm({
      title: 'This note is locked.',
      message: earlier || 'Enter the passphrase to view this note.',
      passphrase,
      onOpened: (key) => {
        const current = this.placeholder?.detail;
        return this.app.openedLocked(current?.summary.id === summary.id ? current : detail, key);
      },
    });
    this.placeholder = { formKey, form, detail };
    replaceChildren(this.container,
      h('div', { class: 'editor-toolbar' }, this.metaLine(summary), h('div', { class: 'toolbar-spacer' }), this.deleteButton(summary)),
      h('div', { class: 'locked-placeholder', 'data-testid': 'locked-placeholder', 'data-note-id': summary.id },
        h('h1', { class: 'placeholder-note-title', 'data-testid': 'placeholder-title' }, summary.title),
        form));
    if (hadFocus) form.querySelector('#passphrase-input')?.focus();
  }

  /**
   * A note with its text: `detail` from `GET /notes/{id}`; for an open locked note `text` is
   * its opened body (the key stays in secure-session).
   */
  show(detail, { text = null } = {}) {
    this.flush();
    this.reset(detail.summary.id);
    const { summary } = detail;
    const isLocked = Boolean(summary.lock);
    const isOwner = !summary.owner;
    const noteID = summary.id;

    const status = h('span', { id: 'save-status', class: 'save-status', 'data-testid': 'save-status', 'data-state': 'saved', role: 'status' }, '');
    const title = h('input', {
      id: 'note-title', class: 'note-title', value: summary.title, maxlength: '4096', autocomplete: 'off', 'aria-label': 'Title', dir: 'auto',
      placeholder: 'Title',
    });
    // The body shows its Markdown formatted (js/rich-editor.js); its `value` is the Markdown.
    const body = createRichEditor({ id: 'note-body', label: 'Note', placeholder: 'Start writing…', onInput: () => edited() });
    body.value = isLocked ? text ?? '' : detail.body ?? '';
    // What the server had when this text was loaded: every save names it (docs/WEB.md, "Revisions").
    let base = { revision: summary.revision, title: summary.title, body: body.value };
    // An edit of this note not sent yet (js/unsent-edits.js) is shown, and sent from its own base.
    const unsent = isLocked ? null : takeUnsent(noteID, this.app.account?.id);
    if (unsent) {
      if (unsent.edit.title !== undefined) title.value = unsent.edit.title;
      if (unsent.edit.body !== undefined) body.value = unsent.edit.body;
      base = { ...unsent.from };
    }

    const setStatus = (state, label) => {
      status.dataset.state = state;
      status.textContent = label;
      status.title = label; // the whole text where a phone's row cuts it
    };
    /**
     * The server now has `server` ({revision, title, body}); the page's text was made from
     * `base`. Text nobody typed into since is replaced; typed text is merged with it (and saved);
     * when both changed the same lines the text stays and `base` too, so the next save makes a
     * conflict copy rather than overwrite.
     */
    const rebase = (server) => {
      if (server.revision === base.revision && server.body === base.body && server.title === base.title) return;
      // An older version than the one taken in (a live update's fetch that finished late) is
      // already part of it. (Revision 0: none is known since a clash.)
      if (base.revision && server.revision < base.revision) return;
      const typedBody = body.value !== base.body;
      const typedTitle = title.value.trim() !== base.title && title.value.trim() !== '';
      let clash = false;
      if (!typedBody) {
        replaceText(body, server.body);
      } else {
        const result = merge(base.body, server.body, body.value);
        if (result.conflict) clash = true;
        else replaceText(body, result.merged);
      }
      if (!typedTitle) {
        title.value = server.title;
      } else {
        const merged = mergeValue(base.title, server.title, title.value.trim());
        if (merged === null) clash = true;
        else title.value = merged;
      }
      if (clash) {
        base = { ...base, revision: 0 }; // no stored revision: the next save is merged by the server, or copied
      } else {
        base = { ...server };
      }
      if (body.value !== base.body || (title.value.trim() && title.value.trim() !== base.title)) edited();
    };
    const save = () => {
      // Read the values and the note key now: a Lock Now right after must not lose the edit,
      // and must not leave a key behind for a later save.
      const newTitle = title.value.trim();
      const titleChanged = Boolean(newTitle) && newTitle !== base.title;
      const newBody = body.value;
      const bodyChanged = newBody !== base.body;
      const noteKey = isLocked ? openNote(noteID)?.noteKey : null;
      // The proofs the server asks for, copied now: Lock Now clears the session's own.
      const noteProof = isLocked ? openNote(noteID)?.noteProof?.slice() : null;
      const notePassphraseProof = isLocked ? passphraseProof(detail.locked.passphraseID) : null;
      if (notePassphraseProof) notePassphraseProof.proof = notePassphraseProof.proof.slice();
      if (!titleChanged && !bodyChanged) {
        setStatus('saved', 'Saved');
        return;
      }
      if (isLocked && bodyChanged && !noteKey) {
        setStatus('error', 'Not saved: the note was locked');
        return;
      }
      setStatus('saving', 'Saving…');
      const accountID = this.app.account?.id;
      this.saving = this.saving.then(async () => {
        const from = { ...base };
        const edit = {};
        if (titleChanged) edit.title = newTitle;
        if (bodyChanged) edit.body = newBody;
        try {
          let result;
          if (isLocked) {
            let server = from;
            if (titleChanged) {
              server = (await saveUnlocked(noteID, { revision: from.revision, title: from.title }, { title: newTitle })).server;
              server = { ...server, body: from.body };
            }
            result = bodyChanged
              ? await saveLockedBody(noteID, { ...from, revision: server.revision }, newBody, { noteKey, noteProof, passphraseProof: notePassphraseProof })
              : { server, conflictCopy: null };
          } else {
            result = await saveUnlocked(noteID, from, edit);
          }
          if (!status.isConnected) return;
          // A newer version taken in by a live update while this save was on its way was made
          // after it, so holds it already: the page stays at that version.
          const overtaken = base.revision > result.server.revision;
          if (result.conflictCopy) {
            // This edit is whole in the copy; the note shows what the other person saved.
            if (!overtaken) {
              base = { ...result.server };
              replaceText(body, result.server.body);
              title.value = result.server.title;
            }
            showMessage(`Someone changed the same lines meanwhile. Your version is kept as “${result.conflictCopy.title}”.`, 'info');
          } else if (!overtaken) {
            // As if the server had what was sent; then what it has more (a merge) comes in.
            base = { revision: result.server.revision, title: titleChanged ? newTitle : from.title, body: newBody };
            rebase(result.server);
          }
          setStatus(this.pending ? 'dirty' : 'saved', this.pending ? 'Editing…' : 'Saved');
          this.app.listChanged();
        } catch (error) {
          const again = passes(error);
          if (!status.isConnected) {
            // The note was left, or the session ended, while this save failed: an unlocked
            // note's edit is kept and sent again (js/unsent-edits.js).
            if (again && !isLocked) keepUnsent(noteID, accountID, from, edit);
            return;
          }
          setStatus('error', `Not saved: ${error.message}${again ? ' Trying again…' : ''}`);
          // A full or read-only disk (docs/WEB.md, "Revisions") is said in the banner too.
          const disk = error.code === 'diskFull' || error.code === 'diskReadOnly';
          if (disk) showError(error);
          // The edit stays in the page and is sent again a while later, unless typing sends it first.
          if (again && !this.pending) this.pending = { timer: setTimeout(() => { this.pending = null; save(); }, disk ? diskRetryMs : retryMs), run: save };
        }
      });
    };
    const edited = () => {
      setStatus('dirty', 'Editing…');
      if (this.pending) clearTimeout(this.pending.timer);
      this.pending = { timer: setTimeout(() => { this.pending = null; save(); }, saveDelayMs), run: save };
    };
    // What live updates use (js/live-updates.js): the open note, and how to take a newer version in.
    this.shown = { noteID, isLocked, rebase, revision: () => base.revision, text: () => ({ title: title.value, body: body.value }) };
    title.addEventListener('input', edited);
    title.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') { event.preventDefault(); body.focus(); }
    });

    const entry = isLocked ? openNote(noteID) : null;
    const attachments = attachmentSection(detail, {
      noteKey: entry?.noteKey || null,
      objectURLs: entry ? entry.objectURLs : this.objectURLs,
      // Attachments are the owner's: a participant edits the title and body only (docs/WEB.md).
      canEdit: summary.canManage !== false,
      onChanged: () => this.app.reload(),
    });

    const toolbar = h('div', { class: 'editor-toolbar' },
      this.metaLine(summary),
      h('div', { class: 'toolbar-spacer' }),
      status,
      isOwner ? this.pinButton(summary) : null,
      isOwner ? this.folderSelect(summary) : null,
      this.attachControl(summary),
      isOwner ? this.lockControl(summary, detail) : null,
      isOwner ? this.deleteButton(summary) : null);

    const banners = [];
    if (isLocked) {
      banners.push(h('div', { class: 'note-banner locked', 'data-testid': 'locked-open' }, icon('unlock'),
        h('span', {}, 'Locked note — open in this browser. Use Lock Now to hide it.')));
      if (summary.lock && !summary.lock.isCurrent && this.app.passphraseState?.current) {
        banners.push(h('div', { class: 'note-banner', 'data-testid': 'rewrap-offer' },
          h('span', {}, `${earlierPassphraseText(summary.lock)} Lock it with your current passphrase instead?`),
          h('button', { id: 'rewrap-note', class: 'button small', type: 'button', on: { click: () => this.app.rewrap(detail) } }, 'Use Current Passphrase')));
      }
    }
    if (summary.owner) {
      banners.push(h('div', { class: 'note-banner shared', 'data-testid': 'shared-with-me' }, icon('shared'),
        h('span', {}, `Shared with you by ${summary.owner}. You can read and edit it.`)));
    }

    const sharing = isLocked && !isOwner ? null : sharePanel(detail, {
      account: this.app.account,
      onChanged: () => this.app.reload(),
      onLeft: () => this.app.noteDeleted(noteID),
    });

    replaceChildren(this.container,
      toolbar,
      ...banners,
      formatBar(body),
      h('article', { class: 'note-sheet', 'data-note-id': noteID, 'data-testid': isLocked ? 'open-locked-note' : 'note-sheet' },
        h('p', { class: 'note-date' }, longDate(summary.modified)),
        title,
        body,
        attachments),
      sharing);
    if (!summary.title || summary.title === 'New Note') title.select();
    if (unsent) edited();
  }

  metaLine(summary) {
    const bits = [];
    // A chip's word may step aside for its icon where the toolbar is narrow; its title says it.
    const chip = (kind, iconName, text) => h('span', { class: ['chip', kind], title: text }, icon(iconName), h('span', { class: 'chip-label' }, text));
    if (summary.lock) bits.push(chip('locked', 'lock', 'Locked'));
    if (summary.isPinned) bits.push(chip(null, 'pin', 'Pinned'));
    // The owner of a note shared with me is named in its banner; the chip only says it is shared.
    if (summary.isShared) bits.push(chip('shared', 'shared', 'Shared'));
    return h('div', { id: 'note-meta', class: 'note-meta' }, bits);
  }

  pinButton(summary) {
    return h('button', {
      id: 'pin-note', class: ['icon-button', summary.isPinned && 'active'], type: 'button',
      'aria-pressed': String(Boolean(summary.isPinned)), 'aria-label': summary.isPinned ? 'Unpin' : 'Pin', title: summary.isPinned ? 'Unpin' : 'Pin',
      on: { click: () => busy(async () => {
        this.flush();
        await api.patch(`/notes/${segment(summary.id)}`, { isPinned: !summary.isPinned });
        await this.app.reload();
      }) },
    }, icon('pin'));
  }

  folderSelect(summary) {
    const select = h('select', {
      id: 'note-folder', class: 'folder-select', 'aria-label': 'Folder',
      on: { change: () => busy(async () => {
        this.flush();
        const from = summary.folderID || null;
        await api.patch(`/notes/${segment(summary.id)}`, { folderID: select.value || null });
        await this.app.reload();
        const where = select.value ? select.options[select.selectedIndex].text : 'Notes';
        offerUndo(`Moved to ${where}.`, async () => {
          await api.patch(`/notes/${segment(summary.id)}`, { folderID: from });
          await this.app.reload();
        });
      }) },
    }, h('option', { value: '' }, 'Notes'), ...(this.app.folders || []).map((folder) => h('option', { value: folder.id }, folder.name)));
    select.value = summary.folderID || '';
    return select;
  }

  attachControl(summary) {
    const lockedReason = summary.lock ? 'Attachments cannot be added to a locked note.'
      : summary.canManage === false ? 'Only the note’s owner adds attachments.' : null;
    const input = h('input', {
      id: 'attach-file', type: 'file', multiple: true, class: 'visually-hidden', disabled: Boolean(lockedReason),
      on: { change: () => {
        const files = [...input.files];
        input.value = '';
        this.flush();
        uploadFiles(summary.id, files, () => this.app.reload());
      } },
    });
    return h('label', {
      class: ['icon-button', lockedReason && 'disabled'], for: 'attach-file', title: lockedReason || 'Attach a file',
      'aria-label': 'Attach a file',
    }, icon('paperclip'), input);
  }

  lockControl(summary, detail) {
    if (summary.lock) {
      return h('span', { class: 'icon-button active', role: 'img', title: 'Locked', 'aria-label': 'Locked' }, icon('lock'));
    }
    const blocked = summary.isShared
      ? 'Stop sharing this note before locking it.'
      : (detail.attachments || []).filter((a) => !lockableKinds.has(a.kind)).map((a) => `“${a.name}” (${a.kind}) cannot be locked`).join('; ');
    return h('button', {
      id: 'lock-note', class: 'icon-button', type: 'button', 'aria-label': 'Lock note',
      title: blocked || 'Lock this note with your passphrase',
      on: { click: () => { this.flush(); this.app.lockNote(summary, blocked); } },
    }, icon('lock'));
  }

  deleteButton(summary) {
    if (summary.owner) return null;
    return h('button', {
      id: 'delete-note', class: 'icon-button danger', type: 'button', 'aria-label': 'Delete note',
      title: 'Delete (kept in Recently Deleted for 30 days)',
      on: { click: () => busy(async () => {
        this.flush();
        await this.saving;
        await api.delete(`/notes/${segment(summary.id)}`);
        await this.app.noteDeleted(summary.id);
        offerUndo('Moved to Recently Deleted.', async () => {
          await api.post(`/notes/${segment(summary.id)}/restore`);
          await this.app.reload();
        });
      }) },
    }, icon('trash'));
  }
}

/** Puts `text` into a text field, keeping the caret about where it was. */
function replaceText(field, text) {
  if (field.value === text) return;
  if (field.replaceValue) {
    field.replaceValue(text);
    return;
  }
  const focused = document.activeElement === field;
  const { selectionStart, selectionEnd } = field;
  field.value = text;
  if (focused) field.setSelectionRange(Math.min(selectionStart, text.length), Math.min(selectionEnd, text.length));
}

/** A body shown formatted, not editable (a note in Recently Deleted). */
function readOnlyBody(text) {
  const view = createRichEditor({ id: 'deleted-body', label: 'Note (read only)', placeholder: '' });
  view.value = text;
  view.contentEditable = 'false';
  view.classList.add('readonly');
  view.dataset.testid = 'deleted-body';
  return view;
}
