// Sharing an unlocked note with other accounts on this server (docs/WEB.md, "Endpoints"): the owner
// adds people by account name (#share-name, #share-button) and removes them; a participant sees who
// else has it and may leave. The panel is one compact row at the foot of the editor.

import { api, segment } from './api.js';
import { h, icon } from './dom.js';
import { busy, offerUndo, showMessage } from './banner.js';

/** The sharing panel (#share-panel) of a note, or an explanation when it cannot be shared. */
export function sharePanel(detail, { account, onChanged, onLeft }) {
  const summary = detail.summary;
  const share = detail.share || { owner: summary.owner || account.name, participants: [] };
  const isOwner = !summary.owner;
  const panel = h('section', { id: 'share-panel', class: 'share-panel', 'data-testid': 'share-panel', 'aria-label': 'Sharing' });

  if (summary.lock) {
    panel.append(h('p', { class: 'share-note' }, 'Locked notes cannot be shared.'));
    return panel;
  }

  const participants = h('ul', { id: 'participant-list', class: 'participant-list', 'data-testid': 'participant-list' });
  for (const name of share.participants || []) {
    const mayRemove = isOwner || name === account.name;
    participants.append(h('li', { class: 'participant', 'data-testid': 'participant', 'data-name': name },
      h('span', { class: 'avatar', 'aria-hidden': 'true' }, name.slice(0, 1).toUpperCase()),
      h('span', { class: 'participant-name' }, name === account.name ? `${name} (you)` : name),
      mayRemove ? h('button', {
        class: 'icon-button', type: 'button', 'data-testid': 'remove-participant', 'data-name': name,
        'aria-label': name === account.name ? 'Leave this shared note' : `Stop sharing with ${name}`,
        title: name === account.name ? 'Leave' : 'Remove',
        on: { click: () => busy(async () => {
          await api.delete(`/notes/${segment(summary.id)}/participants/${segment(name)}`);
          if (name === account.name) {
            await onLeft();
          } else {
            await onChanged();
            offerUndo(`No longer shared with ${name}.`, async () => {
              await api.post(`/notes/${segment(summary.id)}/participants`, { name });
              await onChanged();
            });
          }
        }) },
      }, icon('close')) : null));
  }

  // One compact row under the note. A participant is already told who shared the note (the
  // editor's banner), so the row does not name the owner again.
  const heading = isOwner && !share.participants?.length ? 'Share' : 'Shared with';
  panel.append(h('h3', { class: 'share-title' }, icon('shared'), heading));
  panel.append(participants);

  if (isOwner) {
    const input = h('input', {
      id: 'share-name', placeholder: 'Account name', autocomplete: 'off', autocapitalize: 'none', spellcheck: 'false', maxlength: '32',
    });
    panel.append(h('form', {
      class: 'share-form', novalidate: true,
      on: { submit: (event) => {
        event.preventDefault();
        const name = input.value.trim().toLowerCase();
        if (!name) { input.focus(); return; }
        if (name === account.name) { showMessage('This note is already yours.'); return; }
        busy(async () => {
          await api.post(`/notes/${segment(summary.id)}/participants`, { name });
          showMessage(`Shared with ${name}.`, 'info');
          await onChanged();
        });
      } },
    },
    h('label', { for: 'share-name', class: 'visually-hidden' }, 'Share with account'),
    input,
    h('button', { id: 'share-button', class: 'button', type: 'submit' }, 'Share')));
  }
  return panel;
}
