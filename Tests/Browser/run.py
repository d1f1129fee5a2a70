#!/usr/bin/env python3
"""Runs the browser tests: a real tresord --web on a temporary home, real headless Chromium —
every test class twice, against the embedded web side and against a server. The two modes run
at once, each in a process of its own (they share nothing but the screenshots' folder): the
tests mostly wait on Chromium, so the run takes about as long as its longer mode. The embedded
mode's output is shown as it runs, the server mode's after it.

    python3 Tests/Browser/run.py                  # every test, both modes (after `swift build`)
    python3 Tests/Browser/run.py --mode server    # one mode only: embedded or server
    python3 Tests/Browser/run.py -k share         # only tests whose name contains "share"

The modes (modes.py):

- embedded: `tresord --web PORT` on the home's notes, keybag initialised and unlocked;
- server: `tresord --web PORT --database postgres://tresor@127.0.0.1:PGPORT/DB
  --server-key-file FILE` (docs/WEB.md, "Running a Tresor server"), each class on a fresh
  database of a throwaway PostgreSQL started once for the run (postgres.py: Debian's
  PostgreSQL, started by scripts/postgres-for-tests as the Swift tests' is) and stopped at
  its end. Without PostgreSQL server mode does not run and the run says so; under CI=true (or
  with --mode server) a missing PostgreSQL fails the run instead.

Classes about the home's keybag or its local account are marked `@embedded_only(reason)` and
skip in server mode with that reason. The run ends with a table of each class's outcome in
each mode, the embedded-only classes and parts with their reasons, and the time of each mode.

Screenshots of each main screen go to .build/browser-artifacts/ (printed at the end; server
mode's are named server-…), with each test class's daemon log in logs/, and each mode's whole
output in logs/MODE-run.log.

A mode still running after TRESOR_BROWSER_TIME_LIMIT seconds (30 minutes unless set) has a test
that hangs: its threads' stacks are printed (faulthandler), and it is stopped and fails.
"""

import argparse
import faulthandler
import json
import os
import re
import signal
import subprocess
import sys
import time
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import modes  # noqa: E402
import postgres  # noqa: E402
from browser import ARTIFACTS, CHROMEDRIVER, CHROMIUM  # noqa: E402
from tresor_home import BINARIES  # noqa: E402

# (mode, class) → {"passed": n, "failed": n, "skipped": {reason: [the test, or the class when all of it skipped]}}
OUTCOMES: dict[tuple[str, str], dict] = {}
CLASS_IN_DESCRIPTION = re.compile(r"^\w+ \((.+)\)$")   # "setUpClass (test_x.SomeTests)"


def class_of(test) -> str:
    if isinstance(test, unittest.TestCase):
        return f"{type(test).__module__}.{type(test).__qualname__}"
    match = CLASS_IN_DESCRIPTION.match(str(test))
    return match.group(1) if match else str(test)


class ClassResult(unittest.TextTestResult):
    """The usual verbose output, and each class's outcome in the current mode for the summary."""

    def _note(self, test, outcome: str, reason: str | None = None):
        entry = OUTCOMES.setdefault((modes.current, class_of(test)), {"passed": 0, "failed": 0, "skipped": {}})
        if outcome == "skipped":
            entry["skipped"].setdefault(reason, []).append(test.id() if isinstance(test, unittest.TestCase) else class_of(test))
        else:
            entry[outcome] += 1

    def addSuccess(self, test):
        super().addSuccess(test)
        self._note(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._note(test, "failed")

    def addError(self, test, err):
        super().addError(test, err)
        self._note(test, "failed")

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._note(test, "skipped", reason)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._note(test, "failed")

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._note(test, "passed")


class ClassRunner(unittest.TextTestRunner):
    resultclass = ClassResult


def run_mode(mode: str, unittest_arguments: list[str]) -> bool:
    modes.current = mode
    print(f"\n===== browser tests, {mode} mode =====\n", flush=True)
    program = unittest.main(module=None, exit=False, verbosity=2, testRunner=ClassRunner,
                            argv=[sys.argv[0], "discover", "-s", str(HERE), "-t", str(HERE), "-p", "test_*.py", *unittest_arguments])
    return program.result.wasSuccessful()


def start_postgres(required: bool) -> tuple[bool, str | None]:
    """(whether server mode can run, why not); a missing PostgreSQL is an error when required."""
    if postgres.bin_directory() is None and not required:
        return False, "PostgreSQL is not installed (Debian: apt-get install postgresql; scripts/test installs it)"
    try:
        modes.postgres = postgres.TestPostgres()
        return True, None
    except Exception as error:  # noqa: BLE001 (reported, and the run fails)
        print(f"\n===== browser tests, server mode FAILED: it cannot run: {error} =====", flush=True)
        return False, None


def summary(ran: list[str], seconds: dict[str, float]):
    classes = sorted({name for _, name in OUTCOMES})
    width = max([len(c) for c in classes] + [10])

    def cell(mode: str, name: str) -> str:
        entry = OUTCOMES.get((mode, name))
        if entry is None:
            return "-"
        skipped = sum(map(len, entry["skipped"].values()))
        if entry["failed"]:
            return f"FAILED ({entry['failed']} of {entry['failed'] + entry['passed'] + skipped})"
        if not entry["passed"]:
            return "embedded only" if all(r.startswith("embedded only") for r in entry["skipped"]) else "skipped"
        return f"passed ({entry['passed']})" + (f", {skipped} embedded only" if skipped else "")

    print("\nbrowser tests, each class in each mode:")
    print("  " + "class".ljust(width) + "".join(f"  {m:<22}" for m in ran))
    for name in classes:
        print("  " + name.ljust(width) + "".join(f"  {cell(m, name):<22}" for m in ran))
    if modes.SERVER in ran:
        left_out = sorted({(what, reason) for (mode, _), entry in OUTCOMES.items() if mode == modes.SERVER
                           for reason, tests in entry["skipped"].items() for what in tests})
        if left_out:
            print("\nnot run in server mode:")
            for name, reason in left_out:
                print(f"  {name}: {reason}")
    for mode in ran:
        print(f"{mode} mode took {seconds[mode]:.0f} s")


def run_one(mode: str, required: bool, unittest_arguments: list[str]) -> tuple[bool, bool]:
    """Runs one mode in this process: (whether it passed, whether it ran)."""
    if mode == modes.SERVER:
        can_run, why_not = start_postgres(required)
        if not can_run:
            if why_not:
                print(f"\n===== browser tests, server mode NOT RUN: {why_not} (under CI=true this fails the run) =====")
                return True, False
            return False, False
    try:
        return run_mode(mode, unittest_arguments), True
    finally:
        if modes.postgres:
            modes.postgres.stop()
            modes.postgres = None


def run_both(unittest_arguments: list[str]) -> tuple[bool, list[str], dict[str, float]]:
    """Runs each mode in a child process at once (`--part-of-both REPORT`), the embedded one's
    output shown as it comes, the server one's kept in its log and shown after; gathers their
    outcomes into OUTCOMES. Returns whether both passed, the modes that ran and their times."""
    children = {}
    limit = float(os.environ.get("TRESOR_BROWSER_TIME_LIMIT", "1800"))
    deadline = time.monotonic() + limit
    try:
        for mode in (modes.EMBEDDED, modes.SERVER):
            report = ARTIFACTS / "logs" / f"{mode}-run.json"
            log = ARTIFACTS / "logs" / f"{mode}-run.log"
            command = [sys.executable, str(Path(__file__).resolve()), "--mode", mode, "--part-of-both", str(report), *unittest_arguments]
            if mode == modes.EMBEDDED:   # shown as it runs, and kept
                tee = subprocess.Popen(["tee", str(log)], stdin=subprocess.PIPE)
                child = subprocess.Popen(command, stdout=tee.stdin, stderr=subprocess.STDOUT, process_group=0)
                tee.stdin.close()
            else:
                tee = None
                with open(log, "wb") as output:
                    child = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, process_group=0)
            children[mode] = (child, tee, report, log)
        ok, ran, seconds = True, [], {}
        for mode, (child, tee, report, log) in children.items():
            try:
                status = child.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                print(f"\n===== browser tests, {mode} mode still runs after {limit:.0f} s: its threads' stacks follow"
                      f"{'' if tee else ' its output'}, and it is stopped =====", flush=True)
                child.send_signal(signal.SIGUSR1)   # faulthandler, registered by the child
                time.sleep(2)
                os.killpg(child.pid, signal.SIGKILL)   # with its daemons and browsers
                status = child.wait()
            ok = status == 0 and ok
            if tee:
                tee.wait()
            else:
                sys.stdout.flush()
                sys.stdout.buffer.write(log.read_bytes())
                sys.stdout.flush()
            if not report.exists():
                print(f"\n===== browser tests, {mode} mode ended without a report (exit status {child.returncode}) =====", flush=True)
                ok = False
                continue
            result = json.loads(report.read_text())
            for entry_mode, name, entry in result["outcomes"]:
                OUTCOMES[(entry_mode, name)] = entry
            if result["ran"]:
                ran.append(mode)
                seconds[mode] = result["seconds"]
        return ok, ran, seconds
    finally:
        # Each mode runs in a process group of its own, so its daemons and browsers stop with it.
        for child, tee, _, _ in children.values():
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGTERM)
                child.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description="The browser tests (README.md, \"Tests\").", add_help=False)
    parser.add_argument("--mode", choices=("embedded", "server", "both"), default="both",
                        help="the web side to test: embedded, server (on PostgreSQL), or both at once (the default)")
    parser.add_argument("--part-of-both", metavar="REPORT", type=Path, help=argparse.SUPPRESS)   # run_both's children
    options, unittest_arguments = parser.parse_known_args()
    for path, how in ((BINARIES / "tresord", "swift build"), (BINARIES / "tresor", "swift build"),
                      (Path(CHROMIUM), "apt-get install chromium"), (Path(CHROMEDRIVER), "apt-get install chromium-driver")):
        if not os.access(path, os.X_OK):
            print(f"browser tests: {path} is missing (run: {how})", file=sys.stderr)
            return 2
    started = time.monotonic()
    if options.part_of_both:
        # run_both asks a mode that hangs for its stacks with SIGUSR1.
        faulthandler.register(signal.SIGUSR1, all_threads=True)
        mode = options.mode
        ok, ran = run_one(mode, os.environ.get("CI") == "true", unittest_arguments)
        outcomes = [[m, name, entry] for (m, name), entry in OUTCOMES.items()]
        options.part_of_both.write_text(json.dumps({"outcomes": outcomes, "ran": ran, "seconds": time.monotonic() - started}))
        return 0 if ok else 1
    (ARTIFACTS / "logs").mkdir(parents=True, exist_ok=True)
    for old in [*ARTIFACTS.glob("*.png"), *ARTIFACTS.glob("logs/*.log"), *ARTIFACTS.glob("logs/*.json")]:
        old.unlink()
    if options.mode == "both":
        ok, ran, seconds = run_both(unittest_arguments)
    else:
        ok, ran_it = run_one(options.mode, os.environ.get("CI") == "true" or options.mode == modes.SERVER, unittest_arguments)
        ran = [options.mode] if ran_it else []
        seconds = {options.mode: time.monotonic() - started}
    summary(ran, seconds)
    print(f"\nbrowser tests took {time.monotonic() - started:.0f} s; screenshots in {ARTIFACTS}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
