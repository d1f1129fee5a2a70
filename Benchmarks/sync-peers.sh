#!/usr/bin/env bash
# The sync scenarios' peers (BENCHMARKS.md, "Sync"), run by tresor-bench's sync scenario in the
# same run as Tresor's figures; prints one JSON object on stdout.
#
#   Benchmarks/sync-peers.sh WORK ENTRIES CHANGES ROUNDS
#
# pass through git: a `pass` store of ENTRIES entries (one GnuPG file each, encrypted to a
# cv25519 key made for the run, in 2 × 100 folders) committed, cloned bare, then `git clone
# file://…` of that bare repository timed ROUNDS times (file:// makes git use its pack protocol
# as over a network, not hard links).
# KeePassXC: a database of ENTRIES/2 entries (imported from KeePass XML, decryption time 100 ms
# as Benchmarks/peers.sh makes its databases), and the other machine's copy of it in which
# CHANGES entries have a new password and a later modification time; `keepassxc-cli merge -s`
# of that copy into the database (a fresh copy each time) timed ROUNDS times: what a KeePassXC
# user runs to take the other machine's changes.
# A peer whose tool is missing is reported as skipped.
set -euo pipefail
work=$1; entries=$2; changes=$3; rounds=$4
mkdir -p "$work"; cd "$work"
say() { echo "[sync-peers] $*" >&2; }
now() { date +%s.%N; }
ms() { python3 -c "import sys; print(round((float(sys.argv[2]) - float(sys.argv[1])) * 1000, 3))" "$1" "$2"; }
json_list() { local IFS=,; echo "[$*]"; }

pass_json='{"skipped": "pass, git or gpg not installed (Debian: pass)"}'
if command -v pass >/dev/null && command -v git >/dev/null && command -v gpg >/dev/null; then
  export GNUPGHOME="$work/gnupg" PASSWORD_STORE_DIR="$work/pass-store" HOME="$work"
  export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
  mkdir -p "$GNUPGHOME"; chmod 700 "$GNUPGHOME"
  gpg --batch --quiet --passphrase '' --quick-gen-key "sync bench <bench@example.invalid>" ed25519 sign never 2>/dev/null
  fpr=$(gpg --list-keys --with-colons | awk -F: '/^fpr/{print $10; exit}')
  gpg --batch --quiet --passphrase '' --quick-add-key "$fpr" cv25519 encr never 2>/dev/null
  pass init "$fpr" >/dev/null
  pass git init >/dev/null 2>&1
  start=$(now)
  # The entries' plaintexts, then gpg processes encrypting 2,000 each (`pass insert` per entry
  # takes ~20 ms); the result is the file pass writes: NAME.gpg encrypted to the store's key.
  python3 - "$PASSWORD_STORE_DIR" "$entries" <<'EOF'
import os, sys, secrets
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    kind = "items" if i % 2 == 0 else "notes"
    folder = os.path.join(root, kind, f"f{i % 100:02d}")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"entry-{i}"), "w") as f:
        if kind == "items":
            f.write(f"{secrets.token_urlsafe(18)}\nlogin: user{i}@example.com\nurl: https://site-{i}.example.com/\n")
        else:
            f.write(f"Note {i}\n" + f"Note {i} body line. " * 20 + "\n")
EOF
  find "$PASSWORD_STORE_DIR" -type f -name 'entry-*' ! -name '*.gpg' -print0 |
    xargs -0 -n 2000 gpg --batch --quiet --yes --trust-model always -r "$fpr" --encrypt-files 2>/dev/null
  find "$PASSWORD_STORE_DIR" -type f -name 'entry-*' ! -name '*.gpg' -delete
  git -C "$PASSWORD_STORE_DIR" add -A >/dev/null
  git -C "$PASSWORD_STORE_DIR" commit -q -m "bench entries"
  git clone -q --bare "$PASSWORD_STORE_DIR" "$work/pass-bare.git"
  say "pass: $entries entries made and committed in $(ms "$start" "$(now)") ms"
  clones=()
  for r in $(seq 1 "$rounds"); do
    rm -rf "$work/pass-clone"
    start=$(now)
    git clone -q "file://$work/pass-bare.git" "$work/pass-clone"
    clones+=("$(ms "$start" "$(now)")")
  done
  files=$(find "$work/pass-clone" -name '*.gpg' | wc -l)
  bytes=$(du -sb "$work/pass-bare.git" | cut -f1)
  pass_json="{\"entries\": $files, \"bare_repository_bytes\": $bytes, \"git_clone_ms\": $(json_list "${clones[@]}"), \"versions\": \"pass $(dpkg-query -W -f='${Version}' pass 2>/dev/null), $(git --version), $(gpg --version | head -1)\"}"
  rm -rf "$work/pass-clone" "$PASSWORD_STORE_DIR"
fi

keepassxc_json='{"skipped": "keepassxc-cli not installed (Debian: keepassxc)"}'
if command -v keepassxc-cli >/dev/null; then
  export QT_QPA_PLATFORM=offscreen
  kp_entries=$(( entries / 2 ))
  python3 - "$kp_entries" <<'EOF'
import base64, sys, uuid
n = int(sys.argv[1])
root = base64.b64encode(uuid.UUID(int=10**9).bytes).decode()
with open("base.xml", "w", encoding="utf-8") as f:
    f.write('<?xml version="1.0" encoding="utf-8" standalone="yes"?>\n<KeePassFile><Meta><Generator>bench</Generator>'
            f'<DatabaseName>bench</DatabaseName></Meta><Root><Group><UUID>{root}</UUID><Name>Root</Name>')
    for i in range(n):
        ident = base64.b64encode(uuid.UUID(int=i + 1).bytes).decode()
        f.write(f'<Entry><UUID>{ident}</UUID><Times><CreationTime>2026-11-01T00:00:00Z</CreationTime>'
                '<LastModificationTime>2026-11-01T00:00:00Z</LastModificationTime></Times>'
                f'<String><Key>Title</Key><Value>Site {i}</Value></String>'
                f'<String><Key>UserName</Key><Value>user{i}@example.com</Value></String>'
                f'<String><Key>Password</Key><Value ProtectInMemory="True">secret-{i}</Value></String>'
                f'<String><Key>URL</Key><Value>https://site-{i}.example.com/</Value></String></Entry>')
    f.write('</Group></Root></KeePassFile>\n')
EOF
  printf 'pw\npw\n' | keepassxc-cli import -q -p -t 100 base.xml base.kdbx >/dev/null 2>&1
  # The other machine's copy: the database exported, CHANGES entries given a new password and a
  # later modification time, imported again (everything else exactly as in base.kdbx).
  echo pw | keepassxc-cli export -q -f xml base.kdbx > exported.xml
  python3 - "$changes" <<'EOF'
import re, sys
changes = int(sys.argv[1])
x = open("exported.xml", encoding="utf-8").read()
entries = re.split(r"(?=<Entry>)", x)
changed = 0
for k, part in enumerate(entries):
    m = re.search(r">secret-(\d+)</Value>", part)
    if m and int(m.group(1)) < changes:
        i = int(m.group(1))
        part = re.sub(r"<LastModificationTime>[^<]*</LastModificationTime>",
                      "<LastModificationTime>2026-11-26T00:00:00Z</LastModificationTime>", part, count=1)
        entries[k] = part.replace(f">secret-{i}</Value>", f">changed-{i}</Value>")
        changed += 1
assert changed == changes, changed
open("changed.xml", "w", encoding="utf-8").write("".join(entries))
EOF
  printf 'pw\npw\n' | keepassxc-cli import -q -p -t 100 changed.xml changed.kdbx >/dev/null 2>&1
  merges=()
  for r in $(seq 1 "$rounds"); do
    cp base.kdbx merged.kdbx
    start=$(now)
    echo pw | keepassxc-cli merge -q -s merged.kdbx changed.kdbx >merge.log 2>&1
    merges+=("$(ms "$start" "$(now)")")
  done
  # The merge took the changes: the first changed entry's password is the new one.
  took=$(echo pw | keepassxc-cli show -q -s -a Password merged.kdbx "Site 0" 2>/dev/null || true)
  conflicts=$(grep -c "conflicting changes" merge.log || true)
  opens=()
  for r in $(seq 1 "$rounds"); do
    start=$(now)
    echo pw | keepassxc-cli ls -q merged.kdbx >/dev/null
    opens+=("$(ms "$start" "$(now)")")
  done
  keepassxc_json="{\"entries\": $kp_entries, \"changes\": $changes, \"decryption_time_ms\": 100, \"merge_ms\": $(json_list "${merges[@]}"), \"open_and_list_ms\": $(json_list "${opens[@]}"), \"merged_took_change\": $([ "$took" = "changed-0" ] && echo true || echo false), \"conflict_warnings\": $conflicts, \"version\": \"$(keepassxc-cli --version)\"}"
fi
echo "{\"pass_git\": $pass_json, \"keepassxc\": $keepassxc_json}"
