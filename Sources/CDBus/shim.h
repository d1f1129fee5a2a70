#ifndef CDBUS_SHIM_H
#define CDBUS_SHIM_H
// libdbus-1 from Debian (libdbus-1-dev): the reference D-Bus implementation. Tresor speaks
// D-Bus only through it (Sources/TresorDBus), never a wire protocol of its own.
#include <dbus/dbus.h>
#endif
