#!/usr/bin/python3
"""Python `secretstorage` (over jeepney) with the session algorithm chosen, never negotiated:
`--session dh` opens dh-ietf1024-sha256-aes128-cbc-pkcs7 and fails if the provider refuses it
(secretstorage itself would fall back to plain), `--session plain` opens a plain session.

    secretstorage_client.py --session dh|plain [--collection PATH] store LABEL KEY=VALUE...
        the secret on standard input; into PATH, else the `default` alias
    secretstorage_client.py --session dh|plain lookup KEY=VALUE...
        prints the secret of the first unlocked match; exit 1 when there is none
    secretstorage_client.py --session dh|plain search KEY=VALUE...
        prints a JSON list of {"path", "label", "attributes", "locked"}, never a secret
    secretstorage_client.py --session dh|plain delete KEY=VALUE...
        deletes every unlocked match; exit 1 when there was none
    secretstorage_client.py --session dh|plain [--collection PATH] label|rename
        prints the collection's Label; `rename` first sets it to standard input's text

Standard error says which session was opened ("session: ALGORITHM encrypted|plain").
"""
import argparse
import json
import sys

import secretstorage
from secretstorage.defines import ALGORITHM_DH, ALGORITHM_PLAIN, SS_PATH, SS_PREFIX
from secretstorage.dhcrypto import Session, int_to_bytes
from secretstorage.util import DBusAddressWrapper

from key_values import key_values


def open_session(connection, kind):
    service = DBusAddressWrapper(SS_PATH, SS_PREFIX + "Service", connection)
    session = Session()
    if kind == "dh":
        output, path = service.call("OpenSession", "sv", ALGORITHM_DH, ("ay", int_to_bytes(session.my_public_key)))
        signature, value = output
        if signature != "ay":
            raise SystemExit(f"OpenSession({ALGORITHM_DH}) answered a {signature!r}, not the provider's public key")
        session.set_server_public_key(int.from_bytes(value, "big"))
        algorithm = ALGORITHM_DH
    else:
        _, path = service.call("OpenSession", "sv", ALGORITHM_PLAIN, ("s", ""))
        session.encrypted = False
        algorithm = ALGORITHM_PLAIN
    session.object_path = path
    print(f"session: {algorithm} {'encrypted' if session.encrypted else 'plain'}", file=sys.stderr)
    return session


def unlocked_matches(connection, session, query):
    # Service.SearchItems across every collection, as libsecret does; only unlocked items.
    return [
        secretstorage.Item(connection, item.item_path, session)
        for item in secretstorage.search_items(connection, query)
        if not item.is_locked()
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--session", choices=["dh", "plain"], required=True)
    parser.add_argument("--collection")
    parser.add_argument("command", choices=["store", "lookup", "search", "delete", "label", "rename"])
    parser.add_argument("arguments", nargs="*")
    options = parser.parse_args()

    connection = secretstorage.dbus_init()
    session = open_session(connection, options.session)
    if options.command == "store":
        label, *pairs = options.arguments
        if options.collection:
            collection = secretstorage.Collection(connection, options.collection, session)
        else:
            collection = secretstorage.get_default_collection(connection, session)
        collection.create_item(label, key_values(pairs), sys.stdin.buffer.read(), replace=True)
        return 0
    if options.command in ("label", "rename"):
        # The collection's Label: printed, or set to standard input's text (a name is not put
        # on a command line).
        collection = secretstorage.Collection(connection, options.collection or secretstorage.collection.DEFAULT_COLLECTION, session)
        if options.command == "rename":
            collection.set_label(sys.stdin.read())
        print(collection.get_label())
        return 0
    query = key_values(options.arguments)
    if options.command == "search":
        found = [
            {"path": item.item_path, "label": item.get_label(), "attributes": item.get_attributes(), "locked": item.is_locked()}
            for item in secretstorage.search_items(connection, query)
        ]
        print(json.dumps(found))
        return 0
    matches = unlocked_matches(connection, session, query)
    if not matches:
        return 1
    if options.command == "lookup":
        sys.stdout.buffer.write(matches[0].get_secret())
    else:
        for item in matches:
            item.delete()
    return 0


if __name__ == "__main__":
    sys.exit(main())
