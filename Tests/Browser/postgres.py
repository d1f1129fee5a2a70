"""A throwaway PostgreSQL server for the browser tests' server mode, started by
scripts/postgres-for-tests (as the Swift tests' TestPostgres and the benchmark's are).

Debian's PostgreSQL (`initdb`, `pg_ctl`), initialised in a temporary directory (as the
`postgres` user, through `setpriv`, when the tests run as root), trust authentication,
listening on a free loopback port with `fsync=off` and its socket in the temporary directory.
One server per run, started only when server mode runs; each test class takes a fresh
`CREATE DATABASE`. It is stopped at the end of the run, and a detached watcher stops it (and
removes its directory) even when the run itself is killed.
"""

import atexit
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

CANDIDATES = ("/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin")
USER = "tresor"
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "postgres-for-tests"


def bin_directory() -> Path | None:
    """Where Debian put the server's programs, or None when PostgreSQL is not installed."""
    return next((Path(c) for c in CANDIDATES if os.access(Path(c) / "pg_ctl", os.X_OK)), None)


class PostgresError(RuntimeError):
    pass


class TestPostgres:
    """The run's server. `fresh_database()` gives a new empty database's URL."""

    def __init__(self):
        bin_dir = bin_directory()
        if bin_dir is None:
            raise PostgresError("PostgreSQL is not installed (Debian: apt-get install postgresql); scripts/test installs it")
        self.bin = bin_dir
        self.directory = Path(tempfile.gettempdir()) / f"tresor-browser-pg-{uuid.uuid4().hex[:12]}"
        self.port = int(self._script("start", self.directory, "--watch", os.getpid(), "-c", "fsync=off", "-c", "synchronous_commit=off",
                                     "-c", "full_page_writes=off").split()[-1])
        self.running = True
        atexit.register(self.stop)

    @staticmethod
    def _script(*arguments) -> str:
        """Runs scripts/postgres-for-tests; its output, through a file: the server it starts keeps
        what it inherits open, and a pipe would keep the run waiting on it."""
        with tempfile.TemporaryFile() as output:
            result = subprocess.run([str(SCRIPT), *map(str, arguments)], stdin=subprocess.DEVNULL, stdout=output,
                                    stderr=subprocess.STDOUT, cwd="/", timeout=120)
            output.seek(0)
            text = output.read().decode(errors="replace")
            if result.returncode != 0:
                raise PostgresError(f"postgres-for-tests {arguments[0]} failed: {text[-2000:]}")
            return text

    def stop(self):
        if self.running:
            self.running = False
            try:
                self._script("stop", self.directory, "--immediate")
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
