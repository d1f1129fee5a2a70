#!/usr/bin/env bash
# Reproduces the profiles quoted in BENCHMARKS.md (needs perf: apt-get install linux-perf).
#
#   Benchmarks/profile.sh lookup [ITEMS]   perf record -g of tresord serving 20,000 lookups
#   Benchmarks/profile.sh cli              perf record -g of 30 × `tresor --help`
#   Benchmarks/profile.sh notes            perf record -g of the notes scenarios (--smoke sizes)
#   Benchmarks/profile.sh secret-service [ITEMS] [pair|lookup]   perf record -g of tresord --secret-service
#                                          as a user's daemon (run as root, tresor-bench runs the scenario as
#                                          its unprivileged user `tresor-bench`; run as a user, as that user)
#                                          serving 20,000 SearchItems + GetSecrets on one open connection
#                                          (pair), or 500 `secret-tool lookup` processes, each a new client
#                                          (lookup; secret-tool trusted, as the harness measures it)
#   Benchmarks/profile.sh sync [ITEMS] [SYNCS]   perf record -g of the sync server instance and of the device's
#                                          tresord while the device runs SYNCS (300) `tresor sync now` with nothing
#                                          to do, after the sync scale scenario's set-up at ITEMS items + as many notes
#   Benchmarks/profile.sh web [sqlite-1|postgres-1]   perf record -g of tresord --web during the web
#                                          scenarios' note list, then note open (200 accounts × 100 notes)
#   Benchmarks/profile.sh sync-first [ITEMS]   perf record -g of a new device's first sync (ITEMS items + as many
#                                          notes, default 10,000): its tresord and the server instance's, each reported
#
# Reports go to stdout; perf.data files to /tmp/tresor-profile/. Build first (scripts/bench does).
set -euo pipefail
cd "$(dirname "$0")/.."   # the package root: the harness is built with Tresor
bin=$(swift build -c release --static-swift-stdlib --show-bin-path)
out=/tmp/tresor-profile; mkdir -p "$out"
case "${1:-lookup}" in
  lookup)
    items=${2:-10000}
    TRESOR_BENCH_PROFILE=20000 "$bin/tresor-bench" --bin "$bin" --out "$out/lookup.json" --smoke --only keychain \
      --counts "$items" > "$out/lookup.log" 2>&1 &
    bench=$!
    for _ in $(seq 1 600); do grep -q "profile: daemon pid" "$out/lookup.log" 2>/dev/null && break; sleep 0.2; done
    pid=$(grep -o "daemon pid [0-9]*" "$out/lookup.log" | awk '{print $3}')
    perf record -F 2000 -g -p "$pid" -o "$out/lookup.data" -- sleep 8 2>/dev/null
    wait "$bench" || true
    perf report -i "$out/lookup.data" --children --sort symbol -g none 2>/dev/null | grep % | head -80
    ;;
  secret-service)
    items=${2:-10000}
    phase=${3:-pair}
    case "$phase" in pair) n=20000 ;; lookup) n=500 ;; *) echo "phase: pair or lookup" >&2; exit 2 ;; esac
    TRESOR_BENCH_PROFILE=$n TRESOR_BENCH_PROFILE_PHASE=$phase "$bin/tresor-bench" --bin "$bin" --out "$out/secret-service.json" \
      --smoke --only secret-service --ss-counts "$items" > "$out/secret-service-$phase.log" 2>&1 &
    bench=$!
    for _ in $(seq 1 1200); do grep -q "profile: daemon pid" "$out/secret-service-$phase.log" 2>/dev/null && break; sleep 0.2; done
    pid=$(grep -o "daemon pid [0-9]*" "$out/secret-service-$phase.log" | awk '{print $3}')
    echo "tresord pid $pid, uid $(awk '/^Uid:/{print $2}' "/proc/$pid/status")"
    # As root, kernel samples too; as a user, perf_event_paranoid 2 allows the user's own samples only.
    perf record -F 2000 -g -p "$pid" -o "$out/secret-service-$phase.data" 2>/dev/null   # until tresord stops
    wait "$bench" || true
    perf report -i "$out/secret-service-$phase.data" --children --sort symbol -g none 2>/dev/null | grep % | head -80
    ;;
  cli)
    perf record -F 5000 -g -o "$out/cli.data" -- bash -c "for i in \$(seq 1 30); do '$bin/tresor' --help >/dev/null; done" 2>/dev/null
    perf report -i "$out/cli.data" --comm tresor --children --sort symbol -g none 2>/dev/null | grep % | head -60
    ;;
  notes)
    perf record -F 1000 -g -o "$out/notes.data" -- "$bin/tresor-bench" --bin "$bin" --out "$out/notes.json" --smoke --only notes 2>/dev/null
    perf report -i "$out/notes.data" --children --sort symbol -g none 2>/dev/null | grep % | head -80
    ;;
  web)
    config=${2:-sqlite-1}
    "$bin/tresor-bench" --bin "$bin" --out "$out/web.json" --only web --web-accounts 200 --web-configs "$config" \
      --web-seconds 10 > "$out/web.log" 2>&1 &
    bench=$!
    for phase in signin list; do
      for _ in $(seq 1 3000); do grep -q "$config $phase:" "$out/web.log" 2>/dev/null && break; sleep 0.1; done
      pid=$(pgrep -n -f -- "tresord --home /tmp/tresor-bench-web")
      next=$([ "$phase" = signin ] && echo list || echo open)
      perf record -F 999 -g -p "$pid" -o "$out/web-$next.data" -- sleep 8 2>/dev/null
    done
    wait "$bench" || true
    for next in list open; do
      echo "== $config: note $next"
      perf report -i "$out/web-$next.data" --children --sort symbol -g none 2>/dev/null | grep % | head -60 || true
    done
    ;;
  sync)
    items=${2:-10000}
    syncs=${3:-300}
    TRESOR_BENCH_PROFILE=$syncs "$bin/tresor-bench" --bin "$bin" --out "$out/sync.json" --only sync --no-peers \
      --sync-parts scale --sync-counts "$items" > "$out/sync.log" 2>&1 &
    bench=$!
    for _ in $(seq 1 36000); do grep -q "profile: server pid" "$out/sync.log" 2>/dev/null && break; sleep 0.1; done
    server=$(grep -o "server pid [0-9]*" "$out/sync.log" | awk '{print $3}')
    device=$(grep -o "device pid [0-9]*" "$out/sync.log" | awk '{print $3}')
    # Both for as long as the idle syncs last.
    perf record -F 999 -g -p "$server" -o "$out/sync-server.data" 2>/dev/null &
    perfServer=$!
    perf record -F 999 -g -p "$device" -o "$out/sync-device.data" 2>/dev/null &
    perfDevice=$!
    for _ in $(seq 1 36000); do grep -q "profile: idle syncs done" "$out/sync.log" 2>/dev/null && break; sleep 0.1; done
    kill -INT "$perfServer" "$perfDevice"
    wait "$perfServer" "$perfDevice" || true
    wait "$bench" || true
    for side in server device; do
      echo "== sync: the $side's tresord during $syncs idle syncs"
      perf report -i "$out/sync-$side.data" --children --sort symbol -g none 2>/dev/null | grep % | head -60 || true
    done
    ;;
  sync-first)
    items=${2:-10000}
    TRESOR_BENCH_PROFILE_SYNC=1 "$bin/tresor-bench" --bin "$bin" --out "$out/sync-first.json" --only sync --sync-parts scale \
      --sync-counts "$items" --no-peers > "$out/sync-first.log" 2>&1 &
    bench=$!
    for _ in $(seq 1 12000); do grep -q "profile: first sync" "$out/sync-first.log" 2>/dev/null && break; sleep 0.2; done
    device=$(grep -o "first sync device pid [0-9]*" "$out/sync-first.log" | awk '{print $5}')
    server=$(grep -o "server pid [0-9]*" "$out/sync-first.log" | awk '{print $3}')
    perf record -F 999 -g -p "$device,$server" -o "$out/sync-first.data" 2>/dev/null &
    recorder=$!
    for _ in $(seq 1 6000); do grep -q "a new device's first sync" "$out/sync-first.log" 2>/dev/null && break; sleep 0.2; done
    kill -INT "$recorder"; wait "$recorder" || true
    grep "a new device's first sync" "$out/sync-first.log" | head -1
    wait "$bench" || true
    for pid in "$device" "$server"; do
      echo "== pid $pid ($([ "$pid" = "$device" ] && echo "the new device's tresord" || echo "the server instance"))"
      perf report -i "$out/sync-first.data" --pid "$pid" --children --sort symbol -g none 2>/dev/null | grep % | head -70 || true
    done
    ;;
  *) echo "usage: Benchmarks/profile.sh lookup [ITEMS] | cli | notes | secret-service [ITEMS] [pair|lookup] | web [sqlite-1|postgres-1] | sync [ITEMS] [SYNCS] | sync-first [ITEMS]" >&2; exit 2 ;;
esac
