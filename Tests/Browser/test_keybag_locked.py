"""The web client while Tresor is locked (docs/WEB.md, "While Tresor is locked"): every account
is told what it can do — the local account (the owner) unlocks from the browser with the
passcode; another account is told plainly that the owner must unlock Tresor, and stays signed
in. And the widget follows the browser's own secure session: the CLI's open session shows no
title in a browser that has not opened its own."""

import json

from notes_page import NotesPage
from suite import BrowserCase, embedded_only, marker
from test_widget import WidgetPage


@embedded_only("about the home's keybag (tresor lock, the owner's banner) and the local account's "
               "passcode sign-in; a server's web side has neither")
class KeybagLockedTests(BrowserCase):
    def test_each_account_is_told_what_it_can_do_while_tresor_is_locked(self):
        password = self.secret("hana-password")
        hana = NotesPage(self.browser("hana"))
        hana.register("hana", password)
        hana.wait_signed_in()
        local = NotesPage(self.browser("local"))
        local.sign_in("local", self.passcode)

        locked = self.home.tresor(["lock"])
        self.assertEqual(locked.returncode, 0, locked.stderr)
        hana.b.wait_visible("[data-testid=keybag-owner-must-unlock]", seconds=8)
        self.assertIn("owner must unlock", hana.b.find("#keybag-banner").text)
        self.assertTrue(hana.b.visible("#app-screen"), "another account stays signed in")
        hana.b.screenshot("25-keybag-locked-other-account")

        # The owner's page was signed out by the lock, and says how to unlock from here.
        local.b.wait_visible("#login-form", seconds=8)
        self.assertIn("passcode", local.banner())
        local.b.screenshot("26-keybag-locked-owner")
        local.sign_in("local", self.passcode)
        status = json.loads(self.home.tresor(["status", "--json"]).stdout)
        self.assertEqual(status["keybag"], "unlocked", "signing in as local with the passcode unlocks Tresor")
        hana.b.wait_hidden("#keybag-banner", seconds=8)

    def test_a_list_refused_while_locked_since_start_is_read_once_the_owner_unlocks(self):
        password = self.secret("ivo-password")
        ivo = NotesPage(self.browser("ivo"))
        ivo.register("ivo", password)
        ivo.wait_signed_in()
        note_id = ivo.new_note("Before the restart " + self.note_text("title"), self.note_text("body"))

        # Restarted, Tresor is locked since it started: nothing of any account can be read.
        self.home.stop()
        self.home.start()
        ivo.sign_in("ivo", password)
        ivo.b.wait_visible("[data-testid=keybag-owner-must-unlock]", seconds=8)
        empty = ivo.b.find("[data-testid=note-list-empty]").text
        self.assertIn("once Tresor is unlocked", empty, "the list said the account has no notes")
        self.assertEqual(ivo.banner(), "", "an error besides the keybag banner")
        self.assertFalse(ivo.b.visible("#new-note"), "+ offered while nothing can be written")
        ivo.b.screenshot("27-keybag-locked-since-start")
        # The widget says its lists are not known yet, rather than empty.
        widget = WidgetPage(ivo)
        widget.show()
        self.assertIn("once Tresor is unlocked", ivo.b.find("#widget-recent").text)
        widget.back_to_app()
        # A link to the note followed meanwhile opens it once the owner has unlocked.
        ivo.b.js(f"location.hash = '#note={note_id}'")

        local = NotesPage(self.browser("local"))
        local.sign_in("local", self.passcode)
        ivo.wait_item(note_id)
        ivo.b.wait(lambda d: ivo.b.find("#note-title").get_attribute("value").startswith("Before the restart"), "the linked note opened")
        ivo.b.wait_hidden("#keybag-banner", seconds=8)
        self.assertEqual(ivo.banner(), "")
        self.assertTrue(ivo.b.visible("#new-note"))

    def test_the_widget_follows_the_browsers_own_secure_session(self):
        passphrase = self.secret("widget-passphrase")
        page = NotesPage(self.browser("local"))
        page.sign_in("local", self.passcode)
        title = "Widget " + self.note_text("title")
        note_id = page.new_note(title, self.note_text("body"))
        set_result = self.home.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input=f"{passphrase}\n{passphrase}\n")
        self.assertEqual(set_result.returncode, 0, set_result.stderr)
        # The CLI's secure session is open (it set the passphrase and opens a note with it)…
        shown = self.home.tresor(["note", "show", note_id, "--passphrase-stdin"], input=passphrase + "\n")
        self.assertEqual(shown.returncode, 0, shown.stderr)
        # …but this browser opened none: its widget shows no title.
        widget = WidgetPage(page)
        source = widget.show()
        self.assertEqual(widget.redacted, "true", "the CLI's session showed titles in the browser's widget")
        self.assertNotIn(title, source)
