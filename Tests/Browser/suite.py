"""What every browser test class shares: one home and daemon per class, a recording proxy in
front of it, browsers opened on demand, and the checks that end each class — the daemon log
holds no secret, no request URL carried one, no note text is stored in the clear (the home's
files; in server mode the database's rows too), no page raised an error or broke its CSP.

The daemon runs in the run's mode (modes.py): embedded, on the home's notes, or server, on a
fresh PostgreSQL database. Classes and tests marked `@embedded_only(reason)` skip in server mode."""

import base64
import hashlib
import json
import unittest
import urllib.error
import urllib.request
import uuid

import modes
from browser import ARTIFACTS, Browser
from modes import embedded_only  # noqa: F401 (for the test modules)
from recorder import RecordingProxy
from tresor_home import ServerHome, TresorHome


def marker(what: str) -> str:
    """Unique text that must never reach a log, a home file or (when secret) a request."""
    return f"br-{what}-{uuid.uuid4().hex[:10]}"


def encodings(secret: bytes) -> list[bytes]:
    """The ways a careless client could send `secret`: raw, base64 (both alphabets), hex."""
    forms = [secret, base64.b64encode(secret), base64.urlsafe_b64encode(secret).rstrip(b"="),
             secret.hex().encode(), secret.hex().upper().encode()]
    if all(32 <= b < 127 for b in secret):
        forms.append(json.dumps(secret.decode())[1:-1].encode())
    return forms


class BrowserCase(unittest.TestCase):
    """One Tresor home per class: `cls.home` (daemon running; in embedded mode the keybag
    initialised and unlocked, in server mode on a fresh database), `cls.proxy`;
    `self.browser(name)` opens (once) a Chromium session for a person."""

    passcode = "browser-passcode-" + uuid.uuid4().hex[:8]
    config: dict = {}
    production_key_derivation = False        # True: the daemon derives keys at production's count (tresor_home.py)
    embedded_only_reason: str | None = None   # set by @embedded_only on the class

    @classmethod
    def setUpClass(cls):
        if modes.current == modes.SERVER and cls.embedded_only_reason:
            raise unittest.SkipTest(f"embedded only: {cls.embedded_only_reason}")
        cls.secrets = [cls.passcode]          # may appear in no log and no request URL
        cls.markers = []                     # note text: in no log and nowhere at rest
        cls.browsers: dict[str, Browser] = {}
        server = modes.current == modes.SERVER
        derivation = {"production_key_derivation": cls.production_key_derivation}
        cls.home = (ServerHome(cls.passcode, cls.config, modes.postgres, **derivation) if server
                    else TresorHome(cls.passcode, cls.config, **derivation))
        try:
            cls.home.start()
            if not server:
                cls.home.initialize()  # a server's web side needs no keybag: it has none
            cls.proxy = RecordingProxy(cls.home.port)
        except Exception:
            cls.home.remove()
            raise

    def setUp(self):
        reason = getattr(getattr(self, self._testMethodName), "embedded_only_reason", None)
        if reason and self.server_mode:
            self.skipTest(f"embedded only: {reason}")

    @property
    def server_mode(self) -> bool:
        return modes.current == modes.SERVER

    @classmethod
    def tearDownClass(cls):
        errors = []
        for browser in cls.browsers.values():
            errors += [f"{browser.name}: {message}" for message in browser.page_errors()]
            browser.quit()
        cls.proxy.close()
        cls.home.stop()
        log = cls.home.log
        # Kept for whoever reads a failure (it holds no secret: checked just below).
        (ARTIFACTS / "logs").mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / "logs" / f"{modes.screenshot_prefix()}{cls.__name__}-tresord.log").write_text(log)
        leaked_log = [s for s in cls.secrets + cls.markers if s in log]
        leaked_url = [r.url for s in cls.secrets for r in cls.proxy.snapshot() if s.encode() in r.url.encode()]
        try:
            stored = cls.home.stored()
            at_rest = {m: cls.home.places_containing(stored, m.encode()) for m in cls.markers}
        finally:
            cls.home.remove()
        problems = []
        if "web client listening" not in log:
            problems.append("the daemon log is missing or incomplete, so the secret search proves nothing")
        if leaked_log:
            problems.append(f"the daemon log holds {len(leaked_log)} secret(s) or note text(s)")
        if leaked_url:
            problems.append(f"request URLs carried a secret: {leaked_url}")
        if any(at_rest.values()):
            problems.append(f"note text in the clear at rest: {sorted({f for fs in at_rest.values() for f in fs})}")
        if errors:
            problems.append("page errors (uncaught exceptions or CSP violations):\n  " + "\n  ".join(errors))
        if problems:
            raise AssertionError(f"{cls.__name__}: " + "; ".join(problems))

    def browser(self, name: str, device: tuple[int, int] | None = None) -> Browser:
        """The Chromium session of `name` (its own profile and cookies), opened on first use; on an
        emulated touch device of `device` (width, height) when given."""
        if name not in self.browsers:
            self.browsers[name] = Browser(self.home.url, self.proxy, name, device)
        return self.browsers[name]

    def secret(self, what: str) -> str:
        value = marker(what)
        self.secrets.append(value)
        return value

    def note_text(self, what: str) -> str:
        value = marker(what)
        self.markers.append(value)
        return value

    # Assertions about what left the browser and what the server keeps

    def assert_never_sent(self, secret: bytes, what: str):
        """No recorded request — URL, header or body, in any encoding — carried `secret`."""
        requests = self.proxy.snapshot()
        self.assertTrue(requests, "the proxy recorded no request: the browser bypassed it")
        for form in encodings(secret):
            carriers = [f"{r.method} {r.path}" for r in requests if r.carries(form)]
            self.assertEqual(carriers, [], f"{what} left the browser")

    def assert_not_at_rest(self, needle: bytes, what: str):
        """`needle` is in no file of the home (notes.db, -wal, -shm, attachments/…) and, in server
        mode, in no row of the database (raw, or as a BYTEA column's hex)."""
        self.home.assert_store_searchable(self)
        self.assertEqual(self.home.stored_places_containing(needle), [], f"{what} is stored in the clear")

    @staticmethod
    def passphrase_key(passphrase: str, salt_b64: str, iterations: int) -> bytes:
        """The key the browser derives (docs/WEB.md step 1), to check it never left the browser."""
        return hashlib.pbkdf2_hmac("sha256", passphrase.encode(), base64.b64decode(salt_b64), iterations, 16)

    def requests_to(self, method: str, path_suffix: str):
        return [r for r in self.proxy.snapshot() if r.method == method and r.path.endswith(path_suffix)]

    # The API directly (not through the browser), to check what the server decided

    def api(self, method: str, path: str, body=None, cookie: str | None = None):
        """(status, decoded JSON or None) of one request straight to the daemon."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.home.url + "/api" + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if cookie:
            request.add_header("Cookie", cookie)
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                raw = answer.read()
                return answer.status, (json.loads(raw) if raw else None)
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                return error.code, json.loads(raw)
            except ValueError:
                return error.code, None
