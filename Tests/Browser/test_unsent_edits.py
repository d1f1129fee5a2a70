"""Unsent edits (docs/WEB.md, "Unsent edits"): an edit whose save fails because the connection
is gone is sent when it comes back, an edit typed just before a reload reaches the server, and an
edit that met an ended session — the page left for the sign-in form — is sent once the same
account signs in again."""

import json

from notes_page import NotesPage, SignedInPeople
from suite import BrowserCase, marker


class UnsentEditTests(SignedInPeople, BrowserCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.passwords = {"olga": marker("olga-password")}
        cls.secrets += list(cls.passwords.values())
        cls.pages: dict[str, NotesPage] = {}

    @staticmethod
    def offline(page: NotesPage, gone: bool):
        """Cuts (or gives back) this tab's network, as a phone losing its connection."""
        page.b.driver.execute_cdp_cmd("Network.enable", {})
        page.b.driver.execute_cdp_cmd("Network.emulateNetworkConditions",
                                      {"offline": gone, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})

    @staticmethod
    def wait_sent(page: NotesPage, note_id: str, text: str):
        """Waits until a save of `note_id` carrying `text` was accepted, whatever the page shows."""
        needle = json.dumps(text)[1:-1].encode()
        page.b.wait(lambda d: any(r.method == "PATCH" and r.path.endswith(f"/notes/{note_id}") and r.status == 200
                                  and needle in r.body for r in page.b.proxy.snapshot()), "the edit to reach the server")

    def wait_failed(self, page: NotesPage):
        page.b.wait(lambda d: page.b.find("#save-status").get_attribute("data-state") == "error", "the save to fail")
        self.assertIn("Trying again", page.b.find("#save-status").text)

    def test_an_edit_made_offline_is_sent_when_the_connection_returns(self):
        olga = self.signed_in("olga")
        first = olga.new_note("Offline " + marker("t"), self.note_text("before"))
        second = olga.new_note("Other " + marker("t"), self.note_text("other"))
        olga.select(first)
        typed = self.note_text("typed-offline")
        self.offline(olga, True)
        try:
            olga.set_body(typed)
            self.wait_failed(olga)
            olga.b.screenshot("60-offline-edit-trying-again")
            # Another note cannot open offline; the edit stays in the editor.
            olga.b.click("[data-testid=note-item][data-note-id='{}'] button".format(second))
            olga.b.wait(lambda d: olga.banner(), "the failed opening said")
            self.assertEqual(olga.body_text(), typed)
        finally:
            self.offline(olga, False)
        # Back online, nobody typing: it goes by itself.
        self.wait_sent(olga, first, typed)
        olga.wait_saved()
        olga.select(second)
        olga.select(first)
        olga.b.wait(lambda d: olga.body_text() == typed, "the edit in the note")

    def test_an_edit_typed_just_before_a_reload_reaches_the_server(self):
        olga = self.signed_in("olga")
        note_id = olga.new_note("Reloaded " + marker("t"), self.note_text("before"))
        typed = self.note_text("just-before-reload")
        olga.set_body(typed)
        # Within the save's pause: the page sends it as it goes.
        olga.reload()
        self.wait_sent(olga, note_id, typed)
        olga.select(note_id)
        olga.b.wait(lambda d: olga.body_text() == typed, "the edit in the note after the reload")

    def test_an_edit_that_met_an_ended_session_is_sent_after_signing_in_again(self):
        olga = self.signed_in("olga")
        note_id = olga.new_note("Session " + marker("t"), self.note_text("before"))
        driver = olga.b.driver
        first = driver.current_window_handle
        typed = self.note_text("typed-as-the-session-ended")
        self.offline(olga, True)
        try:
            olga.set_body(typed)
            self.wait_failed(olga)
            # Meanwhile the session ends (signed out in another tab of the same browser).
            driver.switch_to.new_window("tab")
            olga.load()
            olga.wait_signed_in()
            olga.sign_out()
            driver.close()
            driver.switch_to.window(first)
        finally:
            self.offline(olga, False)
        # Back online, the save meets the ended session: the page asks to sign in again.
        olga.b.wait_visible("#login-form")
        olga.b.type("#login-name", "olga")
        olga.b.type("#login-password", self.passwords["olga"])
        olga.b.click("#login-submit")
        olga.wait_signed_in()
        self.wait_sent(olga, note_id, typed)
        olga.select(note_id)
        olga.b.wait(lambda d: olga.body_text() == typed, "the edit in the note after signing in again")
