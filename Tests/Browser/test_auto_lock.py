"""The browser's secure session ends on its own: after the configured idle time
(`webIdleLockSeconds` in config.json) and when the daemon's keybag locks (`tresor lock`).
Either way the open locked note's text leaves the page."""

from notes_page import NotesPage
from suite import BrowserCase, embedded_only, marker


class LockedNoteCase(BrowserCase):
    """An account with a passphrase and one locked note, opened in the browser."""

    def open_locked_note(self, name: str) -> tuple[NotesPage, str, str]:
        password, passphrase = self.secret(f"{name}-password"), self.secret("passphrase")
        page = NotesPage(self.browser(name))
        page.register(name, password)
        page.wait_signed_in()
        body = self.note_text("auto-lock")
        note_id = page.new_note("Bank " + marker("t"), body)
        page.lock_with_new_passphrase(passphrase, "")
        page.wait_item(note_id, locked="true")
        page.lock_now()
        page.wait_placeholder(note_id)
        page.open_locked(note_id, passphrase)
        self.assertIn(body, page.b.dom)
        return page, note_id, body

    def wait_text_gone(self, page: NotesPage, body: str, why: str):
        page.b.wait(lambda d: body not in page.b.dom, f"the note's text to leave the page ({why})", seconds=40)
        self.assertEqual(page.b.all("[data-testid=open-locked-note]"), [], f"the open note stayed after {why}")


class IdleAutoLockTests(LockedNoteCase):
    config = {"webIdleLockSeconds": 6}

    def test_an_idle_page_hides_the_open_locked_note(self):
        page, note_id, body = self.open_locked_note("erin")
        self.assertEqual(page.b.js("return document.hidden"), False)
        # No input from here on: the page must lock itself.
        self.wait_text_gone(page, body, "idle auto-lock")
        page.wait_placeholder(note_id)
        page.b.screenshot("07-auto-locked-placeholder")


@embedded_only("locks the home's keybag (tresor lock); a server's secure sessions do not depend on "
               "the home it runs from (its idle and hidden-page auto-locks are tested in both modes)")
class KeybagLockTests(LockedNoteCase):
    def test_locking_the_keybag_hides_the_open_locked_note(self):
        page, note_id, body = self.open_locked_note("frank")
        result = self.home.tresor(["lock"])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.wait_text_gone(page, body, "tresor lock")
        unlocked = self.home.tresor(["unlock", "--passcode-stdin"], input=self.passcode + "\n")
        self.assertEqual(unlocked.returncode, 0, unlocked.stderr)


class HiddenPageAutoLockTests(LockedNoteCase):
    config = {"webHiddenLockSeconds": 2, "webDesktopHiddenLockSeconds": 2}

    def test_a_page_hidden_longer_than_allowed_hides_the_open_locked_note(self):
        page, note_id, body = self.open_locked_note("iris")
        driver = page.b.driver
        app_tab = driver.current_window_handle
        reports = len(self.proxy.snapshot())
        driver.switch_to.new_window("tab")  # another tab in front: the app's page is hidden
        # Seen from outside: the hidden page ends its secure session and tells the server.
        page.b.wait(lambda d: any(r.path == "/api/secure-session" and b'"open":false' in r.body
                                  for r in self.proxy.snapshot()[reports:]), "the hidden page to lock itself", seconds=40)
        driver.close()
        driver.switch_to.window(app_tab)
        self.assertNotIn(body, page.b.dom, "the hidden page kept the note's text")
        page.wait_placeholder(note_id)
