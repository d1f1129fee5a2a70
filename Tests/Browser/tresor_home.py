"""A temporary Tresor home with the real `tresord --web PORT` and `tresor` binaries run on it.

Mirrors Tests/EndToEndTests/Harness/Harness.swift: its own XDG_RUNTIME_DIR (so the socket is private),
the daemon at trace level with its log kept beside the home (so a test can check the log holds
no secret), `tresor init --passcode-stdin` with the passcode on standard input, never in argv.
As the harness does, it starts a debug daemon with `TRESOR_DEBUG_KDF_ROUNDS` (docs/ARCHITECTURE.md,
"Tests"): keys it makes are derived with 1,000 rounds, not production's count, unless the home
is made with `production_key_derivation=True` — a release build ignores the variable.

`ServerHome` is the same daemon in server mode (docs/WEB.md, "Running a Tresor server"), as
Tests/EndToEndTests/Server/ServerSupport.swift starts it: a fresh database on the run's throwaway
PostgreSQL and a server key file (32 random bytes, mode 0600) named on the command line — the
database URL carries no password (trust authentication), the key is only ever in its file.
"""

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BINARIES = Path(os.environ.get("TRESOR_BIN_DIR", REPO / ".build" / "debug"))
KEY_DERIVATION_ROUNDS = "TRESOR_DEBUG_KDF_ROUNDS"   # DaemonEnvironment.debugKeyDerivationRounds
CHEAP_KEY_DERIVATION = {KEY_DERIVATION_ROUNDS: "1000"}   # as TresordFixture.cheapKeyDerivation


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TresorHome:
    """One home, one daemon serving the web client on a free loopback port (embedded mode)."""

    def __init__(self, passcode: str, config: dict | None = None, production_key_derivation: bool = False):
        self.passcode = passcode
        self.root = Path(tempfile.mkdtemp(prefix="tresor-browser-"))
        self.home = self.root / "home"
        self.log_path = self.root / "tresord.log"
        (self.root / "run").mkdir(mode=0o700)
        self.home.mkdir(mode=0o700)
        self.env = dict(os.environ, XDG_RUNTIME_DIR=str(self.root / "run"), XDG_STATE_HOME=str(self.root / "state"), TRESOR_HOME=str(self.home))
        self.env.pop(KEY_DERIVATION_ROUNDS, None)
        if not production_key_derivation:
            self.env.update(CHEAP_KEY_DERIVATION)
        # Registration is open here: the browser tests register whom they need (docs/WEB.md).
        self.config = {"autoLockSeconds": 0, "webRegistration": "open", **(config or {})}
        self.write_config(self.config)
        self.port = free_port()
        self.daemon: subprocess.Popen | None = None
        self.transcript = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def write_config(self, config: dict):
        path = self.home / "config.json"
        path.write_text(json.dumps(config))
        path.chmod(0o600)

    # The daemon

    def start(self):
        """Starts tresord with the web server on and waits until it serves the page."""
        log = open(self.log_path, "ab")
        self.daemon = subprocess.Popen(
            [str(BINARIES / "tresord"), "--home", str(self.home), "--log-level", "trace", "--web", str(self.port),
             *self.daemon_arguments()],
            env=self.env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + 30
        while True:
            if self.daemon.poll() is not None:
                raise RuntimeError(f"tresord exited with {self.daemon.returncode}:\n{self.log}")
            try:
                with urllib.request.urlopen(self.url + "/", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"tresord did not serve {self.url} within 30 s:\n{self.log}")
            time.sleep(0.1)

    def daemon_arguments(self) -> list[str]:
        return []

    def initialize(self):
        """`tresor init` with the passcode on standard input: the keybag exists and is unlocked."""
        result = self.tresor(["init", "--passcode-stdin"], input=self.passcode + "\n")
        if result.returncode != 0:
            raise RuntimeError(f"tresor init failed: {result.stderr}")

    def stop(self):
        if self.daemon and self.daemon.poll() is None:
            self.daemon.terminate()
            try:
                self.daemon.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait()
        self.daemon = None

    def remove(self):
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    @property
    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    # The CLI

    def tresor(self, arguments: list[str], input: str | None = None) -> subprocess.CompletedProcess:
        """Runs `tresor --home HOME …` (secrets only ever on standard input)."""
        result = subprocess.run([str(BINARIES / "tresor"), *arguments, "--home", str(self.home)],
                                env=self.env, input=input if input is not None else "", capture_output=True, text=True,
                                timeout=60)
        self.transcript += f"$ tresor {' '.join(arguments)}\n{result.stdout}{result.stderr}"
        return result

    # The store, as an attacker who copied the home would see it

    def files(self) -> list[tuple[Path, bytes]]:
        """Every regular file of the home (notes.db, -wal, -shm, attachments/…), with its bytes."""
        found = []
        for directory, _, names in os.walk(self.home):
            for name in names:
                path = Path(directory) / name
                if path.is_file() and not path.is_symlink():
                    found.append((path, path.read_bytes()))
        return found

    def files_containing(self, needle: bytes) -> list[str]:
        return [str(p.relative_to(self.home)) for p, data in self.files() if needle in data]

    # Where the web side keeps what it stores: the home's files here, the database for a server

    def stored(self) -> list[tuple[str, bytes]]:
        """Every place (name, bytes) the web side keeps data in, as an attacker with a copy reads it."""
        return [(str(p.relative_to(self.home)), data) for p, data in self.files()]

    @staticmethod
    def places_containing(stored: list[tuple[str, bytes]], needle: bytes) -> list[str]:
        return [name for name, data in stored if needle in data]

    def stored_places_containing(self, needle: bytes) -> list[str]:
        return self.places_containing(self.stored(), needle)

    def assert_store_searchable(self, case):
        """Fails unless the search of `stored()` would find notes at all (so it proves something)."""
        case.assertIn("notes.db", [p.name for p, _ in self.files()], "the search would miss the notes database")


class ServerHome(TresorHome):
    """A home whose daemon runs in server mode: the web side on a fresh PostgreSQL database of
    the run's server (`postgres`, a postgres.TestPostgres), no keybag, no local account."""

    def __init__(self, passcode: str, config: dict | None, postgres, production_key_derivation: bool = False):
        super().__init__(passcode, config, production_key_derivation)
        self.postgres = postgres
        try:
            self.database_url = postgres.fresh_database()
        except Exception:
            shutil.rmtree(self.root, ignore_errors=True)
            raise
        self.database = postgres.database_name(self.database_url)
        self.key_file = self.root / "server.key"
        descriptor = os.open(self.key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as key:
            key.write(os.urandom(32))

    def daemon_arguments(self) -> list[str]:
        return ["--database", self.database_url, "--server-key-file", str(self.key_file)]

    def remove(self):
        super().remove()
        try:
            self.postgres.drop_database(self.database)
        except Exception:
            pass  # the whole server goes at the end of the run

    def stored(self) -> list[tuple[str, bytes]]:
        """The database's rows (JSON text, one per row: a BYTEA column as lowercase hex) and the
        home's files (a server keeps no notes there either)."""
        rows = [(f"database table {table}", row.encode()) for table, lines in self.postgres.dump(self.database).items() for row in lines]
        return rows + super().stored()

    @staticmethod
    def places_containing(stored: list[tuple[str, bytes]], needle: bytes) -> list[str]:
        hexed = needle.hex().encode()
        return sorted({name for name, data in stored if needle in data or (name.startswith("database ") and hexed in data)})

    def assert_store_searchable(self, case):
        # (The notes table may be empty by now: a note deleted for good leaves no row.)
        tables = self.postgres.dump(self.database)
        case.assertIn("notes", tables, "the search would miss the notes table")
        case.assertTrue(tables.get("accounts"), "the search read no account: it is not this server's database")
