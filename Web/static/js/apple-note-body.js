// Apple Notes note bodies: a gzipped protobuf whose text is at field 2 → 3 → 2
// (NoteStoreProto.document.note.note_text). Only the wire format is read — varints and
// length-delimited fields — so no protobuf library is needed. No DOM here.

import { concatBytes } from './bytes.js';

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
