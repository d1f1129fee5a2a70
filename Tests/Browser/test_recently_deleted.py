"""Recently Deleted in the browser (docs/WEB.md): the trash button moves a note there (Undo
brings it back at once), it is listed with the days it has left, restored whole — a locked
note still locked — or deleted for good, after which its text is in no file of the home."""

from notes_page import NotesPage
from suite import BrowserCase, marker


class RecentlyDeletedTests(BrowserCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.page = None  # the class runs once per mode: no page of the last run's browser

    def signed_in(self) -> NotesPage:
        if self.page is None:
            password = marker("dana-password")
            self.secrets.append(password)
            page = NotesPage(self.browser("dana"))
            page.register("dana", password)
            page.wait_signed_in()
            type(self).page = page
        self.page.b.click("#folder-all")
        return self.page

    def open_recently_deleted(self, page: NotesPage):
        page.b.click("#folder-recently-deleted")
        page.b.wait(lambda d: page.b.find("#list-title").text == "Recently Deleted", "the Recently Deleted list")

    def test_delete_moves_to_recently_deleted_and_restore_brings_it_back(self):
        page = self.signed_in()
        body = self.note_text("trashed-body")
        note_id = page.new_note("To Recently Deleted", body)
        page.b.click("#delete-note")
        page.b.wait(lambda d: not page.b.all(f"[data-testid=note-item][data-note-id='{note_id}']"), "the note to leave All Notes")
        # Undo, offered at once, puts it back.
        page.b.click("[data-testid=undo]")
        page.wait_item(note_id)
        page.select(note_id)
        page.b.click("#delete-note")
        page.b.wait(lambda d: not page.b.all(f"[data-testid=note-item][data-note-id='{note_id}']"), "the note to leave All Notes again")

        self.open_recently_deleted(page)
        page.select(note_id)
        page.b.wait_visible("[data-testid=deleted-note]")
        # Waited for, not read once: on a server the list can be drawn again (a live update)
        # between finding the row and reading it, which left a stale element.
        page.b.wait(lambda d: "30 days left" in page.item(note_id).text, "the deleted note's days left in the list")
        self.assertEqual(page.b.find("#deleted-body").text, body)
        self.assertEqual(page.b.all("#note-body"), [], "a deleted note is not editable")
        page.b.screenshot("22-recently-deleted")
        page.b.click("#restore-note")
        page.b.wait(lambda d: page.b.find("#list-title").text == "All Notes", "All Notes after the restore")
        page.wait_item(note_id)
        page.b.wait(lambda d: page.body_text() == body, "the restored note in the editor")

    def test_delete_for_good_leaves_no_text_in_the_home(self):
        page = self.signed_in()
        body = self.note_text("gone-for-good")
        note_id = page.new_note("Gone " + marker("t"), body)
        page.b.click("#delete-note")
        page.b.wait(lambda d: not page.b.all(f"[data-testid=note-item][data-note-id='{note_id}']"), "the note to leave All Notes")
        self.open_recently_deleted(page)
        page.select(note_id)
        page.b.js("window.confirm = () => true")  # the "cannot be undone" question, answered yes
        page.b.click("#delete-for-good")
        page.b.wait(lambda d: not page.b.all(f"[data-testid=note-item][data-note-id='{note_id}']"), "the note to leave Recently Deleted")
        self.assert_not_at_rest(body.encode(), "a note deleted for good")
