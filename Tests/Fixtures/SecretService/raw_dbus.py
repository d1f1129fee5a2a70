#!/usr/bin/python3
"""Protocol-level checks of a Secret Service provider with python3-dbus, the calls no client
library makes. Every command prints one JSON object on standard output (a prompt command also
prints {"prompt": PATH} first, as soon as it waits) and never a secret; D-Bus errors are
reported by name, as data, for the test to judge. Every call and every wait is bounded by
--timeout seconds.

    raw_dbus.py properties
    raw_dbus.py foreign-session KEY=VALUE...      another connection's session path, used
    raw_dbus.py item-state KEY=VALUE...           Locked and GetSecret of the matching items
    raw_dbus.py lock PATH...                      Service.Lock
    raw_dbus.py unlock-prompt PATH...             Unlock, then Prompt and wait for Completed (or the call's error)
    raw_dbus.py dismiss PATH...                   Unlock, then Prompt, Dismiss and wait for Completed
    raw_dbus.py bad-dh                            OpenSession(dh) with impossible public keys
    raw_dbus.py unknown-paths                     objects that do not exist
    raw_dbus.py huge-attributes COUNT             CreateItem and SearchItems with COUNT attributes
    raw_dbus.py big-label BYTES                   CreateItem with a label of BYTES bytes
    raw_dbus.py number-label                      CreateItem with a Label that is a number
    raw_dbus.py open-sessions COUNT               COUNT OpenSession calls on one connection
    raw_dbus.py change-locked KEY=VALUE...        every change to each match locked for the caller
    raw_dbus.py delete KEY=VALUE...               Item.Delete of every match, locked or not

--as-libsecret-client loads libsecret first, as secret-tool and git's helper have it loaded: the
provider tells such a client a refusal as its `Prompt` call's error, the others with a dismissal.
"""
import argparse
import ctypes
import json
import os
import secrets
import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

from key_values import key_values

BUS_NAME = "org.freedesktop.secrets"
SERVICE_PATH = "/org/freedesktop/secrets"
LOGIN = "/org/freedesktop/secrets/collection/login"
PREFIX = "org.freedesktop.Secret."
PROPERTIES = "org.freedesktop.DBus.Properties"
DH = "dh-ietf1024-sha256-aes128-cbc-pkcs7"
# RFC 2409's second Oakley group, the prime of dh-ietf1024; its generator is 2.
PRIME = int(
    "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
    "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
    "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF", 16)

TIMEOUT = 20.0


def connect():
    """A connection of its own to the bus of DBUS_SESSION_BUS_ADDRESS (a new unique name)."""
    return dbus.bus.BusConnection(os.environ["DBUS_SESSION_BUS_ADDRESS"])


def interface(bus, path, name):
    return dbus.Interface(bus.get_object(BUS_NAME, path, introspect=False), name)


def service(bus):
    return interface(bus, SERVICE_PATH, PREFIX + "Service")


def get(bus, path, iface, name):
    return interface(bus, path, PROPERTIES).Get(PREFIX + iface, name, timeout=TIMEOUT)


def outcome(call):
    """"ok" (or what `call` returned, made JSON) or the D-Bus error's name."""
    try:
        result = call()
    except dbus.exceptions.DBusException as error:
        return {"error": error.get_dbus_name() or "unnamed"}
    return {"ok": plain_json(result)}


def plain_json(value):
    if isinstance(value, (dbus.String, dbus.ObjectPath)):
        return str(value)
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.Byte, dbus.Int16, dbus.Int32, dbus.Int64, dbus.UInt16, dbus.UInt32, dbus.UInt64)):
        return int(value)
    if isinstance(value, (list, tuple, dbus.Array, dbus.Struct)):
        return [plain_json(item) for item in value]
    if isinstance(value, (dict, dbus.Dictionary)):
        return {str(key): plain_json(item) for key, item in value.items()}
    return value if value is None or isinstance(value, (str, int, float, bool)) else repr(value)


def plain_session(bus):
    _, path = service(bus).OpenSession("plain", dbus.String("", variant_level=1), timeout=TIMEOUT)
    return path


def pairs(arguments):
    return dbus.Dictionary(key_values(arguments), signature="ss")


def secret_struct(session, value):
    return dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(value), "text/plain"), signature="oayays")


def create_item(bus, session, label, attributes, value, replace=True):
    properties = dbus.Dictionary({
        PREFIX + "Item.Label": dbus.String(label, variant_level=1),
        PREFIX + "Item.Attributes": dbus.Dictionary(attributes, signature="ss", variant_level=1),
    }, signature="sv")
    return interface(bus, LOGIN, PREFIX + "Collection").CreateItem(
        properties, secret_struct(session, value), replace, timeout=TIMEOUT)


# MARK: commands

def properties(_):
    bus = connect()
    collections = [str(path) for path in get(bus, SERVICE_PATH, "Service", "Collections")]
    result = {
        "collections": collections,
        "defaultAlias": str(service(bus).ReadAlias("default", timeout=TIMEOUT)),
        "collection": {},
    }
    for path in collections + ["/org/freedesktop/secrets/aliases/default"]:
        result["collection"][path] = {
            "label": outcome(lambda: get(bus, path, "Collection", "Label")),
            "locked": outcome(lambda: get(bus, path, "Collection", "Locked")),
            "items": outcome(lambda: sorted(str(item) for item in get(bus, path, "Collection", "Items"))),
            "created": outcome(lambda: int(get(bus, path, "Collection", "Created"))),
        }
    return result


def foreign_session(arguments):
    """Connection A opens a session; connection B finds A's item and reads, writes and closes
    with A's session path. A provider must refuse every one of B's calls: a session belongs to
    the connection that opened it. B's own session then works."""
    owner, other = connect(), connect()
    owners_session = plain_session(owner)
    unlocked, _ = service(other).SearchItems(pairs(arguments), timeout=TIMEOUT)
    if not unlocked:
        raise SystemExit("no unlocked item matches; store one first")
    item = unlocked[0]
    result = {
        "itemsFound": len(unlocked),
        "getSecrets": outcome(lambda: len(service(other).GetSecrets(unlocked, owners_session, timeout=TIMEOUT))),
        "getSecret": outcome(lambda: len(interface(other, item, PREFIX + "Item").GetSecret(owners_session, timeout=TIMEOUT)[2])),
        "setSecret": outcome(lambda: interface(other, item, PREFIX + "Item").SetSecret(
            secret_struct(owners_session, b"overwritten-through-a-foreign-session"), timeout=TIMEOUT)),
        "createItem": outcome(lambda: create_item(other, owners_session, "foreign session", {"tresor-e2e": "foreign"}, b"x")),
        "close": outcome(lambda: interface(other, owners_session, PREFIX + "Session").Close(timeout=TIMEOUT)),
    }
    # The owner's session still works after B tried to close it, and B's own session works.
    result["ownerAfterwards"] = outcome(lambda: len(service(owner).GetSecrets(unlocked, owners_session, timeout=TIMEOUT)))
    others_session = plain_session(other)
    result["ownSession"] = outcome(lambda: len(service(other).GetSecrets(unlocked, others_session, timeout=TIMEOUT)))
    return result


def item_state(arguments):
    """Where SearchItems puts the matching items, their and their collection's Locked, and
    whether Item.GetSecret answers (the secret's length, never the secret)."""
    bus = connect()
    session = plain_session(bus)
    unlocked, locked = service(bus).SearchItems(pairs(arguments), timeout=TIMEOUT)
    items = {}
    for path in list(unlocked) + list(locked):
        collection = str(path).rsplit("/", 1)[0]
        items[str(path)] = {
            "locked": outcome(lambda: get(bus, path, "Item", "Locked")),
            "collectionLocked": outcome(lambda: get(bus, collection, "Collection", "Locked")),
            "getSecret": outcome(lambda: len(interface(bus, path, PREFIX + "Item").GetSecret(session, timeout=TIMEOUT)[2])),
        }
    return {"unlocked": [str(path) for path in unlocked], "locked": [str(path) for path in locked], "items": items}


def lock(paths):
    bus = connect()
    locked, prompt = service(bus).Lock(dbus.Array(paths, signature="o"), timeout=TIMEOUT)
    return {"locked": [str(path) for path in locked], "prompt": str(prompt)}


def prompted_unlock(paths, dismiss):
    """Unlock(PATHS); when the provider answers with a prompt, Prompt("") it (and Dismiss it
    when asked) and wait for its Completed signal. A second connection listens for Completed on
    the same path: the signal is for the caller alone, so it must see none."""
    caller, watcher = connect(), connect()
    unlocked, prompt = service(caller).Unlock(dbus.Array(paths, signature="o"), timeout=TIMEOUT)
    result = {"unlocked": [str(path) for path in unlocked], "prompt": str(prompt)}
    if prompt == "/":
        return result
    loop = GLib.MainLoop()
    completions, overheard = [], []

    def completed(dismissed, value, destination=None):
        completions.append({"dismissed": bool(dismissed), "result": plain_json(value), "destination": destination and str(destination)})
        loop.quit()

    caller.add_signal_receiver(completed, "Completed", PREFIX + "Prompt", BUS_NAME, prompt, destination_keyword="destination")
    watcher.add_signal_receiver(lambda *signal: overheard.append(True), "Completed", PREFIX + "Prompt", BUS_NAME, prompt)
    prompter = interface(caller, prompt, PREFIX + "Prompt")

    # As libsecret does: the call's reply may wait for the outcome (an error when nobody could be
    # asked), so the Completed signal is waited for meanwhile.
    def prompt_failed(error):
        result["promptError"] = error.get_dbus_name()
        result["message"] = error.get_dbus_message()
        loop.quit()
    prompter.Prompt("", reply_handler=lambda: None, error_handler=prompt_failed, timeout=TIMEOUT)
    # The test waits for this line before it unlocks the keybag.
    print(json.dumps({"prompt": str(prompt)}), flush=True)
    if dismiss:
        result["dismiss"] = outcome(lambda: prompter.Dismiss(timeout=TIMEOUT))

    def gave_up():
        result["timedOut"] = True
        loop.quit()
    GLib.timeout_add(int(TIMEOUT * 1000), gave_up)
    if not completions:
        loop.run()
    result["completed"] = completions
    result["caller"] = str(caller.get_unique_name())
    # A call to the provider on the watcher's connection: a Completed the provider had sent
    # everyone would reach the watcher before this reply, since the bus keeps one sender's order.
    service(watcher).ReadAlias("default", timeout=TIMEOUT)
    context = GLib.MainContext.default()
    while context.iteration(False):
        pass
    result["overheard"] = len(overheard)
    return result


def bad_dh(_):
    """OpenSession(dh) with public keys no peer can have: 0, 1, p−1 (small-subgroup keys),
    p itself, an empty key, and 10 KiB. Each must be a D-Bus error; a real key then still works."""
    bus = connect()

    def open_with(key):
        return outcome(lambda: str(service(bus).OpenSession(
            DH, dbus.ByteArray(key, variant_level=1), timeout=TIMEOUT)[1]))

    result = {
        "zero": open_with(b"\x00"),
        "zero128": open_with(bytes(128)),
        "one": open_with(b"\x01"),
        "pMinusOne": open_with((PRIME - 1).to_bytes(128, "big")),
        "p": open_with(PRIME.to_bytes(128, "big")),
        "empty": open_with(b""),
        "tenKiB": open_with(secrets.token_bytes(10 * 1024)),
    }
    private = secrets.randbelow(PRIME - 3) + 2
    result["valid"] = open_with(pow(2, private, PRIME).to_bytes(128, "big"))
    result["plain"] = outcome(lambda: str(plain_session(bus)))
    return result


def unknown_paths(_):
    bus = connect()
    session = plain_session(bus)
    return {
        "itemLabel": outcome(lambda: get(bus, LOGIN + "/tresor_e2e_no_such_item", "Item", "Label")),
        "itemGetSecret": outcome(lambda: interface(bus, LOGIN + "/tresor_e2e_no_such_item", PREFIX + "Item").GetSecret(session, timeout=TIMEOUT)),
        "itemDelete": outcome(lambda: interface(bus, LOGIN + "/tresor_e2e_no_such_item", PREFIX + "Item").Delete(timeout=TIMEOUT)),
        "collectionLabel": outcome(lambda: get(bus, "/org/freedesktop/secrets/collection/tresor_e2e_none", "Collection", "Label")),
        "aliasItems": outcome(lambda: get(bus, "/org/freedesktop/secrets/aliases/tresor_e2e_none", "Collection", "Items")),
        "sessionClose": outcome(lambda: interface(bus, "/org/freedesktop/secrets/session/tresor_e2e_none", PREFIX + "Session").Close(timeout=TIMEOUT)),
        "prompt": outcome(lambda: interface(bus, "/org/freedesktop/secrets/prompt/tresor_e2e_none", PREFIX + "Prompt").Prompt("", timeout=TIMEOUT)),
        "getSecretsUnknownSession": outcome(lambda: service(bus).GetSecrets(
            dbus.Array([], signature="o"), "/org/freedesktop/secrets/session/tresor_e2e_none", timeout=TIMEOUT)),
        "outsideTree": outcome(lambda: get(bus, "/tresor/e2e", "Service", "Collections")),
    }


def huge_attributes(arguments):
    count = int(arguments[0])
    bus = connect()
    session = plain_session(bus)
    attributes = {f"tresor-e2e-attribute-{index:06d}": "v" * 32 for index in range(count)}
    return {
        "count": count,
        "createItem": outcome(lambda: str(create_item(bus, session, "huge attribute map", attributes, b"huge-map-value")[0])),
        "searchItems": outcome(lambda: [len(found) for found in service(bus).SearchItems(dbus.Dictionary(attributes, signature="ss"), timeout=TIMEOUT)]),
    }


def big_label(arguments):
    size = int(arguments[0])
    bus = connect()
    session = plain_session(bus)
    created = outcome(lambda: str(create_item(bus, session, "L" * size, {"tresor-e2e": "big-label"}, b"big-label-value")[0]))
    result = {"bytes": size, "createItem": created}
    if "ok" in created:
        result["labelLength"] = outcome(lambda: len(get(bus, created["ok"], "Item", "Label")))
    return result


def number_label(_):
    bus = connect()
    session = plain_session(bus)
    properties = dbus.Dictionary({
        PREFIX + "Item.Label": dbus.UInt32(7, variant_level=1),
        PREFIX + "Item.Attributes": dbus.Dictionary({"tresor-e2e": "number-label"}, signature="ss", variant_level=1),
    }, signature="sv")
    return {"createItem": outcome(lambda: str(interface(bus, LOGIN, PREFIX + "Collection").CreateItem(
        properties, secret_struct(session, b"number-label-value"), True, timeout=TIMEOUT)[0]))}


def completion_of(bus, prompt):
    """Prompt("") the prompt at PROMPT and wait for its Completed: {"dismissed", "result"},
    {"timedOut": true}, or the Prompt call's error: {"promptError", "message"}."""
    loop = GLib.MainLoop()
    completions = []

    def completed(dismissed, value):
        completions.append({"dismissed": bool(dismissed), "result": plain_json(value)})
        loop.quit()

    bus.add_signal_receiver(completed, "Completed", PREFIX + "Prompt", BUS_NAME, prompt)
    try:
        interface(bus, prompt, PREFIX + "Prompt").Prompt("", timeout=TIMEOUT)
    except dbus.exceptions.DBusException as error:
        return {"promptError": error.get_dbus_name() or "unnamed", "message": error.get_dbus_message()}
    GLib.timeout_add(int(TIMEOUT * 1000), loop.quit)
    if not completions:
        loop.run()
    return completions[0] if completions else {"timedOut": True}


def prompted(bus, call):
    """Runs CALL, which returns a prompt path ("/": none), and waits for the prompt it returned:
    {"prompt", "completed"}, or the D-Bus error's name."""
    try:
        prompt = str(call())
    except dbus.exceptions.DBusException as error:
        return {"error": error.get_dbus_name() or "unnamed"}
    return {"prompt": prompt, "completed": None if prompt == "/" else completion_of(bus, prompt)}


def change_locked(arguments):
    """Each item matching KEY=VALUE... that SearchItems lists locked for the caller: SetSecret,
    Set Label and Set Attributes (error names expected), then CreateItem with replace and the
    same attributes, then Item.Delete — each prompt they return prompted and waited for — and
    last CreateItem without replace, seven times: items beside it with the same attributes."""
    bus = connect()
    session = plain_session(bus)
    _, locked = service(bus).SearchItems(pairs(arguments), timeout=TIMEOUT)
    items = {}
    for path in locked:
        item = interface(bus, path, PREFIX + "Item")
        properties = interface(bus, path, PROPERTIES)
        attributes = dict(get(bus, path, "Item", "Attributes"))
        items[str(path)] = {
            "setSecret": outcome(lambda: item.SetSecret(secret_struct(session, b"tresor-e2e-changed-without-the-user"), timeout=TIMEOUT)),
            "setLabel": outcome(lambda: properties.Set(PREFIX + "Item", "Label", dbus.String("changed", variant_level=1), timeout=TIMEOUT)),
            "setAttributes": outcome(lambda: properties.Set(
                PREFIX + "Item", "Attributes", dbus.Dictionary({"tresor-e2e": "changed"}, signature="ss", variant_level=1), timeout=TIMEOUT)),
            "createItem": prompted(bus, lambda: create_item(
                bus, session, "replaced", dbus.Dictionary(attributes, signature="ss"), b"tresor-e2e-replaced-without-the-user")[1]),
            "delete": prompted(bus, lambda: item.Delete(timeout=TIMEOUT)),
            "createBeside": outcome(lambda: [str(create_item(
                bus, session, "planted", dbus.Dictionary(attributes, signature="ss"), b"tresor-e2e-planted-beside", replace=False)[0])
                for _ in range(7)]),
        }
    return {"locked": len(locked), "items": items}


def delete(arguments):
    """Item.Delete of every item matching KEY=VALUE..., unlocked or locked, each prompt it
    returns prompted and waited for."""
    bus = connect()
    unlocked, locked = service(bus).SearchItems(pairs(arguments), timeout=TIMEOUT)
    return {str(path): prompted(bus, lambda: interface(bus, path, PREFIX + "Item").Delete(timeout=TIMEOUT)) for path in list(unlocked) + list(locked)}


def open_sessions(arguments):
    count = int(arguments[0])
    bus = connect()
    opened, errors = 0, {}
    for _ in range(count):
        answer = outcome(lambda: plain_session(bus))
        if "ok" in answer:
            opened += 1
        else:
            errors[answer["error"]] = errors.get(answer["error"], 0) + 1
    # A second connection is still served while the first holds every session it got.
    return {"requested": count, "opened": opened, "errors": errors, "another": outcome(lambda: str(plain_session(connect())))}


COMMANDS = {
    "properties": properties,
    "foreign-session": foreign_session,
    "item-state": item_state,
    "lock": lock,
    "unlock-prompt": lambda paths: prompted_unlock(paths, dismiss=False),
    "dismiss": lambda paths: prompted_unlock(paths, dismiss=True),
    "bad-dh": bad_dh,
    "unknown-paths": unknown_paths,
    "huge-attributes": huge_attributes,
    "big-label": big_label,
    "number-label": number_label,
    "open-sessions": open_sessions,
    "change-locked": change_locked,
    "delete": delete,
}


def main():
    global TIMEOUT
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=TIMEOUT)
    parser.add_argument("--as-libsecret-client", action="store_true")
    parser.add_argument("command", choices=sorted(COMMANDS))
    parser.add_argument("arguments", nargs="*")
    options = parser.parse_args()
    TIMEOUT = options.timeout
    if options.as_libsecret_client:
        ctypes.CDLL("libsecret-1.so.0")
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    print(json.dumps(COMMANDS[options.command](options.arguments)), flush=True)


if __name__ == "__main__":
    main()
