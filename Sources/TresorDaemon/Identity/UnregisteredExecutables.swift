import Logging
import Synchronization

/// Says in the daemon's log, once per executable and daemon run, that an executable no
/// application is registered for asked for the keychain: the application itself only learns
/// `errSecMissingEntitlement`, and its developer looks here for why.
final class UnregisteredExecutables: Sendable {
    private let told = Mutex(Set<String>())
    private let logger: Logger
    /// The most executables named; past it they are refused without a word (a loop of new
    /// executables must not fill the log).
    static let mostNamed = 64

    init(logger: Logger) { self.logger = logger }

    /// Notes that `executable` (the path of `/proc/PID/exe`) was refused.
    func refused(_ executable: String) {
        let first = told.withLock { told -> Bool in
            guard told.count < Self.mostNamed else { return false }
            return told.insert(executable).inserted
        }
        guard first else { return }
        logger.notice(
            "an executable that is not a registered application asked for the keychain: `tresor app register` registers it (its path as the process runs it)",
            metadata: ["executable": "\(executable.prefix(512))"])
    }
}
