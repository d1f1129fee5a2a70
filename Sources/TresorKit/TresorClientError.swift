/// Why the client could not get an answer from the daemon. Errors the daemon itself
/// reports arrive as `APIError`.
public enum TresorClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No daemon answers on the socket (and none was started).
    case daemonNotRunning(socket: String)
    /// The daemon was started but did not open its socket in time; its log may say why.
    case daemonDidNotStart(log: String)
    /// No `tresord` executable was found next to this program or on `PATH`.
    case daemonExecutableNotFound
    /// The process at the socket runs as another user: it is not our daemon.
    case untrustedDaemon(uid: UInt32)
    /// The daemon accepted the connection but sent nothing (or took nothing) for `seconds`:
    /// it is stopped (SIGSTOP), stuck, or not tresord.
    case daemonNotAnswering(seconds: Int)
    /// The daemon closed the connection before it took the whole request (it restarted, or
    /// refused this connection): nothing of the request was acted on, so sending it again on a
    /// new connection is safe.
    case connectionClosedBeforeRequest(errno: Int32)
    /// The daemon went away after it took the request and before it answered (it crashed, or was
    /// stopped): whether the request took effect is not known — a client looks before it asks again.
    case closedBeforeAnswer
    /// The connection broke or the answer was not HTTP/JSON as documented.
    case protocolError(String)
    /// A file to upload could not be opened, is not a regular file, or ended before its size
    /// said (it changed while it was sent).
    case fileChanged(path: String)

    /// What went wrong and what to do, in words.
    public var description: String {
        switch self {
        case .daemonNotRunning(let socket): return "no tresord is listening on \(socket)"
        case .daemonDidNotStart(let log): return "tresord did not start; see \(log)"
        case .daemonExecutableNotFound: return "cannot find the tresord executable next to this program or on PATH"
        case .untrustedDaemon(let uid): return "the socket belongs to a process of uid \(uid), not to this user: refusing to talk to it"
        case .daemonNotAnswering(let seconds):
            return "tresord did not answer for \(seconds) s; it may be stopped or stuck (restart it, or set TRESOR_TIMEOUT for a longer wait)"
        case .connectionClosedBeforeRequest(let errno): return "tresord closed the connection before taking the request (errno \(errno))"
        case .closedBeforeAnswer:
            return
                "tresord stopped before it answered (it may have crashed): whether this took effect is not known — look (`tresor status`, `tresor daemon logs`) before trying again"
        case .protocolError(let reason): return "unexpected answer from tresord: \(reason)"
        case .fileChanged(let path): return "cannot read \(path) whole (is it a regular file, and did it change while it was sent?)"
        }
    }
}
