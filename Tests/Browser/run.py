#!/usr/bin/env python3
"""Runs the browser tests: a real tresord --web on a temporary home, real headless Chromium.

    python3 Tests/Browser/run.py              # every test (after `swift build`)
    python3 Tests/Browser/run.py -k share     # only tests whose name contains "share"

Screenshots of each main screen go to .build/browser-artifacts/ (printed at the end), with
each test class's daemon log in logs/.
"""

import os
import sys
import time
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from browser import ARTIFACTS, CHROMEDRIVER, CHROMIUM  # noqa: E402
from tresor_home import BINARIES  # noqa: E402


def main() -> int:
    for path, how in ((BINARIES / "tresord", "swift build"), (BINARIES / "tresor", "swift build"),
                      (Path(CHROMIUM), "apt-get install chromium"), (Path(CHROMEDRIVER), "apt-get install chromium-driver")):
        if not os.access(path, os.X_OK):
            print(f"browser tests: {path} is missing (run: {how})", file=sys.stderr)
            return 2
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in [*ARTIFACTS.glob("*.png"), *ARTIFACTS.glob("logs/*.log")]:
        old.unlink()
    started = time.monotonic()
    program = unittest.main(module=None, exit=False, verbosity=2,
                            argv=[sys.argv[0], "discover", "-s", str(HERE), "-t", str(HERE), "-p", "test_*.py", *sys.argv[1:]])
    print(f"\nbrowser tests took {time.monotonic() - started:.0f} s; screenshots in {ARTIFACTS}")
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
