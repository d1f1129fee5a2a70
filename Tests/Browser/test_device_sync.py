"""A device's notes in the server's web client (docs/SYNC.md, "Notes"): a device home with its
own `tresord` joins the web account's sync account on the server under test; a note written
with `tresor note new` is in the browser after `tresor sync now`, and an edit made in the browser
reaches the device at its next sync. Server mode only: devices sync with a Tresor server."""

import json
import unittest

import modes
from notes_page import NotesPage, SignedInPeople
from suite import BrowserCase, marker
from tresor_home import TresorHome


class DeviceSyncTests(SignedInPeople, BrowserCase):
    @classmethod
    def setUpClass(cls):
        if modes.current != modes.SERVER:
            raise unittest.SkipTest("server mode only: a device syncs with a Tresor server")
        super().setUpClass()
        cls.passwords = {"dana": marker("dana-password")}
        cls.secrets += list(cls.passwords.values())
        cls.pages: dict[str, NotesPage] = {}
        # Syncs only at `tresor sync now`, so what one sync sent is the test's to count.
        cls.device = TresorHome("device-passcode-" + marker("p"), {"syncInBackground": False})
        try:
            cls.device.start()
            cls.device.initialize()
        except Exception:
            cls.device.remove()
            raise

    @classmethod
    def tearDownClass(cls):
        device_log = cls.device.log
        cls.device.remove()
        super().tearDownClass()
        leaked = [s for s in cls.secrets + cls.markers if s in device_log]
        if leaked:
            raise AssertionError(f"the device's daemon log holds {len(leaked)} secret(s) or note text(s)")

    def device_json(self, arguments: list[str], input: str | None = None):
        result = self.device.tresor([*arguments, "--json"], input=input)
        self.assertEqual(result.returncode, 0, f"tresor {' '.join(arguments)}: {result.stderr}")
        return json.loads(result.stdout)

    def test_a_device_note_shows_in_the_browser_and_a_browser_edit_reaches_the_device(self):
        dana = self.signed_in("dana")  # registers the web account
        joined = self.device_json(["sync", "join", self.home.url, "--account", "dana", "--password-stdin",
                                   "--device-name", "laptop", "--no-wait"], input=self.passwords["dana"] + "\n")
        self.assertEqual(joined["state"], "trusted")

        title = "Packing " + marker("title")
        line = self.note_text("device-line")
        made = self.device_json(["note", "new", "--body-stdin"], input=f"{title}\n{line}")
        synced = self.device_json(["sync", "now"])
        self.assertEqual(synced["notes"]["sent"], 1, synced)

        # The page hears of the new note (live updates) and shows it, with the device's text.
        note_id = dana.b.wait(lambda d: dana.note_id_titled(title), "the device's note in the list")
        dana.select(note_id)
        self.assertIn(line, dana.body_text())
        dana.b.screenshot("device-note-in-the-browser")

        browser_line = self.note_text("browser-line")
        edited = f"{title}\n{line}\n{browser_line}"
        dana.edit_body(note_id, edited)
        synced = self.device_json(["sync", "now"])
        self.assertEqual(synced["notes"]["applied"], 1, synced)
        shown = self.device_json(["note", "show", made["id"]])
        self.assertEqual(shown["body"], edited)
