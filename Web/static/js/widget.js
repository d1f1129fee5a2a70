// The widget page (/widget): a glanceable card of the signed-in account's notes — how many,
// the recently changed ones, the pinned ones. Titles are private: when the server redacts them
// they show as grey bars; with `placeholder: true` the whole card is a
// placeholder. A redacted row says "Locked" only for a locked note; any other redacted title is
// just "Hidden" (the note itself is not locked). Refreshes every 10 s.
//
// Hooks for the browser tests: #widget (data-state = loading|ready|placeholder|signedOut|error,
// data-redacted = true|false), #widget-count, #widget-recent, #widget-pinned,
// [data-testid=widget-note] (data-redacted), [data-testid=widget-redacted],
// [data-testid=widget-placeholder], #widget-state, #widget-updated, #widget-sign-in.

import { api, ApiError } from './api.js';
import { byId, h, icon, replaceChildren, shortDate } from './dom.js';

const refreshMs = 10_000;
const lockedSinceStartText = 'Shown once Tresor is unlocked on this computer.';

const placeholderText = {
  protectionLevel: 'Unlock Tresor on this computer to see your notes.',
  contentUnavailable: 'Your notes are not available until Tresor is unlocked.',
  notInitialized: 'Tresor is not set up yet.',
};

function redactedBar(isLocked) {
  const label = isLocked ? 'Locked' : 'Hidden';
  return h('span', { class: 'redacted', 'data-testid': 'widget-redacted', 'aria-label': isLocked ? 'Locked note' : 'Title hidden' },
    h('span', { class: 'redacted-bar', 'aria-hidden': 'true' }),
    h('span', { class: ['redacted-label', isLocked && 'locked'] }, isLocked ? icon('lock') : icon('hidden'), label));
}

function noteRow(note, { showDate }) {
  // Each row opens its note in Tresor Notes (a hidden title too: the id is not private).
  return h('li', { class: 'widget-note', 'data-testid': 'widget-note', 'data-redacted': String(Boolean(note.redacted)) },
    h('a', { class: 'widget-note-link', href: `/#note=${encodeURIComponent(note.id)}`, target: '_top' },
      note.redacted || note.title == null
        ? redactedBar(Boolean(note.isLocked))
        : h('span', { class: 'widget-note-title' }, note.isLocked ? icon('lock') : null, h('span', {}, note.title)),
      showDate && note.modified ? h('time', { class: 'widget-note-date', datetime: note.modified }, shortDate(note.modified)) : null));
}

function section(id, title, notes, options, emptyText) {
  return h('section', { class: 'widget-section' },
    h('h2', { class: 'widget-section-title' }, title),
    notes.length
      ? h('ul', { id, class: 'widget-list' }, notes.map((note) => noteRow(note, options)))
      : h('p', { id, class: 'widget-empty' }, emptyText));
}

function render(widget) {
  const card = byId('widget');
  card.setAttribute('aria-busy', 'false');
  const state = byId('widget-state');
  if (widget.placeholder) {
    card.dataset.state = 'placeholder';
    card.dataset.redacted = 'true';
    state.textContent = '';
    replaceChildren(byId('widget-body'), h('div', { class: 'widget-placeholder', 'data-testid': 'widget-placeholder' },
      h('div', { class: 'placeholder-lock' }, icon('lock')),
      h('p', {}, placeholderText[widget.reason] || 'Locked')));
    return;
  }
  card.dataset.state = 'ready';
  card.dataset.redacted = String(Boolean(widget.redacted));
  replaceChildren(state, widget.redacted ? [icon('lock'), 'Locked'] : [icon('unlock'), 'Open']);
  state.dataset.redacted = String(Boolean(widget.redacted));
  const count = widget.noteCount ?? 0;
  // Locked since Tresor started, only the count can be read: the lists are not empty, just unknown.
  const unknown = widget.keybag === 'lockedSinceStart';
  replaceChildren(byId('widget-body'),
    h('div', { class: 'widget-count-row' },
      h('span', { id: 'widget-count', class: 'widget-count', 'data-testid': 'widget-count' }, String(count)),
      h('span', { class: 'widget-count-label' }, count === 1 ? 'note' : 'notes')),
    section('widget-recent', 'Recently Changed', widget.recent || [], { showDate: true }, unknown ? lockedSinceStartText : 'Nothing changed lately.'),
    section('widget-pinned', 'Pinned', widget.pinned || [], { showDate: false }, unknown ? lockedSinceStartText : 'No pinned notes.'));
}

function renderSignedOut() {
  const card = byId('widget');
  card.dataset.state = 'signedOut';
  card.setAttribute('aria-busy', 'false');
  byId('widget-state').textContent = '';
  replaceChildren(byId('widget-body'), h('div', { class: 'widget-placeholder', 'data-testid': 'widget-placeholder' },
    h('div', { class: 'placeholder-lock' }, icon('person')),
    h('p', {}, 'Sign in to see your notes.'),
    h('a', { id: 'widget-sign-in', class: 'widget-link', href: '/' }, 'Open Tresor Notes')));
}

async function refresh() {
  try {
    render(await api.get('/widget', { quietUnauthorized: true }));
    byId('widget-updated').textContent = `Updated ${new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' }).format(new Date())}`;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      renderSignedOut();
    } else {
      byId('widget').dataset.state = 'error';
      byId('widget-updated').textContent = `Could not refresh: ${error.message}`;
    }
  }
}

byId('widget').dataset.state = 'loading';
refresh();
setInterval(refresh, refreshMs);
