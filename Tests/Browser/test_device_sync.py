"""A device's notes in the server's web client (docs/SYNC.md, "Notes"): a device home with its
own `tresord` joins the web account's sync account on the server under test; a note written
with `tresor note new` is in the browser after `tresor sync now`, and an edit made in the browser
reaches the device at its next sync; an attachment the browser leaves out of backups is left out
on the device too. Server mode only: devices sync with a Tresor server."""

from device_sync_case import DeviceSyncCase
from suite import marker


class DeviceSyncTests(DeviceSyncCase):
    ACCOUNT = "dana"

    def test_a_device_note_shows_in_the_browser_and_a_browser_edit_reaches_the_device(self):
        dana = self.joined_page()

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

    def test_an_attachment_left_out_of_backups_in_the_browser_is_left_out_on_the_device(self):
        dana = self.joined_page()
        title = "Receipts " + marker("title")
        made = self.device_json(["note", "new", "--body-stdin"], input=f"{title}\n{self.note_text('receipts')}")
        scan = self.device.root / "scan.txt"
        scan.write_bytes(b"a scanned receipt")
        attached = self.device_json(["note", "attach", made["id"], "--kind", "file", "--file", str(scan)])
        self.device_json(["sync", "now"])

        note_id = dana.b.wait(lambda d: dana.note_id_titled(title), "the device's note in the list")
        dana.select(note_id)
        box = "[data-testid=attachment-excluded-from-backup]"
        dana.b.wait_visible(box)
        self.assertFalse(dana.b.selected(box), "a new attachment starts in backups")
        size = dana.b.js("const r = document.querySelector(arguments[0]).getBoundingClientRect(); return [r.width, r.height];", box)
        self.assertGreaterEqual(min(size), 18, f"a box too small to see and hit: {size}")

        def device_flag():
            self.device_json(["sync", "now"])
            attachments = self.device_json(["note", "show", made["id"]])["attachments"]
            return {a["id"]: a.get("excludedFromBackup", False) for a in attachments}

        dana.b.click(box)
        dana.b.wait(lambda d: device_flag() == {attached["id"]: True}, "the browser's flag on the device")
        dana.b.wait(lambda d: dana.b.selected(box), "the box ticked once the page reloaded the note")
        dana.b.screenshot("attachment-left-out-of-backups")

        dana.b.click(box)
        dana.b.wait(lambda d: device_flag() == {attached["id"]: False}, "the attachment back in backups on the device")
        dana.b.wait(lambda d: not dana.b.selected(box), "the box unticked once the page reloaded the note")
