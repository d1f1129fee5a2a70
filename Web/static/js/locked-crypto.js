// Locked notes, in the browser, in exactly the format of the Swift code (docs/WEB.md "Locked
// notes in the browser", docs/FORMAT.md, "Two layers") — WebCrypto only, no DOM, so Node can
// check it against the known vectors:
//
//   passphrase key = PBKDF2-HMAC-SHA256(UTF-8 passphrase, salt, iterations) → AES-KW, 128 bits
//   verifier       = a random AES key, RFC 3394-wrapped under the passphrase key
//   note key       = 16 random bytes, RFC 3394-wrapped (24 bytes) under the passphrase key
//   body           = AES-128-GCM(note key, 12-byte IV, no additional data); tag kept apart
//   attachment     = 1 MiB chunks, each IV ‖ ciphertext ‖ tag with additional data
//                    "tresor.notes.attachment.v1\0" ‖ id ‖ 0 ‖ index (UInt64 BE) ‖ final (1/0)
//   proofs         = HKDF-SHA256(key, no salt, label) → 32 bytes, label
//                    "tresor.notes.passphrase-proof.v1" (of the passphrase key) or
//                    "tresor.notes.note-proof.v1" (of a note key); the server keeps their
//                    SHA-256 and asks for them before any change to locked notes
//                    (docs/SECURITY.md, "Locked-note integrity on the web")
//
// Keys leave this module only as non-extractable CryptoKeys. A note key is extractable only
// for the moment it is wrapped (when it is made, or re-wrapped under another passphrase); the
// 16 bytes of a passphrase key exist only while its AES-KW and HKDF keys are imported from them.

import { concatBytes } from './bytes.js';
import { appleNoteMarkdown } from './apple-note-body.js';

const subtle = globalThis.crypto.subtle;

export const saltByteCount = 16;
export const ivByteCount = 12;
export const tagByteCount = 16;
export const wrappedKeyByteCount = 24;
export const attachmentChunkByteCount = 1 << 20;
/** Above this a record is refused as hostile: it would pin the CPU for minutes (as the Swift code). */
export const maximumIterations = 50_000_000;

/** Thrown when a passphrase does not open what it should. Nothing else is said about why. */
export class WrongPassphraseError extends Error {
  constructor() {
    super('wrong passphrase');
    this.name = 'WrongPassphraseError';
  }
}

function randomBytes(count) {
  return globalThis.crypto.getRandomValues(new Uint8Array(count));
}

export const proofByteCount = 32;
export const passphraseProofLabel = 'tresor.notes.passphrase-proof.v1';
export const noteProofLabel = 'tresor.notes.note-proof.v1';

/**
 * The passphrase key (a non-extractable AES-KW CryptoKey that can only wrap and unwrap) and its
 * proof (32 bytes the server checks): `{key, proof}`. One PBKDF2 run.
 */
export async function derivePassphrase(passphrase, salt, iterations) {
  if (!Number.isInteger(iterations) || iterations < 1 || iterations > maximumIterations) {
    throw new Error(`an iteration count must be 1 to ${maximumIterations}`);
  }
  if (!(salt instanceof Uint8Array) || salt.length < 1 || salt.length > 64) {
    throw new Error('a passphrase salt must be 1 to 64 bytes');
  }
  const material = await subtle.importKey('raw', new TextEncoder().encode(passphrase), 'PBKDF2', false, ['deriveBits']);
  // WebCrypto cannot derive an HKDF key from an AES-KW one: the 16 bytes are derived once and
  // imported as both, then overwritten.
  const bits = new Uint8Array(await subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, material, 128));
  try {
    const key = await subtle.importKey('raw', bits, { name: 'AES-KW' }, false, ['wrapKey', 'unwrapKey']);
    const hkdf = await subtle.importKey('raw', bits, 'HKDF', false, ['deriveBits']);
    return { key, proof: await proofOf(hkdf, passphraseProofLabel) };
  } finally {
    bits.fill(0);
  }
}

/** The passphrase key alone (see `derivePassphrase`). */
export async function derivePassphraseKey(passphrase, salt, iterations) {
  return (await derivePassphrase(passphrase, salt, iterations)).key;
}

/** HKDF-SHA256(`hkdfKey`, no salt, `label`), 32 bytes. */
async function proofOf(hkdfKey, label) {
  const info = new TextEncoder().encode(label);
  return new Uint8Array(await subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info }, hkdfKey, proofByteCount * 8));
}

/** What the server stores of a proof: its SHA-256. */
export async function proofHash(proof) {
  return new Uint8Array(await subtle.digest('SHA-256', proof));
}

/**
 * The proof of the note key inside `wrappedKey`: the key is unwrapped once more, as a
 * non-extractable HKDF key. Throws WrongPassphraseError when it does not unwrap.
 */
export async function noteProof(wrappedKey, passphraseKey) {
  if (wrappedKey.length !== wrappedKeyByteCount) throw new WrongPassphraseError();
  let hkdf;
  try {
    hkdf = await subtle.unwrapKey('raw', wrappedKey, passphraseKey, 'AES-KW', 'HKDF', false, ['deriveBits']);
  } catch {
    throw new WrongPassphraseError();
  }
  return proofOf(hkdf, noteProofLabel);
}

/**
 * A new passphrase: fresh salt, the key, its verifier and proof. `salt`, `iterations`,
 * `verifier` and `proofHash` go to the server; `key` and `proof` stay here (the proof is
 * presented later, for changes).
 */
export async function newPassphrase(passphrase, iterations) {
  const salt = randomBytes(saltByteCount);
  const { key, proof } = await derivePassphrase(passphrase, salt, iterations);
  const verifier = await makeVerifier(key);
  return { salt, iterations, verifier, proofHash: await proofHash(proof), key, proof };
}

/** A random AES key wrapped under `passphraseKey`: unwrapping it later proves the passphrase. */
export async function makeVerifier(passphraseKey) {
  const random = await subtle.generateKey({ name: 'AES-GCM', length: 128 }, true, ['encrypt']);
  return new Uint8Array(await subtle.wrapKey('raw', random, passphraseKey, 'AES-KW'));
}

/** Whether `passphraseKey` is the key the verifier was made with. */
export async function verifies(passphraseKey, verifier) {
  try {
    await subtle.unwrapKey('raw', verifier, passphraseKey, 'AES-KW', 'AES-GCM', false, ['encrypt']);
    return true;
  } catch {
    return false;
  }
}

/**
 * The note key inside `wrappedKey`, as a non-extractable AES-GCM key. Throws
 * WrongPassphraseError when it does not unwrap (RFC 3394's integrity check failed).
 */
export async function unwrapNoteKey(wrappedKey, passphraseKey) {
  if (wrappedKey.length !== wrappedKeyByteCount) throw new WrongPassphraseError();
  try {
    return await subtle.unwrapKey('raw', wrappedKey, passphraseKey, 'AES-KW', 'AES-GCM', false, ['encrypt', 'decrypt']);
  } catch {
    throw new WrongPassphraseError();
  }
}

/**
 * A new note key: `{noteKey, wrappedKey, noteProof, noteProofHash}`. The key is generated
 * extractable only so it can be wrapped; the key handed back is unwrapped again,
 * non-extractable, and the extractable one is dropped here.
 */
export async function newNoteKey(passphraseKey) {
  let extractable = await subtle.generateKey({ name: 'AES-GCM', length: 128 }, true, ['encrypt', 'decrypt']);
  const wrappedKey = new Uint8Array(await subtle.wrapKey('raw', extractable, passphraseKey, 'AES-KW'));
  extractable = null;
  const noteKey = await unwrapNoteKey(wrappedKey, passphraseKey);
  const proof = await noteProof(wrappedKey, passphraseKey);
  return { noteKey, wrappedKey, noteProof: proof, noteProofHash: await proofHash(proof) };
}

/** `wrappedKey` (under `fromKey`) wrapped instead under `toKey` — for a change or a re-wrap. */
export async function rewrapNoteKey(wrappedKey, fromKey, toKey) {
  if (wrappedKey.length !== wrappedKeyByteCount) throw new WrongPassphraseError();
  let extractable;
  try {
    extractable = await subtle.unwrapKey('raw', wrappedKey, fromKey, 'AES-KW', 'AES-GCM', true, ['encrypt', 'decrypt']);
  } catch {
    throw new WrongPassphraseError();
  }
  const rewrapped = new Uint8Array(await subtle.wrapKey('raw', extractable, toKey, 'AES-KW'));
  extractable = null;
  return rewrapped;
}

/** Seals bytes: `{iv, ciphertext, tag}` (WebCrypto appends the tag; it is split off). */
export async function sealBytes(noteKey, plaintext, additionalData) {
  const iv = randomBytes(ivByteCount);
  const params = additionalData ? { name: 'AES-GCM', iv, additionalData } : { name: 'AES-GCM', iv };
  const sealed = new Uint8Array(await subtle.encrypt(params, noteKey, plaintext));
  return { iv, ciphertext: sealed.slice(0, sealed.length - tagByteCount), tag: sealed.slice(sealed.length - tagByteCount) };
}

/** Opens `{iv, ciphertext, tag}` (any IV length: Apple's are 16 bytes); throws if altered. */
export async function openBytes(noteKey, { iv, ciphertext, tag }, additionalData) {
  if (tag.length !== tagByteCount || iv.length < 1) throw new Error('damaged locked data');
  const params = additionalData ? { name: 'AES-GCM', iv, additionalData } : { name: 'AES-GCM', iv };
  try {
    return new Uint8Array(await subtle.decrypt(params, noteKey, concatBytes(ciphertext, tag)));
  } catch {
    throw new Error('the locked data does not open: it was altered or is damaged');
  }
}

/** The text of a locked body in `bodyFormat` "text" or Apple's gzipped protobuf. */
export async function openNoteText(noteKey, sealed, bodyFormat) {
  const plaintext = await openBytes(noteKey, sealed);
  try {
    if (isAppleFormat(bodyFormat)) return await appleNoteMarkdown(plaintext);
    return new TextDecoder('utf-8', { fatal: true }).decode(plaintext);
  } finally {
    plaintext.fill(0);
  }
}

/**
 * Seals note text as UTF-8 (the `text` body format: an edited Apple note is saved as text, as
 * the server records it) and opens the result again before handing it back, so a sealing that
 * would not open is never sent to the server.
 */
export async function sealNoteText(noteKey, text) {
  const plaintext = new TextEncoder().encode(text);
  const sealed = await sealBytes(noteKey, plaintext);
  plaintext.fill(0);
  if ((await openNoteText(noteKey, sealed, 'text')) !== text) throw new Error('the sealed note did not open to its text');
  return sealed;
}

export function isAppleFormat(bodyFormat) {
  return bodyFormat === 'appleNotes' || bodyFormat === 'apple-notes';
}

/** The additional data of attachment chunk `index`. */
export function chunkAdditionalData(attachmentID, index, isFinal) {
  const label = new TextEncoder().encode('tresor.notes.attachment.v1\0');
  const id = new TextEncoder().encode(attachmentID);
  const position = new Uint8Array(9);
  new DataView(position.buffer).setBigUint64(0, BigInt(index), false);
  position[8] = isFinal ? 1 : 0;
  return concatBytes(label, id, new Uint8Array([0]), position);
}

/** How many chunks an attachment of `byteCount` bytes has (an empty one has one empty chunk). */
export function chunkCount(byteCount) {
  return Math.max(1, Math.ceil(byteCount / attachmentChunkByteCount));
}

/** An attachment's bytes sealed as chunks (each IV ‖ ciphertext ‖ tag), checked to open again. */
export async function sealAttachment(noteKey, attachmentID, bytes) {
  const count = chunkCount(bytes.length);
  const chunks = [];
  for (let index = 0; index < count; index += 1) {
    const plain = bytes.subarray(index * attachmentChunkByteCount, Math.min(bytes.length, (index + 1) * attachmentChunkByteCount));
    const additional = chunkAdditionalData(attachmentID, index, index === count - 1);
    const { iv, ciphertext, tag } = await sealBytes(noteKey, plain, additional);
    chunks.push(concatBytes(iv, ciphertext, tag));
  }
  const reopened = await openAttachment(noteKey, attachmentID, concatBytes(...chunks), bytes.length);
  if (reopened.length !== bytes.length || reopened.some((byte, i) => byte !== bytes[i])) {
    throw new Error('a sealed attachment did not open to its bytes');
  }
  reopened.fill(0);
  return chunks;
}

/** The bytes of a locked attachment, from its chunks one after another as the server sends them. */
export async function openAttachment(noteKey, attachmentID, sealed, byteCount) {
  const count = chunkCount(byteCount);
  const overhead = ivByteCount + tagByteCount;
  if (sealed.length !== byteCount + count * overhead) throw new Error('the locked attachment is damaged');
  const parts = [];
  let offset = 0;
  for (let index = 0; index < count; index += 1) {
    const plainLength = Math.min(attachmentChunkByteCount, byteCount - index * attachmentChunkByteCount);
    const chunk = sealed.subarray(offset, offset + plainLength + overhead);
    offset += chunk.length;
    parts.push(await openBytes(noteKey, {
      iv: chunk.subarray(0, ivByteCount),
      ciphertext: chunk.subarray(ivByteCount, chunk.length - tagByteCount),
      tag: chunk.subarray(chunk.length - tagByteCount),
    }, chunkAdditionalData(attachmentID, index, index === count - 1)));
  }
  return concatBytes(...parts);
}
