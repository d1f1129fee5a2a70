"""A note imported still locked from Apple Notes, synced from a device, in the server's web client
(docs/SYNC.md, "Notes"; docs/WEB.md, "Locked notes in the browser"): the device imports a
NoteStore holding Apple's locked-note vector and syncs; the browser shows the note locked with a
passphrase imported from Apple Notes, refuses a wrong passphrase, opens it with Apple's, and an
edit made there comes back to the device still locked with it. Server mode only."""

import sqlite3
import tempfile
from pathlib import Path

from device_sync_case import DeviceSyncCase
from notes_page import NotesPage
from suite import marker

# Apple's whole locked-note vector (Tests/Fixtures/NoteStoreFixture/AppleNotesVectors.swift,
# FullNote): passphrase "password", 20,000 rounds, text "Encrypted title\n\nEncrypted body".
APPLE_PASSPHRASE = "password"
APPLE_NOTE = {
    "salt": "1165106b6b288bda1e6ecb18e65c7876",
    "iterations": 20_000,
    "wrapped_key": "98c0e56b43b507e60c5465ec5e1bb0c74b756f7d4f4a9bff",
    "iv": "151f64de7be34d15dacdaea9b33471f9",
    "tag": "806bf2bbd3bf83cf1240b03e7c4d6ab1",
    "ciphertext": "131b03571fc9ec47ef58e58e21fce5c10aa73a62b9e58a743bcdcc3aff1ea8ab9964f4535b8597735f3da5f6ae63b937"
                  "0625a20d633e9cf2986d4d118989124f0ddfee956e47cb5cbc3617c520b075620b37ae4056f3a1af83351fda634dfb44"
                  "6055c75f7143a5600149db333893c0ecb0ef3944e2a64542e9a4375bf152689858fed8b21aded0eab0afb11190",
}


def write_note_store(path: Path, title: str, hint: str):
    """A NoteStore.sqlite of the older schema (as NoteStoreFixture writes it) with one account,
    one folder and the locked vector as a note titled `title`."""
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE ZICCLOUDSYNCINGOBJECT (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER,
          ZISPASSWORDPROTECTED INTEGER, ZCRYPTOITERATIONCOUNT INTEGER, ZACCOUNT2 INTEGER, ZFOLDER INTEGER,
          ZOWNER INTEGER, ZCREATIONDATE TIMESTAMP, ZMODIFICATIONDATE1 TIMESTAMP, ZNAME VARCHAR,
          ZPASSWORDHINT VARCHAR, ZTITLE1 VARCHAR, ZTITLE2 VARCHAR, ZCRYPTOSALT BLOB, ZCRYPTOWRAPPEDKEY BLOB);
        CREATE TABLE ZICNOTEDATA (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNOTE INTEGER, ZDATA BLOB,
          ZCRYPTOINITIALIZATIONVECTOR BLOB, ZCRYPTOTAG BLOB);
        CREATE INDEX ZICNOTEDATA_ZNOTE_INDEX ON ZICNOTEDATA (ZNOTE);
    """)
    note = {k: bytes.fromhex(v) if isinstance(v, str) else v for k, v in APPLE_NOTE.items()}
    db.execute("INSERT INTO ZICCLOUDSYNCINGOBJECT (Z_PK, Z_ENT, ZNAME) VALUES (1, 1, 'iCloud')")
    db.execute("INSERT INTO ZICCLOUDSYNCINGOBJECT (Z_PK, Z_ENT, ZTITLE2, ZOWNER) VALUES (2, 2, 'Vault', 1)")
    db.execute("""INSERT INTO ZICCLOUDSYNCINGOBJECT (Z_PK, Z_ENT, ZTITLE1, ZFOLDER, ZACCOUNT2, ZCREATIONDATE, ZISPASSWORDPROTECTED,
                  ZCRYPTOSALT, ZCRYPTOITERATIONCOUNT, ZCRYPTOWRAPPEDKEY, ZPASSWORDHINT) VALUES (3, 3, ?, 2, 1, 700000000, 1, ?, ?, ?, ?)""",
               (title, note["salt"], note["iterations"], note["wrapped_key"], hint))
    db.execute("INSERT INTO ZICNOTEDATA (Z_PK, ZNOTE, ZDATA, ZCRYPTOINITIALIZATIONVECTOR, ZCRYPTOTAG) VALUES (1003, 3, ?, ?, ?)",
               (note["ciphertext"], note["iv"], note["tag"]))
    db.commit()
    db.close()


class AppleLockedSyncTests(DeviceSyncCase):
    ACCOUNT = "erin"

    @staticmethod
    def page_get(page: NotesPage, path: str):
        """`GET /api{path}` as the signed-in page asks it (its session and origin token)."""
        got = page.b.driver.execute_async_script("""
            const [path, done] = arguments;
            import('/static/js/api.js').then((api) => api.request('GET', path)).then(done, (error) => done({ error: String(error) }));
        """, path)
        assert "error" not in got, got
        return got

    def test_an_apple_locked_note_from_a_device_opens_in_the_browser_and_an_edit_comes_back_locked(self):
        erin = self.joined_page()

        title = "Vault " + marker("title")
        with tempfile.TemporaryDirectory() as folder:
            store = Path(folder) / "NoteStore.sqlite"
            write_note_store(store, title, "the usual word")
            imported = self.device_json(["import", "apple-notes", str(store)])
        self.assertEqual(imported["report"]["locked"], 1, imported)
        local = next(n for n in self.device_json(["note", "list"]) if n["title"] == title)
        self.assertEqual(local["lock"]["source"], "apple-notes")
        synced = self.device_json(["sync", "now"])
        self.assertEqual(synced["notes"]["sent"], 1, synced)

        # On the server it is locked with an Apple passphrase, never the account's current one.
        note_id = erin.b.wait(lambda d: erin.note_id_titled(title), "the device's locked note in the list")
        self.assertEqual(self.page_get(erin, "/passphrase")["isSet"], False)
        detail = self.page_get(erin, f"/notes/{note_id}")
        lock = detail["summary"]["lock"]
        self.assertEqual((lock["source"], lock["isCurrent"], lock["hint"]), ("appleNotes", False, "the usual word"), lock)
        # No proof recorded yet: the note's wrapped key is what checks the passphrase here.
        self.assertEqual((detail["locked"]["hasProof"], len(detail["locked"]["wrappedKey"])), (False, 32), detail["locked"])

        erin.select(note_id)
        erin.wait_placeholder(note_id)
        self.assertIn("Wrong passphrase", erin.wrong_passphrase("hashcat"))
        erin.open_locked(note_id, APPLE_PASSPHRASE)
        self.assertIn("Encrypted body", erin.body_text())
        erin.b.screenshot("apple-locked-note-from-a-device")

        line = self.note_text("browser-line")
        edited = f"{title}\n\nEncrypted body\n{line}"
        erin.b.type("#note-body", edited)
        erin.b.wait(lambda d: any(r.status == 200 for r in self.requests_to("PUT", f"/notes/{note_id}/locked-body")),
                    "the locked body to be saved")
        erin.wait_saved()
        synced = self.device_json(["sync", "now"])
        self.assertEqual(synced["notes"]["applied"], 1, synced)
        back = next(n for n in self.device_json(["note", "list"]) if n["id"] == local["id"])
        self.assertEqual(back.get("lock", {}).get("source"), "apple-notes", back)
        shown = self.device_json(["note", "show", local["id"], "--passphrase-stdin"], input=APPLE_PASSPHRASE + "\n")
        self.assertEqual(shown["body"], edited)
