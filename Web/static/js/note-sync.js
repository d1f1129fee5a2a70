// Saving an edit without losing anyone's (docs/WEB.md, "Revisions"): every save names the
// version it was made from — `base`, {revision, title, body} as the server had them. The
// server merges a late edit of an unlocked note itself; a locked note's it cannot read, so
// here the browser fetches the stored ciphertext, opens it with the note key it holds, merges
// and saves again — or, when both changed the same lines, keeps this edit as a conflict copy.
// Each function answers the server's version after the save, {revision, title, body}, and
// the conflict copy when one was made.

import { api, ApiError, segment } from './api.js';
import { merge } from './merge.js';
import { openNoteText, sealNoteText } from './locked-crypto.js';
import { asBytes, provedRequest } from './secure-session.js';

const attemptsAgainstChanges = 4;

/** An unlocked note: `edit` is {title?, body?} made from `base`. */
export async function saveUnlocked(noteID, base, edit) {
  const answer = await api.patch(`/notes/${segment(noteID)}`, { ...edit, base });
  if (answer.outcome === 'conflictCopy') {
    // The note is as someone else left it; fetch it to show it.
    const detail = await api.get(`/notes/${segment(noteID)}`);
    return {
      server: { revision: detail.summary.revision, title: detail.summary.title, body: detail.body ?? '' },
      conflictCopy: answer.conflictCopy,
    };
  }
  const body = answer.outcome === 'merged' ? answer.mergedBody ?? edit.body ?? base.body : edit.body ?? base.body;
  return { server: { revision: answer.revision, title: answer.title, body }, conflictCopy: null };
}

/**
 * A locked note's body: sealed here under the note key (`keys.noteKey`, proved by
 * `keys.noteProof`), sent with the revision it was made from; a `409 conflict` means the note
 * changed meanwhile — open the stored body, merge, and try again.
 */
export async function saveLockedBody(noteID, base, body, keys) {
  let from = base;
  let text = body;
  for (let attempt = 0; attempt < attemptsAgainstChanges; attempt += 1) {
    const sealed = await sealNoteText(keys.noteKey, text);
    try {
      const answer = await provedRequest('PUT', `/notes/${segment(noteID)}/locked-body`, {
        ...sealed, noteProof: keys.noteProof, passphraseProof: keys.passphraseProof || undefined, baseRevision: from.revision,
      });
      return { server: { revision: answer.revision, title: answer.title, body: text }, conflictCopy: null };
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 409 && error.code === 'conflict')) throw error;
    }
    const detail = await api.get(`/notes/${segment(noteID)}`);
    if (!detail.locked) throw new Error('The note was unlocked meanwhile: open it again.');
    const stored = await openNoteText(keys.noteKey, {
      iv: asBytes(detail.locked.iv), tag: asBytes(detail.locked.tag), ciphertext: asBytes(detail.locked.ciphertext),
    }, detail.locked.bodyFormat);
    const server = { revision: detail.summary.revision, title: detail.summary.title, body: stored };
    const result = merge(from.body, stored, text);
    if (result.conflict) {
      const copy = await sealNoteText(keys.noteKey, text);
      const answer = await provedRequest('PUT', `/notes/${segment(noteID)}/locked-body`, {
        ...copy, noteProof: keys.noteProof, passphraseProof: keys.passphraseProof || undefined, asConflictCopy: true,
      });
      return { server, conflictCopy: answer.conflictCopy };
    }
    text = result.merged;
    from = server;
  }
  throw new Error('The note keeps changing elsewhere: try again in a moment.');
}
