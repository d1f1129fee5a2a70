// The note body editor: a contenteditable element showing Tresor Markdown (js/markdown.js)
// as formatted text — titles, headings, bold, italic, underline, strikethrough, bulleted,
// dashed and numbered lists, checklists with ticks, monospace lines and links. Its `value` is
// the Markdown (read and written like a textarea's), so saving, merging and sealing see text.
//
// Keyboard shortcuts (Ctrl, or ⌘ on a Mac), as Apple Notes has them:
//   B / I / U bold, italic, underline · Shift-X strikethrough · K link
//   Shift-T title · Shift-H heading · Shift-J subheading · Shift-B body · Shift-M monospace
//   Shift-L checklist · Shift-7 bulleted · Shift-8 dashed · Shift-9 numbered list
//   Tab / Shift-Tab indent a list item · Enter on an empty item ends the list
// Typing "- ", "* ", "1. ", "[] ", "# ", "## " or "### " at the start of a line formats it.
//
// Every piece of text goes in through text nodes; links only to http(s) and mailto.

import { h } from './dom.js';
import { listTypes, parse, safeLink, write } from './markdown.js';

const blockTag = 'DIV';
const inlineStyles = { B: 'bold', STRONG: 'bold', I: 'italic', EM: 'italic', U: 'underline', S: 'strike', STRIKE: 'strike', DEL: 'strike' };
const shortcuts = {
  KeyT: 'title', KeyH: 'heading', KeyJ: 'subheading', KeyB: 'body', KeyM: 'code', KeyL: 'check',
  Digit7: 'bullet', Digit8: 'dash', Digit9: 'number',
};
const typedMarkers = [
  [/^### $/, 'subheading'], [/^## $/, 'heading'], [/^# $/, 'title'], [/^(- )?\[ ?\] $/, 'check'],
  [/^- $/, 'dash'], [/^\* $/, 'bullet'], [/^1\. $/, 'number'],
];

/**
 * A rich-text editor element. `onInput` is called after each change (typing, a shortcut, a
 * tick); `label` names it for screen readers.
 */
export function createRichEditor({ id, label, placeholder, onInput }) {
  const editor = h('div', {
    id, class: 'note-body rich-editor', contenteditable: 'true', role: 'textbox', 'aria-multiline': 'true', 'aria-label': label,
    'data-placeholder': placeholder, spellcheck: 'true', 'data-testid': 'note-body',
  });
  const changed = () => {
    editor.classList.toggle('is-empty', editor.textContent === '' && editor.querySelectorAll('[data-block]').length <= 1);
    onInput?.();
  };

  Object.defineProperty(editor, 'value', {
    get: () => write(readBlocks(editor)),
    set: (text) => {
      render(editor, parse(text ?? ''));
      editor.classList.toggle('is-empty', !text);
    },
  });
  /** Replaces the text, keeping the caret in the same line and column where it can. */
  editor.replaceValue = (text) => {
    const caret = document.activeElement === editor ? caretPosition(editor) : null;
    editor.value = text;
    if (caret) placeCaret(editor, caret);
  };
  /** Makes the blocks the selection touches `type` (or body again if they all are already). */
  editor.setBlockType = (type) => {
    const blocks = selectedBlocks(editor);
    const toggleOff = blocks.length && blocks.every((block) => block.dataset.block === type);
    for (const block of blocks) {
      block.dataset.block = toggleOff ? 'body' : type;
      if (type === 'check' && !toggleOff) block.dataset.checked = 'false';
    }
    changed();
  };
  editor.toggleStyle = (style) => {
    const command = { bold: 'bold', italic: 'italic', underline: 'underline', strike: 'strikeThrough' }[style];
    document.execCommand('styleWithCSS', false, false);
    document.execCommand(command);
    changed();
  };
  editor.addLink = () => {
    const url = window.prompt('Link to (https://…)', 'https://');
    if (!url || !safeLink(url.trim())) return;
    document.execCommand('createLink', false, url.trim());
    changed();
  };

  editor.addEventListener('input', (event) => {
    if (event.inputType === 'insertText' && event.data === ' ') formatTypedMarker(editor);
    if (event.inputType === 'insertParagraph') afterNewLine(editor);
    changed();
  });
  editor.addEventListener('keydown', (event) => {
    const mod = event.ctrlKey || event.metaKey;
    if (mod && !event.altKey) {
      const key = event.key.toLowerCase();
      let handled = true;
      if (event.shiftKey && shortcuts[event.code]) editor.setBlockType(shortcuts[event.code]);
      else if (event.shiftKey && key === 'x') editor.toggleStyle('strike');
      else if (!event.shiftKey && key === 'b') editor.toggleStyle('bold');
      else if (!event.shiftKey && key === 'i') editor.toggleStyle('italic');
      else if (!event.shiftKey && key === 'u') editor.toggleStyle('underline');
      else if (!event.shiftKey && key === 'k') editor.addLink();
      else handled = false;
      if (handled) event.preventDefault();
      return;
    }
    const block = currentBlock(editor);
    if (!block) return;
    const type = block.dataset.block;
    if (event.key === 'Tab' && listTypes.has(type)) {
      event.preventDefault();
      const level = Number(block.dataset.level || 0) + (event.shiftKey ? -1 : 1);
      block.dataset.level = String(Math.max(0, Math.min(5, level)));
      changed();
    } else if (event.key === 'Enter' && !event.shiftKey && listTypes.has(type) && block.textContent === '') {
      event.preventDefault(); // Enter on an empty item ends the list
      block.dataset.block = 'body';
      changed();
    } else if (event.key === 'Backspace' && type !== 'body' && caretAtBlockStart(block)) {
      event.preventDefault(); // the line's formatting goes first, then the line break
      block.dataset.block = 'body';
      changed();
    }
  });
  // A tick: a click on the box (the block's left padding) of a checklist item.
  editor.addEventListener('click', (event) => {
    const block = event.target instanceof Element ? event.target.closest('[data-block=check]') : null;
    if (!block || event.target !== block || event.offsetX > checkBoxWidth(block)) return;
    block.dataset.checked = block.dataset.checked === 'true' ? 'false' : 'true';
    changed();
  });
  // Pasted text comes in as plain text: never another page's HTML.
  editor.addEventListener('paste', (event) => {
    event.preventDefault();
    document.execCommand('insertText', false, event.clipboardData?.getData('text/plain') ?? '');
  });
  return editor;
}

/** The formatting bar: the same commands as the shortcuts, for a pointer or a finger. */
export function formatBar(editor) {
  const button = (name, label, title, run) => h('button', {
    type: 'button', class: 'format-button', 'data-testid': `format-${name}`, id: `format-${name}`, title, 'aria-label': title,
    // Keep the selection in the editor: act on mousedown, not after focus moved.
    on: { mousedown: (event) => { event.preventDefault(); run(); } },
  }, label);
  return h('div', { class: 'format-bar', role: 'toolbar', 'aria-label': 'Formatting', 'data-testid': 'format-bar' },
    button('title', 'Title', 'Title (Ctrl-Shift-T)', () => editor.setBlockType('title')),
    button('heading', 'Heading', 'Heading (Ctrl-Shift-H)', () => editor.setBlockType('heading')),
    button('bold', 'B', 'Bold (Ctrl-B)', () => editor.toggleStyle('bold')),
    button('italic', 'I', 'Italic (Ctrl-I)', () => editor.toggleStyle('italic')),
    button('underline', 'U', 'Underline (Ctrl-U)', () => editor.toggleStyle('underline')),
    button('strike', 'S', 'Strikethrough (Ctrl-Shift-X)', () => editor.toggleStyle('strike')),
    button('check', '☑', 'Checklist (Ctrl-Shift-L)', () => editor.setBlockType('check')),
    button('bullet', '•', 'Bulleted list (Ctrl-Shift-7)', () => editor.setBlockType('bullet')),
    button('dash', '–', 'Dashed list (Ctrl-Shift-8)', () => editor.setBlockType('dash')),
    button('number', '1.', 'Numbered list (Ctrl-Shift-9)', () => editor.setBlockType('number')),
    button('code', '{ }', 'Monospace (Ctrl-Shift-M)', () => editor.setBlockType('code')),
    button('link', 'Link', 'Link (Ctrl-K)', () => editor.addLink()));
}

/** Shows `blocks`: one element per line. */
function render(editor, blocks) {
  editor.replaceChildren(...blocks.map((block) => {
    const element = h('div', { 'data-block': block.type });
    if (listTypes.has(block.type) && block.level) element.dataset.level = String(block.level);
    if (block.type === 'check') element.dataset.checked = String(Boolean(block.checked));
    for (const run of block.runs) element.append(runElement(run));
    if (!element.firstChild) element.append(document.createElement('br'));
    return element;
  }));
}

function runElement(run) {
  let node = document.createTextNode(run.text);
  if (run.code) node = wrapIn('code', node);
  if (run.link && safeLink(run.link)) {
    const anchor = h('a', { href: run.link, rel: 'noopener noreferrer', target: '_blank' });
    anchor.append(node);
    node = anchor;
  }
  if (run.underline) node = wrapIn('u', node);
  if (run.strike) node = wrapIn('s', node);
  if (run.italic) node = wrapIn('i', node);
  if (run.bold) node = wrapIn('b', node);
  return node;
}

function wrapIn(tag, child) {
  const element = document.createElement(tag);
  element.append(child);
  return element;
}

/** The blocks the page shows (whatever typing made of the elements). */
function readBlocks(editor) {
  const blocks = [];
  let loose = null; // text typed straight into the editor, outside any line
  for (const node of editor.childNodes) {
    if (node.nodeType === Node.ELEMENT_NODE && isBlock(node)) {
      loose = null;
      blocks.push(...blocksOf(node));
    } else {
      if (!loose) {
        loose = { type: 'body', level: 0, checked: false, runs: [] };
        blocks.push(loose);
      }
      if (node.nodeName === 'BR') {
        loose = null;
        continue;
      }
      collectRuns(node, {}, loose.runs);
    }
  }
  return blocks;
}

function isBlock(node) {
  return node.nodeName === blockTag || node.nodeName === 'P' || /^H[1-6]$/.test(node.nodeName) || node.nodeName === 'LI';
}

/** One element's blocks: a line break inside it starts another line of the same kind. */
function blocksOf(element) {
  const type = element.dataset?.block || { H1: 'title', H2: 'heading', H3: 'subheading', LI: 'bullet' }[element.nodeName] || 'body';
  const make = () => ({
    type, level: Number(element.dataset?.level || 0), checked: element.dataset?.checked === 'true', runs: [],
  });
  const blocks = [make()];
  const children = [...element.childNodes];
  children.forEach((child, index) => {
    if (child.nodeName === 'BR') {
      if (index < children.length - 1) blocks.push(make());
      return;
    }
    if (child.nodeType === Node.ELEMENT_NODE && isBlock(child)) {
      blocks.push(...blocksOf(child));
      return;
    }
    collectRuns(child, {}, blocks[blocks.length - 1].runs);
  });
  return blocks;
}

function collectRuns(node, style, runs) {
  if (node.nodeType === Node.TEXT_NODE) {
    if (node.data) runs.push({ text: node.data.replace(/\u00a0/g, ' '), ...style });
    return;
  }
  if (node.nodeType !== Node.ELEMENT_NODE) return;
  const next = { ...style };
  const named = inlineStyles[node.nodeName];
  if (named) next[named] = true;
  if (node.nodeName === 'CODE') next.code = true;
  if (node.nodeName === 'A' && safeLink(node.getAttribute('href') || '')) next.link = node.getAttribute('href');
  for (const child of node.childNodes) collectRuns(child, next, runs);
}

function currentBlock(editor) {
  const selection = window.getSelection();
  if (!selection?.rangeCount) return null;
  let node = selection.getRangeAt(0).startContainer;
  while (node && node.parentNode !== editor) node = node.parentNode;
  return node && node.nodeType === Node.ELEMENT_NODE && node.dataset ? (node.dataset.block ? node : null) : null;
}

function selectedBlocks(editor) {
  const selection = window.getSelection();
  if (!selection?.rangeCount) return [];
  const range = selection.getRangeAt(0);
  const blocks = [...editor.children].filter((child) => range.intersectsNode(child));
  if (blocks.length) return blocks.map(ensureBlock);
  return [];
}

function ensureBlock(element) {
  if (!element.dataset.block) element.dataset.block = 'body';
  return element;
}

/** "- " typed at the start of a line makes it a dashed list item, and so on. */
function formatTypedMarker(editor) {
  const block = currentBlock(editor);
  if (!block || block.dataset.block === 'code') return;
  const text = block.textContent;
  for (const [pattern, type] of typedMarkers) {
    if (!pattern.test(text)) continue;
    if (block.dataset.block === type) return;
    block.dataset.block = type;
    if (type === 'check') block.dataset.checked = 'false';
    block.replaceChildren(document.createElement('br'));
    placeCaretIn(block, 0);
    return;
  }
}

/** After Enter: the new line is body text after a heading, an unticked item after a checklist item. */
function afterNewLine(editor) {
  const block = currentBlock(editor);
  if (!block) return;
  if (['title', 'heading', 'subheading'].includes(block.dataset.block)) block.dataset.block = 'body';
  if (block.dataset.block === 'check') block.dataset.checked = 'false';
}

function checkBoxWidth(block) {
  return parseFloat(getComputedStyle(block).paddingLeft) || 28;
}

function caretAtBlockStart(block) {
  const selection = window.getSelection();
  if (!selection?.rangeCount || !selection.isCollapsed) return false;
  const range = selection.getRangeAt(0);
  const before = document.createRange();
  before.selectNodeContents(block);
  before.setEnd(range.startContainer, range.startOffset);
  return before.toString().length === 0;
}

/** The caret as (line, column), to put it back after the text was replaced. */
function caretPosition(editor) {
  const selection = window.getSelection();
  if (!selection?.rangeCount) return null;
  const range = selection.getRangeAt(0);
  const lines = [...editor.children];
  const index = lines.findIndex((line) => line.contains(range.startContainer));
  if (index < 0) return null;
  const before = document.createRange();
  before.selectNodeContents(lines[index]);
  before.setEnd(range.startContainer, range.startOffset);
  return { line: index, column: before.toString().length };
}

function placeCaret(editor, { line, column }) {
  const block = editor.children[Math.min(line, editor.children.length - 1)];
  if (block) placeCaretIn(block, column);
}

function placeCaretIn(block, column) {
  const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
  let left = column;
  let node = walker.nextNode();
  const range = document.createRange();
  while (node) {
    if (left <= node.data.length) {
      range.setStart(node, left);
      break;
    }
    left -= node.data.length;
    node = walker.nextNode();
  }
  if (!node) {
    range.selectNodeContents(block);
    range.collapse(false);
  }
  range.collapse(true);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
}
