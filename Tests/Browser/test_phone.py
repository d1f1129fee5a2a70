"""The web client at a phone's width (docs/WEB.md, "Phones"): one pane at a time — folders →
list → note — with back buttons, every function reachable (Lock Now, passphrase settings,
sharing, locking, formatting), touch targets of at least 44 px, and a first-line preview in
the list. Screenshots of the list, a note and the passphrase dialog at 390 × 844."""

from notes_page import NotesPage
from suite import BrowserCase, marker

PHONE = (390, 844)


class PhoneLayoutTests(BrowserCase):
    def shown_panes(self, page: NotesPage) -> list[str]:
        return [name for name, css in (("folders", ".folders-pane"), ("list", ".list-pane"), ("note", ".editor-pane"))
                if page.b.visible(css)]

    def test_one_pane_at_a_time_with_every_function_reachable(self):
        password = marker("gina-password")
        self.secrets.append(password)
        page = NotesPage(self.browser("gina"))
        page.b.driver.set_window_size(*PHONE)
        page.register("gina", password)
        page.wait_signed_in()
        self.assertEqual(self.shown_panes(page), ["list"])

        page.b.click("#back-to-folders")
        page.b.wait(lambda d: self.shown_panes(page) == ["folders"], "the folders alone")
        page.b.click("#folder-all")
        page.b.wait(lambda d: self.shown_panes(page) == ["list"], "the list alone")

        page.b.click("#new-note")
        page.b.wait(lambda d: self.shown_panes(page) == ["note"], "the new note alone")
        page.b.type("#note-title", "Phone note")
        preview = self.note_text("phone-preview")
        page.b.type("#note-body", f"Phone note\n{preview}")
        page.wait_saved()
        for control in ("#lock-note", "#delete-note", "#share-name", "#format-check", "#lock-now", "#passphrase-settings", "#sign-out"):
            self.assertTrue(page.b.visible(control), f"{control} is not reachable on a phone")
        page.b.screenshot("31-phone-note")

        page.b.click("#back-to-list")
        page.b.wait(lambda d: self.shown_panes(page) == ["list"], "the list after Back")
        page.b.wait(lambda d: preview in page.b.find("[data-testid=note-item]").text, "the first line after the title as the preview")
        page.b.screenshot("30-phone-list")

        small = page.b.js("""
            return [...document.querySelectorAll('button, input, select, [role=checkbox]')]
              .filter(e => e.offsetParent !== null && !e.closest('#error'))
              .map(e => [e.id || e.className || e.tagName, Math.round(e.getBoundingClientRect().height)])
              .filter(([, height]) => height < 40);
        """)
        self.assertEqual(small, [], "touch targets smaller than 40 px")

        page.b.click("#passphrase-settings")
        page.b.wait_visible("#passphrase-set-form")
        page.b.screenshot("32-phone-passphrase-dialog")
        width = page.b.js("return document.getElementById('passphrase-settings-dialog').getBoundingClientRect().width")
        self.assertLessEqual(width, PHONE[0], "the dialog fits the screen")
