"""A browser case beside one device home syncing with the server under test (docs/SYNC.md):
the device runs its own `tresord`, syncs only at `tresor sync now` (so what one sync did is the
test's to count), and joins the web account `ACCOUNT` the class names, once. Server mode only:
devices sync with a Tresor server. At the end, no secret or note text of the class may be in the
device's daemon log."""

import json
import unittest

import modes
from notes_page import NotesPage, SignedInPeople
from suite import BrowserCase, marker
from tresor_home import TresorHome


class DeviceSyncCase(SignedInPeople, BrowserCase):
    ACCOUNT = ""

    @classmethod
    def setUpClass(cls):
        if modes.current != modes.SERVER:
            raise unittest.SkipTest("server mode only: a device syncs with a Tresor server")
        super().setUpClass()
        cls.passwords = {cls.ACCOUNT: marker(f"{cls.ACCOUNT}-password")}
        cls.secrets += list(cls.passwords.values())
        cls.pages: dict[str, NotesPage] = {}
        cls.joined = False
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
        """`tresor ARGUMENTS --json` on the device, which must succeed; its answer."""
        result = self.device.tresor([*arguments, "--json"], input=input)
        self.assertEqual(result.returncode, 0, f"tresor {' '.join(arguments)}: {result.stderr}")
        return json.loads(result.stdout)

    def joined_page(self) -> NotesPage:
        """The account's page, its web account registered and the device joined to it (once)."""
        page = self.signed_in(self.ACCOUNT)
        if not type(self).joined:
            joined = self.device_json(["sync", "join", self.home.url, "--account", self.ACCOUNT, "--password-stdin",
                                       "--device-name", "laptop", "--no-wait"], input=self.passwords[self.ACCOUNT] + "\n")
            self.assertEqual(joined["state"], "trusted")
            type(self).joined = True
        return page
