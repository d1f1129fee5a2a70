/// Why the daemon could not start.
public enum DaemonError: Error, CustomStringConvertible {
    case configuration(String)
    /// A daemon holds the home; `listening` is where it listens, when that is not this one's
    /// `socket` (it was started with another `XDG_RUNTIME_DIR`).
    case alreadyRunning(home: String, elsewhere: (listening: String, socket: String)? = nil)
    case socket(String)
    /// Another program listens on the web client's port.
    case webPortInUse(Int)
    /// The web client's port cannot be bound for another reason (`strerror`'s words).
    case webPort(Int, reason: String)

    public var description: String {
        switch self {
        case .configuration(let reason): return "configuration error: \(reason)"
        case .alreadyRunning(let home, let elsewhere?):
            return """
                a tresord is already running for \(home), listening at \(elsewhere.listening), where this environment looks for \
                it at \(elsewhere.socket): it was started with another XDG_RUNTIME_DIR (the folder above tresor/ in its socket's \
                path) — run tresor with that XDG_RUNTIME_DIR, or stop that daemon from its own session
                """
        case .alreadyRunning(let home, nil):
            return """
                a tresord is already running for \(home) (tresor commands start one when none runs): to run it with other \
                options, put them in \(home)/config.json ("webPort": 8080, "secretService": true) and run `tresor daemon restart`, \
                or run `tresor daemon stop` first
                """
        case .socket(let reason): return "socket error: \(reason)"
        case .webPortInUse(let port):
            return "port \(port) is already in use — choose another with --web PORT (or \"webPort\" in config.json)"
        case .webPort(let port, let reason):
            return "cannot serve the web client on port \(port): \(reason) — choose another with --web PORT"
        }
    }

    /// Why the daemon stopped, in words, for its last log line: ``DaemonError``'s own text,
    /// a bind failure of the web port as ``webPortInUse(_:)``, anything else as it describes
    /// itself.
    /// - Parameter error: what `Daemon.run()` threw.
    /// - Returns: one sentence.
    public static func words(for error: any Error) -> String {
        if let error = error as? DaemonError { return error.description }
        return String(describing: error)
    }
}
