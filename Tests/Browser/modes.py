"""The two modes the browser tests run in (run.py runs every class in both, embedded first):

- embedded: `tresord --web PORT` serves the home's notes; the home's keybag is initialised
  and unlocked, and the local account ("On My Computer") signs in with its passcode.
- server: `tresord --web PORT --database postgres://… --server-key-file FILE` serves web
  accounts and notes from PostgreSQL (docs/WEB.md, "Running a Tresor server"): a fresh
  database per test class on the run's throwaway PostgreSQL (postgres.py), no local account,
  and no keybag — the web side of a server does not depend on the home.

A class or test about the home's keybag or its local account is marked `@embedded_only(reason)`;
in server mode it is skipped with that reason in the run's output.
"""

EMBEDDED, SERVER = "embedded", "server"

current = EMBEDDED
postgres = None          # the run's TestPostgres, while server mode runs


def embedded_only(reason: str):
    """Marks a test class or a test method as applying to the embedded web side only."""
    def mark(target):
        target.embedded_only_reason = reason
        return target
    return mark


def screenshot_prefix() -> str:
    return "" if current == EMBEDDED else f"{current}-"
