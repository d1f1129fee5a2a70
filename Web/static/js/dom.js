// Building the page safely: every piece of data goes in through textContent or an attribute,
// never through innerHTML, so a title such as <img src=x onerror=…> shows as text.

/**
 * An element: `h('button', {id: 'x', class: 'primary', on: {click}}, 'Label', child…)`.
 * Strings become text nodes; null/false children are skipped. `class` and `data-*`, `aria-*`
 * and other attributes are set with setAttribute; `hidden`, `disabled`, `value` and friends as
 * properties.
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'on') {
      for (const [event, handler] of Object.entries(value)) element.addEventListener(event, handler);
    } else if (name === 'class') {
      element.className = Array.isArray(value) ? value.filter(Boolean).join(' ') : value;
    } else if (name === 'text') {
      element.textContent = value;
    } else if (['hidden', 'disabled', 'checked', 'value', 'required', 'autofocus', 'readOnly', 'multiple'].includes(name)) {
      element[name] = value;
    } else {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function replaceChildren(element, ...children) {
  element.replaceChildren();
  append(element, children);
}

export function byId(id) {
  return document.getElementById(id);
}

/** An inline SVG icon from the fixed set below (paths are constants, never data). */
export function icon(name) {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', 'icon');
  for (const d of icons[name] || []) {
    const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
    path.setAttribute('d', d);
    svg.append(path);
  }
  return svg;
}

const icons = {
  lock: ['M7 10V7a5 5 0 0 1 10 0v3', 'M5 10h14v11H5z', 'M12 14v3'],
  unlock: ['M7 10V7a5 5 0 0 1 9.6-2', 'M5 10h14v11H5z'],
  pin: ['M9 3h6l-1 6 4 4H6l4-4z', 'M12 13v8'],
  trash: ['M4 7h16', 'M9 7V4h6v3', 'M6 7l1 14h10l1-14'],
  plus: ['M12 5v14', 'M5 12h14'],
  folder: ['M3 6h6l2 2h10v11H3z'],
  notes: ['M5 3h14v18H5z', 'M8 8h8', 'M8 12h8', 'M8 16h5'],
  shared: ['M8 11a3 3 0 1 0 0-6 3 3 0 0 0 0 6z', 'M2 20c0-3 3-5 6-5s6 2 6 5', 'M16 11a3 3 0 1 0 0-6', 'M18 15c2 .5 4 2 4 5'],
  paperclip: ['M21 11l-9 9a5 5 0 0 1-7-7l9-9a3.5 3.5 0 0 1 5 5l-9 9a2 2 0 0 1-3-3l8-8'],
  search: ['M11 18a7 7 0 1 0 0-14 7 7 0 0 0 0 14z', 'M21 21l-5-5'],
  key: ['M8 15a4 4 0 1 1 0-8 4 4 0 0 1 0 8z', 'M12 11h9', 'M18 11v3', 'M21 11v2'],
  signOut: ['M15 4h4v16h-4', 'M10 8l-4 4 4 4', 'M6 12h10'],
  download: ['M12 4v11', 'M7 10l5 5 5-5', 'M5 20h14'],
  close: ['M6 6l12 12', 'M18 6L6 18'],
  person: ['M12 11a4 4 0 1 0 0-8 4 4 0 0 0 0 8z', 'M4 21c0-4 4-6 8-6s8 2 8 6'],
  hidden: ['M3 3l18 18', 'M10.6 6.1A9.7 9.7 0 0 1 12 6c5 0 9 6 9 6a16 16 0 0 1-2.6 3.2', 'M6.6 6.6C4.2 8.2 3 12 3 12s4 6 9 6a9 9 0 0 0 4.4-1.1', 'M9.9 9.9a3 3 0 0 0 4.2 4.2'],
};

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const timeFormat = new Intl.DateTimeFormat(undefined, { timeStyle: 'short' });
const fullFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'long', timeStyle: 'short' });

/** "14:05" today, else "12 Mar 2025" — as Notes lists dates. */
export function shortDate(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const today = new Date();
  return date.toDateString() === today.toDateString() ? timeFormat.format(date) : dateFormat.format(date);
}

export function longDate(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : fullFormat.format(date);
}

/** A wait in words: "40 s", "5 min". */
export function waitText(seconds) {
  if (seconds < 90) return `${seconds} s`;
  return `${Math.ceil(seconds / 60)} min`;
}

export function byteSize(count) {
  if (count < 1024) return `${count} B`;
  if (count < 1024 * 1024) return `${(count / 1024).toFixed(count < 10240 ? 1 : 0)} KB`;
  return `${(count / 1024 / 1024).toFixed(1)} MB`;
}
