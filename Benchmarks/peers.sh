#!/usr/bin/env bash
# The peers of the performance targets (BENCHMARKS.md), installed from Debian's packages and run
# headless, each in its own temporary HOME and D-Bus session (what each needs, and why:
# BENCHMARKS.md, "How each scenario is measured", "Peers"):
#   gnome-keyring 42 (Secret Service: in-process D-Bus via python3-secretstorage, and secret-tool),
#   KeePassXC 2.7 (its Secret Service, same client code), pass 1.7 with GnuPG, openssl speed.
#   With --bench-bin DIR, gnome-keyring and KeePassXC are also measured by DIR/tresor-bench
#   ss-client: the very client that measures `tresord --secret-service` (BENCHMARKS.md,
#   "Secret Service (D-Bus)"), on a private bus set up as that scenario's.
#
#   Benchmarks/peers.sh OUT_DIR [--smoke] [--no-install] [--only "openssl gnome-keyring pass keepassxc"] [--bench-bin DIR]
#
# Writes OUT_DIR/peer-gnome-keyring.json, peer-keepassxc.json, peer-pass.json, peer-openssl.json,
# and with --bench-bin peer-gnome-keyring-ss.json, peer-keepassxc-ss.json, peer-secret-tool-ab.json
# (Benchmarks/secret-tool-ab.py: secret-tool lookup against tresord and gnome-keyring interleaved).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "$1" && cd "$1" && pwd)"; shift
smoke=""; install=1; only="openssl gnome-keyring pass keepassxc"; bench_bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke="--smoke" ;;
    --no-install) install=0 ;;
    --only) only="$2"; shift ;;
    --bench-bin) bench_bin="$2"; shift ;;
  esac
  shift
done
want() { case " $only " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
if [ -n "$smoke" ]; then
  gk_sizes="20,100"; kp_sizes="20,100"; pass_items=20; ossl_seconds=1
else
  gk_sizes="${GK_SIZES:-100,1000}"; kp_sizes="${KP_SIZES:-100,1000}"; pass_items=100; ossl_seconds=3
fi
py=/usr/bin/python3   # Debian's, where python3-secretstorage lives
say() { echo "[peers] $*" >&2; }

if [ "$install" = 1 ]; then
  say "installing peers from Debian (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends dbus gnome-keyring libsecret-tools python3-secretstorage \
    python3-keyring keepassxc pass gnupg openssl >&2
fi
{ dpkg-query -W -f='${Package} ${Version}\n' gnome-keyring libsecret-tools keepassxc pass gnupg openssl python3-secretstorage dbus 2>/dev/null || true; } \
  > "$out/peer-versions.txt"

scratch="$(mktemp -d /tmp/tresor-peers.XXXXXX)"
cleanup() {
  [ -n "${kp_pid:-}" ] && kill "$kp_pid" 2>/dev/null || true
  [ -n "${gk_bus_pid:-}" ] && kill "$gk_bus_pid" 2>/dev/null || true
  rm -rf "$scratch"
}
trap cleanup EXIT

# A private session bus with no service folders (BENCHMARKS.md, "How each scenario is measured"),
# the set-up tresor-bench's Secret Service scenario gives tresord: nothing is started on demand,
# the provider under test alone owns org.freedesktop.secrets. Prints "ADDRESS PID".
private_bus() {
  cat > "$1/bus.conf" <<XML
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><keep_umask/><listen>unix:dir=$1</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
XML
  dbus-daemon --config-file="$1/bus.conf" --fork --print-address=1 --print-pid=1 | paste -sd' '
}
# The pid of the process owning org.freedesktop.secrets on the bus of DBUS_SESSION_BUS_ADDRESS.
secrets_owner_pid() {
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets 2>/dev/null | awk '/uint32/{print $2}'
}

# --- OpenSSL ---------------------------------------------------------------------------------
if want openssl; then
say "openssl speed -evp aes-128-gcm / aes-256-gcm"
{
  echo "{"
  first=1
  for cipher in aes-128-gcm aes-256-gcm; do
    for bytes in 16384 1048576; do
      # one core, as Tresor's sealing is single-threaded
      line=$(openssl speed -seconds "$ossl_seconds" -bytes "$bytes" -evp "$cipher" 2>/dev/null | grep -E "^(AES-|aes-)" | tail -1)
      kbps=$(echo "$line" | awk '{print $NF}' | tr -d k)
      [ $first = 1 ] || echo ","
      first=0
      printf '"%s_%s": {"bytes": %s, "MBps": %s, "raw": "%s"}' "$cipher" "$bytes" "$bytes" \
        "$(awk -v k="$kbps" 'BEGIN{printf "%.1f", k*1000/1e6}')" "$line"
    done
  done
  printf ',\n"version": "%s"\n}\n' "$(openssl version)"
} > "$out/peer-openssl.json"
fi

# --- gnome-keyring ---------------------------------------------------------------------------
if want gnome-keyring; then
say "gnome-keyring: sizes $gk_sizes"
gk="$scratch/gk"; mkdir -p "$gk/home" "$gk/run"; chmod 700 "$gk/run"
read -r gk_bus gk_bus_pid < <(private_bus "$gk")
(
  export HOME="$gk/home" XDG_RUNTIME_DIR="$gk/run" DBUS_SESSION_BUS_ADDRESS="$gk_bus"
  echo -n testpass | gnome-keyring-daemon --unlock --components=secrets >/dev/null
  status=0
  "$py" "$here/peers.py" secret-service gnome-keyring --sizes "$gk_sizes" --out "$out/peer-gnome-keyring.json" $smoke || status=$?
  gk_pid=$(secrets_owner_pid)   # gnome-keyring-daemon forks itself away: stopped by its pid below
  if [ "$status" = 0 ] && [ -n "$bench_bin" ]; then
    say "gnome-keyring: tresor-bench ss-client at ${gk_sizes##*,} items"
    "$bench_bin/tresor-bench" ss-client --name gnome-keyring --items "${gk_sizes##*,}" --out "$out/peer-gnome-keyring-ss.json" $smoke || status=$?
  fi
  [ -n "$gk_pid" ] && kill "$gk_pid" 2>/dev/null
  exit $status
) || say "gnome-keyring run failed (see above); continuing"
kill "$gk_bus_pid" 2>/dev/null || true; gk_bus_pid=""
# One secret-tool lookup process, tresord --secret-service and gnome-keyring interleaved round by
# round (each on its own private bus): the process-level ratio without the minutes between them.
if [ -n "$bench_bin" ] && [ -x "$bench_bin/tresord" ]; then
  say "secret-tool lookup: tresord and gnome-keyring interleaved"
  # TRESOR_BENCH_BEFORE: a folder with another commit's release tresord and tresor, measured in the same rounds.
  # TRESOR_BENCH_USER_LOAD=P:D: P idle processes of the user holding D descriptors each, as on a desktop.
  "$py" "$here/secret-tool-ab.py" "$bench_bin" "$out/peer-secret-tool-ab.json" --rounds "$([ -n "$smoke" ] && echo 6 || echo 60)" \
    ${TRESOR_BENCH_BEFORE:+--before "$TRESOR_BENCH_BEFORE"} ${TRESOR_BENCH_USER_LOAD:+--user-load "$TRESOR_BENCH_USER_LOAD"} \
    || say "secret-tool-ab.py failed; continuing"
fi
fi

# --- pass ------------------------------------------------------------------------------------
if want pass; then
say "pass: $pass_items items"
ps="$scratch/pass"; mkdir -p "$ps/gnupg" "$ps/store"; chmod 700 "$ps/gnupg"
(
  export HOME="$ps" GNUPGHOME="$ps/gnupg" PASSWORD_STORE_DIR="$ps/store"
  gpg --batch --passphrase '' --quick-gen-key 'Bench <bench@example.invalid>' default default never 2>/dev/null
  fpr=$(gpg --list-keys --with-colons | awk -F: '/^fpr/{print $10; exit}')
  pass init "$fpr" >/dev/null
  "$py" "$here/peers.py" pass --items "$pass_items" --out "$out/peer-pass.json" $smoke
  gpgconf --kill gpg-agent || true
)
fi

# --- KeePassXC -------------------------------------------------------------------------------
if want keepassxc; then
say "KeePassXC: sizes $kp_sizes"
kp="$scratch/kp"; mkdir -p "$kp/home/.config/keepassxc" "$kp/run"; chmod 700 "$kp/run"
(
  export HOME="$kp/home" XDG_RUNTIME_DIR="$kp/run" QT_QPA_PLATFORM=offscreen
  cd "$kp"
  printf 'pw\npw\n' | keepassxc-cli db-create -q -p -t 100 base.kdbx >/dev/null 2>&1 || printf 'pw\npw\n' | keepassxc-cli db-create -p -t 100 base.kdbx >/dev/null
  echo pw | keepassxc-cli export -q -f xml base.kdbx > base.xml
  # expose the root group over the Secret Service
  "$py" - <<'EOF'
import re
x = open("base.xml", encoding="utf-8").read()
import base64, uuid
# the XML holds UUIDs in base64; KeePassXC reads the exposed group with QUuid("{…}")
root = "{%s}" % uuid.UUID(bytes=base64.b64decode(re.search(r"<Root>\s*<Group>\s*<UUID>([^<]+)</UUID>", x).group(1)))
item = f"<Item><Key>FDO_SECRETS_EXPOSED_GROUP</Key><Value>{root}</Value></Item>"
if "<CustomData>" in x.split("</Meta>")[0]:
    head, tail = x.split("</Meta>", 1)
    head = head.replace("<CustomData>", "<CustomData>" + item, 1)
    x = head + "</Meta>" + tail
else:
    x = x.replace("</Meta>", f"<CustomData>{item}</CustomData></Meta>", 1)
open("exposed.xml", "w", encoding="utf-8").write(x)
EOF
  printf 'pw\npw\n' | keepassxc-cli import -q -p -t 100 exposed.xml secrets.kdbx >/dev/null 2>&1 || printf 'pw\npw\n' | keepassxc-cli import -p -t 100 exposed.xml secrets.kdbx >/dev/null
  cat > "$HOME/.config/keepassxc/keepassxc.ini" <<'EOF'
[General]
ConfigVersion=2
AutoSaveAfterEveryChange=false
AutoSaveOnExit=false

[FdoSecrets]
Enabled=true
ConfirmAccessItem=false
ConfirmDeleteItem=false
ShowNotification=false
UnlockBeforeSearch=false
EOF
  # a session bus without service directories: nothing may auto-start gnome-keyring
  sed -e '/<servicedir>/d' -e '/<standard_session_servicedirs/d' /usr/share/dbus-1/session.conf > session.conf
  dbus-run-session --config-file="$kp/session.conf" -- bash -c '
    keepassxc --pw-stdin "$5/secrets.kdbx" <<<pw >"$5/keepassxc.log" 2>&1 &
    kp=$!
    for i in $(seq 1 100); do
      if dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true"; then break; fi
      sleep 0.2
    done
    "$0" "$1" secret-service keepassxc --sizes "$2" --out "$3" $4
    status=$?
    if [ "$status" = 0 ] && [ -n "$6" ]; then
      echo "[peers] KeePassXC: tresor-bench ss-client at ${2##*,} items" >&2
      "$6/tresor-bench" ss-client --name keepassxc --items "${2##*,}" --out "$7" $4 || status=$?
    fi
    kill $kp 2>/dev/null; sleep 1; kill -9 $kp 2>/dev/null   # it ignores SIGTERM while offscreen
    exit $status' "$py" "$here/peers.py" "$kp_sizes" "$out/peer-keepassxc.json" "$smoke" "$kp" "$bench_bin" "$out/peer-keepassxc-ss.json"
) || say "KeePassXC run failed (see above); continuing without it"
fi
say "peers done"
