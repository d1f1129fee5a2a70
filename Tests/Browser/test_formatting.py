"""Formatting and checklists (docs/FORMAT.md, "Note bodies"): written with the keyboard in the
web editor — Apple Notes' shortcuts and typed markers — stored as Tresor Markdown, ticked with a
click, and the same after locking in the browser, a reload, `tresor note show --markdown` and
`tresor note unlock`. A web account writes the note in either mode; the CLI's test (which
reads the home's notes, the local account's) runs in embedded mode only."""

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from notes_page import NotesPage
from suite import BrowserCase, embedded_only, marker


class FormattingTests(BrowserCase):
    def chord(self, page: NotesPage, *keys: str):
        actions = ActionChains(page.b.driver)
        for key in keys[:-1]:
            actions.key_down(key)
        actions.send_keys(keys[-1])
        for key in reversed(keys[:-1]):
            actions.key_up(key)
        actions.perform()

    def write_formatted_note_and_lock_it(self, page: NotesPage) -> tuple[str, str, str]:
        """On a page signed in to an account without a passphrase: writes a formatted note with
        the keyboard, locks it in the browser, locks again (Lock Now), reloads and opens it: the
        same. Returns the note's id, its passphrase and its body as Markdown."""
        first = self.note_text("formatted")
        note_id = page.new_note("Trip " + marker("t"), first)

        body = page.b.find("#note-body")
        body.click()
        self.chord(page, Keys.CONTROL, Keys.END)
        body.send_keys(Keys.ENTER, "Packing")
        self.chord(page, Keys.CONTROL, Keys.SHIFT, "h")          # heading
        body.send_keys(Keys.ENTER, "[] tickets", Keys.ENTER, "passport", Keys.ENTER, Keys.ENTER)  # a checklist, ended by an empty item
        body.send_keys("- socks", Keys.ENTER, "hat", Keys.ENTER, Keys.ENTER)                      # a dashed list
        self.chord(page, Keys.CONTROL, "b")
        body.send_keys("bold")
        self.chord(page, Keys.CONTROL, "b")
        body.send_keys(" and ")
        self.chord(page, Keys.CONTROL, "i")
        body.send_keys("italic")
        self.chord(page, Keys.CONTROL, "i")
        # Tick "tickets": a click on its box.
        item = page.b.find("#note-body [data-block=check]")
        ActionChains(page.b.driver).move_to_element_with_offset(item, -item.size["width"] // 2 + 10, 0).click().perform()
        expected = "\n".join([first, "## Packing", "- [x] tickets", "- [ ] passport", "- socks", "- hat", "**bold** and *italic*"])
        page.b.wait(lambda d: page.body_text() == expected, "the formatted text as Markdown")
        page.wait_saved_on_server(note_id, "- [x] tickets")
        page.b.screenshot("24-formatting-and-checklists")

        # Locked in the browser, locked again (Lock Now), the page reloaded: opened, the same.
        passphrase = marker("format-passphrase")
        self.secrets.append(passphrase)
        page.lock_with_new_passphrase(passphrase, "format hint")
        page.wait_item(note_id, locked="true")
        page.lock_now()
        page.reload()
        page.select(note_id)
        page.open_locked(note_id, passphrase)
        page.b.wait(lambda d: page.body_text() == expected, "the formatting in the opened locked note")
        checked = page.b.js("return [...document.querySelectorAll('#note-body [data-block=check]')].map(e => e.dataset.checked)")
        self.assertEqual(checked, ["true", "false"])
        self.assertEqual(page.b.find("#note-body [data-block=heading]").text, "Packing")
        return note_id, passphrase, expected

    def test_formatting_and_checklists_survive_lock_unlock_and_a_reload(self):
        page = NotesPage(self.browser("lena"))
        page.register("lena", self.secret("lena-password"))
        page.wait_signed_in()
        self.write_formatted_note_and_lock_it(page)

    @embedded_only("`tresor note show` and `tresor note unlock` read the home's notes (the local account's); "
                   "a server's notes are its web accounts'")
    def test_the_cli_reads_the_same_markdown_and_removing_the_lock_keeps_it(self):
        page = NotesPage(self.browser("local"))
        page.sign_in("local", self.passcode)
        note_id, passphrase, expected = self.write_formatted_note_and_lock_it(page)
        shown = self.home.tresor(["note", "show", note_id, "--passphrase-stdin", "--markdown"], input=passphrase + "\n")
        self.assertEqual(shown.returncode, 0, shown.stderr)
        self.assertTrue(shown.stdout.rstrip("\n").endswith(expected), "tresor note show --markdown prints the stored Markdown")
        plain = self.home.tresor(["note", "show", note_id, "--passphrase-stdin"], input=passphrase + "\n")
        self.assertIn("☑ tickets", plain.stdout)
        self.assertNotIn("**", plain.stdout, "in a pipe the body is plain text, not markup")
        unlocked = self.home.tresor(["note", "unlock", note_id, "--passphrase-stdin"], input=passphrase + "\n")
        self.assertEqual(unlocked.returncode, 0, unlocked.stderr)
        page.b.wait(lambda d: page.item(note_id).get_attribute("data-locked") == "false", "the unlocked note, live")
        page.reload()
        page.select(note_id)
        page.b.wait(lambda d: page.body_text() == expected, "the formatting after the lock was removed")


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, payload: bytes | int) -> bytes:
    if isinstance(payload, int):
        return varint(number << 3) + varint(payload)
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def run(length: int, style: int | None = None, done: int | None = None, weight: int | None = None, link: str | None = None) -> bytes:
    body = field(1, length)
    if style is not None:
        paragraph = field(1, style) + (field(5, field(1, b"uuid") + field(2, done)) if done is not None else b"")
        body += field(2, paragraph)
    if weight is not None:
        body += field(5, weight)
    if link:
        body += field(9, link.encode())
    return field(5, body)


class AppleFormattingInTheBrowserTests(BrowserCase):
    def test_an_apple_note_body_reads_as_the_same_markdown_in_the_browser_as_in_swift(self):
        """js/apple-note-body.js against the expectation of AppleNoteFormattingTests (Swift)."""
        import base64
        import gzip
        text = "Trip\ntickets\npack\nbold and link"
        note = field(2, text.encode()) + run(5, style=0) + run(8, style=103, done=1) + run(5, style=103, done=0) \
            + run(4, weight=1) + run(5) + run(4, link="https://example.org")
        body = gzip.compress(field(2, field(2, 0) + field(3, note)))
        page = NotesPage(self.browser("kim"))
        page.load()
        got = page.b.driver.execute_async_script("""
            const [data, done] = arguments;
            import('/static/js/apple-note-body.js')
              .then((m) => m.appleNoteMarkdown(Uint8Array.from(atob(data), (c) => c.charCodeAt(0))))
              .then(done, (error) => done('error: ' + error));
        """, base64.b64encode(body).decode())
        self.assertEqual(got, "# Trip\n- [x] tickets\n- [ ] pack\n**bold** and [link](https://example.org)")


class HostileMarkdownInTheBrowserTests(BrowserCase):
    def test_markdown_reads_and_writes_hostile_lines_in_one_pass(self):
        """js/markdown.js on lines made to be slow, as a note shared by another account may hold
        them: a million brackets (each once read to the line's end as a link's start) and a bold
        run around a million spaces (once a pattern retried at every space). Each is hours of
        work read that way; the script is given Selenium's 30 s, and both come back as their text."""
        page = NotesPage(self.browser("kim"))
        page.load()
        got = page.b.driver.execute_async_script("""
            const done = arguments[0];
            import('/static/js/markdown.js').then((m) => {
              const brackets = '['.repeat(1000000);
              const read = m.parseInline(brackets);
              const spaced = 'a' + ' '.repeat(1000000) + 'b';
              const written = m.writeInline([{ text: spaced, bold: true }]);
              return [read.length, read[0].text === brackets, written === '**' + spaced + '**'];
            }).then(done, (error) => done('error: ' + error));
        """)
        self.assertEqual(got, [1, True, True])

    def test_right_to_left_lines_run_and_align_right_to_left(self):
        page = NotesPage(self.browser("rahel"))
        page.register("rahel", self.secret("rahel-password"))
        page.wait_signed_in()
        hebrew, english = "שלום עולם " + self.note_text("rtl"), "Hello " + self.note_text("ltr")
        page.new_note("Directions " + marker("t"), english)
        page.b.js("const t = document.getElementById('note-title'); t.value = arguments[0];"
                  "t.dispatchEvent(new Event('input', {bubbles: true}));", "כותרת " + marker("t"))
        page.set_body(f"{hebrew}\n{english}")
        page.b.wait(lambda d: page.body_text() == f"{hebrew}\n{english}", "the two lines in the note")
        page.wait_saved()
        # Each line by its own direction: the Hebrew one ends at the right edge, the English one
        # starts at the left; the title field follows its text too.
        edges = page.b.js("""
            return [...document.querySelectorAll('#note-body [data-block]')].slice(0, 2).map((line) => {
              const range = document.createRange();
              range.selectNodeContents(line);
              const text = range.getBoundingClientRect(), box = line.getBoundingClientRect(), style = getComputedStyle(line);
              return {left: text.left - box.left - parseFloat(style.paddingLeft),
                      right: box.right - parseFloat(style.paddingRight) - text.right};
            });""")
        self.assertLess(edges[0]["right"], 2, f"the Hebrew line aligns right: {edges}")
        self.assertGreater(edges[0]["left"], 20, f"the Hebrew line aligns right: {edges}")
        self.assertLess(edges[1]["left"], 2, f"the English line aligns left: {edges}")
        self.assertEqual(page.b.js("return getComputedStyle(document.getElementById('note-title')).direction"), "rtl")
