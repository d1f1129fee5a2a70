// Live updates (docs/WEB.md, "Live updates"): one Server-Sent Events stream per page, read
// with fetch (it needs the origin token header). The server says what changed — ids, kinds and
// revisions, never content — and the page fetches what it shows:
//
//   note     {id, kind, revision}  a note changed, was created, locked, unlocked, shared,
//                                  unshared, deleted, restored or deleted for good
//   folders  {}                    the folders changed
//   lock     {reason}              another page of the account used Lock Now or auto-locked
//   keybag   {state}               the keybag locked or unlocked
//   resync   {}                    events may have been missed: read everything shown again
//   signedOut                      the session ended
//
// The stream reconnects by itself (after 2 s) until `stop`.

import { openStream } from './api.js';

const retryMs = 2000;

/** Starts listening; `handlers` has a function per event name. Returns a stop function. */
export function startLiveUpdates(handlers) {
  let stopped = false;
  let controller = null;
  let retryTimer = null;

  const connect = async () => {
    if (stopped) return;
    controller = new AbortController();
    try {
      const response = await openStream('/events', { signal: controller.signal });
      if (response.status === 401) return; // signed out: the page says so
      if (!response.ok || !response.body) throw new Error(`live updates answered ${response.status}`);
      handlers.connected?.();
      await readEvents(response.body, (name, data) => handlers[name]?.(data));
    } catch {
      // Offline, aborted, or the daemon restarted: try again below.
    }
    if (!stopped) retryTimer = setTimeout(connect, retryMs);
  };
  connect();

  return () => {
    stopped = true;
    clearTimeout(retryTimer);
    controller?.abort();
  };
}

/** Reads a text/event-stream body, calling `onEvent(name, data)` for each event. */
async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) name = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      if (!data && name === 'message') continue; // a comment: keep-alive
      let parsed = {};
      try { parsed = data ? JSON.parse(data) : {}; } catch { parsed = {}; }
      onEvent(name, parsed);
    }
  }
}
