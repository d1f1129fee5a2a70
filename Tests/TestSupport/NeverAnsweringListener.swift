import Foundation
import Synchronization
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// A Unix socket that takes connections into its backlog and never accepts or answers them.
/// Closing it resets the connections waiting there.
public final class NeverAnsweringListener: Sendable {
    public let descriptor: Int32
    private let closed = Mutex(false)

    /// - Parameters:
    ///   - socketURL: where the socket appears.
    ///   - backlog: how many connections wait before a connect(2) waits too (`listen(2)`; the
    ///     kernel admits one more than it).
    public init(at socketURL: URL, backlog: Int32 = 128) throws {
        try FileManager.default.createDirectory(at: socketURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard UnixSockets.bind(descriptor, to: socketURL.path) == 0 && listen(descriptor, backlog) == 0 else {
            throw TestProcess.Failure("cannot listen on \(socketURL.path)")
        }
    }

    /// Closes the socket once, however often it is called: a second close could hit a
    /// descriptor another thread has been given since.
    public func close() {
        let first = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        if first { Glibc.close(descriptor) }
    }
}
