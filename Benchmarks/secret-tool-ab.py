#!/usr/bin/python3
"""One `secret-tool lookup` process against tresord --secret-service and against gnome-keyring,
interleaved round by round (BENCHMARKS.md, "Secret Service (D-Bus)").

The harness measures the two providers minutes apart (Tresor in tresor-bench, gnome-keyring in
peers.sh); on this shared machine a process's time moves by a third from one minute to the next,
so this runs both at once, each on a private session bus of its own with no service folders
(as `private_bus` in Benchmarks/peers.sh), and alternates: every round times one lookup from each
provider, and one on a third bus where nobody owns org.freedesktop.secrets (secret-tool's own
floor: process start, libsecret, the bus), in a rotating order. Both providers hold the same ten
items, stored with `secret-tool store` — for Tresor they live in secret-tool's own group, as any
program's do.

  Benchmarks/secret-tool-ab.py BIN_DIR OUT.json [--rounds 60] [--before OTHER_BIN_DIR] [--user-load P:D]

BIN_DIR holds the release tresord and tresor (scripts/bench builds them). With --before, a second
tresord (another commit's build, in OTHER_BIN_DIR) joins the rounds as "tresor-before": a change's
before and after in one run. Run as root, like the harness, it runs everything — buses, both
providers, secret-tool — as the unprivileged user `tresor-bench` (made on first use), as deployed. Needs dbus-daemon, gnome-keyring and
secret-tool (libsecret-tools).

secret-tool is a generic client (docs/SECURITY.md, "Generic clients"): its reads are measured as
the user who trusts it gets them (`tresor secret-service trust add`), as the harness does.

Tresor identifies each new connection, and one of its checks looks at every descriptor of every
process of the user (BusConnections: who else holds the connection's socket), so its cost grows
with them: the result records how many there were ("uid_processes", "uid_descriptors"). A run
as a fresh user has a handful; a desktop session has its user's whole session. `--user-load P:D`
starts P idle processes of the user holding D descriptors each (Unix socket pairs) before the
rounds, so the check reads as many as it would there.
"""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

BIN, OUT = sys.argv[1], sys.argv[2]
USER = "tresor-bench"
if os.getuid() == 0:
    # As deployed: a user's providers on that user's buses. Run as root, the script runs itself
    # again as an unprivileged user made for the run (as tresor-bench's Secret Service scenario
    # does), so tresord's check of who holds a new client's socket sees that user's processes.
    import pwd
    try:
        pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER], check=True)
    user = pwd.getpwnam(USER)
    folder = tempfile.mkdtemp(prefix="tresor-st-ab-user.")
    os.chown(folder, user.pw_uid, user.pw_gid)
    inner = os.path.join(folder, "out.json")
    done = subprocess.run(["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--",
                           "/usr/bin/python3", os.path.abspath(__file__), BIN, inner] + sys.argv[3:],
                          env={"PATH": "/usr/bin:/bin", "HOME": folder})
    if done.returncode == 0:
        shutil.copy(inner, OUT)
    shutil.rmtree(folder, ignore_errors=True)
    sys.exit(done.returncode)
ROUNDS = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 60
BEFORE = sys.argv[sys.argv.index("--before") + 1] if "--before" in sys.argv else None
USER_LOAD = [int(n) for n in sys.argv[sys.argv.index("--user-load") + 1].split(":")] if "--user-load" in sys.argv else [0, 0]
ITEMS = 10
PASSCODE = "bench passcode 1"
LOOKUP = ["secret-tool", "lookup", "service", "bench-cli", "account"]
scratch = tempfile.mkdtemp(prefix="tresor-st-ab.")
started = []  # processes this script started, stopped at the end by their pid


def say(text):
    print(f"[secret-tool-ab] {text}", file=sys.stderr)


def private_bus(name):
    folder = os.path.join(scratch, name)
    os.makedirs(folder)
    with open(os.path.join(folder, "bus.conf"), "w") as f:
        f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><keep_umask/><listen>unix:dir={folder}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
""")
    bus = subprocess.Popen(["dbus-daemon", f"--config-file={folder}/bus.conf", "--nofork", "--print-address=1"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    started.append(bus)
    address = bus.stdout.readline().strip()
    home, run = os.path.join(folder, "home"), os.path.join(folder, "run")
    os.makedirs(home)
    os.makedirs(run, mode=0o700)
    env = {"PATH": "/usr/bin:/bin", "HOME": home, "XDG_RUNTIME_DIR": run, "DBUS_SESSION_BUS_ADDRESS": address}
    return env, folder


def owner_pid(env, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        out = subprocess.run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                              "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.freedesktop.secrets"],
                             env=env, capture_output=True, text=True)
        if out.returncode == 0 and "uint32" in out.stdout:
            return int(out.stdout.split("uint32")[1].split()[0])
        time.sleep(0.1)
    raise SystemExit("nobody took org.freedesktop.secrets")


def cpu_ms(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def store_items(env):
    for k in range(ITEMS):
        subprocess.run(["secret-tool", "store", "--label=bench-cli", "service", "bench-cli", "account", f"cli-{k}"],
                       input=f"cli-secret-{k}".encode(), env=env, check=True)
    answer = subprocess.run(LOOKUP + ["cli-3"], env=env, capture_output=True, check=True).stdout
    if not answer.startswith(b"cli-secret-3"):
        raise SystemExit(f"secret-tool lookup answered {answer!r}")


def uid_descriptors():
    """The processes of this uid and the descriptors they hold: what one scan of /proc/*/fd reads."""
    processes = descriptors = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != os.getuid():
                continue
            descriptors += len(os.listdir(f"/proc/{entry}/fd"))
            processes += 1
        except OSError:
            pass
    return processes, descriptors


def start_user_load(processes, descriptors):
    """`processes` idle processes of this user, each holding `descriptors` socket descriptors."""
    holder = ("import socket, sys, time\n"
              f"kept = [socket.socketpair() for _ in range({descriptors // 2})]\n"
              "print('ready', flush=True)\n"
              "time.sleep(1e6)\n")
    for _ in range(processes):
        process = subprocess.Popen(["/usr/bin/python3", "-c", holder], stdout=subprocess.PIPE, text=True)
        started.append(process)
        if process.stdout.readline().strip() != "ready":
            raise SystemExit("a process of the user load did not start")


def start_tresor(name, bin_dir):
    """tresord --secret-service on a private bus of its own, on a new home with a passcode, trusting
    secret-tool, holding the ten items."""
    env, folder = private_bus(name)
    home = os.path.join(folder, "tresor-home")
    log = open(os.path.join(folder, "tresord.log"), "w")
    tresord = subprocess.Popen([f"{bin_dir}/tresord", "--home", home, "--auto-lock", "0", "--log-level", "warning", "--secret-service"],
                               env=env, stdout=log, stderr=subprocess.STDOUT)
    started.append(tresord)
    time.sleep(0.5)
    subprocess.run([f"{bin_dir}/tresor", "init", "--home", home, "--passcode-stdin"], input=f"{PASSCODE}\n".encode(), env=env,
                   check=True, stdout=subprocess.DEVNULL)
    if owner_pid(env) != tresord.pid:
        raise SystemExit(f"org.freedesktop.secrets on {name}'s bus is not tresord")
    subprocess.run([f"{bin_dir}/tresor", "secret-service", "trust", "add", shutil.which("secret-tool"), "--home", home,
                    "--passcode-stdin"], input=f"{PASSCODE}\n".encode(), env=env, check=True, stdout=subprocess.DEVNULL)
    store_items(env)
    return env, tresord.pid


def summary(samples):
    s = sorted(samples)
    return {"n": len(s), "p50_ms": statistics.median(s), "p10_ms": s[len(s) // 10], "p90_ms": s[(9 * len(s)) // 10],
            "min_ms": s[0], "mean_ms": statistics.fmean(s)}


try:
    # gnome-keyring
    gk_env, _ = private_bus("gnome-keyring")
    subprocess.run(["gnome-keyring-daemon", "--unlock", "--components=secrets"], input=b"testpass", env=gk_env,
                   check=True, stdout=subprocess.DEVNULL)
    gk_pid = owner_pid(gk_env)
    store_items(gk_env)
    tr_env, tr_pid = start_tresor("tresor", BIN)
    tresors = [("tresor", tr_env, tr_pid)]
    if BEFORE:
        tresors.append(("tresor-before",) + start_tresor("tresor-before", BEFORE))
    # nobody: secret-tool's own floor (it exits 1: no such secret / no provider)
    none_env, _ = private_bus("none")

    providers = tresors + [("gnome-keyring", gk_env, gk_pid), ("no provider", none_env, None)]
    if USER_LOAD[0]:
        say(f"user load: {USER_LOAD[0]} processes holding {USER_LOAD[1]} descriptors each")
        start_user_load(*USER_LOAD)
    times = {name: [] for name, _, _ in providers}
    cpu = {name: 0.0 for name, _, _ in providers}
    for name, env, _ in providers:  # warm the page cache
        subprocess.run(LOOKUP + ["cli-0"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    say(f"{ROUNDS} rounds, each one lookup per provider in a rotating order")
    for r in range(ROUNDS):
        order = providers[r % len(providers):] + providers[:r % len(providers)]
        for name, env, pid in order:
            before = cpu_ms(pid) if pid else 0
            t = time.perf_counter()
            done = subprocess.run(LOOKUP + [f"cli-{r % ITEMS}"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[name].append((time.perf_counter() - t) * 1e3)
            if pid:
                cpu[name] += cpu_ms(pid) - before
                if done.returncode != 0:
                    raise SystemExit(f"secret-tool lookup against {name} failed")
    processes, descriptors = uid_descriptors()
    result = {"rounds": ROUNDS, "items_per_provider": ITEMS, "load": open("/proc/loadavg").read().split()[:3], "uid": os.getuid(),
              "uid_processes": processes, "uid_descriptors": descriptors, "user_load": USER_LOAD}
    for name, _, pid in providers:
        result[name] = summary(times[name])
        if pid:
            result[name]["provider_cpu_ms_per_lookup"] = cpu[name] / ROUNDS
    floor = result["no provider"]["p50_ms"]
    gk = result["gnome-keyring"]
    for name, _, _ in tresors:
        prefix = "" if name == "tresor" else "before_"
        paired = [t / g for t, g in zip(times[name], times["gnome-keyring"])]
        result[prefix + "ratio_of_p50s"] = result[name]["p50_ms"] / gk["p50_ms"]
        result[prefix + "median_paired_ratio"] = statistics.median(paired)
        result[prefix + "above_floor_ratio"] = (result[name]["p50_ms"] - floor) / (gk["p50_ms"] - floor)
        result[prefix + "provider_cpu_ratio"] = result[name]["provider_cpu_ms_per_lookup"] / gk["provider_cpu_ms_per_lookup"]
    with open(OUT, "w") as f:
        json.dump(result, f, indent=1)
    say(f"p50: Tresor {result['tresor']['p50_ms']:.1f} ms, gnome-keyring {result['gnome-keyring']['p50_ms']:.1f} ms, "
        f"no provider {floor:.1f} ms; Tresor ÷ gnome-keyring {result['ratio_of_p50s']:.2f}× (paired median "
        f"{result['median_paired_ratio']:.2f}×); provider CPU per lookup: Tresor {result['tresor']['provider_cpu_ms_per_lookup']:.1f} ms, "
        f"gnome-keyring {result['gnome-keyring']['provider_cpu_ms_per_lookup']:.1f} ms"
        + (f"; before: {result['tresor-before']['p50_ms']:.1f} ms, provider CPU {result['tresor-before']['provider_cpu_ms_per_lookup']:.1f} ms"
           if BEFORE else ""))
finally:
    try:
        gk = owner_pid(gk_env, timeout=1)  # gnome-keyring forked itself away from us
        os.kill(gk, signal.SIGTERM)
    except BaseException:
        pass
    for process in reversed(started):
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
    shutil.rmtree(scratch, ignore_errors=True)
