"""The same locked notes from the browser and from the CLI: the local account ("On My
Computer") signs in on the web with the keybag passcode; `tresor note …` gets the passphrase on
standard input (--passphrase-stdin), never on its command line. One format, both directions."""

import json
import subprocess

from notes_page import NotesPage
from png import unique_png
from suite import BrowserCase, embedded_only, marker


@embedded_only("the local account (passcode sign-in) and `tresor note …` on the home's notes; a server "
               "has no local account and its notes are not the home's")
class CrossClientTests(BrowserCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.passphrase = marker("local-passphrase")
        cls.secrets.append(cls.passphrase)
        cls.page = None
        cls.passphrase_set = False

    def local(self) -> NotesPage:
        """The local account's page, signed in (again: `tresor note lock-now` signs it out)."""
        if self.page is None:
            type(self).page = NotesPage(self.browser("local"))
        self.page.load()
        if not self.page.b.visible("#app-screen"):
            self.page.sign_in("local", self.passcode)
        return self.page

    def cli(self, arguments: list[str], input: str = "") -> str:
        result = self.home.tresor(arguments, input=input)
        self.assertEqual(result.returncode, 0, f"tresor {' '.join(arguments)}: {result.stderr}")
        self.assertNotIn(self.passphrase, result.stderr)
        return result.stdout

    def image(self, what: str) -> tuple[str, bytes]:
        data = unique_png()
        path = self.home.root / f"{marker(what)}.png"
        path.write_bytes(data)
        return str(path), data

    def test_a_note_locked_in_the_browser_opens_with_tresor_note_show(self):
        page = self.local()
        self.assertIn("On My Computer", page.b.find("#account-name").text)
        body = self.note_text("web-locked")
        note_id = page.new_note("Locked on the web", body)
        path, image = self.image("web-image")
        page.attach(path)
        page.wait_image(96)
        if self.passphrase_set:
            page.lock(note_id, self.passphrase)
        else:
            page.lock_with_new_passphrase(self.passphrase, "cross-client hint")
            page.wait_item(note_id, locked="true")
            type(self).passphrase_set = True
        self.assertTrue(self.requests_to("POST", f"/notes/{note_id}/lock"), "the browser sent no lock request")
        self.assert_never_sent(self.passphrase.encode(), "the passphrase")
        self.assert_not_at_rest(body.encode(), "the locked note's text")

        listed = json.loads(self.cli(["note", "list", "--json"]))
        self.assertIsNotNone(next(n for n in listed if n["id"] == note_id).get("lock"), "the CLI must see the note as locked")
        self.cli(["note", "lock-now"])
        opened = json.loads(self.cli(["note", "show", note_id, "--json", "--passphrase-stdin"], input=self.passphrase + "\n"))
        self.assertEqual(opened["body"], body)
        [attachment] = opened["attachments"]
        out = self.home.root / "exported.png"
        self.cli(["note", "export-attachment", note_id, attachment["id"], "--out", str(out), "--passphrase-stdin"],
                 input=self.passphrase + "\n")
        self.assertEqual(out.read_bytes(), image, "the image sealed in the browser must open byte for byte in the CLI")

    def test_a_note_locked_with_tresor_note_lock_opens_in_the_browser(self):
        page = self.local()
        if not self.passphrase_set:
            self.cli(["note", "passphrase", "set", "--passphrase-stdin"], input=f"{self.passphrase}\n{self.passphrase}\n")
            type(self).passphrase_set = True
        body = self.note_text("cli-locked")
        created = json.loads(self.cli(["note", "new", "--title", "Locked in the terminal", "--body-stdin", "--json"], input=body))
        note_id = created["id"]
        path, image = self.image("cli-image")
        self.cli(["note", "attach", note_id, "--kind", "image", "--file", path])
        self.cli(["note", "lock", note_id, "--passphrase-stdin"], input=self.passphrase + "\n")

        page.lock_now()
        page.b.driver.refresh()
        page.wait_signed_in()
        page.wait_item(note_id, locked="true")
        page.select(note_id)
        page.wait_placeholder(note_id)
        self.assertNotIn(body, page.b.dom)
        page.open_locked(note_id, self.passphrase)
        self.assertEqual(page.body_text(), body)
        page.wait_image(96)  # the CLI's sealed chunks, opened by WebCrypto
        self.assert_never_sent(self.passphrase.encode(), "the passphrase")
        # The wrapped key came only for the passphrase's proof, and an edit is saved with the
        # note's proof (the CLI recorded both when it locked the note).
        self.assertTrue(any(r.status == 200 for r in self.requests_to("POST", f"/notes/{note_id}/wrapped-key")))
        edited = self.note_text("cli-locked-edited")
        page.b.type("#note-body", edited)
        page.b.wait(lambda d: any(r.status == 200 for r in self.requests_to("PUT", f"/notes/{note_id}/locked-body")),
                    "the locked body to be saved")
        page.wait_saved()
        self.cli(["note", "lock-now"])
        opened = json.loads(self.cli(["note", "show", note_id, "--json", "--passphrase-stdin"], input=self.passphrase + "\n"))
        self.assertEqual(opened["body"], edited)

    def test_a_passphrase_changed_in_the_browser_opens_the_notes_in_the_cli(self):
        page = self.local()
        if not self.passphrase_set:
            self.cli(["note", "passphrase", "set", "--passphrase-stdin"], input=f"{self.passphrase}\n{self.passphrase}\n")
            type(self).passphrase_set = True
        body = self.note_text("rewrapped")
        note_id = json.loads(self.cli(["note", "new", "--title", "Safe", "--body-stdin", "--json"], input=body))["id"]
        self.cli(["note", "lock", note_id, "--passphrase-stdin"], input=self.passphrase + "\n")
        self.cli(["note", "lock-now"])

        old, new = self.passphrase, marker("new-passphrase")
        self.secrets.append(new)
        # lock-now ended the local account's web session too (docs/WEB.md, "Sessions end").
        page.load()
        self.assertTrue(page.b.visible("#login-form"), "tresor note lock-now left the local account's web session open")
        page = self.local()
        page.b.click("#passphrase-settings")
        page.b.wait_visible("#passphrase-change-form")
        page.b.type("#current-passphrase", old)
        page.b.type("#new-passphrase", new)
        page.b.type("#new-passphrase-again", new)
        page.b.click("#passphrase-save")
        page.b.wait_hidden("#passphrase-settings-dialog", seconds=40)
        type(self).passphrase = new
        change = self.requests_to("POST", "/api/passphrase/change")
        self.assertEqual([r.status for r in change], [200])
        self.assertIn(note_id.encode(), change[0].body, "the CLI's locked note must be re-wrapped with the change")
        self.assert_never_sent(old.encode(), "the old passphrase")
        self.assert_never_sent(new.encode(), "the new passphrase")

        refused = self.home.tresor(["note", "show", note_id, "--json", "--passphrase-stdin"], input=old + "\n")
        self.assertNotEqual(refused.returncode, 0, "the old passphrase still opens the note")
        self.assertNotIn(body, refused.stdout)
        opened = json.loads(self.cli(["note", "show", note_id, "--json", "--passphrase-stdin"], input=new + "\n"))
        self.assertEqual(opened["body"], body)

    def test_notes_locked_before_proofs_open_and_save_in_the_browser_which_records_the_proofs(self):
        """The upgrade window (docs/SECURITY.md, "Locked-note integrity on the web"): a home from
        before proofs has no proof hashes. The first right entry in the browser records the
        passphrase's proof, the first save of a note its note proof; afterwards the server checks
        both, and the note still opens in the CLI with what was typed in the browser."""
        page = self.local()
        if not self.passphrase_set:
            self.cli(["note", "passphrase", "set", "--passphrase-stdin"], input=f"{self.passphrase}\n{self.passphrase}\n")
            type(self).passphrase_set = True
        body = self.note_text("pre-proof")
        note_id = json.loads(self.cli(["note", "new", "--title", "Older", "--body-stdin", "--json"], input=body))["id"]
        self.cli(["note", "lock", note_id, "--passphrase-stdin"], input=self.passphrase + "\n")
        self.cli(["note", "lock-now"])
        database = self.home.home / "notes.db"

        def sql(statement: str) -> str:
            return subprocess.run(["sqlite3", str(database), statement], check=True, capture_output=True, text=True).stdout.strip()

        sql("UPDATE passphrases SET proof_hash = NULL; UPDATE notes SET note_proof_hash = NULL;")
        # lock-now signed the page out and dropped its keys: it signs in afresh.
        page = self.local()
        page.select(note_id)
        page.open_locked(note_id, self.passphrase)
        self.assertEqual(page.body_text(), body)
        entry = self.requests_to("POST", "/passphrase/proof")[-1]
        self.assertEqual((entry.status, json.loads(entry.body)["establish"]), (200, True))
        self.assertNotEqual(sql("SELECT count(*) FROM passphrases WHERE proof_hash IS NOT NULL"), "0")

        edited = self.note_text("pre-proof-edited")
        page.b.type("#note-body", edited)
        page.b.wait(lambda d: any(r.status == 200 for r in self.requests_to("PUT", f"/notes/{note_id}/locked-body")),
                    "the locked body to be saved")
        page.wait_saved()
        save = json.loads([r for r in self.requests_to("PUT", f"/notes/{note_id}/locked-body") if r.status == 200][-1].body)
        self.assertIn("noteProof", save)
        self.assertEqual(sql(f"SELECT note_proof_hash IS NOT NULL FROM notes WHERE id = '{note_id}'"), "1")
        self.assert_never_sent(self.passphrase.encode(), "the passphrase")
        self.cli(["note", "lock-now"])
        opened = json.loads(self.cli(["note", "show", note_id, "--json", "--passphrase-stdin"], input=self.passphrase + "\n"))
        self.assertEqual(opened["body"], edited)
