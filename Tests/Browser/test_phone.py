"""The web client on phones and tablets (docs/WEB.md, "Phones"), in chromedriver's mobile
emulation — a touch screen of 320 × 568, 390 × 844 (phones) and 820 × 1180 (a tablet):

- every screen (sign-in, list, note, folders, the account menu, a locked note, its hint, the
  passphrase dialog, an open locked note, dark) has no overlapping elements, no sideways
  scrolling, touch targets of at least 44 × 44 px and no serious or critical axe-core
  violation; a screenshot of each is saved;
- a phone shows one pane at a time (list → note → back), a tablet the list beside the note;
- the toolbar is one row, the account and rare actions behind one menu, Lock Now one tap away;
- the formatting bar stays in view when an on-screen keyboard shrinks the viewport, and the page
  itself never scrolls;
- the locked-note flow by touch: list → the note (the passphrase field focused, for a password
  manager and the text keyboard) → three wrong entries show the hint without scrolling → open →
  Lock Now;
- the page is installable (a manifest with icons: Chromium's installability check reports
  nothing) and follows the system's light or dark setting.

Nothing sits under a notch or a home bar, upright or turned (`test_safe_areas`); the desktop
layout passes the same axe-core run (`test_desktop_accessibility`); the account menu works with
the keyboard alone (`test_keyboard_alone`)."""

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

import axe
import layout
from browser import Browser
from layout import tap
from notes_page import NOTE_ITEM, NotesPage
from suite import BrowserCase, marker

PHONE_SMALL = (320, 568)
PHONE = (390, 844)
TABLET = (820, 1180)
KEYBOARD_SHARE = 0.45  # of the screen's height an on-screen keyboard takes


class PhoneLayoutTests(BrowserCase):
    longMessage = False
    def test_phone_320(self):
        self.device_flow(PHONE_SMALL)

    def test_phone_390(self):
        self.device_flow(PHONE)

    def test_tablet_820(self):
        self.device_flow(TABLET)

    # One device, every screen

    def device_flow(self, device: tuple[int, int]):
        width, height = device
        phone = width <= 700
        name = f"gina{width}"
        password = marker(f"{name}-password")
        self.secrets.append(password)
        b = self.browser(name, device)
        page = NotesPage(b)
        kind = "phone" if phone else "tablet"

        def screen(what: str, root: str = "body"):
            self.check_screen(b, f"{kind}-{width}-{what}", root)

        page.load()
        screen("01-sign-in")
        page.register(name, password)
        b.wait_visible("#app-screen")
        b.wait(lambda d: b.js("return document.getElementById('account-name').textContent") == name, "the account in the menu")
        self.assertEqual(self.shown_panes(b), ["list"] if phone else ["list", "note"])
        self.assert_one_toolbar_row(b, phone)

        # Notes written on the device: the list, then a note — formatting bar at the bottom.
        preview = self.note_text(f"{name}-preview")
        self.write_note(b, phone, "Groceries", f"{preview}\nBread, olives, lemons")
        self.write_note(b, phone, "Trip to Lisbon", f"Tram 28 at nine\n{self.note_text(name + '-trip')}")
        if phone:
            self.assertEqual(self.shown_panes(b), ["note"])
        screen("03-note")
        bar = self.box(b, "[data-testid=format-bar]")
        if phone:
            self.assertAlmostEqual(bar["bottom"], height, delta=1, msg="the formatting bar at the bottom of the screen")

        # The on-screen keyboard: the viewport shrinks; the formatting bar stays right above it.
        tap(b, "#note-body")
        keyboard_top = round(height * (1 - KEYBOARD_SHARE))
        layout.set_viewport_height(b, keyboard_top)
        try:
            b.wait(lambda d: self.box(b, "[data-testid=format-bar]")["bottom"] <= keyboard_top + 1, "the formatting bar above the keyboard")
            bar = self.box(b, "[data-testid=format-bar]")
            self.assertGreater(bar["top"], 0, "the formatting bar is in view")
            self.assertTrue(b.js("const r = arguments[0].getBoundingClientRect();"
                                 "return arguments[0].contains(document.elementFromPoint(r.left + 22, r.top + r.height / 2))",
                                 b.find("[data-testid=format-bar]")), "nothing covers the formatting bar")
            self.assertEqual(b.js("return document.activeElement.id"), "note-body", "the note keeps the caret")
            self.assertEqual(b.js("return [document.scrollingElement.scrollTop, document.scrollingElement.scrollHeight <= innerHeight]"),
                             [0, True], "the page itself does not scroll: one scroll area")
            tap(b, "#format-check")
            b.wait(lambda d: b.js("return document.activeElement.id") == "note-body", "the caret to stay in the note")
            if phone and keyboard_top <= 420:
                # Little room: the Back row and the note's actions step aside while typing, and
                # the text gets most of what is left above the bar.
                self.assertFalse(b.visible("#back-to-list") or b.visible("#pin-note"), "the rows step aside while typing")
                room = self.box(b, "[data-testid=format-bar]")["top"] - self.box(b, "#note-body")["top"]
                self.assertGreater(room, keyboard_top / 3, f"room for the text above the formatting bar: {room} px")
            b.screenshot(f"{kind}-{width}-04-keyboard")
        finally:
            layout.set_viewport_height(b, height)

        # Back to the list: each note's first line after its title.
        if phone:
            tap(b, "#back-to-list")
            b.wait(lambda d: self.shown_panes(b) == ["list"], "the list alone after Back")
            # The browser's Back (Android's) goes up a pane too, and stays in the app.
            tap(b, "[data-testid=note-item] button")
            b.wait(lambda d: self.shown_panes(b) == ["note"], "a note again")
            b.driver.back()
            b.wait(lambda d: self.shown_panes(b) == ["list"], "the list after the browser's Back")
            self.assertTrue(b.visible("#app-screen") and b.driver.current_url.startswith(self.home.url), "still in the app")
        b.wait(lambda d: any(preview in e.text for e in b.all("[data-testid=note-item]")), "the first line after the title in the list")
        screen("02-list")

        # The account and the rare actions: behind one menu on a phone, in the toolbar on a tablet.
        if phone:
            self.assertFalse(b.visible("#sign-out"), "Sign Out waits in the menu")
            tap(b, "#account-menu-button")
            b.wait_visible("#account-menu[data-open] #sign-out")
            self.assertEqual(b.find("#account-menu-button").get_attribute("aria-expanded"), "true")
            for control in ("#passphrase-settings", "#password-settings", "#account-name", "#sign-out"):
                self.assertTrue(b.visible(control), f"{control} in the menu")
            screen("05-menu", root="#account-menu")
            tap(b, "#account-menu-button")
            b.wait_hidden("#sign-out")
        else:
            self.assertFalse(b.visible("#account-menu-button"))
            for control in ("#passphrase-settings", "#password-settings", "#account-name", "#sign-out"):
                self.assertTrue(b.visible(control), f"{control} in the toolbar")

        tap(b, "#back-to-folders")
        b.wait(lambda d: self.shown_panes(b) == (["folders"] if phone else ["folders", "note"]), "the folders")
        screen("06-folders")
        if phone:
            # A folder name longer than the list's header: the title gives way, never New Note.
            tap(b, "#new-folder")
            b.type("#new-folder-name", "A very long folder name for the recipes and the household things")
            b.find("#new-folder-name").send_keys(Keys.ENTER)
            # A folder made is opened.
            b.wait(lambda d: self.shown_panes(b) == ["list"] and "household" in b.js("return document.getElementById('list-title').textContent"),
                   "the long folder's list")
            size = b.js("const r = document.getElementById('new-note').getBoundingClientRect(); return [r.width, r.height]")
            self.assertTrue(size[0] >= 44 and size[1] >= 44, f"New Note is {size[0]} × {size[1]} px beside a long folder name")
            tap(b, "#back-to-folders")
            b.wait(lambda d: self.shown_panes(b) == ["folders"], "the folders again")
        tap(b, "#folder-all")
        b.wait(lambda d: self.shown_panes(b) == (["list"] if phone else ["list", "note"]), "the list again")

        # A note locked on the device.
        passphrase = self.secret(f"{name}-passphrase")
        hint = self.secret(f"{name}-hint")
        secret_text = self.note_text(f"{name}-locked")
        note_id = self.write_note(b, phone, "Bank codes", f"PIN {secret_text}")
        tap(b, "#lock-note")
        b.wait_visible("#passphrase-set-form")
        self.assertEqual(b.js("return document.activeElement.id"), "new-passphrase", "typing does not start in the first field")
        b.type("#new-passphrase", passphrase)
        b.type("#new-passphrase-again", passphrase)
        b.type("#new-passphrase-hint", hint)
        screen("07-passphrase-dialog", root="#passphrase-settings-dialog")
        tap(b, "#passphrase-save")
        page.wait_item(note_id, locked="true")
        b.wait_visible("[data-testid=open-locked-note]")
        tap(b, "#lock-now")
        page.wait_placeholder(note_id)
        b.wait_hidden("#error")  # Lock Now's message goes after a few seconds
        if phone:
            tap(b, "#back-to-list")

        # The locked-note flow by touch: the list → the note → wrong entries, the hint → open → Lock Now.
        b.wait(lambda d: self.shown_panes(b)[0] == "list", "the list")
        tap(b, NOTE_ITEM.format(note_id) + " button")
        page.wait_placeholder(note_id)
        b.wait(lambda d: b.js("return document.activeElement.id") == "passphrase-input", "the passphrase field focused")
        field = b.find("#passphrase-input")
        self.assertEqual((field.get_attribute("type"), field.get_attribute("autocomplete"), field.get_attribute("inputmode")),
                         ("password", "current-password", "text"))
        self.assertTrue(b.visible("#lock-now"), "Lock Now in reach with the note open")
        screen("08-locked")
        for attempt in range(3):
            b.type("#passphrase-input", marker("wrong"))
            tap(b, "#passphrase-submit")
            b.wait(lambda d: b.find("#passphrase-message").text not in ("", "Checking…") and b.find("#passphrase-input").is_enabled(),
                   "the wrong passphrase to be judged")
        b.wait_visible("#passphrase-hint")
        self.assertIn(hint, b.find("#passphrase-hint").text)
        self.assert_in_view_unscrolled(b, "#passphrase-hint", "the hint")
        screen("09-hint")
        layout.set_viewport_height(b, round(height * (1 - KEYBOARD_SHARE)))
        try:
            tap(b, "#passphrase-input")
            self.assert_in_view_unscrolled(b, "#passphrase-hint", "the hint above the keyboard")
        finally:
            layout.set_viewport_height(b, height)
        b.type("#passphrase-input", passphrase)
        tap(b, "#passphrase-submit")
        b.wait(lambda d: any(e.get_attribute("data-note-id") == note_id for e in b.all("[data-testid=open-locked-note]")),
               "the locked note to open")
        b.wait(lambda d: secret_text in page.shown_text(), "the locked note's text")
        screen("10-locked-open")
        tap(b, "#lock-now")
        page.wait_placeholder(note_id)
        self.assertNotIn(secret_text, b.dom, "the note's text is gone from the page after Lock Now")

        # Light and dark follow the system's setting.
        light = layout.background(b, "body")
        layout.set_color_scheme(b, "dark")
        try:
            self.assertNotEqual(layout.background(b, "body"), light, "dark mode changes the page")
            self.assertEqual(b.js("return getComputedStyle(document.body).colorScheme"), "light dark")
            screen("11-dark")
        finally:
            layout.set_color_scheme(b, "light")

    def test_installable(self):
        """A manifest and icons: Chromium would offer to install the page (Add to Home Screen)."""
        b = self.browser("installer", PHONE)
        NotesPage(b).load()
        manifest = b.wait(lambda d: b.driver.execute_cdp_cmd("Page.getAppManifest", {}).get("url"), "the manifest")
        self.assertTrue(manifest.endswith("/static/manifest.json"))
        parsed = b.driver.execute_cdp_cmd("Page.getAppManifest", {})
        self.assertEqual(parsed.get("errors"), [], "the manifest parses")
        errors = b.driver.execute_cdp_cmd("Page.getInstallabilityErrors", {})["installabilityErrors"]
        self.assertEqual(errors, [], "Chromium's installability errors")
        for icon in ("icon-192.png", "icon-512.png", "icon-maskable-512.png", "icon-180.png"):
            size = b.js("return fetch(arguments[0]).then((r) => r.ok && r.headers.get('content-type') === 'image/png' ? r.blob() : null)"
                        ".then((blob) => blob && blob.size)", f"/static/img/{icon}")
            self.assertTrue(size, f"{icon} is served as a PNG")

    def test_safe_areas(self):
        """A phone with a notch and a home bar, upright and turned: nothing under them, and the
        formatting bar above the home bar."""
        password = marker("jo-password")
        self.secrets.append(password)
        b = self.browser("jo", PHONE)
        page = NotesPage(b)
        page.register("jo", password)
        b.wait_visible("#app-screen")
        self.write_note(b, True, "Notch", f"Under the notch\n{self.note_text('notch')}")
        tap(b, "#pin-note")
        b.wait(lambda d: b.find("#pin-note").get_attribute("aria-pressed") == "true", "the note pinned")
        try:
            layout.set_safe_area(b, top=47, bottom=34)
            self.assertEqual(layout.outside(b, 47, 0, 34, 0), [], "upright: in the safe area")
            # A message strip at the top keeps clear of the notch too.
            tap(b, "#lock-now")
            b.wait_visible("#error")
            self.assertEqual(layout.outside(b, 47, 0, 34, 0), [], "a message under the notch")
            self.assertEqual(layout.overlaps(b), [])
            b.screenshot("phone-390-12-message-under-notch")
            b.wait_hidden("#error")
            self.assertLessEqual(self.box(b, "#format-bold")["bottom"], PHONE[1] - 34, "the formatting bar above the home bar")
            self.assertEqual(layout.overlaps(b), [])
            b.screenshot("phone-390-12-safe-area")
            tap(b, "#back-to-list")
            b.wait(lambda d: self.shown_panes(b) == ["list"], "the list")
            self.assertEqual(layout.outside(b, 47, 0, 34, 0), [], "the list in the safe area")
            layout.set_device_metrics(b, PHONE[1], PHONE[0])
            layout.set_safe_area(b, left=47, right=47, bottom=21)
            self.assertEqual(layout.outside(b, 0, 47, 21, 47), [], "turned: in the safe area")
            self.assertEqual(layout.overlaps(b), [])
            self.assertEqual(layout.horizontal_overflow(b), [])
            b.screenshot("phone-844-13-turned")
            # Pinned and shared: two chips beside the note's buttons, each on one line inside the
            # toolbar, never stacked and cut off.
            status, _ = self.api("POST", "/accounts", {"name": "kim", "password": password, "passwordAgain": password})
            self.assertEqual(status, 201)
            b.type("#share-name", "kim")
            tap(b, "#share-button")
            b.wait(lambda d: len(b.all("#note-meta .chip")) == 2, "the Pinned and Shared chips")
            toolbar = self.box(b, ".editor-toolbar")
            chips = b.js("return [...document.querySelectorAll('#note-meta .chip')].map((c) => {"
                         "const r = c.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, height: r.height}; })")
            self.assertEqual(len(chips), 2, "the Pinned and Shared chips")
            for chip in chips:
                self.assertLessEqual(chip["height"], 24, f"a chip's text wrapped: {chip}")
                self.assertTrue(toolbar["top"] <= chip["top"] and chip["bottom"] <= toolbar["bottom"], f"a chip outside the toolbar: {chip}")
            b.screenshot("phone-844-14-turned-chips")
        finally:
            layout.set_safe_area(b)
            layout.set_device_metrics(b, *PHONE)

    # Desktop and keyboard

    def test_desktop_accessibility(self):
        """The desktop layout's main screens pass axe-core: sign-in, list and note, a locked note, the passphrase dialog."""
        password = marker("hugo-password")
        self.secrets.append(password)
        b = self.browser("hugo")
        page = NotesPage(b)
        page.load()
        self.assert_accessible(b, "desktop sign-in")
        page.register("hugo", password)
        page.wait_signed_in()
        note_id = page.new_note("Desk note", f"First line\n{self.note_text('desk')}")
        self.assert_accessible(b, "desktop list and note")
        b.click("#lock-note")
        b.wait_visible("#passphrase-set-form")
        self.assert_accessible(b, "desktop passphrase dialog")
        passphrase = self.secret("hugo-passphrase")
        b.type("#new-passphrase", passphrase)
        b.type("#new-passphrase-again", passphrase)
        b.click("#passphrase-save")
        page.wait_item(note_id, locked="true")
        page.lock_now()
        page.wait_placeholder(note_id)
        self.assert_accessible(b, "desktop locked note")
        layout.set_color_scheme(b, "dark")
        try:
            self.assert_accessible(b, "desktop locked note, dark")
        finally:
            layout.set_color_scheme(b, "light")

    def test_keyboard_alone(self):
        """On a phone with a keyboard: Tab reaches the account menu, whose focus is visible; Enter
        opens it with the focus on its first action, Escape closes it and gives the focus back;
        Tab and Enter on + write a note."""
        password = marker("ida-password")
        self.secrets.append(password)
        b = self.browser("ida", PHONE)
        page = NotesPage(b)
        page.register("ida", password)
        b.wait_visible("#app-screen")
        b.wait(lambda d: b.js("return document.getElementById('account-name').textContent") == "ida", "signed in")
        b.find("#search").click()
        reached = []
        for _ in range(6):
            ActionChains(b.driver).send_keys(Keys.TAB).perform()
            reached.append(b.js("return document.activeElement.id"))
            if reached[-1] == "account-menu-button":
                break
        self.assertEqual(reached[:2], ["lock-now", "account-menu-button"], "Tab goes search → Lock Now → the menu")
        self.assertNotEqual(b.js("return getComputedStyle(document.activeElement).outlineStyle"), "none", "focus is visible")
        ActionChains(b.driver).send_keys(Keys.ENTER).perform()
        b.wait(lambda d: b.js("return document.activeElement.id") == "passphrase-settings", "the focus in the open menu")
        ActionChains(b.driver).send_keys(Keys.ESCAPE).perform()
        b.wait(lambda d: b.js("return document.activeElement.id") == "account-menu-button" and not b.visible("#sign-out"),
               "the menu closed, the focus back on its button")

        # On to + (past Back to the folders): Enter writes a new note, typed from the keyboard alone.
        keys = ActionChains(b.driver)
        keys.send_keys(Keys.TAB).perform()
        self.assertEqual(b.js("return document.activeElement.id"), "back-to-folders")
        keys.send_keys(Keys.TAB).perform()
        self.assertEqual(b.js("return document.activeElement.id"), "new-note")
        keys.send_keys(Keys.ENTER).perform()
        b.wait(lambda d: self.shown_panes(b) == ["note"] and b.js("return document.activeElement.id") == "note-title", "the new note's title")
        body = self.note_text("keyboard")
        ActionChains(b.driver).send_keys("Typed", Keys.ENTER, body).perform()
        note_id = b.find("[data-testid=note-sheet]").get_attribute("data-note-id")
        NotesPage(b).wait_saved_on_server(note_id, body)

    # Helpers

    def write_note(self, b: Browser, phone: bool, title: str, body: str) -> str:
        """+ by touch, a title and a body typed, saved; returns the note's id (the editor shows it)."""
        shown = {e.get_attribute("data-note-id") for e in b.all("[data-testid=note-sheet]")}
        if phone and self.shown_panes(b) == ["note"]:
            tap(b, "#back-to-list")
        tap(b, "#new-note")
        note_id = b.wait(lambda d: next((e.get_attribute("data-note-id") for e in b.all("[data-testid=note-sheet]")
                                         if e.get_attribute("data-note-id") not in shown), None), "the new note")
        if phone:
            self.assertEqual(self.shown_panes(b), ["note"])
        b.type("#note-title", title)
        b.type("#note-body", body)
        NotesPage(b).wait_saved_on_server(note_id, body)
        return note_id

    @staticmethod
    def shown_panes(b: Browser) -> list[str]:
        return [name for name, css in (("folders", ".folders-pane"), ("list", ".list-pane"), ("note", ".editor-pane")) if b.visible(css)]

    @staticmethod
    def box(b: Browser, css: str) -> dict:
        return b.js("const r = document.querySelector(arguments[0]).getBoundingClientRect();"
                    "return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}", css)

    def assert_one_toolbar_row(self, b: Browser, phone: bool):
        """The toolbar's controls share one row; Lock Now is among them."""
        rows = b.js("""
            return [...document.querySelectorAll('.toolbar .brand-logo, .toolbar #search, .toolbar button')]
              .filter((e) => e.getClientRects().length && getComputedStyle(e).visibility === 'visible')
              .map((e) => Math.round(e.getBoundingClientRect().top + e.getBoundingClientRect().height / 2));
        """)
        self.assertTrue(rows and max(rows) - min(rows) <= 2, f"the toolbar is one row: centers at {rows}")
        self.assertTrue(b.visible("#lock-now"))
        self.assertLessEqual(self.box(b, ".toolbar")["bottom"], 61, "the toolbar is one row high")

    def assert_in_view_unscrolled(self, b: Browser, css: str, what: str):
        box = self.box(b, css)
        self.assertGreaterEqual(box["top"], 0, f"{what} is in view")
        self.assertLessEqual(box["bottom"], b.js("return innerHeight"), f"{what} is in view without scrolling")
        scrolled = b.js("return [...document.querySelectorAll('*')].filter((e) => e.scrollTop > 0).map((e) => e.id || e.className)")
        self.assertEqual(scrolled, [], f"nothing was scrolled to show {what}")

    def assert_accessible(self, b: Browser, what: str):
        b.wait_hidden("#loading")
        found = axe.violations(b)
        self.assertFalse(found, f"{what}: serious or critical axe-core violations: {found}")

    def check_screen(self, b: Browser, name: str, root: str = "body"):
        """A screenshot of the screen, then every check of it, all problems reported together."""
        b.wait_hidden("#loading")
        b.screenshot(name)
        problems = {
            "overlapping": layout.overlaps(b, root),
            "scrolling sideways": layout.horizontal_overflow(b),
            "touch targets under 44 × 44 px": layout.small_targets(b),
            "axe-core (serious, critical)": axe.violations(b),
        }
        problems = {k: v for k, v in problems.items() if v}
        self.assertFalse(problems, f"{name}: " + "; ".join(f"{k}: {v}" for k, v in problems.items()))
