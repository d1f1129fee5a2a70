"""A web account's password, changed from the account menu (docs/WEB.md, "Sessions end"): a wrong
current password is said and changes nothing; the right one changes it, signs the account's other
sessions out, and the next sign-in takes only the new one. A forgotten one ("A forgotten password"):
the owner's code, typed in the sign-in page's "Forgot your password?" form, sets a new one."""

import json

from notes_page import NotesPage
from suite import BrowserCase


class AccountPasswordTests(BrowserCase):
    def change(self, page: NotesPage, current: str, new: str):
        page.b.click("#password-settings")
        page.b.wait_visible("#password-change-dialog")
        page.b.type("#current-password", current)
        page.b.type("#new-password", new)
        page.b.type("#new-password-again", new)
        page.b.click("#password-save")

    def test_a_password_is_changed_from_the_account_menu(self):
        old, new = self.secret("erin-password"), self.secret("erin-new-password")
        page = NotesPage(self.browser("erin"))
        page.register("erin", old)
        page.wait_signed_in()
        other = NotesPage(self.browser("erin-elsewhere"))
        other.sign_in("erin", old)

        self.change(page, "not-" + old, new)
        page.b.wait(lambda d: "current password is wrong" in page.b.find("#password-change-message").text, "the refusal said")
        page.b.click("#password-change-dialog .dialog-header button")
        page.b.wait_hidden("#password-change-dialog")

        self.change(page, old, new)
        page.b.wait_hidden("#password-change-dialog")
        page.b.wait(lambda d: "Password changed. One other session was signed out." in page.banner(), "the change said")
        other.b.driver.refresh()
        other.b.wait_visible("#login-form")
        page.sign_out()
        page.b.type("#login-name", "erin")
        page.b.type("#login-password", old)
        page.b.click("#login-submit")
        page.b.wait(lambda d: page.banner(), "the old password refused")
        self.assertFalse(page.b.visible("#app-screen"))
        page.sign_in("erin", new)

    def reset(self, page: NotesPage, name: str, code: str, new: str):
        page.load()
        page.b.click("#show-reset")
        page.b.wait_visible("#reset-form")
        page.b.type("#reset-name", name)
        page.b.type("#reset-code", code)
        page.b.type("#reset-password", new)
        page.b.type("#reset-password-again", new)
        page.b.click("#reset-submit")

    def test_a_forgotten_password_is_set_with_the_owners_code(self):
        old, new = self.secret("finn-password"), self.secret("finn-new-password")
        page = NotesPage(self.browser("finn"))
        page.register("finn", old)
        page.wait_signed_in()
        elsewhere = NotesPage(self.browser("finn-elsewhere"))
        elsewhere.sign_in("finn", old)
        page.sign_out()
        result = self.home.tresor(["web", "reset-password", "finn", "--json"])
        self.assertEqual(result.returncode, 0, result.stderr)
        code = json.loads(result.stdout)["code"]

        self.reset(page, "finn", "A" * 43, new)
        page.b.wait(lambda d: "reset code is wrong" in page.banner(), "the refusal said in the form's words")
        self.assertFalse(page.b.visible("#app-screen"))

        self.reset(page, "finn", code, new)
        page.wait_signed_in()
        self.assertIn("finn", page.b.find("#account-name").text)
        self.assertEqual(page.b.find("#reset-code").get_attribute("value"), "", "the code stays in the form")
        self.assertNotIn(code, self.home.log, "the reset code reached the daemon log")
        elsewhere.b.driver.refresh()
        elsewhere.b.wait_visible("#login-form")
        page.sign_out()
        page.b.type("#login-name", "finn")
        page.b.type("#login-password", old)
        page.b.click("#login-submit")
        page.b.wait(lambda d: page.banner(), "the old password refused")
        self.assertFalse(page.b.visible("#app-screen"))
        page.sign_in("finn", new)
