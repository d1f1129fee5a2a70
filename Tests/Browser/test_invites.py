"""Registration by the owner's invite (docs/WEB.md, "Registration"), the default: the person
types the name, the code `tresor web invite NAME` printed and a password; without the code, the
form says an invite is needed and no account is made."""

import json

from notes_page import NotesPage
from suite import BrowserCase


class InviteRegistrationTests(BrowserCase):
    config = {"webRegistration": "invite"}

    def test_registering_needs_the_owners_invite(self):
        password = self.secret("dora-password")
        page = NotesPage(self.browser("dora"))
        # The server says an invite is needed: the field is shown as needed, not optional.
        page.load()
        page.b.click("#show-register")
        page.b.wait(lambda d: not page.b.visible("#register-invite-optional"), "the invite field marked as needed")
        self.assertTrue(page.b.visible("#register-invite"))
        page.b.type("#register-name", "dora")
        page.b.type("#register-password", password)
        page.b.type("#register-password-again", password)
        page.b.click("#register-submit")
        page.b.wait(lambda d: "invite code" in page.banner(), "the invite-needed message")
        marked = [e.get_attribute("id") for e in page.b.all("#register-form [aria-invalid=true]")]
        self.assertEqual(marked, ["register-invite"])
        self.assertTrue(page.b.visible("#register-form"), "registered without an invite")

        result = self.home.tresor(["web", "invite", "dora", "--json"])
        self.assertEqual(result.returncode, 0, result.stderr)
        code = json.loads(result.stdout)["code"]
        page.register("dora", password, invite=code)
        page.wait_signed_in()
        self.assertIn("dora", page.b.find("#account-name").text)
        self.assertEqual(page.b.find("#register-invite").get_attribute("value"), "", "the code stays in the form")
        self.assertNotIn(code, self.home.log, "the invite code reached the daemon log")
