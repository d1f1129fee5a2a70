"""No edit is ever lost (docs/WEB.md, "Revisions"): two accounts edit a shared note at the same
time — edits of different lines are merged, edits of the same line leave a conflict copy —
and a locked note edited in two browsers at once is merged in the browser, whose plaintext
the server never sees."""

from notes_page import NotesPage, SignedInPeople
from suite import BrowserCase, marker


class ConcurrentEditTests(SignedInPeople, BrowserCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.passwords = {name: marker(f"{name}-password") for name in ("alice", "bob")}
        cls.secrets += list(cls.passwords.values())
        cls.pages: dict[str, NotesPage] = {}

    def shared_note(self, lines: list[str]) -> tuple[NotesPage, NotesPage, str]:
        alice, bob = self.signed_in("alice"), self.signed_in("bob")
        note_id = alice.new_note("Trip " + marker("t"), "\n".join(lines))
        alice.share("bob")
        bob.reload()
        bob.select(note_id)
        self.assertEqual(bob.body_text(), "\n".join(lines))
        return alice, bob, note_id

    def test_edits_of_different_lines_by_two_accounts_are_both_kept(self):
        lines = [self.note_text(f"line{i}") for i in range(4)]
        alice, bob, note_id = self.shared_note(lines)
        alices_line, bobs_line = self.note_text("alice-edit"), self.note_text("bob-edit")
        # Both edit at once, each from the version they have: neither has seen the other's.
        alice.set_body("\n".join([alices_line, *lines[1:]]))
        bob.set_body("\n".join([*lines[:3], bobs_line]))
        alice.wait_saved_on_server(note_id, alices_line)
        bob.wait_saved_on_server(note_id, bobs_line)
        merged = "\n".join([alices_line, lines[1], lines[2], bobs_line])
        for page in (alice, bob):
            page.reload()
            page.select(note_id)
            page.b.wait(lambda d, page=page: page.body_text() == merged, f"both edits in {page.b.name}'s note")
        self.assertIsNone(alice.note_id_titled("conflict copy"), "a merge needs no conflict copy")
        bob.b.screenshot("20-merged-edits-of-two-accounts")

    def test_edits_of_the_same_line_keep_both_versions_as_a_conflict_copy(self):
        lines = [self.note_text(f"same{i}") for i in range(3)]
        alice, bob, note_id = self.shared_note(lines)
        alices_version, bobs_version = self.note_text("alice-same"), self.note_text("bob-same")
        alice.set_body("\n".join([lines[0], alices_version, lines[2]]))
        bob.set_body("\n".join([lines[0], bobs_version, lines[2]]))
        alice.wait_saved_on_server(note_id, alices_version)
        bob.wait_saved_on_server(note_id, bobs_version)
        # One version stays in the note, the other is whole in a copy named for it; both
        # accounts see both (the copy is shared like the note).
        for page in (alice, bob):
            page.reload()
            page.b.wait(lambda d, page=page: page.note_id_titled("conflict copy"), f"the conflict copy in {page.b.name}'s list")
            copy_id = page.note_id_titled("conflict copy")
            page.select(note_id)
            kept = page.body_text()
            page.select(copy_id)
            copied = page.body_text()
            self.assertEqual({kept, copied}, {"\n".join([lines[0], alices_version, lines[2]]), "\n".join([lines[0], bobs_version, lines[2]])},
                             "each version whole, one in the note and one in the copy")
        alice.b.screenshot("21-conflict-copy")


class LockedConcurrentEditTests(BrowserCase):
    def test_a_locked_note_edited_in_two_tabs_at_once_is_merged_in_the_browser(self):
        password, passphrase = self.secret("ivan-password"), self.secret("ivan-passphrase")
        page = NotesPage(self.browser("ivan"))
        page.register("ivan", password)
        page.wait_signed_in()
        lines = [self.note_text(f"locked{i}") for i in range(4)]
        note_id = page.new_note("Locked trip " + marker("t"), "\n".join(lines))
        page.lock_with_new_passphrase(passphrase, "ivan's hint")
        page.wait_item(note_id, locked="true")
        driver = page.b.driver
        first = driver.current_window_handle
        driver.switch_to.new_window("tab")
        second = driver.current_window_handle
        page.load()
        page.wait_signed_in()
        page.select(note_id)
        page.open_locked(note_id, passphrase)

        # Both tabs edit at once — different lines — each from the version it opened.
        firsts, seconds = self.note_text("tab-one"), self.note_text("tab-two")
        driver.switch_to.window(first)
        page.set_body("\n".join([firsts, *lines[1:]]))
        driver.switch_to.window(second)
        page.set_body("\n".join([*lines[:3], seconds]))
        merged = "\n".join([firsts, lines[1], lines[2], seconds])
        for handle in (first, second):
            driver.switch_to.window(handle)
            page.b.wait(lambda d: page.body_text() == merged and page.b.find("#save-status").get_attribute("data-state") == "saved",
                        "both edits in the locked note")
        # The server only ever saw ciphertext: no request carried either edit in the clear.
        for text in (firsts, seconds):
            self.assert_never_sent(text.encode(), "a locked note's edit")
        page.lock_now()
        page.reload()
        page.select(note_id)
        page.open_locked(note_id, passphrase)
        page.b.wait(lambda d: page.body_text() == merged, "the merged locked note after a reload")
        self.assertIsNone(page.note_id_titled("conflict copy"))
