"""Live updates (docs/WEB.md, "Live updates"): a page learns within a second what another tab,
another person or the CLI changed — the list and the open note update without a reload — and
Lock Now in one tab closes the locked notes open in the account's other tabs."""

import time

from notes_page import NotesPage
from suite import BrowserCase, embedded_only, marker

SOON = 3  # seconds: a second for the event, the rest for a loaded 2-core machine


class LiveUpdateTests(BrowserCase):
    def two_tabs(self) -> tuple[NotesPage, str, str]:
        """`frank`'s page in two tabs of one browser (one session); returns the page and both tab handles."""
        password = marker("frank-password")
        self.secrets.append(password)
        page = NotesPage(self.browser("frank"))
        page.register("frank", password)
        page.wait_signed_in()
        first = page.b.driver.current_window_handle
        page.b.driver.switch_to.new_window("tab")
        page.load()
        page.wait_signed_in()
        second = page.b.driver.current_window_handle
        return page, first, second

    def test_a_tab_sees_another_tabs_change_and_lock(self):
        page, first, second = self.two_tabs()
        driver = page.b.driver
        driver.switch_to.window(first)
        body = self.note_text("live-body")
        note_id = page.new_note("Live " + marker("t"), body)

        # The other tab lists the new note and, once opened, takes the first tab's edit in.
        driver.switch_to.window(second)
        page.wait_item(note_id)
        page.select(note_id)
        self.assertEqual(page.body_text(), body)
        driver.switch_to.window(first)
        addition = self.note_text("live-addition")
        page.edit_body(note_id, f"{body}\n{addition}")
        saved_at = time.monotonic()
        driver.switch_to.window(second)
        page.b.wait(lambda d: page.body_text() == f"{body}\n{addition}", "the other tab's edit, live", seconds=SOON)
        self.assertLess(time.monotonic() - saved_at, SOON)
        page.b.screenshot("23-live-update-in-another-tab")

        # Lock Now in one tab closes a locked note open in the other.
        passphrase = marker("frank-passphrase")
        self.secrets.append(passphrase)
        driver.switch_to.window(first)
        page.select(note_id)
        page.lock_with_new_passphrase(passphrase, "frank's hint")
        page.wait_item(note_id, locked="true")
        driver.switch_to.window(second)
        page.wait_item(note_id, locked="true")
        page.select(note_id)
        page.open_locked(note_id, passphrase)
        driver.switch_to.window(first)
        page.lock_now()
        driver.switch_to.window(second)
        page.wait_placeholder(note_id)
        self.assertNotIn(addition, page.b.dom, "the locked note's text stayed in the other tab")

    @embedded_only("`tresor note …` changes the home's notes, which the local account signs in to; a server "
                   "has no local account")
    def test_a_change_made_in_the_cli_reaches_the_page(self):
        page = NotesPage(self.browser("local"))
        page.sign_in("local", self.passcode)
        title = "From the CLI " + marker("t")
        result = self.home.tresor(["note", "new", "--title", title, "--body-stdin", "--json"], input="first line")
        self.assertEqual(result.returncode, 0, result.stderr)
        page.b.wait(lambda d: page.note_id_titled(title), "the CLI's note in the list, live", seconds=SOON)
        note_id = page.note_id_titled(title)
        page.select(note_id)
        result = self.home.tresor(["note", "edit", note_id, "--body-stdin"], input="first line\nsecond line")
        self.assertEqual(result.returncode, 0, result.stderr)
        page.b.wait(lambda d: page.body_text() == "first line\nsecond line", "the CLI's edit in the open note, live", seconds=SOON)
        result = self.home.tresor(["note", "delete", note_id])
        self.assertEqual(result.returncode, 0, result.stderr)
        page.b.wait_visible("[data-testid=deleted-note]", seconds=SOON)
