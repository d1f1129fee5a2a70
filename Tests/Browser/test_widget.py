"""The widget page (/widget): note count and recent titles, titles redacted while no secure
session is open in the browser (or the keybag is locked), a placeholder only with the
`complete` data-protection level while the keybag is locked. Titles are private: while
redacted they are not in the page at all, not merely hidden."""

from notes_page import NotesPage
from suite import BrowserCase, embedded_only, marker


class WidgetPage:
    def __init__(self, page: NotesPage):
        self.b = page.b
        self.app_tab = self.b.driver.current_window_handle
        self.b.driver.switch_to.new_window("tab")
        self.tab = self.b.driver.current_window_handle
        self.b.open("/widget")

    def show(self, state: str = "ready") -> str:
        """Reloads the widget tab and waits for `state`; returns the page's serialised DOM."""
        self.b.driver.switch_to.window(self.tab)
        self.b.driver.refresh()
        self.b.wait(lambda d: self.b.find("#widget").get_attribute("data-state") == state, f"the widget to be {state}")
        return self.b.driver.page_source

    @property
    def redacted(self) -> str:
        return self.b.find("#widget").get_attribute("data-redacted")

    def back_to_app(self):
        self.b.driver.switch_to.window(self.app_tab)


class WidgetTests(BrowserCase):
    def test_titles_show_only_while_the_secure_session_is_open(self):
        password, passphrase = self.secret("gina-password"), self.secret("passphrase")
        page = NotesPage(self.browser("gina"))
        page.register("gina", password)
        page.wait_signed_in()
        title = "Plans " + self.note_text("title")
        hostile = '<img src=x onerror="window.__xss=1">'
        page.new_note(title, self.note_text("body"))
        page.new_note(hostile, "")
        locked_id = page.new_note("Diary", self.note_text("diary"))

        widget = WidgetPage(page)
        source = widget.show()
        self.assertEqual(widget.redacted, "true", "no secure session yet: titles must be redacted")
        self.assertEqual(self.browsers["gina"].find("#widget-count").text, "3")
        self.assertNotIn(title, source, "a redacted title is still in the page")
        self.assertTrue(self.browsers["gina"].all("[data-testid=widget-redacted]"))
        self.browsers["gina"].screenshot("08-widget-redacted")

        # Locking a note in the browser opens its secure session: the widget may show titles.
        widget.back_to_app()
        page.select(locked_id)
        page.lock_with_new_passphrase(passphrase, "")
        page.wait_item(locked_id, locked="true")
        self.browsers["gina"].wait(lambda d: any(r.path == "/api/secure-session" and b'"open":true' in r.body
                                                 for r in self.proxy.snapshot()), "the page to report its open session")
        widget.show()
        self.assertEqual(widget.redacted, "false")
        text = self.browsers["gina"].find("#widget").text
        self.assertIn(title, text)
        self.assertIn(hostile, text, "an HTML title must show as text")
        self.assertEqual(self.browsers["gina"].js("return document.querySelectorAll('img[src=\"x\"]').length"), 0)
        self.assertIsNone(self.browsers["gina"].js("return window.__xss"))
        self.browsers["gina"].screenshot("09-widget-open")

        widget.back_to_app()
        page.lock_now()
        self.browsers["gina"].wait(lambda d: any(r.path == "/api/secure-session" and b'"open":false' in r.body
                                                 for r in self.proxy.snapshot()), "the page to report Lock Now")
        source = widget.show()
        self.assertEqual(widget.redacted, "true", "after Lock Now titles must be redacted again")
        self.assertNotIn(title, source)
        self.assertNotIn(passphrase, source)

    def test_a_row_opens_its_note(self):
        page = NotesPage(self.browser("nico"))
        page.register("nico", self.secret("nico-password"))
        page.wait_signed_in()
        first_title = "First " + self.note_text("first")
        first = page.new_note(first_title, self.note_text("first-body"))
        page.new_note("Second " + self.note_text("second"), self.note_text("second-body"))

        widget = WidgetPage(page)
        widget.show()
        b = self.browsers["nico"]
        # Titles are redacted here (no secure session in this tab's page); the row still opens the note.
        b.click(f'a.widget-note-link[href="/#note={first}"]')
        b.wait(lambda d: b.visible("#app-screen") and b.find("#note-title").get_attribute("value") == first_title, "the note opened from the widget")
        self.assertEqual(b.js("return location.hash"), "", "the link's hash is not left behind")
        self.assertEqual(b.find(f'[data-testid=note-item][data-note-id="{first}"]').get_attribute("class").split().count("selected"), 1)


@embedded_only("the `complete` protection level hides the widget while the home's keybag is locked "
               "(tresor lock); a server's widget does not depend on a keybag")
class CompleteProtectionWidgetTests(BrowserCase):
    config = {"widgetProtection": "complete"}

    def test_the_whole_widget_is_a_placeholder_while_the_keybag_is_locked(self):
        page = NotesPage(self.browser("hana"))
        page.register("hana", self.secret("hana-password"))
        page.wait_signed_in()
        title = "Visible " + self.note_text("title")
        page.new_note(title, "")
        widget = WidgetPage(page)
        widget.show()
        self.assertEqual(self.browsers["hana"].find("#widget-count").text, "1")

        self.assertEqual(self.home.tresor(["lock"]).returncode, 0)
        source = widget.show("placeholder")
        self.assertEqual(self.browsers["hana"].all("#widget-count"), [], "the count must not show while locked")
        self.assertNotIn(title, source)
        self.browsers["hana"].screenshot("10-widget-placeholder-keybag-locked")

        unlocked = self.home.tresor(["unlock", "--passcode-stdin"], input=self.passcode + "\n")
        self.assertEqual(unlocked.returncode, 0, unlocked.stderr)
        widget.show()
        self.assertEqual(self.browsers["hana"].find("#widget-count").text, "1")
