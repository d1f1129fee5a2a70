"""A throwaway PostgreSQL server for the browser tests' server mode — the Python twin of
Tests/Fixtures/PostgresFixture/TestPostgres.swift.

Debian's PostgreSQL (`initdb`, `pg_ctl`), initialised in a temporary directory (as the
`postgres` user, through `setpriv`, when the tests run as root), trust authentication,
listening on a free loopback port with `fsync=off` and its socket in the temporary directory.
One server per run, started only when server mode runs; each test class takes a fresh
`CREATE DATABASE`. It is stopped at the end of the run, and a detached watcher stops it (and
removes its directory) even when the run itself is killed.
"""

import atexit
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

CANDIDATES = ("/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin")
USER = "tresor"


def bin_directory() -> Path | None:
    """Where Debian put the server's programs, or None when PostgreSQL is not installed."""
    return next((Path(c) for c in CANDIDATES if os.access(Path(c) / "pg_ctl", os.X_OK)), None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresError(RuntimeError):
    pass


class TestPostgres:
    """The run's server. `fresh_database()` gives a new empty database's URL."""

    def __init__(self):
        bin_dir = bin_directory()
        if bin_dir is None:
            raise PostgresError("PostgreSQL is not installed (Debian: apt-get install postgresql); scripts/test installs it")
        self.bin = bin_dir
        self.as_postgres = os.getuid() == 0
        self.directory = Path(tempfile.mkdtemp(prefix="tresor-browser-pg-"))
        self.directory.chmod(0o700)
        if self.as_postgres:
            try:
                postgres = pwd.getpwnam("postgres")
            except KeyError:
                raise PostgresError("the tests run as root and there is no postgres user to run initdb as") from None
            os.chown(self.directory, postgres.pw_uid, postgres.pw_gid)
        self.data = self.directory / "data"
        self.port = free_port()
        self.running = False
        try:
            self._run("initdb", "-D", self.data, "-U", USER, "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8")
            options = (f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.directory} -c fsync=off "
                       "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
            self._run("pg_ctl", "-D", self.data, "-o", options, "-l", self.directory / "log", "-w", "-t", "60", "start")
            self.running = True
        except Exception:
            shutil.rmtree(self.directory, ignore_errors=True)
            raise
        self._watch()
        atexit.register(self.stop)

    def _argv(self, program: str, *arguments) -> list[str]:
        argv = [str(self.bin / program), *map(str, arguments)]
        if self.as_postgres:
            argv = ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", *argv]
        return argv

    def _run(self, program: str, *arguments):
        """Runs a server program to its end, its output to a file (quoted when it fails): `pg_ctl
        start` leaves a server running that would keep a pipe open, and the run waiting on it."""
        with tempfile.TemporaryFile() as output:
            result = subprocess.run(self._argv(program, *arguments), stdin=subprocess.DEVNULL, stdout=output,
                                    stderr=subprocess.STDOUT, cwd="/", timeout=120)
            if result.returncode != 0:
                output.seek(0)
                raise PostgresError(f"{program} failed: {output.read().decode(errors='replace')[-2000:]}")

    def _watch(self):
        """Stops the server when this process ends, however it ends (the watcher runs as this
        process's user, which `kill -0` needs; pg_ctl as the server's)."""
        stop = " ".join(self._argv("pg_ctl", "-D", self.data, "-m", "immediate", "stop"))
        watcher = (f"trap '' HUP INT TERM; while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; "
                   f"{stop} >/dev/null 2>&1; rm -rf {self.directory}")
        subprocess.Popen(["/usr/bin/setsid", "/bin/sh", "-c", watcher], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/", start_new_session=True)

    def stop(self):
        if self.running:
            self.running = False
            try:
                self._run("pg_ctl", "-D", self.data, "-m", "immediate", "stop")
            except (PostgresError, subprocess.TimeoutExpired):
                pass
            shutil.rmtree(self.directory, ignore_errors=True)

    # SQL, as the superuser, through psql over loopback (trust authentication)

    def sql(self, statement: str, database: str = "postgres") -> str:
        """The rows `statement` returns, unaligned, one a line."""
        result = subprocess.run(
            [str(self.bin / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(self.port),
             "-U", USER, "-d", database, "-c", statement],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, env=dict(os.environ, PGCONNECT_TIMEOUT="10"))
        if result.returncode != 0:
            raise PostgresError(f"psql {statement[:80]!r} on {database}: {result.stderr.strip()}")
        return result.stdout

    def fresh_database(self) -> str:
        """A new empty database; its URL (no password: trust authentication)."""
        name = "b_" + uuid.uuid4().hex[:16]
        self.sql(f"CREATE DATABASE {name}")
        return f"postgres://{USER}@127.0.0.1:{self.port}/{name}?sslmode=disable"

    @staticmethod
    def database_name(url: str) -> str:
        return url.rsplit("/", 1)[1].split("?", 1)[0]

    def dump(self, database: str) -> dict[str, list[str]]:
        """Every row of every table of `database` as JSON text, by table — what an attacker with a
        copy of the database reads (a BYTEA column reads as `\\x` and lowercase hex)."""
        tables = self.sql("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1",
                          database).split()
        return {table: self.sql(f"SELECT row_to_json(t)::text FROM {table} t", database).splitlines() for table in tables}

    def drop_database(self, database: str):
        self.sql(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
