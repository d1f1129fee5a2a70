#!/usr/bin/python3
"""The peers' side of the harness: the same keychain operations against gnome-keyring and
KeePassXC (both through the freedesktop Secret Service: in-process D-Bus with
python3-secretstorage, and one `secret-tool` process per operation) and `pass`.

Run by Benchmarks/peers.sh inside the right D-Bus session; writes one JSON object.

  peers.py secret-service NAME --sizes 100,1000 --out FILE [--smoke]
  peers.py pass --items 100 --out FILE [--smoke]
"""
import json
import os
import random
import statistics
import subprocess
import sys
import time


def summary(samples):
    if not samples:
        return {"n": 0}
    s = sorted(samples)

    def pct(p):
        rank = max(0, min(len(s) - 1, int(-(-p * len(s) // 100)) - 1))
        return s[rank]
    return {"n": len(s), "p50_ms": pct(50), "p99_ms": pct(99), "mean_ms": statistics.fmean(s), "min_ms": s[0], "max_ms": s[-1]}


def ms(fn):
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1e3


def arg(name, default=None):
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default


SMOKE = "--smoke" in sys.argv


def secret_service(name, sizes, out):
    import secretstorage
    from secretstorage.dhcrypto import Session  # noqa: F401  (import check)
    from secretstorage.util import open_session
    conn = secretstorage.dbus_init()
    coll = None
    deadline = time.time() + 30  # KeePassXC registers the name before its database is open
    while time.time() < deadline:
        try:
            coll = secretstorage.get_default_collection(conn)
            if not coll.is_locked():
                break
        except Exception:
            pass
        time.sleep(0.2)
    if coll is None or coll.is_locked():
        raise SystemExit(f"{name}: the default collection stays locked")
    session = open_session(conn)  # one DH session for the whole run, as a long-lived client keeps
    coll.session = session
    rng = random.Random(7)
    results = {"peer": name, "sizes": []}
    filled = 0
    adds = []  # (items before the add, ms)
    for size in sizes:
        t_fill = time.perf_counter()
        while filled < size:
            i = filled
            attrs = {"service": "bench", "account": f"acct-{i}", "tag": f"label-{i}"}
            adds.append((filled, ms(lambda: coll.create_item(f"label-{i}", attrs, b"s3cret-value-0123456789abcdef0123"))))
            filled += 1
        fill_s = time.perf_counter() - t_fill
        entry = {"items": size, "fill_seconds": fill_s}
        window = [m for (n, m) in adds if n >= size * 0.9]
        entry["add"] = summary(window)  # the adds just below this size (the file is rewritten each time)
        nops = 30 if SMOKE else 200
        search, get, lookup = [], [], []
        for _ in range(nops):
            i = rng.randrange(size)
            attrs = {"service": "bench", "account": f"acct-{i}"}
            found = []
            search.append(ms(lambda: found.append(next(coll.search_items(attrs)))))
            get.append(ms(lambda: found[0].get_secret()))
        entry["search"] = summary(search)
        entry["get_secret"] = summary(get)
        entry["lookup_p50_ms"] = entry["search"]["p50_ms"] + entry["get_secret"]["p50_ms"]
        finds = []
        for _ in range(10 if SMOKE else 50):
            i = rng.randrange(size)
            finds.append(ms(lambda: list(coll.search_items({"tag": f"label-{i}"}))))
        entry["find_by_tag"] = summary(finds)
        upd = []
        for _ in range(5 if SMOKE else 20):
            i = rng.randrange(size)
            item = next(coll.search_items({"service": "bench", "account": f"acct-{i}"}))
            upd.append(ms(lambda: item.set_secret(b"rotated-secret-0123456789abcdef01")))
        entry["update"] = summary(upd)
        # add + delete a few extra items at this size
        extra, dels = [], []
        for k in range(5 if SMOKE else 20):
            attrs = {"service": "bench", "account": f"extra-{size}-{k}"}
            extra.append(coll.create_item("extra", attrs, b"x"))
        for item in extra:
            dels.append(ms(item.delete))
        entry["delete"] = summary(dels)
        # one secret-tool process per operation
        cli = []
        for _ in range(5 if SMOKE else 20):
            i = rng.randrange(size)
            cli.append(ms(lambda: subprocess.run(["secret-tool", "lookup", "service", "bench", "account", f"acct-{i}"],
                                                 check=True, stdout=subprocess.DEVNULL)))
        entry["secret_tool_lookup"] = summary(cli)
        stores = []
        for k in range(3 if SMOKE else 10):
            stores.append(ms(lambda: subprocess.run(["secret-tool", "store", "--label=cli", "service", "bench", "account", f"cli-{size}-{k}"],
                                                    input=b"cli-secret", check=True)))
        entry["secret_tool_store"] = summary(stores)
        for k in range(3 if SMOKE else 10):
            for item in coll.search_items({"service": "bench", "account": f"cli-{size}-{k}"}):
                item.delete()
        results["sizes"].append(entry)
        print(f"[peers] {name} @{size}: add p50 {entry['add']['p50_ms']:.2f} ms, search {entry['search']['p50_ms']:.2f} ms, "
              f"get {entry['get_secret']['p50_ms']:.2f} ms, secret-tool lookup {entry['secret_tool_lookup']['p50_ms']:.1f} ms", file=sys.stderr)
    # the add curve itself, in buckets of 10 % (for the plot)
    results["add_curve"] = [{"items": n, "ms": m} for (n, m) in adds[:: max(1, len(adds) // 200)]]
    with open(out, "w") as f:
        json.dump(results, f, indent=1)


def pass_peer(items, out):
    env = dict(os.environ)
    rng = random.Random(7)
    ins = []
    for i in range(items):
        ins.append(ms(lambda: subprocess.run(["pass", "insert", "-e", "-f", f"bench/site{i}"], input=b"secret\n",
                                             check=True, env=env, stdout=subprocess.DEVNULL)))
    shows = []
    for _ in range(10 if SMOKE else 30):
        i = rng.randrange(items)
        shows.append(ms(lambda: subprocess.run(["pass", "show", f"bench/site{i}"], check=True, env=env, stdout=subprocess.DEVNULL)))
    res = {"peer": "pass", "items": items, "insert": summary(ins), "show": summary(shows)}
    print(f"[peers] pass @{items}: insert p50 {res['insert']['p50_ms']:.1f} ms, show p50 {res['show']['p50_ms']:.1f} ms", file=sys.stderr)
    with open(out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    kind = sys.argv[1]
    if kind == "secret-service":
        secret_service(sys.argv[2], [int(x) for x in arg("--sizes").split(",")], arg("--out"))
    elif kind == "pass":
        pass_peer(int(arg("--items")), arg("--out"))
