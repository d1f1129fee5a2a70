// Note bodies are Tresor Markdown (docs/FORMAT.md, "Note bodies"): a small, strict subset of
// CommonMark with GitHub's task lists and strikethrough, one block per line. This module reads
// a body into blocks and writes blocks back; the Swift side (TresorModel's NoteMarkdown) reads
// and writes the same text. Writing what was read gives the same text back for anything the
// writer writes; other text is read leniently (an unclosed marker ends with its line).
//
// A block: { type, level, checked, runs } — type one of
//   title (# ), heading (## ), subheading (### ), body, bullet (* ), dash (- ), number (1. ),
//   check (- [ ] / - [x] ), code (a line inside ``` fences)
// level: list indentation, 0–5 (two spaces each); runs: [{ text, bold, italic, underline,
// strike, code, link }] (code blocks: one run, verbatim).

export const blockTypes = ['title', 'heading', 'subheading', 'body', 'bullet', 'dash', 'number', 'check', 'code'];
export const listTypes = new Set(['bullet', 'dash', 'number', 'check']);
const styles = ['bold', 'italic', 'strike', 'underline'];
const maximumLevel = 5;
// Read after a backslash as the character itself; the writer escapes the first group anywhere
// and, at the start of a line, what would read as a block marker.
const escapable = new Set(['\\', '*', '_', '~', '`', '[', ']', '<', '>', '#', '(', ')', '-', '+', '.', '!']);
const escapedAnywhere = new Set(['\\', '*', '_', '~', '`', '[', ']', '<']);

/** The blocks of a body. */
export function parse(text) {
  const blocks = [];
  let inFence = false;
  for (const line of text.split('\n')) {
    if (/^```/.test(line)) {
      if (inFence) { inFence = false; continue; }
      inFence = true;
      continue;
    }
    if (inFence) { blocks.push(block('code', [{ text: line }])); continue; }
    let match;
    if ((match = /^(#{1,3}) (.*)$/.exec(line))) {
      blocks.push(block(['title', 'heading', 'subheading'][match[1].length - 1], parseInline(match[2])));
    } else if ((match = /^( *)- \[([ xX])\](?: (.*))?$/.exec(line))) {
      blocks.push(block('check', parseInline(match[3] ?? ''), level(match[1]), match[2] !== ' '));
    } else if ((match = /^( *)([-*]) (.*)$/.exec(line))) {
      blocks.push(block(match[2] === '*' ? 'bullet' : 'dash', parseInline(match[3]), level(match[1])));
    } else if ((match = /^( *)\d{1,9}\. (.*)$/.exec(line))) {
      blocks.push(block('number', parseInline(match[2]), level(match[1])));
    } else {
      blocks.push(block('body', parseInline(line)));
    }
  }
  return blocks.length ? blocks : [block('body', [])];
}

/** The body of `blocks`. */
export function write(blocks) {
  const lines = [];
  const numbers = [];
  blocks.forEach((b, index) => {
    const previous = blocks[index - 1];
    if (b.type === 'code') {
      if (previous?.type !== 'code') lines.push('```');
      lines.push(b.runs.map((run) => run.text).join(''));
      if (blocks[index + 1]?.type !== 'code') lines.push('```');
      return;
    }
    const indent = '  '.repeat(listTypes.has(b.type) ? Math.min(b.level || 0, maximumLevel) : 0);
    if (b.type === 'number') {
      numbers.length = (b.level || 0) + 1;
      numbers[b.level || 0] = previous?.type === 'number' || (previous && listTypes.has(previous.type) && (previous.level || 0) > (b.level || 0))
        ? (numbers[b.level || 0] || 0) + 1 : 1;
    } else if (!listTypes.has(b.type)) {
      numbers.length = 0;
    }
    const text = writeInline(b.runs, b.type === 'body');
    switch (b.type) {
      case 'title': lines.push(`# ${text}`); break;
      case 'heading': lines.push(`## ${text}`); break;
      case 'subheading': lines.push(`### ${text}`); break;
      case 'bullet': lines.push(`${indent}* ${text}`); break;
      case 'dash': lines.push(`${indent}- ${text}`); break;
      case 'number': lines.push(`${indent}${numbers[b.level || 0]}. ${text}`); break;
      case 'check': lines.push(`${indent}- [${b.checked ? 'x' : ' '}] ${text}`.replace(/ $/, ' ')); break;
      default: lines.push(text);
    }
  });
  return lines.join('\n');
}

/** The plain text of a body: what search and previews use. */
export function plainText(text) {
  return parse(text).map((b) => b.runs.map((run) => run.text).join('')).join('\n');
}

function block(type, runs, level = 0, checked = false) {
  return { type, level, checked, runs };
}

function level(spaces) {
  return Math.min(Math.floor(spaces.length / 2), maximumLevel);
}

/** Inline markup into runs: **bold**, *italic*, <u>underline</u>, ~~strike~~, `code`, [text](url), \-escapes. */
export function parseInline(text) {
  const runs = [];
  const state = { bold: false, italic: false, strike: false, underline: false };
  let current = '';
  const flush = (extra = {}) => {
    if (current) runs.push({ text: current, ...activeStyles(state), ...extra });
    current = '';
  };
  for (let i = 0; i < text.length;) {
    const rest = text.slice(i);
    const ch = text[i];
    if (ch === '\\' && i + 1 < text.length && escapable.has(text[i + 1])) { current += text[i + 1]; i += 2; continue; }
    if (rest.startsWith('**')) { flush(); state.bold = !state.bold; i += 2; continue; }
    if (rest.startsWith('~~')) { flush(); state.strike = !state.strike; i += 2; continue; }
    if (rest.startsWith('<u>')) { flush(); state.underline = true; i += 3; continue; }
    if (rest.startsWith('</u>')) { flush(); state.underline = false; i += 4; continue; }
    if (ch === '*') { flush(); state.italic = !state.italic; i += 1; continue; }
    if (ch === '`') {
      const end = text.indexOf('`', i + 1);
      if (end > i) {
        flush();
        runs.push({ text: text.slice(i + 1, end), ...activeStyles(state), code: true });
        i = end + 1;
        continue;
      }
    }
    if (ch === '[') {
      // A label holds no unescaped bracket (the writer escapes them), so a line of a million
      // brackets is read once, not once per bracket.
      const link = /^\[((?:\\.|[^[\]\\])*)\]\(([^()\s]*)\)/.exec(rest);
      if (link && safeLink(link[2])) {
        flush();
        runs.push({ text: link[1].replace(/\\(.)/g, '$1'), ...activeStyles(state), link: link[2] });
        i += link[0].length;
        continue;
      }
    }
    current += ch;
    i += 1;
  }
  flush();
  return mergeRuns(runs);
}

/** Runs back into inline markup; `atLineStart` escapes what would read as a block marker. */
export function writeInline(runs, atLineStart = false) {
  let out = '';
  for (const run of mergeRuns(runs)) {
    if (!run.text) continue;
    if (run.code) {
      out += wrap(run, `\`${run.text.replace(/`/g, "'")}\``);
      continue;
    }
    let text = escapeText(run.text);
    if (run.link) text = `[${text}](${run.link})`;
    out += wrap(run, text);
  }
  if (atLineStart) out = out.replace(/^(#|[-+] )/, (marker) => `\\${marker}`).replace(/^(\d+)\. /, '$1\\. ');
  return out;
}

/** A run's styles around `text`, spaces kept outside the markers. */
function wrap(run, text) {
  // Trimmed rather than matched: a pattern like /^(\s*)([\s\S]*?)(\s*)$/ retries the trailing
  // spaces at every position, quadratic on a run full of spaces.
  const start = text.length - text.trimStart().length;
  const end = text.trimEnd().length;
  if (end <= start) return text;
  const lead = text.slice(0, start);
  const core = text.slice(start, end);
  const trail = text.slice(end);
  let open = '';
  let close = '';
  if (run.bold) { open += '**'; close = `**${close}`; }
  if (run.italic) { open += '*'; close = `*${close}`; }
  if (run.strike) { open += '~~'; close = `~~${close}`; }
  if (run.underline) { open += '<u>'; close = `</u>${close}`; }
  return lead + open + core + close + trail;
}

function escapeText(text) {
  let out = '';
  for (const ch of text) out += escapedAnywhere.has(ch) ? `\\${ch}` : ch;
  return out;
}

function activeStyles(state) {
  const result = {};
  for (const style of styles) if (state[style]) result[style] = true;
  return result;
}

function sameStyle(a, b) {
  return styles.every((style) => Boolean(a[style]) === Boolean(b[style])) && Boolean(a.code) === Boolean(b.code) && (a.link || null) === (b.link || null);
}

function mergeRuns(runs) {
  const merged = [];
  for (const run of runs) {
    if (!run.text) continue;
    const last = merged[merged.length - 1];
    if (last && sameStyle(last, run) && !run.code) last.text += run.text;
    else merged.push({ ...run });
  }
  return merged;
}

/** Links open only to the web and mail: never javascript: or data:. */
export function safeLink(url) {
  return /^(https?:\/\/|mailto:)[^\s<>"]+$/i.test(url);
}
