import Synchronization
import TresorDBus

/// logind's `delay` inhibitor for sleep, so that the machine waits for Tresor to lock before it
/// sleeps: logind holds the sleep back (up to its `InhibitDelayMaxSec`, 5 s by default) until
/// every delay inhibitor's file descriptor is closed. Taken when the daemon starts following
/// logind, released once `PrepareForSleep(true)` has been answered by locking, taken again at
/// `PrepareForSleep(false)` (docs/SECURITY.md, "The desktop session").
///
/// Used from the system bus connection's thread only (before its loop runs, then in its handler).
final class SleepInhibitor: Sendable {
    private let held = Mutex<DBusFileDescriptor?>(nil)

    /// Asks logind for a delay inhibitor on `connection`, replacing any held one.
    /// - Throws: ``DBusError`` when logind refuses or is not there, or answers without a descriptor.
    func take(on connection: DBusConnection) throws {
        let reply = try connection.call(
            .methodCall(
                destination: "org.freedesktop.login1", path: "/org/freedesktop/login1", interface: "org.freedesktop.login1.Manager",
                member: "Inhibit",
                arguments: [.string("sleep"), .string("Tresor"), .string("lock the keychain before sleep"), .string("delay")]))
        guard let descriptor = reply.arguments.first?.fileDescriptor else {
            throw DBusError.invalidArguments("logind's Inhibit answered \(reply.signature), not a file descriptor")
        }
        held.withLock { $0 = descriptor }
    }

    /// Closes the held inhibitor, letting the machine sleep. Call it only once locking is done.
    func release() {
        held.withLock {
            $0?.close(); $0 = nil
        }
    }
}
