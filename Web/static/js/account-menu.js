// The account menu (#account-menu-button, #account-menu): on a phone the account's name and the
// rarely used actions (passphrase and password settings, sign out) sit behind one button in the one-row
// toolbar; wider screens show them in the toolbar itself and hide the button (css/small-screens.css).
// A disclosure: the button says whether the menu is open (aria-expanded), Escape or a tap
// elsewhere closes it, and choosing an action closes it too.

import { byId, h, icon, replaceChildren } from './dom.js';

export function installAccountMenu() {
  const button = byId('account-menu-button');
  const menu = byId('account-menu');
  const setOpen = (open, { returnFocus = false } = {}) => {
    button.setAttribute('aria-expanded', String(open));
    menu.toggleAttribute('data-open', open);
    if (open) menu.querySelector('button')?.focus();
    else if (returnFocus) button.focus();
  };
  const isOpen = () => menu.hasAttribute('data-open');
  button.addEventListener('click', () => setOpen(!isOpen()));
  menu.addEventListener('click', (event) => {
    if (event.target.closest('button')) setOpen(false);
  });
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && isOpen()) setOpen(false, { returnFocus: true });
  });
  document.addEventListener('pointerdown', (event) => {
    if (isOpen() && !menu.contains(event.target) && !button.contains(event.target)) setOpen(false);
  });
  showAccountInitial('');
}

/** The menu button shows the account's initial, like an avatar (a person while signed out). */
export function showAccountInitial(name) {
  const button = byId('account-menu-button');
  const initial = [...name.trim()][0]?.toUpperCase();
  replaceChildren(button, initial ? h('span', { class: 'account-initial', 'aria-hidden': 'true' }, initial) : icon('person'));
}
