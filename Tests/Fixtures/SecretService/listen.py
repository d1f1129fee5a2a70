"""Prints every signal the Secret Service's connection sends that this connection may hear
(a match rule on the sender, no eavesdropping), one line each: "MEMBER PATH". It calls no
method of the service, so the service knows nothing of it. Prints "listening" once subscribed."""
import dbus
import dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()


def heard(*_, member=None, path=None):
    print(member, path, flush=True)


bus.add_signal_receiver(heard, bus_name="org.freedesktop.secrets", member_keyword="member", path_keyword="path")
# A call to the bus after the AddMatch: once it is answered, the match is in place.
bus.get_unique_name()
dbus.Interface(bus.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus"), "org.freedesktop.DBus").GetId()
print("listening", flush=True)
GLib.timeout_add_seconds(60, GLib.MainLoop().quit)
GLib.MainLoop().run()
