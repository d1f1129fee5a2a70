#!/usr/bin/python3
"""Python `keyring` with its Secret Service backend forced (no other backend may answer).

    keyring_client.py set SERVICE USER      the password on standard input
    keyring_client.py get SERVICE USER      prints the password; exit 1 when there is none, 3 when
                                            keyring says the keyring is locked (KeyringLocked)
    keyring_client.py delete SERVICE USER   exit 1 when there is nothing to delete

Run with Debian's /usr/bin/python3 (python3-keyring) and DBUS_SESSION_BUS_ADDRESS set.
"""
import sys

import keyring
from keyring.backends import SecretService
from keyring.errors import KeyringLocked, PasswordDeleteError


def main(command, service, user):
    keyring.set_keyring(SecretService.Keyring())
    if command == "set":
        keyring.set_password(service, user, sys.stdin.read())
    elif command == "get":
        try:
            password = keyring.get_password(service, user)
        except KeyringLocked:
            return 3
        if password is None:
            return 1
        sys.stdout.write(password)
    elif command == "delete":
        try:
            keyring.delete_password(service, user)
        except PasswordDeleteError:
            return 1
    else:
        raise SystemExit(f"unknown command {command!r}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    sys.exit(main(*sys.argv[1:]))
