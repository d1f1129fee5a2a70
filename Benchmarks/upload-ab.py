#!/usr/bin/env python3
# Interleaved A/B of two builds on attachments through the daemon (BENCHMARKS.md §4, "The daemon's
# memory for an attachment"):
# per build and round a fresh home, `tresor note attach` of one random file three times, then
# `tresor note export-attachment` of it three times, each a process timed to its exit; tresord's
# VmHWM growth after each half.
#
#   python3 Benchmarks/upload-ab.py ROUNDS BIN_DIR_A [BIN_DIR_B …]   (AB_MB=64 by default)
#
# BIN_DIR holds `tresor` and `tresord` of one release build
# (`swift build -c release --static-swift-stdlib --show-bin-path` at the root).
import json, os, subprocess, sys, tempfile, time, shutil, random
rounds, bins = int(sys.argv[1]), sys.argv[2:]
size = int(os.environ.get("AB_MB", "64")) << 20
work = tempfile.mkdtemp(prefix="ab-up-")
blob = os.path.join(work, "f.bin")
random.seed(7)
with open(blob, "wb") as f: f.write(random.randbytes(size))
def hwm(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"): return int(line.split()[1])
def run(bin, label):
    home = tempfile.mkdtemp(prefix="h-", dir=work); run_dir = tempfile.mkdtemp(prefix="r-", dir=work)
    env = dict(os.environ, TRESOR_HOME=os.path.join(home, "home"), XDG_RUNTIME_DIR=run_dir)
    t = os.path.join(bin, "tresor")
    sh = lambda args, inp=None: subprocess.run([t] + args, env=env, input=inp, capture_output=True, text=True, check=True).stdout
    sh(["init", "--passcode-stdin"], "ab-passcode\n")
    note = json.loads(sh(["note", "new", "--title", "x", "--body-stdin", "--json"], "b\n"))["id"]
    pid = json.loads(sh(["status", "--json"]))["pid"]
    before = hwm(pid); ups = []
    for _ in range(3):
        s = time.perf_counter(); out = sh(["note", "attach", note, "--kind", "image", "--file", blob, "--json"]); ups.append(time.perf_counter() - s)
    att = json.loads(out)["id"]; after_up = hwm(pid); downs = []
    for _ in range(3):
        dest = os.path.join(work, "out.bin")
        if os.path.exists(dest): os.unlink(dest)
        s = time.perf_counter(); sh(["note", "export-attachment", note, att, "--out", dest]); downs.append(time.perf_counter() - s)
    after_down = hwm(pid)
    os.kill(pid, 9); shutil.rmtree(home, ignore_errors=True)
    print(f"{label}: attach best {size/1e6/min(ups):.0f} MB/s p50 {sorted(ups)[1]*1e3:.0f} ms, peak +{(after_up-before)/1024:.1f} MB; "
          f"export best {size/1e6/min(downs):.0f} MB/s p50 {sorted(downs)[1]*1e3:.0f} ms, peak +{(after_down-before)/1024:.1f} MB", flush=True)
for r in range(rounds):
    for i, b in enumerate(bins): run(b, f"round {r+1} {'ABCDEFGH'[i]} ({b})")
shutil.rmtree(work, ignore_errors=True)
