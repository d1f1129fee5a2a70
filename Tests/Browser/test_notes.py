"""Two web accounts in two browsers: registration, a note with an image, locking it in the
browser (nothing in the clear on the server, the passphrase never sent), opening it after a
reload, Lock Now, the hint after three wrong passphrases, sharing, HTML in titles, search (the
answer to what was typed last), and deleting a folder that holds notes (asked first)."""

import base64
import json
import tempfile
import time
from pathlib import Path

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from notes_page import NotesPage, SignedInPeople
from png import distinctive_slices, unique_png
from suite import BrowserCase, marker

LOCK_FIELDS = {"passphraseProof", "wrappedKey", "noteProofHash", "iv", "tag", "ciphertext", "attachments"}

# The known answer of Tests/TresorNotesTests/ProofVectorTests.swift: the page's WebCrypto must give
# the same proofs as the daemon's Swift code (docs/SECURITY.md, "Locked-note integrity on the web").
PROOF_VECTOR = {
    "passphrase": "Tresor KAT passphrase \u2713", "iterations": 1000,
    "proof": "13cc7c53d544fafeb677e79013a2687139483bdefabd164d0f9defde92e1f680",
    "proofHash": "510b1173d49408fa80e57af64a6f8fe95bcbb3d7fa8fc1dd91049d52fd37fcf7",
    "wrappedNoteKey": "5dc53f1ef8ac932186a03144ca6d52be848476b885e06f81",
    "noteProof": "73261ba7a115d787a6b90ce23e45646c94e0ebce0a0522d2ad1fcc41cf9775a9",
}


class WebNotesTests(SignedInPeople, BrowserCase):
    production_key_derivation = True   # checks the count the browser is told to derive with

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.passwords = {name: marker(f"{name}-password") for name in ("alice", "bob", "carol", "dora")}
        cls.passphrase = marker("passphrase")
        cls.hint_text = "the usual one"
        cls.secrets += [*cls.passwords.values(), cls.passphrase]
        cls.pages: dict[str, NotesPage] = {}
        cls.passphrase_set = False
        cls.folder = Path(tempfile.mkdtemp(prefix="browser-files-", dir=cls.home.root))

    def image_file(self) -> tuple[Path, bytes]:
        data = unique_png()
        path = self.folder / f"photo-{marker('img')}.png"
        path.write_bytes(data)
        return path, data

    def locked_note(self, page: NotesPage, body: str, with_image: bool = False) -> tuple[str, bytes | None]:
        """A new note of `page`'s account, locked in the browser (setting the passphrase the first time)."""
        note_id = page.new_note("Locked " + marker("t"), body)
        image = None
        if with_image:
            path, image = self.image_file()
            page.attach(str(path))
            page.wait_image(96)
        if not self.passphrase_set:
            page.lock_with_new_passphrase(self.passphrase, self.hint_text)
            page.wait_item(note_id, locked="true")
            type(self).passphrase_set = True
        else:
            page.lock(note_id, self.passphrase)
        return note_id, image

    # Proofs: the browser's derivation is the daemon's

    def test_proof_derivation_matches_the_swift_known_answer(self):
        alice = self.signed_in("alice")
        got = alice.b.driver.execute_async_script("""
            const [vector, done] = arguments;
            (async () => {
              const crypto = await import('/static/js/locked-crypto.js');
              const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
              const fromHex = (text) => Uint8Array.from(text.match(/../g), (pair) => parseInt(pair, 16));
              const salt = Uint8Array.from({ length: 16 }, (_, i) => i);
              const { key, proof } = await crypto.derivePassphrase(vector.passphrase, salt, vector.iterations);
              const noteProof = await crypto.noteProof(fromHex(vector.wrappedNoteKey), key);
              return { proof: hex(proof), proofHash: hex(await crypto.proofHash(proof)), noteProof: hex(noteProof) };
            })().then(done, (error) => done({ error: String(error) }));
        """, PROOF_VECTOR)
        self.assertEqual(got, {k: PROOF_VECTOR[k] for k in ("proof", "proofHash", "noteProof")})

    # Registration

    def test_registration_asks_the_password_twice_and_refuses_a_taken_name(self):
        browser = self.browser("carol")
        page = NotesPage(browser)
        page.load()
        browser.screenshot("01-sign-in")
        # Every problem is told at once, each field marked.
        page.register("carol-" + "x" * 34, "short", again="shorter")  # 40 characters: refused, not cut to 32
        browser.wait(lambda d: page.banner(), "the refusal")
        for text in ("Account names are", "at least 8 characters", "not the same"):
            self.assertIn(text, page.banner())
        marked = [e.get_attribute("id") for e in browser.all("#register-form [aria-invalid=true]")]
        self.assertEqual(marked, ["register-name", "register-password", "register-password-again"])
        # Registration is open here: no invite field to puzzle over.
        browser.wait(lambda d: not browser.visible("#register-invite"), "the invite field hidden where no invite is needed")
        page.register("carol", self.passwords["carol"], again=self.passwords["carol"] + "x")
        browser.wait(lambda d: "not the same" in page.banner(), "the mismatch message")
        self.assertTrue(browser.visible("#register-form"), "a mismatch must keep the form, not sign in")
        status, _ = self.api("POST", "/session", {"name": "carol", "password": self.passwords["carol"]})
        self.assertEqual(status, 401, "an account was created although the passwords differed")

        page.register("carol", self.passwords["carol"])
        page.wait_signed_in()
        self.assertIn("carol", browser.find("#account-name").text)
        page.sign_out()
        self.assertFalse(browser.visible("#app-screen"))

        page.register("carol", marker("other-password"))
        browser.wait(lambda d: page.banner(), "the name-taken message")
        self.assertFalse(browser.visible("#app-screen"), "registering a taken name must not sign in")
        page.b.click("#show-login")
        page.b.type("#login-name", "carol")
        page.b.type("#login-password", "wrong-" + self.passwords["carol"])
        page.b.click("#login-submit")
        browser.wait(lambda d: "wrong" in page.banner(), "the wrong-password message")
        self.assertFalse(browser.visible("#app-screen"))

    # A note with an image, locked in the browser

    def test_locking_in_the_browser_leaves_no_plaintext_and_never_sends_the_passphrase(self):
        alice = self.signed_in("alice")
        body = self.note_text("body")
        note_id = alice.new_note("Trip plans", f"{body}\nflight at nine")
        path, image = self.image_file()
        alice.attach(str(path))
        alice.wait_image(96)
        alice.wait_item(note_id, locked="false")  # the list may be redrawn by a live update meanwhile
        alice.b.screenshot("02-notes-list-and-editor-with-image")
        # The image reached the server unchanged, and is sealed at rest (keybag layer).
        uploads = [r for r in self.proxy.snapshot() if r.method == "POST" and "/attachments" in r.path]
        self.assertEqual([r.body for r in uploads], [image])
        # Its name went in a header, not the URL that a proxy logs.
        self.assertFalse([r.path for r in uploads if "name=" in r.path or path.name in r.path])
        for piece in distinctive_slices(image):
            self.assert_not_at_rest(piece, "the unlocked note's image")

        if self.passphrase_set:
            alice.lock(note_id, self.passphrase)
        else:
            alice.lock_with_new_passphrase(self.passphrase, self.hint_text, screenshot="02b-set-passphrase-dialog")
            alice.wait_item(note_id, locked="true")
            type(self).passphrase_set = True

        # What the browser sent to lock it: ciphertext and a wrapped key, nothing else.
        locks = self.requests_to("POST", f"/notes/{note_id}/lock")
        self.assertEqual(len(locks), 1, "one lock request")
        self.assertEqual(locks[0].status, 200, locks[0].response[:300])
        sent = json.loads(locks[0].body)
        self.assertEqual(set(sent), LOCK_FIELDS)
        self.assertEqual([len(base64.b64decode(sent[k])) for k in ("wrappedKey", "iv", "tag", "noteProofHash")], [24, 12, 16, 32])
        self.assertEqual(set(sent["passphraseProof"]), {"passphraseID", "proof"})
        self.assertEqual(len(base64.b64decode(sent["passphraseProof"]["proof"])), 32)
        self.assertNotIn(body.encode(), locks[0].body)
        chunks = b"".join(base64.b64decode(c) for a in sent["attachments"] for c in a["chunks"])
        self.assertEqual(len(chunks), len(image) + 28, "one sealed chunk: IV, ciphertext, tag")
        for piece in distinctive_slices(image):
            self.assertNotIn(piece, chunks)

        # The passphrase and the key made from it never left the browser.
        setting = json.loads(self.requests_to("POST", "/api/passphrase")[0].body)
        self.assertGreaterEqual(setting["iterations"], 600_000)
        self.assert_never_sent(self.passphrase.encode(), "the passphrase")
        self.assert_never_sent(self.passphrase_key(self.passphrase, setting["salt"], setting["iterations"]), "the passphrase key")

        # Nothing of the note's text or image in any file of the home.
        self.assert_not_at_rest(body.encode(), "the locked note's text")
        for piece in distinctive_slices(image):
            self.assert_not_at_rest(piece, "the locked note's image")

        # After a reload the keys are gone: a placeholder, no text, no image.
        alice.b.driver.refresh()
        alice.wait_signed_in()
        alice.select(note_id)
        alice.wait_placeholder(note_id)
        self.assertNotIn(body, alice.b.dom)
        self.assertEqual(alice.image_width(), 0)
        alice.b.screenshot("03-locked-note-placeholder")

        alice.open_locked(note_id, self.passphrase)
        self.assertIn(body, alice.body_text())
        alice.wait_image(96)  # decrypted in the browser from the sealed chunks
        alice.b.screenshot("04-locked-note-open-with-image")

        alice.lock_now()
        alice.wait_placeholder(note_id)
        self.assertNotIn(body, alice.b.dom, "Lock Now left the note's text in the page")
        self.assertEqual(alice.b.all("[data-testid=attachment-image]"), [], "Lock Now left the image in the page")

    def test_three_wrong_passphrases_show_the_hint(self):
        alice = self.signed_in("alice")
        body = self.note_text("hint-body")
        note_id, _ = self.locked_note(alice, body)
        alice.lock_now()
        alice.select(note_id)
        alice.wait_placeholder(note_id)
        wrong = [self.secret("wrong") for _ in range(3)]
        for attempt, guess in enumerate(wrong, start=1):
            feedback = alice.wrong_passphrase(guess)
            self.assertIn("Wrong passphrase", feedback)
            self.assertNotIn(body, alice.b.dom)
            if attempt < 3:
                self.assertEqual(alice.hint(), "", f"the hint showed after {attempt} wrong entries")
        alice.b.wait(lambda d: self.hint_text in alice.hint(), "the hint after the third wrong entry")
        alice.b.screenshot("05-passphrase-prompt-with-hint")
        for guess in wrong:
            self.assert_never_sent(guess.encode(), "a typed passphrase")
        alice.open_locked(note_id, self.passphrase)
        self.assertIn(body, alice.body_text())

    # Sharing

    def test_a_shared_note_is_read_and_edited_by_the_participant(self):
        bob = self.signed_in("bob")
        alice = self.signed_in("alice")
        body = self.note_text("shared")
        note_id = alice.new_note("Groceries for the weekend", body)
        private_id = alice.new_note("Private " + marker("t"), self.note_text("private"))
        alice.select(note_id)
        alice.share("bob")
        alice.wait_item(note_id, shared="true")

        # A shared note cannot be locked: the page says why and the note stays unlocked.
        alice.b.click("#lock-note")
        alice.b.wait(lambda d: "sharing" in alice.banner().lower(), "the reason a shared note cannot be locked")
        alice.wait_item(note_id, locked="false")  # the list may be redrawn by a live update meanwhile

        bob.b.driver.refresh()
        bob.wait_signed_in()
        bob.wait_item(note_id, shared="true")
        self.assertEqual(bob.b.all(f"[data-testid=note-item][data-note-id='{private_id}']"), [],
                         "bob sees a note alice did not share")
        bob.select(note_id)
        bob.b.wait_visible("[data-testid=shared-with-me]")
        self.assertIn("alice", bob.b.find("[data-testid=shared-with-me]").text)
        self.assertEqual(bob.body_text(), body)
        self.assertEqual(bob.b.all("#lock-note") + bob.b.all("#delete-note"), [], "a participant may not lock or delete")
        addition = self.note_text("bobs-line")
        bob.edit_body(note_id, f"{body}\n{addition}")
        bob.b.screenshot("06-shared-note-as-participant")

        alice.b.driver.refresh()
        alice.wait_signed_in()
        alice.select(note_id)
        alice.b.wait(lambda d: addition in alice.body_text(), "bob's edit in alice's browser")

    def test_an_edit_the_owner_unshares_from_under_the_participant_is_kept_for_them(self):
        alice = self.signed_in("alice")
        bob = self.signed_in("bob")
        body = self.note_text("packing")
        note_id = alice.new_note("Packing list", body)
        alice.select(note_id)
        alice.share("bob")
        alice.wait_item(note_id, shared="true")
        bob.reload()
        bob.select(note_id)

        # Bob's save is held in his page while alice stops sharing the note: it reaches a note
        # he may no longer edit.
        bob.b.js("const send = window.fetch; window.fetch = (url, options) => options?.method === 'PATCH'"
                 " ? new Promise((wake) => setTimeout(wake, 3000)).then(() => send(url, options)) : send(url, options);")
        typed = self.note_text("typed-at-the-unshare")
        bob.set_body(f"{body}\n{typed}")
        time.sleep(1)  # past the save's pause: the request is held
        unshared = alice.b.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "import('/static/js/api.js').then((m) => m.api.delete(arguments[0])).then(() => done('ok'), (e) => done(String(e)));",
            f"/notes/{note_id}/participants/bob")
        self.assertEqual(unshared, "ok")

        bob.b.wait(lambda d: "could not be saved" in bob.banner(), "the lost edit said", 15)
        self.assertIn("Packing list", bob.banner())
        bob.b.click("#banner-action")
        kept = bob.b.wait(lambda d: next((row.get_attribute("data-note-id") for row in bob.b.all("[data-testid=note-item]")
                                          if row.get_attribute("data-note-id") != note_id and "Packing list" in row.text), None),
                          "the edit kept as bob's note")
        bob.select(kept)
        # Waited for: the editor may be drawn again as the list's live update lands.
        bob.b.wait(lambda d: typed in bob.body_text(), "bob's edit in the note kept for him")
        self.assertNotIn(typed, alice.body_text(), "alice's note did not take it")

    # Hostile text

    def test_html_in_titles_and_bodies_shows_as_text_and_runs_nothing(self):
        alice = self.signed_in("alice")
        title = '<img src=x onerror="window.__xss=1">'
        body = '<script>window.__xss=2</script><b>bold?</b>'
        # Typed, it is text: stored as Markdown with its markup characters escaped (docs/FORMAT.md).
        note_id = alice.new_note(title, body, stored=body.replace("<", "\\<").replace("_", "\\_"))
        alice.b.driver.refresh()
        alice.wait_signed_in()
        alice.select(note_id)
        self.assertEqual(alice.item_title(note_id), title, "the title must show as typed, as text")
        self.assertEqual(alice.b.find("#note-title").get_attribute("value"), title)
        self.assertEqual(alice.shown_text(), body)
        injected = alice.b.js("return document.querySelectorAll('#app-screen img[src=\"x\"], #app-screen script, #app-screen b').length")
        self.assertEqual(injected, 0, "the note's HTML became elements of the page")
        self.assertIsNone(alice.b.js("return window.__xss"))
        alice.b.open("/widget")
        alice.b.wait(lambda d: alice.b.js("return document.readyState") == "complete", "the widget page")
        self.assertEqual(alice.b.js("return document.querySelectorAll('img[src=\"x\"], body script:not([src])').length"), 0)
        self.assertIsNone(alice.b.js("return window.__xss"))
        alice.b.open("/")
        alice.wait_signed_in()

    # Search

    def test_the_list_answers_the_search_typed_last_even_when_an_earlier_one_answers_later(self):
        dora = self.signed_in("dora")
        word = "w" + marker("w").rsplit("-", 1)[1]  # letters and digits: one search word
        apples = dora.new_note(f"Apples {word}", self.note_text("apples"))
        apricots = dora.new_note(f"Apricots {word}", self.note_text("apricots"))
        # The page's answer to the search for `word` alone comes 2 s late, as from a slow server.
        dora.b.js("""
            const held = arguments[0], real = window.fetch;
            window.__realFetch = real;
            window.__heldSearches = 0;
            window.__deliveredSearches = 0;
            window.fetch = async (url, options) => {
              const response = await real(url, options);
              if (new URL(url, location.origin).searchParams.get('search') === held) {
                window.__heldSearches += 1;
                await new Promise((resolve) => setTimeout(resolve, 2000));
                window.__deliveredSearches += 1;
              }
              return response;
            };""", word)

        def search(text: str):
            dora.b.js("const f = document.getElementById('search'); f.value = arguments[0];"
                       "f.dispatchEvent(new Event('input', {bubbles: true}));", text)

        def listed() -> set[str]:
            return {row.get_attribute("data-note-id") for row in dora.b.all("[data-testid=note-item]")}
        try:
            search(word)
            dora.b.wait(lambda d: dora.b.js("return window.__heldSearches") == 1, "the first search's answer, held back")
            search(f"{word} apricots")
            dora.b.wait(lambda d: listed() == {apricots}, "the second search's answer")
            # The first answer (both notes) arrives now, later than the second's.
            dora.b.wait(lambda d: dora.b.js("return window.__deliveredSearches") == 1, "the first search's answer")
            time.sleep(0.5)  # what the page does with it
            self.assertEqual(listed(), {apricots}, "an earlier search's late answer replaced the list of the one typed last")
            search(word)
            dora.b.wait(lambda d: listed() == {apples, apricots}, "both notes for the word alone")
        finally:
            dora.b.js("if (window.__realFetch) window.fetch = window.__realFetch;")
            search("")
        dora.wait_item(apples)

    # Folders

    def test_deleting_a_folder_with_notes_asks_first_and_keeps_its_notes(self):
        dora = self.signed_in("dora")
        note_id = dora.new_note("Filed " + marker("t"), self.note_text("filed"))
        name = "Work " + marker("f")
        dora.b.click("#new-folder")
        dora.b.type("#new-folder-name", name)
        dora.b.find("#new-folder-name").send_keys(Keys.ENTER)
        folder = dora.b.wait(lambda d: next((e.get_attribute("data-folder") for e in dora.b.all("[data-testid=folder]")
                                              if name in e.text), None), "the new folder")
        # The note shown again (from All Notes: the new folder is shown, empty), its folder menu
        # lists the new folder.
        dora.b.click("#folder-all")
        dora.select(note_id)
        dora.b.wait(lambda d: name in dora.b.find("#note-folder").text, "the new folder in the note's folder menu")
        Select(dora.b.find("#note-folder")).select_by_visible_text(name)
        row = f"[data-testid=folder][data-folder='{folder}']"
        dora.b.wait(lambda d: dora.b.find(row).text.endswith("1"), "the note in the folder")
        delete = f"[data-testid=delete-folder][data-folder='{folder}']"

        def press_delete():
            # The button shows on the folder's row under the pointer.
            ActionChains(dora.b.driver).move_to_element(dora.b.find(row)).move_to_element(dora.b.find(delete)).click().perform()

        press_delete()
        question = dora.b.wait(lambda d: self.alert(dora), "the question before deleting")
        self.assertIn(name, question.text)
        question.dismiss()
        self.assertTrue(dora.b.all(row), "the folder stays when the answer is no")
        press_delete()
        dora.b.wait(lambda d: self.alert(dora), "the question again").accept()
        dora.b.wait(lambda d: not dora.b.all(row), "the folder gone")
        dora.b.click("#folder-all")
        dora.wait_item(note_id)

    @staticmethod
    def alert(page: NotesPage):
        try:
            return page.b.driver.switch_to.alert
        except Exception:
            return None

    def test_a_short_passphrase_is_asked_about_and_refused_unless_confirmed(self):
        dora = self.signed_in("dora")
        dora.new_note("Short " + marker("t"), self.note_text("short"))
        dora.b.click("#lock-note")
        dora.b.wait_visible("#passphrase-set-form")
        dora.b.type("#new-passphrase", "abc")
        dora.b.type("#new-passphrase-again", "abc")
        dora.b.click("#passphrase-save")
        question = dora.b.wait(lambda d: self.alert(dora), "the question about a short passphrase")
        self.assertIn("3 characters", question.text)
        question.dismiss()
        dora.b.wait(lambda d: "longer passphrase" in dora.b.find("#passphrase-settings-message").text, "the refusal said")
        dora.reload()
        # No passphrase was set: locking asks to set one again.
        dora.b.click("[data-testid=note-item] button")
        dora.b.click("#lock-note")
        dora.b.wait_visible("#passphrase-set-form")
        dora.reload()
