"""Another local user's server on another port of 127.0.0.1: the browser
sends it Tresor's session cookie (cookies are scoped by host, not port) and takes cookies from
it. The cookie alone must open nothing of Tresor's API, and a cookie it plants must not sign
Tresor's page into the planter's account. See docs/WEB.md, "The origin token"."""

import json
import urllib.error
import urllib.request

from notes_page import NotesPage
from other_port import OtherPortServer
from suite import BrowserCase


class OtherPortTests(BrowserCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.other = OtherPortServer()
        cls.proxy.allow(cls.other.port)

    @classmethod
    def tearDownClass(cls):
        cls.other.close()
        super().tearDownClass()

    def call(self, method: str, path: str, cookie: str | None = None, origin_token: str | None = None, body=None):
        """(status, text, Set-Cookie session token) of one request straight to Tresor's API."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.home.url + "/api" + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
            request.add_header("Origin", self.home.url)
        if cookie:
            request.add_header("Cookie", f"tresor_session={cookie}")
        if origin_token:
            request.add_header("X-Tresor-Origin-Token", origin_token)
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                status, raw, headers = answer.status, answer.read(), answer.headers
        except urllib.error.HTTPError as error:
            status, raw, headers = error.code, error.read(), error.headers
        token = next((c.split(";")[0].split("=", 1)[1] for c in headers.get_all("Set-Cookie") or []
                      if c.startswith("tresor_session=")), None)
        return status, raw.decode(), token

    def test_the_cookie_another_port_receives_opens_nothing(self):
        password = self.secret("vera-password")
        page = NotesPage(self.browser("vera"))
        page.register("vera", password)
        page.wait_signed_in()
        note_id = page.new_note("Diary", self.note_text("diary"))

        # The victim's browser visits the other user's page: it is sent Tresor's cookie.
        page.b.driver.get(self.other.url + "/")
        tokens = self.other.session_tokens()
        self.assertTrue(tokens, "the browser sent no tresor_session to the other port: this test would prove nothing")
        stolen = tokens[-1]
        self.secrets.append(stolen)

        # With that cookie alone, Tresor's API answers nothing: no session, no CSRF token, no notes.
        for method, path in (("GET", "/session"), ("GET", "/notes"), (f"GET", f"/notes/{note_id}"), ("GET", "/folders"),
                             ("GET", "/widget"), ("GET", "/status"), ("GET", "/passphrase")):
            status, text, _ = self.call(method, path, cookie=stolen)
            self.assertEqual(status, 401, f"{method} {path} with the cookie another port received → {status}: {text[:200]}")
            self.assertNotIn("csrfToken", text)
            self.assertNotIn("Diary", text)
        status, _, _ = self.call("POST", "/notes", cookie=stolen, body={"title": "planted", "body": "x"})
        self.assertEqual(status, 401, "a note was written with the stolen cookie")

        # The victim's own page is unaffected.
        page.load()
        page.wait_signed_in()
        page.wait_item(note_id)

    def test_a_cookie_planted_by_another_port_signs_the_page_into_nothing(self):
        # Another local user registers an account of their own and plants its session cookie.
        mallory_password = self.secret("mallory-password")
        status, text, mallory_cookie = self.call(
            "POST", "/accounts", body={"name": "mallory", "password": mallory_password, "passwordAgain": mallory_password})
        self.assertEqual(status, 201, text)
        # (Not a secret of this test: the planter puts it in a URL on purpose.)
        mallory_origin = json.loads(text).get("originToken")

        page = NotesPage(self.browser("wendy"))
        page.b.driver.get(self.other.url + f"/plant?token={mallory_cookie}")
        page.load()
        self.assertFalse(page.b.visible("#app-screen"), "the planted cookie signed Tresor's page in as the planter's account")
        self.assertTrue(page.b.visible("#login-form"))

        password = self.secret("wendy-password")
        page.register("wendy", password)
        page.wait_signed_in()
        self.assertEqual(page.b.find("#account-name").get_attribute("title"), "Signed in as wendy")

        # Planted again with a narrower path, so the browser sends it before Tresor's own:
        # the page stays wendy's, and what she writes goes to her account.
        page.b.driver.get(self.other.url + f"/plant?token={mallory_cookie}&path=/api")
        page.load()
        page.wait_signed_in()
        self.assertEqual(page.b.find("#account-name").get_attribute("title"), "Signed in as wendy")
        text = self.note_text("wendy-note")
        page.new_note("Wendy's", text)
        status, answer, _ = self.call("GET", "/notes", cookie=mallory_cookie, origin_token=mallory_origin)
        self.assertEqual(status, 200, answer)
        self.assertEqual(json.loads(answer)["notes"], [], "wendy's note went to the planter's account")
