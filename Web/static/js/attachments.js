// A note's attachments: upload through #attach-file, images shown inline from blob: URLs,
// other kinds offered for download, each with its owner's "Leave out of backups" box. A locked note's attachments arrive as sealed chunks and
// are opened here with the note key; their object URLs belong to the open note, so Lock Now
// revokes them.

import { api, segment } from './api.js';
import { byteSize, h, icon } from './dom.js';
import { openAttachment } from './locked-crypto.js';
import { busy, showMessage } from './banner.js';

/**
 * The kinds a locked note may hold (docs/API.md, "Locked notes and secure sessions"); others
 * must go before a note is locked.
 */
export const lockableKinds = new Set(['image', 'drawing', 'table', 'map-location', 'website-link']);
/** Upload limit of the web API (docs/WEB.md "Limits"). */
export const maximumUploadBytes = 32 * 1024 * 1024;

const imageTypes = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', bmp: 'image/bmp', avif: 'image/avif' };

/** The attachment kind of a file the user picked. */
export function kindOf(file) {
  const type = file.type || '';
  if (type.startsWith('image/')) return 'image';
  if (type === 'application/pdf') return 'pdf';
  if (type.startsWith('audio/')) return 'audio';
  return 'file';
}

function mediaType(attachment) {
  const extension = attachment.name.split('.').pop().toLowerCase();
  if (attachment.kind === 'pdf') return 'application/pdf';
  return imageTypes[extension] || 'application/octet-stream';
}

/** The plaintext bytes of an attachment (opened with `noteKey` when the note is locked). */
export async function attachmentBytes(noteID, attachment, noteKey) {
  const raw = await api.get(`/notes/${segment(noteID)}/attachments/${segment(attachment.id)}`, { raw: true });
  if (!noteKey) return raw;
  return openAttachment(noteKey, attachment.id, raw, attachment.byteCount);
}

/**
 * The attachments region (#attachment-list). `objectURLs` collects the URLs made, so whoever
 * owns the note's plaintext can revoke them; `noteKey` is set for an open locked note.
 */
export function attachmentSection(detail, { noteKey, objectURLs, canEdit, onChanged }) {
  const noteID = detail.summary.id;
  const list = h('ul', { id: 'attachment-list', class: 'attachment-list', 'data-testid': 'attachment-list' });
  for (const attachment of detail.attachments || []) {
    list.append(attachmentItem(noteID, attachment, { noteKey, objectURLs, canEdit, onChanged }));
  }
  list.hidden = list.childElementCount === 0;
  return list;
}

function attachmentItem(noteID, attachment, { noteKey, objectURLs, canEdit, onChanged }) {
  const remove = canEdit && !noteKey
    ? h('button', {
      class: 'icon-button attachment-remove', type: 'button', 'data-testid': 'remove-attachment',
      'aria-label': `Remove ${attachment.name}`, title: 'Remove',
      on: { click: () => busy(async () => {
        await api.delete(`/notes/${segment(noteID)}/attachments/${segment(attachment.id)}`);
        await onChanged();
      }) },
    }, icon('trash'))
    : null;
  const caption = h('div', { class: 'attachment-caption' },
    h('span', { class: 'attachment-name', 'data-testid': 'attachment-name' }, attachment.name),
    h('span', { class: 'attachment-size' }, byteSize(attachment.byteCount)),
    canEdit ? backupToggle(noteID, attachment, onChanged) : null);

  if (attachment.kind === 'image') {
    const image = h('img', { class: 'attachment-image', alt: attachment.name, 'data-testid': 'attachment-image', 'data-attachment-id': attachment.id });
    const item = h('li', { class: 'attachment image', 'data-testid': 'attachment' }, h('div', { class: 'attachment-frame loading' }, image), h('div', { class: 'attachment-row' }, caption, remove));
    attachmentBytes(noteID, attachment, noteKey).then((bytes) => {
      // The note was closed (or locked) while the bytes were on their way: keep nothing.
      if (!item.isConnected) {
        bytes.fill(0);
        return;
      }
      const url = URL.createObjectURL(new Blob([bytes], { type: mediaType(attachment) }));
      bytes.fill(0);
      objectURLs.add(url);
      image.src = url;
      image.parentElement.classList.remove('loading');
    }).catch((error) => {
      image.parentElement.classList.remove('loading');
      image.parentElement.append(h('p', { class: 'attachment-error' }, `Could not show the image: ${error.message}`));
    });
    return item;
  }

  const download = h('button', {
    class: 'button subtle small', type: 'button', 'data-testid': 'attachment-download',
    on: { click: () => busy(async () => {
      const bytes = await attachmentBytes(noteID, attachment, noteKey);
      const url = URL.createObjectURL(new Blob([bytes], { type: mediaType(attachment) }));
      bytes.fill(0);
      objectURLs.add(url);
      const link = h('a', { href: url, download: attachment.name, class: 'visually-hidden' });
      document.body.append(link);
      link.click();
      link.remove();
    }) },
  }, icon('download'), 'Download');
  return h('li', { class: 'attachment file', 'data-testid': 'attachment' },
    h('div', { class: 'attachment-file-icon' }, icon('paperclip')),
    caption,
    h('span', { class: 'attachment-kind' }, attachment.kind),
    download,
    remove);
}

/**
 * The owner's "Leave out of backups" box (docs/WEB.md, "Attachments"): the flag is no content,
 * so it changes on a locked note too. A change that fails puts the box back.
 */
function backupToggle(noteID, attachment, onChanged) {
  const box = h('input', {
    type: 'checkbox', 'data-testid': 'attachment-excluded-from-backup', checked: attachment.excludedFromBackup === true,
    on: { change: () => busy(async () => {
      try {
        await api.patch(`/notes/${segment(noteID)}/attachments/${segment(attachment.id)}`, { excludedFromBackup: box.checked });
      } catch (error) {
        box.checked = !box.checked;
        throw error;
      }
      await onChanged();
    }) },
  });
  return h('label', { class: 'attachment-backup' }, box, 'Leave out of backups');
}

/** Uploads the files chosen in #attach-file to note `noteID`. */
export async function uploadFiles(noteID, files, onChanged) {
  for (const file of files) {
    if (file.size > maximumUploadBytes) {
      showMessage(`“${file.name}” is larger than 32 MB, the most an attachment may hold.`);
      continue;
    }
    // The name goes in a header: a URL is in every proxy's access log.
    await busy(() => api.post(`/notes/${segment(noteID)}/attachments`, file, {
      query: { kind: kindOf(file) }, headers: { 'Tresor-Attachment-Name': encodeURIComponent(file.name) },
    }));
  }
  await onChanged();
}
