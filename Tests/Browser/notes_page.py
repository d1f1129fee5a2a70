"""The web client's pages as a person uses them, through the stable hooks listed at the top of
Web/static/js/app.js (ids, and data-testid attributes). Each action waits for its visible effect,
so tests read as steps and fail with a message saying which step did not happen."""

import json

from selenium.webdriver.common.by import By

from browser import WAIT_SECONDS, Browser

NOTE_ITEM = "[data-testid=note-item][data-note-id='{}']"


class NotesPage:
    def __init__(self, browser: Browser):
        self.b = browser

    # Signing in and out

    def load(self):
        self.b.open("/")
        self.b.wait(lambda d: self.b.visible("#auth-screen") or self.b.visible("#app-screen"), "the sign-in or the app screen")

    def register(self, name: str, password: str, again: str | None = None, invite: str | None = None):
        self.load()
        self.b.click("#show-register")
        self.b.type("#register-name", name)
        self.b.type("#register-password", password)
        self.b.type("#register-password-again", password if again is None else again)
        if invite is not None:
            self.b.type("#register-invite", invite)
        self.b.click("#register-submit")

    def sign_in(self, name: str, password: str):
        self.load()
        if self.b.visible("#app-screen"):
            self.sign_out()
        self.b.type("#login-name", name)
        self.b.type("#login-password", password)
        self.b.click("#login-submit")
        self.wait_signed_in()

    def wait_signed_in(self):
        """Waits for the app screen; fails at once, quoting it, when the page shows an error instead
        (a refused registration or sign-in), so a failure says why rather than timing out."""
        self.b.wait(lambda d: self.b.visible("#app-screen") or self.banner(), "the app screen or an error",
                    3 * WAIT_SECONDS)  # the first request of a fresh server also warms its pool
        if not self.b.visible("#app-screen"):
            self.b.screenshot(f"FAILED-{self.b.name}-sign-in")
            raise AssertionError(f"{self.b.name}: signing in showed the error “{self.banner()}”")
        self.b.wait(lambda d: self.b.find("#account-name").text.strip(), "the account name in the toolbar")

    def sign_out(self):
        self.b.click("#sign-out")
        self.b.wait_visible("#login-form")

    def banner(self) -> str:
        return self.b.find("#error-message").text if self.b.visible("#error") else ""

    # The notes list and the editor

    def item(self, note_id: str):
        return self.b.find(NOTE_ITEM.format(note_id))

    def wait_item(self, note_id: str, **attributes):
        """Waits for the list row of `note_id` (with data-locked="true" etc. when given)."""
        def ready(_):
            rows = self.b.all(NOTE_ITEM.format(note_id))
            return rows and all(rows[0].get_attribute(f"data-{k}") == v for k, v in attributes.items())
        self.b.wait(ready, f"the list row of the note with {attributes or 'any state'}")
        return self.item(note_id)

    def new_note(self, title: str, body: str, stored: str | None = None) -> str:
        """Writes a note with + and waits until it is saved (as `stored`, its Markdown, when
        typing `body` gives other text: docs/FORMAT.md); returns its id."""
        shown = [e.get_attribute("data-note-id") for e in self.b.all("[data-testid=note-sheet]")]
        self.b.click("#new-note")
        # The new note is the one the editor opens: a sheet of another note, titled "New Note"
        # (the list may still be loading, so "the row that was not there before" can mislead).
        note_id = self.b.wait(lambda d: next((e.get_attribute("data-note-id") for e in self.b.all("[data-testid=note-sheet]")
                                              if e.get_attribute("data-note-id") not in shown
                                              and self.b.find("#note-title").get_attribute("value") == "New Note"), None),
                              "the new note in the editor")
        self.wait_item(note_id)
        self.b.type("#note-title", title)
        self.b.type("#note-body", body)
        self.wait_saved_on_server(note_id, body if stored is None else stored)
        self.b.wait(lambda d: title in self.item_title(note_id), "the new title in the list")
        return note_id

    def wait_saved_on_server(self, note_id: str, text: str):
        """Waits until a PATCH of the note carrying `text` was accepted (the autosave is debounced,
        and an earlier save finishing may say "Saved" while a later edit still waits)."""
        needle = json.dumps(text)[1:-1].encode()
        self.b.wait(lambda d: any(r.method == "PATCH" and r.path.endswith(f"/notes/{note_id}") and r.status == 200
                                  and needle in r.body for r in self.b.proxy.snapshot()), "the edit to reach the server")
        self.wait_saved()

    def wait_saved(self):
        # The status starts empty; "Saved" appears only once the edit reached the server.
        self.b.wait(lambda d: self.b.find("#save-status").get_attribute("data-state") == "saved"
                    and self.b.find("#save-status").text == "Saved", "the edit to be saved")

    def item_title(self, note_id: str) -> str:
        rows = self.b.all(NOTE_ITEM.format(note_id) + " [data-testid=note-title]")
        return rows[0].text if rows else ""

    def select(self, note_id: str):
        self.wait_item(note_id)
        self.b.click(NOTE_ITEM.format(note_id) + " button")
        self.b.wait(lambda d: any(e.get_attribute("data-note-id") == note_id for e in self.b.all(
            "[data-testid=note-sheet],[data-testid=open-locked-note],[data-testid=locked-placeholder],[data-testid=deleted-note-sheet]")),
            "the note in the editor")

    def body_text(self) -> str:
        """The open note's body as stored: its Markdown (the editor's `value`)."""
        return self.b.find("#note-body").get_attribute("value")

    def shown_text(self) -> str:
        """The open note's body as the page shows it."""
        return self.b.find("#note-body").text

    def set_body(self, text: str):
        """Puts `text` in the open note's body as typing does (the field changes and says so),
        at once — so two people's edits can overlap in time."""
        self.b.js("const f = document.getElementById('note-body'); f.value = arguments[0];"
                  "f.dispatchEvent(new Event('input', {bubbles: true}));", text)

    def titles(self) -> list[str]:
        return [e.text for e in self.b.all("[data-testid=note-item] [data-testid=note-title]")]

    def note_id_titled(self, fragment: str) -> str | None:
        for row in self.b.all("[data-testid=note-item]"):
            if fragment in row.find_element(By.CSS_SELECTOR, "[data-testid=note-title]").text:
                return row.get_attribute("data-note-id")
        return None

    def reload(self):
        self.b.driver.refresh()
        self.wait_signed_in()

    def edit_body(self, note_id: str, text: str):
        self.b.type("#note-body", text)
        self.wait_saved_on_server(note_id, text)

    # Attachments

    def attach(self, path: str):
        self.b.find("#attach-file").send_keys(path)

    def image_width(self) -> int:
        """The decoded width of the first attachment image (0 while missing or undecodable)."""
        return self.b.js("const i = document.querySelector('[data-testid=attachment-image]');"
                         "return i && i.complete && i.src ? i.naturalWidth : 0;") or 0

    def wait_image(self, width: int):
        self.b.wait(lambda d: self.image_width() == width, f"the attached image ({width} px wide) to show")

    # Locked notes

    def lock_with_new_passphrase(self, passphrase: str, hint: str, screenshot: str | None = None):
        """🔒 on a note of an account without a passphrase: the set dialog, then the lock."""
        self.b.click("#lock-note")
        self.b.wait_visible("#passphrase-set-form")
        self.b.type("#new-passphrase", passphrase)
        self.b.type("#new-passphrase-again", passphrase)
        self.b.type("#new-passphrase-hint", hint)
        if screenshot:
            self.b.screenshot(screenshot)
        self.b.click("#passphrase-save")

    def lock(self, note_id: str, passphrase: str | None = None):
        """🔒 on the open note; types the passphrase if the page asks for it."""
        self.b.click("#lock-note")
        if passphrase is not None:
            self.b.wait(lambda d: self.b.visible("#passphrase-dialog") or self.item(note_id).get_attribute("data-locked") == "true",
                        "the passphrase dialog or the lock")
            if self.b.visible("#passphrase-dialog"):
                self.enter_passphrase(passphrase)
        self.wait_item(note_id, locked="true")

    def wait_placeholder(self, note_id: str):
        self.b.wait(lambda d: any(e.get_attribute("data-note-id") == note_id and e.is_displayed()
                                  for e in self.b.all("[data-testid=locked-placeholder]")), "the locked note's placeholder")

    def enter_passphrase(self, passphrase: str):
        self.b.type("#passphrase-input", passphrase)
        self.b.click("#passphrase-submit")

    def open_locked(self, note_id: str, passphrase: str):
        self.wait_placeholder(note_id)
        self.enter_passphrase(passphrase)
        self.b.wait(lambda d: any(e.get_attribute("data-note-id") == note_id for e in self.b.all("[data-testid=open-locked-note]")),
                    "the locked note to open")

    def wrong_passphrase(self, passphrase: str) -> str:
        """Types a wrong passphrase; returns the feedback once the page has judged it."""
        self.enter_passphrase(passphrase)
        self.b.wait(lambda d: self.b.find("#passphrase-message").text not in ("", "Checking…")
                    and self.b.find("#passphrase-input").is_enabled(), "the wrong passphrase to be judged")
        return self.b.find("#passphrase-message").text

    def hint(self) -> str:
        return self.b.find("#passphrase-hint").text if self.b.visible("#passphrase-hint") else ""

    def lock_now(self):
        self.b.click("#lock-now")

    # Sharing

    def share(self, name: str):
        self.b.type("#share-name", name)
        self.b.click("#share-button")
        self.b.wait_visible(f"[data-testid=participant][data-name='{name}']")

    # The widget

    def widget_text(self) -> str:
        return self.b.driver.find_element(By.TAG_NAME, "body").text


class SignedInPeople:
    """For a BrowserCase whose class sets `passwords` (name → password) and `pages` (an empty dict):
    each person's page, registered in the browser on first use (each person their own Chromium)."""

    passwords: dict[str, str]
    pages: dict[str, NotesPage]

    def signed_in(self, name: str) -> NotesPage:
        """`name`'s page, registered with `passwords[name]` the first time it is asked for."""
        if name not in self.pages:
            page = NotesPage(self.browser(name))
            page.register(name, self.passwords[name])
            page.wait_signed_in()
            self.pages[name] = page
        return self.pages[name]
