// Apple Notes note bodies: a gzipped protobuf whose text is at field 2 → 3 → 2
// (NoteStoreProto.document.note.note_text). Only the wire format is read — varints and
// length-delimited fields — so no protobuf library is needed. No DOM here.

import { concatBytes } from './bytes.js';
import { safeLink, write } from './markdown.js';

/** Limits that keep a hostile body from using all memory (the server's body limit is 1 MiB of text). */
const maximumInflatedBytes = 16 * 1024 * 1024;

/** The note text of a gzipped Apple Notes body; throws on damaged or hostile data. */
export async function appleNoteText(gzipped) {
  const protobuf = await gunzip(gzipped);
  const documentBytes = field(protobuf, 2);
  const noteBytes = field(documentBytes, 3);
  const textBytes = field(noteBytes, 2);
  return new TextDecoder('utf-8', { fatal: true }).decode(textBytes);
}

/**
 * The note as Tresor Markdown (docs/FORMAT.md, "Note bodies"): its text formatted by its
 * attribute runs (field 5 of the note, repeated) — the rules of the daemon's AppleNoteFormatting,
 * so an Apple-locked note reads the same in the browser as in `tresor note show`.
 */
export async function appleNoteMarkdown(gzipped) {
  const protobuf = await gunzip(gzipped);
  const noteBytes = field(field(protobuf, 2), 3);
  const text = new TextDecoder('utf-8', { fatal: true }).decode(field(noteBytes, 2));
  const runs = fields(noteBytes, 5).map(attributeRun).filter((run) => run.length > 0);
  const blocks = [];
  let paragraph = [];
  let paragraphStyle = null;
  // The attribute run of the paragraph's last run: a character of the same one extends it, so a
  // body of millions of characters is not millions of objects.
  let runStyle = null;
  const noStyle = {};
  let runIndex = 0;
  let runEnd = runs.length ? runs[0].length : Infinity;
  const styleAt = (offset) => {
    while (runIndex < runs.length && offset >= runEnd) {
      runIndex += 1;
      runEnd += runIndex < runs.length ? runs[runIndex].length : Infinity;
    }
    return runIndex < runs.length ? runs[runIndex] : noStyle;
  };
  const endParagraph = (style) => {
    const source = paragraphStyle ?? style;
    const type = source.paragraph || 'body';
    const runsOfLine = type === 'code' ? [{ text: paragraph.map((run) => run.text).join('') }] : paragraph;
    blocks.push({ type, level: Math.min(source.indent || 0, 5), checked: Boolean(source.done), runs: runsOfLine });
    paragraph = [];
    paragraphStyle = null;
  };
  let offset = 0;
  for (const character of text) {
    const style = styleAt(offset);
    offset += character.length;
    if (character === '\n') { endParagraph(style); continue; }
    if (!paragraphStyle) paragraphStyle = style;
    if (paragraph.length && style === runStyle) { paragraph[paragraph.length - 1].text += character; continue; }
    runStyle = style;
    paragraph.push({
      text: character, bold: Boolean(style.bold), italic: Boolean(style.italic), underline: Boolean(style.underline),
      strike: Boolean(style.strike), link: style.link && safeLink(style.link) ? style.link : undefined,
    });
  }
  endParagraph(styleAt(offset));
  return write(blocks);
}

const paragraphTypes = { 0: 'title', 1: 'heading', 2: 'subheading', 4: 'code', 100: 'bullet', 101: 'dash', 102: 'number', 103: 'check' };

function attributeRun(bytes) {
  const run = { length: 0 };
  for (const [number, value] of entries(bytes)) {
    if (number === 1 && typeof value === 'bigint') run.length = Number(value);
    if (number === 2 && value instanceof Uint8Array) {
      for (const [n, v] of entries(value)) {
        if (n === 1 && typeof v === 'bigint') run.paragraph = paragraphTypes[Number(v)] || 'body';
        if (n === 4 && typeof v === 'bigint') run.indent = Number(v);
        if (n === 5 && v instanceof Uint8Array) {
          for (const [c, done] of entries(v)) if (c === 2 && typeof done === 'bigint') run.done = done !== 0n;
        }
      }
    }
    if (number === 3 && value instanceof Uint8Array) {
      for (const [n, v] of entries(value)) if (n === 3 && typeof v === 'bigint') applyHints(run, v);
    }
    if (number === 5 && typeof value === 'bigint') applyHints(run, value);
    if (number === 6 && typeof value === 'bigint') run.underline = value !== 0n;
    if (number === 7 && typeof value === 'bigint') run.strike = value !== 0n;
    if (number === 9 && value instanceof Uint8Array) run.link = new TextDecoder().decode(value);
  }
  return run;
}

function applyHints(run, hints) {
  if (hints & 1n) run.bold = true;
  if (hints & 2n) run.italic = true;
}

/** Every length-delimited field `number` of a message. */
function fields(message, number) {
  return entries(message).filter(([n, value]) => n === number && value instanceof Uint8Array).map(([, value]) => value);
}

/** A message's fields: [number, BigInt (varint) | Uint8Array (length-delimited) | null]. */
function entries(message) {
  const result = [];
  let offset = 0;
  while (offset < message.length) {
    const [key, afterKey] = readVarint(message, offset);
    const wireType = Number(key & 7n);
    const fieldNumber = Number(key >> 3n);
    offset = afterKey;
    if (wireType === 0) {
      const [value, next] = readVarint(message, offset);
      result.push([fieldNumber, value]);
      offset = next;
    } else if (wireType === 2) {
      const [length, start] = readVarint(message, offset);
      const end = start + Number(length);
      if (length > BigInt(message.length) || end > message.length) throw new Error('damaged note body');
      result.push([fieldNumber, message.subarray(start, end)]);
      offset = end;
    } else if (wireType === 1) {
      offset += 8;
    } else if (wireType === 5) {
      offset += 4;
    } else {
      throw new Error('damaged note body');
    }
    if (offset > message.length) throw new Error('damaged note body');
  }
  return result;
}

async function gunzip(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  const reader = stream.getReader();
  const parts = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maximumInflatedBytes) {
      await reader.cancel();
      throw new Error('the note body is too large');
    }
    parts.push(value);
  }
  return concatBytes(...parts);
}

/** The bytes of the first length-delimited field `number` of a message. */
function field(message, number) {
  let offset = 0;
  while (offset < message.length) {
    const [key, afterKey] = readVarint(message, offset);
    const wireType = Number(key & 7n);
    const fieldNumber = Number(key >> 3n);
    offset = afterKey;
    switch (wireType) {
      case 0: offset = readVarint(message, offset)[1]; break;
      case 1: offset += 8; break;
      case 5: offset += 4; break;
      case 2: {
        const [length, start] = readVarint(message, offset);
        const end = start + Number(length);
        if (length > BigInt(message.length) || end > message.length) throw new Error('damaged note body');
        if (fieldNumber === number) return message.subarray(start, end);
        offset = end;
        break;
      }
      default: throw new Error('damaged note body');
    }
    if (offset > message.length) throw new Error('damaged note body');
  }
  throw new Error('the note body has no text');
}

function readVarint(bytes, start) {
  let value = 0n;
  for (let i = 0; i < 10; i += 1) {
    if (start + i >= bytes.length) throw new Error('damaged note body');
    const byte = bytes[start + i];
    value |= BigInt(byte & 0x7f) << BigInt(7 * i);
    if ((byte & 0x80) === 0) return [value, start + i + 1];
  }
  throw new Error('damaged note body');
}
