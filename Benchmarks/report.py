#!/usr/bin/env python3
"""Combines tresor.json and the peers' JSON files of one run into results.json, results.md
(the table, with every Tresor figure as a ratio to a peer's and each performance target of
BENCHMARKS.md met or not) and latency-vs-items.png.

  report.py OUT_DIR
"""
import json
import os
import sys

out = sys.argv[1]


def load(name):
    path = os.path.join(out, name)
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return None


tresor = load("tresor.json") or {}
gk = load("peer-gnome-keyring.json")
kp = load("peer-keepassxc.json")
pw = load("peer-pass.json")
ossl = load("peer-openssl.json")
# the Secret Service measured by tresor-bench's own client (`ss-client`) on the peers
gk_ss = load("peer-gnome-keyring-ss.json")
kp_ss = load("peer-keepassxc-ss.json")
ab = load("peer-secret-tool-ab.json")  # secret-tool lookup, Tresor and gnome-keyring interleaved
machine = load("machine.json") or {}

kc = (tresor.get("keychain") or {}).get("counts", [])
notes = tresor.get("notes") or {}


def g(d, *keys, default=None):
    for k in keys:
        if d is None:
            return default
        if isinstance(k, int):
            d = d[k] if isinstance(d, list) and len(d) > k else None
        else:
            d = d.get(k) if isinstance(d, dict) else None
    return d if d is not None else default


def fmt(x, unit="", digits=3):
    if x is None:
        return "—"
    if isinstance(x, (int, float)):
        if abs(x) >= 100:
            s = f"{x:,.0f}"
        elif abs(x) >= 10:
            s = f"{x:.1f}"
        else:
            s = f"{x:.{digits}g}" if abs(x) < 1 else f"{x:.2f}"
        return s + unit
    return str(x)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def rfmt(r):
    return "—" if r is None else (f"{r:.3f}×" if r < 0.1 else f"{r:.2f}×")


def largest_at_most(entries, n):
    c = [e for e in entries if e.get("items", 0) <= n]
    return c[-1] if c else (entries[0] if entries else None)


def size_entry(peer, items):
    if not peer:
        return None
    sizes = peer.get("sizes", [])
    return largest_at_most(sizes, items)


lines = []
P = lines.append
P("# Benchmark results")
P("")
P(f"Run {tresor.get('started', '?')} → {tresor.get('finished', '?')}{' (SMOKE: tiny counts, not a measurement)' if tresor.get('smoke') else ''}.")
if machine:
    P(f"Machine: {machine.get('cpu', '?')}, {machine.get('cores', '?')} cores, {machine.get('memory', '?')}; "
      f"{machine.get('os', '')}; {machine.get('swift', '')}. Load average at start: {machine.get('load_start', '?')}, "
      f"at end: {machine.get('load_end', '?')}. Commit {machine.get('commit', '?')}"
      + (f" plus uncommitted edits (others' work in progress) to {machine['uncommitted_sources'].strip()}" if machine.get('uncommitted_sources', '').strip() else "") + ".")
if tresor.get("error"):
    P(f"\n**Tresor harness error:** `{tresor['error']}`")
if (tresor.get("keychain") or {}).get("error"):
    P(f"\n**Keychain scenarios stopped:** `{tresor['keychain']['error']}` (the counts below were measured)")
P("")

# --- keychain table ---------------------------------------------------------------------------
if kc:
    P("## Keychain through the daemon (one connected client, TresorKit `Keychain`)")
    P("")
    P("| items | add p50 / p99 | lookup p50 / p99 | find by label p50 / p99 | update p50 / p99 | delete p50 / p99 | `tresor item get` p50 (one process) | … `--group tresor` p50 | `tresor --help` p50 | daemon RSS at end | database |")
    P("|---:|---|---|---|---|---|---|---|---|---:|---:|")
for e in kc:
    def pp(k):
        return f"{fmt(g(e, k, 'p50_ms'))} / {fmt(g(e, k, 'p99_ms'))} ms"
    P(f"| {e['items']:,} | {pp('add')} | {pp('lookup')} | {pp('find_by_label')} | {pp('update')} | {pp('delete')} | "
      f"{fmt(g(e, 'cli_get', 'p50_ms'))} ms | {fmt(g(e, 'cli_get_group', 'p50_ms'))} ms | {fmt(g(e, 'cli_help', 'p50_ms'))} ms | {fmt(g(e, 'daemon_rss_kb', default=0) / 1024, ' MB')} | "
      f"{fmt(g(e, 'database_bytes', default=0) / 1e6, ' MB')} |")
if kc:
    P("")
    P("Bulk fill (in-process TresorKeychain `Keychain` on the same home, daemon stopped): " + ", ".join(
        f"{e['fill_items']:,} items in {e['fill_seconds']:.1f} s" for e in kc) + ".")
    P("Keybag unlock through the daemon (one PBKDF2 run, 600,000 rounds): " + ", ".join(
        f"{fmt(e.get('keybag_unlock_ms'))} ms" for e in kc) + ".")
    P("")
    P("Where a lookup's time goes, and the daemon's memory:")
    P("")
    P("| items | lookup wall/op | `GET /v1/status` p50 (TresorKit client) | daemon CPU/lookup | … per status | client CPU/lookup | daemon CPU/add | RSS at start | RSS after lookups | RSS after find scans | RSS end (HWM) |")
    P("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for e in kc:
        mb = lambda k: fmt((e.get(k) or 0) / 1024, " MB")
        P(f"| {e['items']:,} | {fmt(g(e, 'lookup', 'wall_ms_per_op'))} ms | {fmt(g(e, 'status', 'p50_ms'))} ms | "
          f"{fmt(g(e, 'lookup', 'daemon_cpu_ms_per_op'))} ms | {fmt(g(e, 'status', 'daemon_cpu_ms_per_op'))} ms | "
          f"{fmt(g(e, 'lookup', 'client_cpu_ms_per_op'))} ms | {fmt(g(e, 'add', 'daemon_cpu_ms_per_op'))} ms | {mb('daemon_rss_kb_started')} | "
          f"{mb('daemon_rss_kb_after_lookups')} | {mb('daemon_rss_kb_after_find')} | {mb('daemon_rss_kb')} ({mb('daemon_hwm_kb')}) |")
    P("")
    if any(e.get("in_process_delete") for e in kc):
        P("Where a write's and a find's time goes: the same operations in-process (TresorKeychain `Keychain`, daemon stopped, "
          "each write committed and synced), and this disk's floor under a synced commit (a 4 KiB page written and "
          "`fdatasync`ed, the file growing or overwritten in place), right after the daemon's writes:")
        P("")
        P("| items | add in-process | update in-process | delete in-process | find by label in-process | 4 KiB + `fdatasync`, appending | … overwriting |")
        P("|---:|---:|---:|---:|---:|---:|---:|")
        for e in kc:
            P(f"| {e['items']:,} | {fmt(g(e, 'in_process_add', 'p50_ms'), ' ms')} | {fmt(g(e, 'in_process_update', 'p50_ms'), ' ms')} | "
              f"{fmt(g(e, 'in_process_delete', 'p50_ms'), ' ms')} | {fmt(g(e, 'in_process_find_by_label', 'p50_ms'), ' ms')} | "
              f"{fmt(g(e, 'disk_sync', 'append_fdatasync', 'p50_ms'), ' ms')} | {fmt(g(e, 'disk_sync', 'overwrite_fdatasync', 'p50_ms'), ' ms')} |")
        P("")
    transport = tresor.get("transport") or {}
    near = largest_at_most(kc, 100_000)
    if transport and near:
        P("### Where a request's time goes (one kept-alive connection, the same raw client for every row, waiting as TresorKit does)")
        P("")
        P("| request | p50 | p99 | tresord's CPU per request |")
        P("|---|---:|---:|---:|")
        for label, value in (
            ("a bare Unix socket: a thread answering every read (the kernel's round trip)", transport.get("bare_socket")),
            ("… the same with the client asleep in `recv` while it waits (no `AnswerWait`)", transport.get("bare_socket_sleeping")),
            ("SwiftNIO HTTP/1.1 pipeline, one synchronous handler (`transport-floor nio`)", transport.get("nio")),
            ("Hummingbird, one route (`transport-floor hummingbird`)", transport.get("hummingbird")),
            (f"tresord `GET /v1/status` ({near['items']:,} items)", near.get("raw_status")),
            (f"tresord lookup, `POST /v1/items/search` ({near['items']:,} items)", near.get("raw_lookup")),
            (f"… the same lookup on a new connection each time: connect, request, close ({near['items']:,} items)", near.get("raw_lookup_new_connection")),
            (f"tresord lookup, `GET /v1/items/secret` — no JSON either way ({near['items']:,} items)", near.get("raw_secret_lookup")),
            (f"… the keychain's part alone: `copyMatchingFromIndex` in-process, no transport ({near['items']:,} items)", near.get("in_process_lookup")),
            (f"… a find by label's keychain part alone: `copyMatchingFromIndex` in-process, attributes returned ({near['items']:,} items)", near.get("in_process_find_by_label")),
            (f"a lookup's floor with any protocol: the keychain in `transport-floor nio`'s synchronous handler, `GET /<account>` answered with the secret ({near['items']:,} items)", near.get("keychain_floor_lookup")),
        ):
            cpu = g(value, 'daemon_cpu_ms_per_op')
            P(f"| {label} | {fmt(g(value, 'p50_ms'), ' ms')} | {fmt(g(value, 'p99_ms'), ' ms')} | {fmt(cpu, ' ms') if cpu is not None else '—'} |")
        P("")
    secitem = near.get("secitem_lookup") if near else None
    if secitem and secitem.get("tresorkit"):
        secitem_ratio = secitem.get("ratio_p50")
        P(f"Apple's `SecItemCopyMatching` (TresorSecurity) against TresorKit's `Keychain.secret`, alternating on one connection "
          f"({near['items']:,} items): p50 {fmt(g(secitem, 'p50_ms'), ' ms')} against {fmt(g(secitem['tresorkit'], 'p50_ms'), ' ms')}, "
          f"ratio {fmt(secitem_ratio)} (target ≤ 1.05: {'met' if secitem_ratio is not None and secitem_ratio <= 1.05 else 'not met'}).")
        floor = secitem.get("floor")
        if floor:
            P(f"In the same rounds, the floor of the SecItem API — `Keychain.secret` after the query was built as a caller builds it "
              f"(`[String: Any]` `as CFDictionary`) and read back from the dictionary: p50 {fmt(g(floor, 'p50_ms'), ' ms')}, "
              f"{fmt(secitem.get('floor_ratio_p50'))}× `Keychain.secret`; `SecItemCopyMatching` is {fmt(secitem.get('ratio_to_floor_p50'))}× the floor.")
        P("")
    wire = tresor.get("wire_coding") or {}
    if wire:
        P(f"The JSON of one lookup alone (`APICoding`'s coders in a hot loop, best of five; request {wire['request_bytes']} bytes, answer {wire['response_bytes']} bytes): "
          f"the client encodes the request in {fmt(wire['client_encode_request_us'])} µs, the daemon decodes it in {fmt(wire['daemon_decode_request_us'])} µs "
          f"and encodes the answer in {fmt(wire['daemon_encode_response_us'])} µs, the client decodes that in {fmt(wire['client_decode_response_us'])} µs.")
        if wire.get("find_response_bytes"):
            P(f"The same for a find by label, answered with the item's attributes (request {wire['find_request_bytes']} bytes, answer {wire['find_response_bytes']} bytes): "
              f"{fmt(wire['find_client_encode_request_us'])} µs, {fmt(wire['find_daemon_decode_request_us'])} µs, "
              f"{fmt(wire['find_daemon_encode_response_us'])} µs and {fmt(wire['find_client_decode_response_us'])} µs.")
        P("")
    P("### Concurrent clients (mixed: 70 % lookup, 10 % add, 10 % update, 10 % delete; each client its own connection)")
    P("")
    P("| items | clients | ops/s | p50 | p99 |")
    P("|---:|---:|---:|---:|---:|")
    for e in kc:
        for c in e.get("concurrent", []):
            P(f"| {e['items']:,} | {c['clients']} | {fmt(c.get('ops_per_second'))} | {fmt(c.get('p50_ms'))} ms | {fmt(c.get('p99_ms'))} ms |")
    P("")

# --- peers table ------------------------------------------------------------------------------
if kc or notes:
    P("## Side by side (Tresor ÷ peer; below 1× means Tresor is faster)")
    P("")
    P("| operation | items (Tresor / peer) | Tresor | peer | peer figure | ratio |")
    P("|---|---|---:|---:|---|---:|")
rows = []
# the peers' own count (1,000) and the targets' (100,000); every count is in the tables above
shown = [e for e in kc if e["items"] in (1000, 100_000)] or kc
for e in shown:
    n = e["items"]
    for name, peer in (("gnome-keyring", gk), ("KeePassXC", kp)):
        pe = size_entry(peer, n)
        if not pe:
            continue
        t = g(e, "lookup", "p50_ms")
        rows.append(("lookup by primary key p50", f"{n:,} / {pe['items']:,}", t, pe.get("lookup_p50_ms"), f"{name} SearchItems + GetSecret (D-Bus, in-process)"))
        rows.append(("add p50", f"{n:,} / {pe['items']:,}", g(e, "add", "p50_ms"), g(pe, "add", "p50_ms"), f"{name} CreateItem"))
        rows.append(("find by non-key attribute p50", f"{n:,} / {pe['items']:,}", g(e, "find_by_label", "p50_ms"), g(pe, "find_by_tag", "p50_ms"), f"{name} SearchItems(tag)"))
        rows.append(("update p50", f"{n:,} / {pe['items']:,}", g(e, "update", "p50_ms"), g(pe, "update", "p50_ms"), f"{name} Item.SetSecret"))
        rows.append(("delete p50", f"{n:,} / {pe['items']:,}", g(e, "delete", "p50_ms"), g(pe, "delete", "p50_ms"), f"{name} Item.Delete"))
        rows.append(("one CLI process: get p50", f"{n:,} / {pe['items']:,}", g(e, "cli_get", "p50_ms"), g(pe, "secret_tool_lookup", "p50_ms"), f"`secret-tool lookup` ({name})"))
        rows.append(("one CLI process: get --group p50", f"{n:,} / {pe['items']:,}", g(e, "cli_get_group", "p50_ms"), g(pe, "secret_tool_lookup", "p50_ms"), f"`secret-tool lookup` ({name})"))
    if pw:
        rows.append(("one CLI process: get p50", f"{n:,} / {pw['items']:,}", g(e, "cli_get", "p50_ms"), g(pw, "show", "p50_ms"), "`pass show`"))
        rows.append(("one CLI process: get --group p50", f"{n:,} / {pw['items']:,}", g(e, "cli_get_group", "p50_ms"), g(pw, "show", "p50_ms"), "`pass show`"))
        rows.append(("add p50 (vs one `pass insert` process)", f"{n:,} / {pw['items']:,}", g(e, "add", "p50_ms"), g(pw, "insert", "p50_ms"), "`pass insert`"))
for (op, items, t, p, what) in rows:
    P(f"| {op} | {items} | {fmt(t)} ms | {fmt(p)} ms | {what} | {rfmt(ratio(t, p))} |")
# crypto vs openssl
chunk = {c["bytes"]: c for c in notes.get("chunk_crypto", [])}
store = {c["bytes"]: c for c in notes.get("attachments", [])}
o128 = g(ossl, "aes-128-gcm_1048576", "MBps")
o128s = g(ossl, "aes-128-gcm_16384", "MBps")
for size, label in ((1024, "1 KB"), (1 << 20, "1 MB"), (64 << 20, "64 MB")):
    c = chunk.get(size)
    s = store.get(size)
    if c:
        P(f"| attachment sealing, LockedNoteCrypto chunks, {label} | — | {fmt(c['seal_MBps'])} MB/s | {fmt(o128)} MB/s | `openssl speed -evp aes-128-gcm -bytes 1048576` | {rfmt(ratio(c['seal_MBps'], o128))} (higher is better) |")
        P(f"| attachment opening, LockedNoteCrypto chunks, {label} | — | {fmt(c['open_MBps'])} MB/s | {fmt(o128)} MB/s | same | {rfmt(ratio(c['open_MBps'], o128))} |")
    if s:
        P(f"| NotesStore.addAttachment (locked note), {label} | — | {fmt(s['add_MBps'])} MB/s | {fmt(o128)} MB/s | same | {rfmt(ratio(s['add_MBps'], o128))} |")
        P(f"| NotesStore.attachment (read, locked note), {label} | — | {fmt(s['read_MBps'])} MB/s | {fmt(o128)} MB/s | same | {rfmt(ratio(s['read_MBps'], o128))} |")
dm = {c["bytes"]: c for c in notes.get("chunk_crypto_default_malloc", [])}
if dm.get(64 << 20):
    c = dm[64 << 20]
    P(f"| sealing 64 MB with glibc's **default** malloc thresholds | — | {fmt(c['seal_MBps'])} MB/s | {fmt(o128)} MB/s | same | {rfmt(ratio(c['seal_MBps'], o128))} |")
# What bounds the store path: both layers sealed in memory, and the disk alone (no crypto).
tl, dw = notes.get("two_layer_crypto"), notes.get("durable_write")
if tl:
    P(f"| both layers sealed in memory (note key, then keybag layer; no file), {tl['bytes'] >> 20} MB | — | {fmt(tl['seal_MBps'])} MB/s | {fmt(o128)} MB/s | same | {rfmt(ratio(tl['seal_MBps'], o128))} |")
if dw:
    P(f"| the disk alone: {dw['bytes'] >> 20} MB written and fsynced, no crypto | — | {fmt(dw['MBps'])} MB/s | {fmt(o128)} MB/s | same | {rfmt(ratio(dw['MBps'], o128))} |")
    if dw.get("writeback_per_MiB_MBps"):
        P(f"| … with writeback started after each MiB (as the store path writes) | — | {fmt(dw['writeback_per_MiB_MBps'])} MB/s | {fmt(o128)} MB/s | same | {rfmt(ratio(dw['writeback_per_MiB_MBps'], o128))} |")
if kc or notes:
    P("")
if ossl:
    P("OpenSSL (" + ossl.get("version", "") + ", one core): " + ", ".join(
        f"{k} {v['MBps']:,.0f} MB/s" for k, v in ossl.items() if isinstance(v, dict)) + ".")
    P("")

# --- notes ------------------------------------------------------------------------------------
pc = notes.get("passphrase_change") or {}
notes_shown = bool(notes or tresor.get("keychain"))  # not in a --only secret-service run
if notes_shown:
    P("## Notes (in-process NotesStore, NotesSettings.production)")
    P("")
    P("| scenario | result |")
    P("|---|---|")
if notes:  # the in-process rows; a --only keychain run has the daemon's rows alone
    P(f"| one KDF run (PBKDF2-HMAC-SHA256, {notes.get('kdf_rounds', 0):,} rounds) = notes unlock cost | {fmt(g(notes, 'kdf', 'p50_ms'))} ms (p50 of {g(notes, 'kdf', 'n')}) |")
    P(f"| open a secure session (typed passphrase) | {fmt(notes.get('open_session_ms'))} ms |")
    P(f"| open a locked note with a 1 MB body inside the session | p50 {fmt(g(notes, 'open_locked_note_1MB', 'p50_ms'))} ms, p99 {fmt(g(notes, 'open_locked_note_1MB', 'p99_ms'))} ms |")
ln = notes.get("list_notes") or {}
if ln:
    P(f"| list every note (`NotesStore.notes`): {ln['notes']:,} notes — the passphrase change's locked notes and a tenth as many plain ones in folders | p50 {fmt(ln['p50_ms'])} ms |")
if pc:
    P(f"| passphrase change over {pc['notes']:,} locked notes holding {pc['attachment_bytes_total'] / 1e9:.2f} GB (home {pc['home_bytes'] / 1e9:.2f} GB) | "
      f"{fmt(pc['change_ms'])} ms (KDF {fmt(pc['kdf_ms'])} ms; target ≤ {fmt(pc['target_ms'])} ms) |")
nl = (tresor.get("keychain") or {}).get("note_list") or {}
if nl:
    P(f"| through the daemon: `tresor note list` of {nl['notes']:,} notes, one process per listing ({nl['n']} runs) | "
      f"p50 {fmt(nl['p50_ms'])} ms; the daemon's CPU {fmt(nl['daemon_cpu_ms'])} ms per listing |")
up = (tresor.get("keychain") or {}).get("attachment_upload") or {}
if up:
    grown = (up["daemon_hwm_kb_after"] - up["daemon_hwm_kb_before"]) * 1024
    P(f"| through the daemon: `tresor note attach` of a {up['bytes'] >> 20} MB file, one process per upload ({up['n']} runs) | "
      f"best {fmt(up['best_MBps'])} MB/s, p50 {fmt(up['p50_ms'])} ms; the daemon's peak RSS {fmt(up['daemon_hwm_kb_before'] / 1024)} → "
      f"{fmt(up['daemon_hwm_kb_after'] / 1024)} MB (+{fmt(grown / up['bytes'], '×')} the file) |")
    if "daemon_hwm_kb_after_export" in up:
        exported = (up["daemon_hwm_kb_after_export"] - up["daemon_hwm_kb_before"]) * 1024
        P(f"| … and `tresor note export-attachment` of it back to a file ({up['n']} runs) | "
          f"best {fmt(up['export_best_MBps'])} MB/s, p50 {fmt(up['export_p50_ms'])} ms; the daemon's peak RSS → "
          f"{fmt(up['daemon_hwm_kb_after_export'] / 1024)} MB (+{fmt(exported / up['bytes'], '×')} the file) |")
if notes_shown:
    P("")

# --- backups ------------------------------------------------------------------------------------
bk = tresor.get("backup") or {}
if bk:
    kdf_mb = 128 * 8 * (1 << bk["work_factor"]) / (1 << 20)  # scrypt's memory at r = 8
    P("## Backup and restore (`tresor backup`, through the daemon)")
    P("")
    P(f"A home of {bk['items']:,} items, {bk['notes']:,} notes and {bk['attachment_bytes'] / 1e9:.2f} GB of attachments "
      f"({bk['home_bytes'] / 1e9:.2f} GB on disk); the backup file {bk['backup_bytes'] / 1e9:.2f} GB. Scrypt work factor "
      f"{bk['work_factor']} (N = 2^{bk['work_factor']}, r = 8: {kdf_mb:.0f} MiB), one run {fmt(bk['kdf_ms'])} ms.")
    P("")
    P("| operation | wall time | throughput (backup bytes) | ÷ `age -p` of a tar of the home (target ≥ 0.8) | daemon peak RSS growth (scrypt's part; the rest) |")
    P("|---|---|---|---|---|")
    age = bk.get("age_p_tar") if isinstance(bk.get("age_p_tar"), dict) else None
    for phase, words in (("create", "`tresor backup create`"), ("restore", "`tresor backup restore` into a new home")):
        f = bk.get(phase) or {}
        vs = bk.get(f"{phase}_vs_age")
        P(f"| {words} | {fmt(f.get('seconds'), ' s')} | {fmt(f.get('MBps'), ' MB/s')} | {fmt(vs, '×') if vs else '—'} | "
          f"{fmt(f.get('rss_growth_MB'), ' MiB')} ({kdf_mb:.0f} MiB; {fmt(max(0, (f.get('rss_growth_MB') or 0) - kdf_mb), ' MiB')}) |")
    if age:
        P(f"| `tar -cf - home \\| age -p` (Debian's age, same passphrase, same work factor) | {fmt(age['seconds'], ' s')} | {fmt(age['MBps'], ' MB/s')} | 1× | — |")
    P("")

# --- Secret Service -------------------------------------------------------------------------------
# One client for every provider (tresor-bench ss-client: TresorDBus over libdbus, one connection):
# tresord --secret-service at each count, gnome-keyring and KeePassXC at theirs (peers.sh).
ss = tresor.get("secret_service") or {}
ss_counts = ss.get("counts") or []
ss_targets = []
FLAT = 1.25  # "flat": the largest count's p50 within 1.25× of the 1,000-item (smallest) one
if ss.get("skipped"):
    P(f"## Secret Service (D-Bus)\n\nSkipped: {ss['skipped']}.\n")
elif ss_counts or gk_ss or kp_ss or ab:
    P("## Secret Service (D-Bus): the same client for every provider")
    P("")
    P("`tresor-bench ss-client` (TresorDBus over libdbus, one connection, blocking calls) on a private session bus with no service folders; "
      "`SearchItems({service, account})` on the service, then `GetSecrets` of the item found, on one open session. "
      "OpenSession is the call alone (the client's own DH work apart; each session closed after).")
    P("")
    ss_rows = [("Tresor", e) for e in ss_counts] + [(n, p) for (n, p) in (("gnome-keyring", gk_ss), ("KeePassXC", kp_ss)) if p]
    P("On one open connection:")
    P("")
    P("| provider | items | floors: the bus's own `GetId` / the provider's `Peer.Ping` p50 | OpenSession `plain` p50 | OpenSession `dh-ietf1024` p50 | provider CPU per DH open (+ Close) | SearchItems + GetSecrets p50 / p99 (DH session) | … SearchItems p50 | … GetSecrets p50 | SearchItems + GetSecrets p50 (plain session) | SearchItems({account}) alone p50 | provider CPU per search + get |")
    P("|---|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    for name, e in ss_rows:
        err = f" (**error:** `{e['error']}`)" if e.get("error") else ""
        P(f"| {name}{err} | {e.get('items', 0):,} | {fmt(g(e, 'bus_round_trip', 'p50_ms'))} / {fmt(g(e, 'provider_ping', 'p50_ms'), ' ms')} | {fmt(g(e, 'open_session_plain', 'p50_ms'), ' ms')} | {fmt(g(e, 'open_session_dh', 'p50_ms'), ' ms')} | "
          f"{fmt(g(e, 'open_session_dh', 'provider_cpu_ms_per_op_with_close'), ' ms')} | "
          f"{fmt(g(e, 'lookup_dh', 'p50_ms'))} / {fmt(g(e, 'lookup_dh', 'p99_ms'))} ms | {fmt(g(e, 'search_dh', 'p50_ms'), ' ms')} | {fmt(g(e, 'get_secrets_dh', 'p50_ms'), ' ms')} | "
          f"{fmt(g(e, 'lookup_plain', 'p50_ms'), ' ms')} | {fmt(g(e, 'search_unique_attribute', 'p50_ms'), ' ms')} | {fmt(g(e, 'lookup_dh', 'provider_cpu_ms_per_op'), ' ms')} |")
    P("")
    P("A new client (what every `secret-tool` process is):")
    P("")
    P("| provider | items | connect (`Hello`) p50 | first call on it (`GetAll` of the service; Tresor identifies the client) p50 | … the same call on a known connection | `secret-tool lookup` p50 (one process) | provider CPU per `secret-tool lookup` | `secret-tool store` p50 | provider RSS at the end |")
    P("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, e in ss_rows:
        rss = e.get("provider_rss_kb")
        P(f"| {name} | {e.get('items', 0):,} | {fmt(g(e, 'new_connection', 'p50_ms'), ' ms')} | {fmt(g(e, 'first_call_new_connection', 'p50_ms'), ' ms')} | {fmt(g(e, 'get_all_known_connection', 'p50_ms'), ' ms')} | "
          f"{fmt(g(e, 'secret_tool_lookup', 'p50_ms'), ' ms')} | {fmt(g(e, 'secret_tool_lookup', 'provider_cpu_ms_per_op'), ' ms')} | {fmt(g(e, 'secret_tool_store', 'p50_ms'), ' ms')} | {fmt(rss / 1024, ' MB') if rss else '—'} |")
    P("")
    if ab:
        P(f"Interleaved (`Benchmarks/secret-tool-ab.py`, {ab['rounds']} rounds, each one `secret-tool lookup` per provider in a rotating order, each provider on its own private bus with {ab['items_per_provider']} items; load {' '.join(ab.get('load', []))}): "
          f"Tresor {fmt(g(ab, 'tresor', 'p50_ms'), ' ms')} p50 (provider CPU {fmt(g(ab, 'tresor', 'provider_cpu_ms_per_lookup'), ' ms')} per lookup), "
          f"gnome-keyring {fmt(g(ab, 'gnome-keyring', 'p50_ms'), ' ms')} ({fmt(g(ab, 'gnome-keyring', 'provider_cpu_ms_per_lookup'), ' ms')}), "
          f"no provider at all {fmt(g(ab, 'no provider', 'p50_ms'), ' ms')} (secret-tool's own floor): Tresor ÷ gnome-keyring {rfmt(ab.get('ratio_of_p50s'))} "
          f"(median of the rounds' ratios {rfmt(ab.get('median_paired_ratio'))}; above the floor {rfmt(ab.get('above_floor_ratio'))}); "
          f"provider CPU Tresor ÷ gnome-keyring {rfmt(ab.get('provider_cpu_ratio'))}."
          + (f" The build before the change (`--before`), in the same rounds: {fmt(g(ab, 'tresor-before', 'p50_ms'), ' ms')} p50, provider CPU "
             f"{fmt(g(ab, 'tresor-before', 'provider_cpu_ms_per_lookup'), ' ms')} per lookup ({rfmt(ab.get('before_provider_cpu_ratio'))} of gnome-keyring's)."
             if ab.get("tresor-before") else "")
          + (f" Run as uid {ab['uid']}." if ab.get("uid") is not None else "")
          + (f" The user's processes then: {ab['uid_processes']}, holding {ab['uid_descriptors']:,} descriptors (what Tresor reads, on a new "
             "connection of a program with an identity of its own, to find another holder of its socket; secret-tool, a generic "
             "client, is not looked at)." if ab.get("uid_descriptors") is not None else ""))
        P("")
    if any(e.get("in_process") for e in ss_counts):
        P("Tresor's keychain part of each call, in-process on the same store (no bus, no daemon; TresorKeychain `copyMatching` as `KeychainCollection` asks it):")
        P("")
        P("| items | search {service, account} p50 (SearchItems) | search {account} alone p50 | secret by id p50 (GetSecrets) |")
        P("|---:|---:|---:|---:|")
        for e in ss_counts:
            ip = e.get("in_process") or {}
            P(f"| {e['items']:,} | {fmt(g(ip, 'search', 'p50_ms'), ' ms')} | {fmt(g(ip, 'search_unique_attribute', 'p50_ms'), ' ms')} | {fmt(g(ip, 'secret_by_id', 'p50_ms'), ' ms')} |")
        P("")
    first = ss_rows[0][1] if ss_rows else {}
    extra = []
    if g(first, "client_dh_keygen", "p50_ms") is not None:
        extra.append(f"the client's own DH (TresorCrypto, the same in every row): key pair {fmt(g(first, 'client_dh_keygen', 'p50_ms'))} ms, "
                     f"agreement + HKDF {fmt(g(first, 'client_dh_agree', 'p50_ms'))} ms")
    if g(ss, "secret_tool_no_provider", "p50_ms") is not None:
        extra.append(f"`secret-tool lookup` on the bus with no provider at all (its own floor): {fmt(g(ss, 'secret_tool_no_provider', 'p50_ms'))} ms")
    scan = ss.get("socket_holders_scan")
    if scan:
        extra.append(f"Tresor's check of who else holds a new connection's socket (`UnixSockets.holders`: every descriptor of every process "
                     f"of the user) read {scan['descriptors']:,} descriptors of {scan['processes']} processes in "
                     f"{fmt(scan['cpu_ms_mean'], ' ms')} of CPU (mean of {scan['rounds']}): a floor under each new client's first call")
    if ss_counts:
        extra.append(f"Tresor's fill (in-process, daemon stopped, the client's group `{(ss.get('client_group') or '?')[:40]}`): " + ", ".join(
            f"{e.get('fill_items', 0):,} items in {e.get('fill_seconds', 0):.1f} s" for e in ss_counts))
    if ss.get("run_as"):
        extra.append(f"the scenario ran as {ss['run_as']}")
    if extra:
        P("; ".join(extra) + ".")
        P("")
    # targets: against gnome-keyring, same run, same client
    if ss_counts:
        base = ss_counts[0]
        # The targets hold for a program with an identity of its own or a remembered approval
        # (secret-tool is measured trusted: `tresor secret-service trust add`).
        if ab:
            items = ab["items_per_provider"]
            t, p = g(ab, "tresor", "provider_cpu_ms_per_lookup"), g(ab, "gnome-keyring", "provider_cpu_ms_per_lookup")
            ss_targets.append((f"the provider's own CPU per `secret-tool lookup` ≤ 0.3× gnome-keyring's — interleaved, both at {items} items",
                               t, p, ratio(ratio(t, p), 0.3), "ratio"))
            t, p = g(ab, "tresor", "p50_ms"), g(ab, "gnome-keyring", "p50_ms")
            ss_targets.append((f"one `secret-tool lookup` process ≤ 0.8× gnome-keyring's — interleaved, both at {items} items",
                               t, p, ratio(ratio(t, p), 0.8), "ratio"))
        for e in ss_counts:
            t, p = g(e, "secret_tool_lookup", "provider_cpu_ms_per_op"), g(gk_ss, "secret_tool_lookup", "provider_cpu_ms_per_op")
            ss_targets.append((f"the provider's own CPU per `secret-tool lookup` ≤ 0.3× gnome-keyring's ({e['items']:,} / {fmt(g(gk_ss, 'items'))} items)",
                               t, p, ratio(ratio(t, p), 0.3), "ratio"))
        for e in ss_counts:
            t, p = g(e, "secret_tool_lookup", "p50_ms"), g(gk_ss, "secret_tool_lookup", "p50_ms")
            ss_targets.append((f"one `secret-tool lookup` process ≤ 0.8× gnome-keyring's ({e['items']:,} / {fmt(g(gk_ss, 'items'))} items)",
                               t, p, ratio(ratio(t, p), 0.8), "ratio"))
        for e in ss_counts:
            # "A provider that does no work": Tresor's own `Peer.Ping`, answered by its loop.
            t, ping = g(e, "lookup_dh", "p50_ms"), g(e, "provider_ping", "p50_ms")
            floor = 2 * ping if ping is not None else None
            ss_targets.append((f"SearchItems + GetSecrets p50 on an open connection ≤ 1.5× two `Peer.Ping` round trips through the provider ({e['items']:,} items; "
                               "the second column: two pings)", t, floor, ratio(ratio(t, floor), 1.5), "ratio"))
        if len(ss_counts) > 1:
            last = ss_counts[-1]
            t, b0 = g(last, "lookup_dh", "p50_ms"), g(base, "lookup_dh", "p50_ms")
            ss_targets.append((f"… flat from {base['items']:,} to {last['items']:,} items (p50 within {FLAT}× of the {base['items']:,}-item figure)",
                               t, b0, ratio(ratio(t, b0), FLAT), "flat"))
        P("| target (Secret Service, Tresor ÷ gnome-keyring unless said, same client, same run) | Tresor | gnome-keyring | ratio | met |")
        P("|---|---:|---:|---:|:-:|")
        for (name, t, p, r, kind) in ss_targets:
            shown = rfmt(ratio(t, p))
            met = "—" if r is None else ("yes" if r <= 1.0 else "**no**")
            P(f"| {name} | {fmt(t, ' ms')} | {fmt(p, ' ms')}{' (Tresor at ' + format(base['items'], ',') + ')' if kind == 'flat' else ''} | {shown} | {met} |")
        P("")
        # OpenSession beside the peers (no target: recorded)
        last = ss_counts[-1]
        for kind in ("plain", "dh"):
            cells = []
            for name, peer in (("gnome-keyring", gk_ss), ("KeePassXC", kp_ss)):
                if peer:
                    cells.append(f"{rfmt(ratio(g(last, 'open_session_' + kind, 'p50_ms'), g(peer, 'open_session_' + kind, 'p50_ms')))} of {name}'s {fmt(g(peer, 'open_session_' + kind, 'p50_ms'), ' ms')}")
            P(f"OpenSession `{kind}` (no target): Tresor {fmt(g(last, 'open_session_' + kind, 'p50_ms'), ' ms')} at {last['items']:,} items" + (" — " + ", ".join(cells) if cells else "") + ".")
        P("")
    if gk_ss or kp_ss:
        P("Peers are filled to their largest size only (gnome-keyring rewrites its whole file on every `CreateItem`); Tresor's larger counts are compared with them there, which favours the peers.")
        P("")

# --- targets ----------------------------------------------------------------------------------
targets = []
big = largest_at_most(kc, 100_000) if kc else None
if big:
    n = big["items"]
    gke = size_entry(gk, n)
    t = g(big, "lookup", "p50_ms")
    targets.append((f"lookup by primary key through the daemon at 100,000 items: p50 ≤ 0.1 ms", f"{fmt(t)} ms at {n:,}", ratio(t, 0.1),
                    f"{rfmt(ratio(t, g(gke, 'lookup_p50_ms')))} of gnome-keyring's search+get at {g(gke, 'items', default=0):,}" if gke else "—"))
    a = g(big, "add", "p50_ms")
    first = g(kc[0], "add", "p50_ms")
    flat = ratio(a, first)
    targets.append((f"add at 100,000 items: p50 ≤ 1 ms, flat as the store grows", f"{fmt(a)} ms at {n:,} ({rfmt(flat)} of the {kc[0]['items']:,}-item figure)", ratio(a, 1.0),
                    f"{rfmt(ratio(a, g(gke, 'add', 'p50_ms')))} of gnome-keyring's CreateItem at {g(gke, 'items', default=0):,}" if gke else "—"))
    # Search, update and delete at lookup speed: each as a ratio at every count up to 100,000,
    # the worst one against the target.
    upto = [e for e in kc if e["items"] <= 100_000]
    def worst(name, base):
        rs = [(e["items"], ratio(g(e, name, "p50_ms"), base(e))) for e in upto]
        known = [r for _, r in rs if r is not None]
        return (max(known) if known else None), ", ".join(f"{rfmt(r)} at {n:,}" for n, r in rs)
    w, cells = worst("find_by_label", lambda e: g(e, "lookup", "p50_ms"))
    at1k = next((e for e in kc if e["items"] == 1000), None)
    gk1k = size_entry(gk, 1000)
    gk_find = g(gk1k, "find_by_tag", "p50_ms")
    targets.append((f"find by label p50 ≤ 2× a lookup by primary key, at every count to 100,000", cells, ratio(w, 2.0), "—"))
    if at1k and gk_find is not None:
        r = ratio(g(at1k, "find_by_label", "p50_ms"), gk_find)
        targets.append((f"find by label p50 ≤ 0.3× gnome-keyring's SearchItems by an attribute, both at 1,000 items",
                        f"{fmt(g(at1k, 'find_by_label', 'p50_ms'))} ms against {fmt(gk_find)} ms ({rfmt(r)})", ratio(r, 0.3), f"{rfmt(r)} of gnome-keyring's"))
    kp_set = g(size_entry(kp, 1000), "update", "p50_ms")
    for op in ("update", "delete"):
        w, cells = worst(op, lambda e: g(e, "add", "p50_ms"))
        targets.append((f"{op} p50 ≤ 1.5× an add, at every count to 100,000", cells, ratio(w, 1.5), "—"))
        if kp_set is not None:
            w, cells = worst(op, lambda e: kp_set)
            targets.append((f"{op} p50 ≤ 0.5× KeePassXC's Item.SetSecret ({fmt(kp_set)} ms at {g(size_entry(kp, 1000), 'items', default=0):,} items), at every count to 100,000",
                            cells, ratio(w, 0.5), f"{rfmt(w)} of KeePassXC's at worst"))
    c = g(big, "cli_get", "p50_ms")
    peer = []
    if gke:
        peer.append(f"{rfmt(ratio(c, g(gke, 'secret_tool_lookup', 'p50_ms')))} of secret-tool")
    if pw:
        peer.append(f"{rfmt(ratio(c, g(pw, 'show', 'p50_ms')))} of `pass show`")
    targets.append((f"one CLI process `tresor item get` ≤ 10 ms (as README writes it, at {n:,} items)", f"{fmt(c)} ms", ratio(c, 10.0), ", ".join(peer) or "—"))
    cg = g(big, "cli_get_group", "p50_ms")
    if cg is not None:
        peer = []
        if gke:
            peer.append(f"{rfmt(ratio(cg, g(gke, 'secret_tool_lookup', 'p50_ms')))} of secret-tool")
        if pw:
            peer.append(f"{rfmt(ratio(cg, g(pw, 'show', 'p50_ms')))} of `pass show`")
        targets.append((f"… `tresor item get --group tresor` (blind index) ≤ 10 ms, at {n:,} items", f"{fmt(cg)} ms (`tresor --help` alone: {fmt(g(big, 'cli_help', 'p50_ms'))} ms)", ratio(cg, 10.0), ", ".join(peer) or "—"))
c64 = chunk.get(64 << 20) or chunk.get(1 << 20)
if c64 and o128:
    targets.append(("attachment sealing ≥ `openssl speed -evp aes-128-gcm`", f"{fmt(c64['seal_MBps'])} MB/s (chunks, {c64['bytes'] >> 20} MB); store path {fmt(g(store.get(c64['bytes']), 'add_MBps'))} MB/s",
                    ratio(o128, c64["seal_MBps"]), f"{rfmt(ratio(c64['seal_MBps'], o128))} of OpenSSL's {fmt(o128)} MB/s"))
    sp = store.get(c64["bytes"])
    if sp:
        # Not a target of its own: the sealing is (above). This path also writes and fsyncs the
        # file, so its bound is the disk, shown beside it; "—" in the met column says so.
        disk = f"; the disk alone, no crypto: {fmt(dw['MBps'])} MB/s ({fmt(dw.get('writeback_per_MiB_MBps'))} with writeback per MiB)" if dw else ""
        targets.append((f"… beside it, bound by the disk: the whole store path (NotesStore.addAttachment to a locked note, {c64['bytes'] >> 20} MB: two GCM layers, the file written and fsynced)",
                        f"{fmt(sp['add_MBps'])} MB/s{disk}", None, f"{rfmt(ratio(sp['add_MBps'], o128))} of OpenSSL's {fmt(o128)} MB/s"))
if pc:
    targets.append((f"passphrase change over {pc['notes']:,} locked notes / {pc['attachment_bytes_total'] / 1e9:.2f} GB ≤ one KDF run + 1 s", f"{fmt(pc['change_ms'])} ms",
                    pc["ratio_to_target"], "—"))
o1 = g(notes, "open_locked_note_1MB", "p50_ms")
if o1 is not None:
    targets.append(("open a 1 MB locked note inside a session ≤ 2 ms", f"{fmt(o1)} ms p50", ratio(o1, 2.0), "—"))
mx = kc[-1] if kc else None
if mx:
    rss = (mx.get("daemon_rss_kb_after_lookups") or mx.get("daemon_rss_kb", 0)) / 1024
    hwm = mx.get("daemon_hwm_kb", 0) / 1024
    targets.append((f"daemon memory with 1,000,000 items ≤ 150 MB resident", f"{fmt(rss)} MB at {mx['items']:,} items after its lookups" + ("" if mx["items"] >= 1_000_000 else " (1,000,000 not run)"),
                    ratio(rss, 150.0), "—"))
    if hwm:
        targets.append((f"… its peak over the whole scenario (finds by label, writes, 16 concurrent clients)", f"{fmt(hwm)} MB peak, {fmt(mx.get('daemon_rss_kb', 0) / 1024)} MB still resident at the end",
                        ratio(mx.get('daemon_rss_kb', 0) / 1024, 150.0), "—"))
# --- web server ----------------------------------------------------------------------------
# tresord --web on a home's SQLite (1 instance) and on one PostgreSQL database (1 and 2
# instances): sign-in, note list, note open, note save over keep-alive connections
# (Benchmarks/Sources/tresor-bench/WebBench.swift; BENCHMARKS.md, "Web server").
web = tresor.get("web") or {}
if web.get("scales"):
    P("## Web server (`tresord --web`: 1 instance on SQLite, 1 and 2 on PostgreSQL)")
    P("")
    P(f"{web['connections']} keep-alive connections (spread over the instances), {fmt(web['phase_seconds'])} s per operation; "
      f"seeded accounts' passwords at {web['seeded_password_rounds']:,} PBKDF2 rounds, the {web['signin_accounts']} sign-in accounts' at "
      f"{web['signin_password_rounds']:,} (production). PostgreSQL with its defaults (fsync, synchronous_commit on)"
      + (f"; PostgreSQL: {web['postgres']}" if isinstance(web.get("postgres"), str) else "") + ".")
    P("")
    P("| scale | instances | operation | requests/s | p50 | p99 | errors | daemon CPU / request | PostgreSQL CPU / request | daemon RSS after |")
    P("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    names = {"sqlite-1": "1 × SQLite", "postgres-1": "1 × PostgreSQL", "postgres-2": "2 × PostgreSQL"}
    ops = (("signin", "sign-in"), ("list", "note list"), ("open", "note open"), ("save", "note save"))
    for sc in web["scales"]:
        label = f"{sc['accounts']:,} × {sc['notes_per_account']}"
        for key, cname in names.items():
            c = g(sc, "configs", key)
            if not c:
                continue
            for op, oname in ops:
                f = g(c, "phases", op) or {}
                rss = ", ".join(fmt(x) for x in (f.get("daemon_rss_MB") or [])) + " MB"
                P(f"| {label} | {cname} | {oname} | {fmt(f.get('requests_per_s'))} | {fmt(f.get('p50_ms'), ' ms')} | {fmt(f.get('p99_ms'), ' ms')} | "
                  f"{f.get('errors', '—')} | {fmt(f.get('daemon_cpu_ms_per_request'), ' ms')} | {fmt(f.get('postgres_cpu_ms_per_request'), ' ms')} | {rss} |")
    P("")
    seeds = []
    for sc in web["scales"]:
        for backend, f in (sc.get("seeding") or {}).items():
            seeds.append(f"{backend} {sc['accounts']:,} × {sc['notes_per_account']} in {fmt(f['seconds'], ' s')} ({fmt(f['notes_per_s'])} notes/s)")
    if seeds:
        P("Seeding through each backend's `WebStore` (PostgreSQL with synchronous_commit off while seeding): " + "; ".join(seeds) + ".")
        P("")
    if len(web["scales"]) >= 2:
        big, small = web["scales"][0], web["scales"][-1]
        flat = []
        for key, cname in names.items():
            b, s_ = g(big, "configs", key, "daemon_rss_MB"), g(small, "configs", key, "daemon_rss_MB")
            if b and s_:
                flat.append(f"{cname} {fmt(max(s_))} → {fmt(max(b))} MB ({rfmt(ratio(max(b), max(s_)))})")
        P(f"Daemon RSS after the load, {small['accounts']:,} → {big['accounts']:,} accounts: " + "; ".join(flat) + ".")
        P("")
    r = web.get("open_p50_postgres_over_sqlite")
    if r is not None:
        targets.append(("web note open: p50 on PostgreSQL (1 instance) ≤ 2× SQLite's", f"{rfmt(r)} SQLite's at {web['scales'][0]['accounts']:,} accounts", r / 2.0, "—"))
# --- sync ----------------------------------------------------------------------------------
# A change visible on the other device (two instances behind nginx), and a whole keychain's sync
# at each count beside `git clone` of a pass store and `keepassxc-cli merge`
# (SyncLiveBench.swift, SyncScaleBench.swift, Benchmarks/sync-peers.sh; BENCHMARKS.md, "Sync").
sync = tresor.get("sync") or {}


def median(values):
    values = sorted(v for v in (values or []) if v is not None)
    return values[len(values) // 2] if values else None


live = sync.get("live") or {}
if g(live, "visible_on_other_device", "p50_ms") is not None:
    v = live["visible_on_other_device"]
    P("## Sync")
    P("")
    P(f"A change on the laptop visible on the phone ({live.get('changes')} changes; {live.get('setup')}): "
      f"p50 {fmt(v['p50_ms'], ' ms')}, p99 {fmt(v['p99_ms'], ' ms')}, min {fmt(v['min_ms'], ' ms')}, max {fmt(v['max_ms'], ' ms')}.")
    P("")
    targets.append(("sync: a change visible on the other device (two instances behind nginx), p50 ≤ 1 s", fmt(v["p50_ms"], " ms"), v["p50_ms"] / 1000, "—"))
    targets.append(("… p99 ≤ 2 s", fmt(v["p99_ms"], " ms"), v["p99_ms"] / 2000, "—"))
scales = [sc for sc in (sync.get("scales") or []) if "first_sync" in sc]
if scales:
    if not live:
        P("## Sync")
        P("")
    P("| items + notes | seeding (laptop's first sync) | new device's first sync | its daemon's peak RSS | sync with nothing to do p50 | … server CPU per sync (instance + PostgreSQL) | … device CPU per sync | 100 changes applied p50 | … sent p50 | device removal (key roll) |")
    P("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for sc in scales:
        first = sc["first_sync"]
        cpu = sc.get("idle_sync_server_cpu_ms") or {}
        P(f"| {sc['items']:,} + {sc['notes']:,} | {fmt(g(sc, 'seeding', 'seconds'), ' s')} | {fmt(median([f['seconds'] for f in first]), ' s')} | "
          f"{fmt(max(f.get('peak_rss_MB', 0) for f in first), ' MB')} | {fmt(g(sc, 'idle_sync', 'p50_ms'), ' ms')} | "
          f"{fmt(cpu.get('instance'), ' ms')} + {fmt(cpu.get('postgres'), ' ms')} | {fmt(sc.get('idle_sync_device_cpu_ms'), ' ms')} | "
          f"{fmt(g(sc, 'apply_changes', 'p50_ms'), ' ms')} | {fmt(g(sc, 'push_changes', 'p50_ms'), ' ms')} | {fmt(sc.get('remove_device_ms'), ' ms')} |")
    P("")
    small, big = scales[0], scales[-1]
    peers_ = small.get("peers") or {}
    clone = median(g(peers_, "pass_git", "git_clone_ms"))
    merge = median(g(peers_, "keepassxc", "merge_ms"))
    first_ms = median([f["seconds"] * 1000 for f in small["first_sync"]])
    apply_ms = g(small, "apply_changes", "p50_ms")
    if clone is not None:
        P(f"Peers: `git clone file://…` of a pass store of {g(peers_, 'pass_git', 'entries'):,} entries p50 {fmt(clone, ' ms')}; "
          f"`keepassxc-cli merge` of {g(peers_, 'keepassxc', 'changes')} changes into {g(peers_, 'keepassxc', 'entries'):,} entries p50 {fmt(merge, ' ms')}.")
        P("")
    label = f"{small['items']:,} items + {small['notes']:,} notes"
    if clone is not None and merge is not None:
        targets.append((f"sync: a new device's first sync of {label} ≤ `git clone` of a pass store as large", fmt(first_ms, " ms"),
                        ratio(first_ms, clone), f"{rfmt(ratio(first_ms, clone))} of git clone"))
        targets.append((f"sync: {small['changes']} changes applied ≤ 0.2× `keepassxc-cli merge` of them into {g(peers_, 'keepassxc', 'entries', default=0):,} entries",
                        fmt(apply_ms, " ms"), ratio(apply_ms, merge) / 0.2, f"{rfmt(ratio(apply_ms, merge))} of the merge"))
    for sc in scales:
        cpu = sc.get("idle_sync_server_cpu_ms") or {}
        server_ms = (cpu.get("instance") or 0) + (cpu.get("postgres") or 0)
        targets.append((f"sync with nothing to do at {sc['items']:,} records: server time ≤ 5 ms (CPU of the instance + PostgreSQL per sync)", fmt(server_ms, " ms"), server_ms / 5, "—"))
    peak = max(f.get("peak_rss_MB", 0) for f in big["first_sync"])
    targets.append((f"sync: the daemon of a device syncing {big['items']:,} records ≤ 150 MB resident (VmHWM)", fmt(peak, " MB"), peak / 150, "—"))
    if big.get("remove_device_ms") is not None:
        targets.append((f"sync: a revocation's key roll at {big['items']:,} records ≤ 1 s (`tresor sync remove`)", fmt(big["remove_device_ms"], " ms"), big["remove_device_ms"] / 1000, "—"))

if targets:
    P("## Performance targets (from this run)")
    P("")
    P("| target | measured | ratio to target | met | ratio to peer |")
    P("|---|---|---:|:-:|---|")
for (name, measured, r, peer) in targets:
    met = "—" if r is None else ("yes" if r <= 1.0 else "**no**")
    P(f"| {name} | {measured} | {rfmt(r)} | {met} | {peer} |")
if targets:
    P("")
    P("Ratio to target: measured ÷ target for time/memory (≤ 1× meets it); for sealing throughput OpenSSL ÷ Tresor (≤ 1× meets it).")

md = "\n".join(lines) + "\n"
with open(os.path.join(out, "results.md"), "w") as f:
    f.write(md)
with open(os.path.join(out, "results.json"), "w") as f:
    json.dump({"machine": machine, "tresor": tresor, "peers": {"gnome-keyring": gk, "keepassxc": kp, "pass": pw, "openssl": ossl,
                                                          "gnome-keyring-ss": gk_ss, "keepassxc-ss": kp_ss, "secret-tool-ab": ab},
               "targets": [{"target": t[0], "measured": t[1], "ratio_to_target": t[2], "peer": t[3]} for t in targets],
               "secret_service_targets": [{"target": t[0], "tresor_ms": t[1], "peer_ms": t[2], "ratio_to_target": t[3]} for t in ss_targets]}, f, indent=1)

# --- plot ---------------------------------------------------------------------------------------
try:
    if not kc:
        raise ImportError("no keychain figures in this run")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
    for axis, key, title in ((ax[0], "lookup", "lookup by primary key (p50)"), (ax[1], "add", "add (p50)")):
        xs = [e["items"] for e in kc if g(e, key, "p50_ms") is not None]
        ys = [g(e, key, "p50_ms") for e in kc if g(e, key, "p50_ms") is not None]
        axis.plot(xs, ys, "o-", label="Tresor (daemon, TresorKit client)")
        for name, peer, style in (("gnome-keyring", gk, "s-"), ("KeePassXC", kp, "^-")):
            if not peer:
                continue
            sz = peer.get("sizes", [])
            if key == "lookup":
                px = [s["items"] for s in sz]
                py = [s["lookup_p50_ms"] for s in sz]
            else:
                px = [p["items"] for p in peer.get("add_curve", [])]
                py = [p["ms"] for p in peer.get("add_curve", [])]
                style = style[0]
            axis.plot(px, py, style, label=f"{name} (D-Bus{' search+get, p50' if key == 'lookup' else ' CreateItem, every call'})", alpha=0.8,
                      markersize=3 if key == "add" else 6)
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("items in the store")
        axis.set_ylabel("latency (ms)")
        axis.set_title(title)
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "latency-vs-items.png"), dpi=110)
    print(f"[report] wrote {out}/latency-vs-items.png", file=sys.stderr)
except ImportError as error:
    print(f"[report] no plot: {error}", file=sys.stderr)
print(f"[report] wrote {out}/results.md and results.json", file=sys.stderr)
