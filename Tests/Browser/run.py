#!/usr/bin/env python3
"""Runs the browser tests: a real tresord --web on a temporary home, real headless Chromium —
every test class twice, first against the embedded web side, then against a server.

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
mode's are named server-…), with each test class's daemon log in logs/.
"""

import argparse
import os
import re
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


def main() -> int:
    parser = argparse.ArgumentParser(description="The browser tests (Tests/Browser/README.md).", add_help=False)
    parser.add_argument("--mode", choices=("embedded", "server", "both"), default="both",
                        help="the web side to test: embedded, server (on PostgreSQL), or both (the default)")
    options, unittest_arguments = parser.parse_known_args()
    for path, how in ((BINARIES / "tresord", "swift build"), (BINARIES / "tresor", "swift build"),
                      (Path(CHROMIUM), "apt-get install chromium"), (Path(CHROMEDRIVER), "apt-get install chromium-driver")):
        if not os.access(path, os.X_OK):
            print(f"browser tests: {path} is missing (run: {how})", file=sys.stderr)
            return 2
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in [*ARTIFACTS.glob("*.png"), *ARTIFACTS.glob("logs/*.log")]:
        old.unlink()
    wanted = [modes.EMBEDDED, modes.SERVER] if options.mode == "both" else [options.mode]
    started = time.monotonic()
    ok, ran, seconds = True, [], {}
    for mode in wanted:
        mode_started = time.monotonic()
        if mode == modes.SERVER:
            required = os.environ.get("CI") == "true" or options.mode == "server"
            can_run, why_not = start_postgres(required)
            if not can_run:
                if why_not:
                    print(f"\n===== browser tests, server mode NOT RUN: {why_not} (under CI=true this fails the run) =====")
                else:
                    ok = False
                continue
        try:
            ok = run_mode(mode, unittest_arguments) and ok
        finally:
            if modes.postgres:
                modes.postgres.stop()
                modes.postgres = None
        ran.append(mode)
        seconds[mode] = time.monotonic() - mode_started
    summary(ran, seconds)
    print(f"\nbrowser tests took {time.monotonic() - started:.0f} s; screenshots in {ARTIFACTS}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
