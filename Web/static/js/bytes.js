// Byte helpers shared by the crypto and API modules (no DOM, so Node can load them too).

/** Base64 of bytes (the API's encoding for every binary field). */
export function toBase64(bytes) {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let binary = '';
  // Chunked: String.fromCharCode with a huge argument list overflows the stack.
  for (let offset = 0; offset < view.length; offset += 0x8000) {
    binary += String.fromCharCode.apply(null, view.subarray(offset, offset + 0x8000));
  }
  return btoa(binary);
}

/** Bytes of a base64 string; throws on anything that is not base64. */
export function fromBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Bytes of hexadecimal digits (whitespace ignored) — for known-answer checks. */
export function fromHex(hex) {
  const digits = hex.replace(/\s+/g, '');
  if (digits.length % 2 !== 0 || /[^0-9a-f]/i.test(digits)) throw new Error('not hexadecimal');
  const bytes = new Uint8Array(digits.length / 2);
  for (let i = 0; i < bytes.length; i += 1) bytes[i] = parseInt(digits.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

export function toHex(bytes) {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** One array holding `parts` one after another. */
export function concatBytes(...parts) {
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  const joined = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}

/** Overwrites a plaintext buffer we own before letting it go (hygiene: the GC may keep copies). */
export function wipe(bytes) {
  if (bytes instanceof Uint8Array) bytes.fill(0);
}
