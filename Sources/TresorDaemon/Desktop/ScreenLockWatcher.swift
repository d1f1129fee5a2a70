import Foundation
import Logging
import Synchronization
import TresorDBus
import TresorSystem

/// Locks Tresor with the desktop: when a login session of this user locks (logind's `Lock`
/// signal, what `loginctl lock-session` makes logind send, or the session's `LockedHint` turning
/// true, what a screen locker sets once the screen is locked), when the machine is about to sleep
/// (`PrepareForSleep`), and when the session's screen saver turns on
/// (`org.freedesktop.ScreenSaver` / `org.gnome.ScreenSaver` `ActiveChanged`). A daemon started by
/// the systemd user unit belongs to no session, so it follows every session of its uid
/// (docs/SECURITY.md, "The desktop session"). For sleep it holds a ``SleepInhibitor``, released
/// only once `lock` has returned, so the machine does not sleep before Tresor is locked.
///
/// Each bus is read on a thread of its own. A bus that cannot be reached is logged and left out:
/// the daemon serves without it.
final class ScreenLockWatcher: Sendable {
    /// Why Tresor locks, for the log.
    enum Reason: String, Sendable {
        case sessionLocked = "the login session locked"
        case sessionMarkedLocked = "the login session's screen locked"
        case sleep = "the machine is going to sleep"
        case screenSaver = "the screen saver started"
    }

    private let lock: @Sendable (Reason) -> Void
    private let logger: Logger
    private let uid: UInt32
    private let sleepInhibitor = SleepInhibitor()
    /// Whether a session bus is followed: one only, the first given.
    private let followsSessionBus = Mutex(false)

    /// - Parameters:
    ///   - uid: whose sessions to follow.
    ///   - lock: what locking does (the keybag and the notes' secure sessions, or the sessions only);
    ///     done when it returns.
    init(uid: UInt32 = getuid(), logger: Logger, lock: @escaping @Sendable (Reason) -> Void) {
        self.uid = uid
        self.logger = logger
        self.lock = lock
    }

    /// The system bus: `DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket.
    static func systemBusAddress(_ environment: [String: String]) -> String {
        environment["DBUS_SYSTEM_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 } ?? "unix:path=/run/dbus/system_bus_socket"
    }

    /// Follows logind on the system bus at `address`: its sessions' locks and the machine's sleep.
    func follow(systemBus address: String) {
        follow(
            address, name: "the system bus (logind)",
            matches: [
                "type='signal',sender='org.freedesktop.login1',interface='org.freedesktop.login1.Session',member='Lock'",
                "type='signal',sender='org.freedesktop.login1',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',arg0='org.freedesktop.login1.Session'",
                "type='signal',sender='org.freedesktop.login1',interface='org.freedesktop.login1.Manager',member='PrepareForSleep'",
            ], holdsSleepInhibitor: true)
    }

    /// Follows the screen saver on the session bus at `address`; once only: a later bus is ignored.
    func follow(sessionBus address: String) {
        guard
            followsSessionBus.withLock({ following in
                defer { following = true }
                return !following
            })
        else { return }
        follow(
            address, name: "the session bus (screen saver)",
            matches: [
                "type='signal',interface='org.freedesktop.ScreenSaver',member='ActiveChanged'",
                "type='signal',interface='org.gnome.ScreenSaver',member='ActiveChanged'",
            ])
    }

    private func follow(_ address: String, name: String, matches: [String], holdsSleepInhibitor: Bool = false) {
        let connection: DBusConnection
        do {
            connection = try DBusConnection(address: address)
            for rule in matches { try connection.addMatch(rule) }
        } catch {
            logger.notice("not locking with the desktop through \(name): it cannot be reached", metadata: ["error": "\(error)"])
            return
        }
        DetachedThread.start { [self] in
            // On this thread, so that a slow logind never holds up the daemon's start.
            if holdsSleepInhibitor { takeSleepInhibitor(on: connection) }
            connection.run { message in
                guard message.kind == .signal else { return }
                if let reason = reason(for: message, on: connection) {
                    logger.notice("locking: \(reason.rawValue)")
                    lock(reason)
                }
                guard holdsSleepInhibitor, message.interface == "org.freedesktop.login1.Manager", message.member == "PrepareForSleep",
                    let sleeping = message.arguments.first?.boolValue
                else { return }
                // Locked (above): the machine may sleep now. Awake again: hold the next sleep back too.
                if sleeping { sleepInhibitor.release() } else { takeSleepInhibitor(on: connection) }
            }
        }
    }

    private func takeSleepInhibitor(on connection: DBusConnection) {
        do {
            try sleepInhibitor.take(on: connection)
        } catch {
            logger.notice("the machine may sleep before Tresor is locked: logind gave no sleep inhibitor", metadata: ["error": "\(error)"])
        }
    }

    /// Why `message` means locking, or nil when it does not.
    private func reason(for message: DBusMessage, on connection: DBusConnection) -> Reason? {
        switch (message.interface, message.member) {
        case ("org.freedesktop.login1.Session", "Lock"):
            guard let path = message.path, sessionBelongsToUs(path, on: connection) else { return nil }
            return .sessionLocked
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            // Only a change to true: a hint turning false unlocks nothing (that takes the passcode).
            guard message.arguments.first == .string("org.freedesktop.login1.Session"),
                message.arguments.dropFirst().first?.propertyDictionary?["LockedHint"] == .boolean(true),
                let path = message.path, sessionBelongsToUs(path, on: connection)
            else { return nil }
            return .sessionMarkedLocked
        case ("org.freedesktop.login1.Manager", "PrepareForSleep"):
            return message.arguments.first == .boolean(true) ? .sleep : nil
        case ("org.freedesktop.ScreenSaver", "ActiveChanged"), ("org.gnome.ScreenSaver", "ActiveChanged"):
            return message.arguments.first == .boolean(true) ? .screenSaver : nil
        default:
            return nil
        }
    }

    /// Whether logind's session at `path` is one of this uid's (its `User` property).
    private func sessionBelongsToUs(_ path: String, on connection: DBusConnection) -> Bool {
        let asked = try? connection.call(
            .methodCall(
                destination: "org.freedesktop.login1", path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
                arguments: [.string("org.freedesktop.login1.Session"), .string("User")]))
        guard case .variant(.structure(let fields))? = asked?.arguments.first, case .uint32(let owner)? = fields.first else { return false }
        return owner == uid
    }
}
