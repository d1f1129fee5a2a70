"""Owns the desktop prompter's bus name (org.gnome.keyring.SystemPrompter), as any process of
the user can, and prints one line per method call it receives: "called INTERFACE MEMBER".
Prints "owned" once the name is its own. Answers nothing; exits after 90 s."""
import dbus
import dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()


def heard(_, message):
    if message.get_type() == 1:  # a method call
        print("called", message.get_interface(), message.get_member(), flush=True)


bus.add_message_filter(heard)
reply = bus.request_name("org.gnome.keyring.SystemPrompter", dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
print("owned" if reply == dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER else "not owned", flush=True)
GLib.timeout_add_seconds(90, GLib.MainLoop().quit)
GLib.MainLoop().run()
