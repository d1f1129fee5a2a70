// Three-way merge of a note's text, line by line — the rules of the store's ThreeWayMerge
// (docs/FORMAT.md, "Revisions and merges"), for what only the browser can merge: a locked
// note's plaintext, and an open note whose text changed elsewhere while it is being edited.
//
//   merge(base, saved, incoming) → { merged: text } or { conflict: true }
//
// A stretch only one side changed takes that side's lines; the same change on both is taken
// once; lines both inserted at one place are all kept, the saved side's first; neighbouring
// lines changed on either side (as many lines on each side as in the base) merge line by line;
// different changes of the same lines are a conflict (the caller keeps both versions whole).

const maximumComparisonCells = 4_000_000;

/** Merges `incoming` (made from `base`) into `saved` (also made from `base`). */
export function merge(base, saved, incoming) {
  if (saved === incoming || incoming === base) return { merged: saved };
  if (saved === base) return { merged: incoming };
  const numbers = new Map();
  const text = [];
  const lines = (string) => string.split('\n').map((line) => {
    if (!numbers.has(line)) {
      numbers.set(line, text.length);
      text.push(line);
    }
    return numbers.get(line);
  });
  const result = mergeLines(lines(base), lines(saved), lines(incoming));
  return result ? { merged: result.map((n) => text[n]).join('\n') } : { conflict: true };
}

/** A single value (a title): the side that changed it, or null on a conflict. */
export function mergeValue(base, saved, incoming) {
  if (saved === incoming || incoming === base) return saved;
  if (saved === base) return incoming;
  return null;
}

function mergeLines(base, saved, incoming) {
  const toSaved = matches(base, saved);
  const toIncoming = matches(base, incoming);
  const result = [];
  let o = 0;
  let a = 0;
  let b = 0;
  while (o < base.length || a < saved.length || b < incoming.length) {
    if (o < base.length && toSaved[o] === a && toIncoming[o] === b) {
      result.push(base[o]);
      o += 1; a += 1; b += 1;
      continue;
    }
    let end = o;
    while (end < base.length && (toSaved[end] === null || toIncoming[end] === null)) end += 1;
    const savedEnd = end < base.length ? toSaved[end] : saved.length;
    const incomingEnd = end < base.length ? toIncoming[end] : incoming.length;
    const original = base.slice(o, end);
    const mine = saved.slice(a, savedEnd);
    const theirs = incoming.slice(b, incomingEnd);
    if (same(mine, original)) result.push(...theirs);
    else if (same(theirs, original) || same(theirs, mine)) result.push(...mine);
    else if (original.length === 0) result.push(...mine, ...theirs);
    else if (original.length === mine.length && original.length === theirs.length) {
      // Neighbouring lines changed on either side: line by line, each from the side that changed it.
      for (let index = 0; index < original.length; index += 1) {
        const merged = mergeValue(original[index], mine[index], theirs[index]);
        if (merged === null) return null;
        result.push(merged);
      }
    } else return null;
    o = end; a = savedEnd; b = incomingEnd;
  }
  return result;
}

function same(x, y) {
  return x.length === y.length && x.every((value, index) => value === y[index]);
}

/** For each line of `a`, the line of `b` a longest common subsequence matches it with (or null). */
function matches(a, b) {
  const result = new Array(a.length).fill(null);
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) {
    result[prefix] = prefix;
    prefix += 1;
  }
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) {
    result[a.length - 1 - suffix] = b.length - 1 - suffix;
    suffix += 1;
  }
  const n = a.length - prefix - suffix;
  const m = b.length - prefix - suffix;
  if (n <= 0 || m <= 0 || n * m > maximumComparisonCells) return result;
  const width = m + 1;
  const lengths = new Int32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      lengths[i * width + j] = a[prefix + i] === b[prefix + j]
        ? lengths[(i + 1) * width + j + 1] + 1
        : Math.max(lengths[(i + 1) * width + j], lengths[i * width + j + 1]);
    }
  }
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[prefix + i] === b[prefix + j]) {
      result[prefix + i] = prefix + j;
      i += 1; j += 1;
    } else if (lengths[(i + 1) * width + j] >= lengths[i * width + j + 1]) {
      i += 1;
    } else {
      j += 1;
    }
  }
  return result;
}
