import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TCP relay on loopback in front of a server, that runs `cut` once — and answers nothing
/// more — when a request it forwards contains `trigger`: the test's way to stop a server at
/// one exact step of a device's conversation with it (the step's own request never arrives).
final class CuttingProxy: @unchecked Sendable {
    let address: WebServerAddress
    private let listener: Int32
    private let cutDone = Mutex(false)
    private let trigger: Data
    private let upstream: Int
    private let cut: @Sendable () -> Void
    private let forwardsAfterCut: Bool

    /// - Parameters:
    ///   - upstream: the server's port on 127.0.0.1.
    ///   - trigger: the bytes (a request line's path) that stop it.
    ///   - forwardsAfterCut: instead of stopping, runs `cut` before it forwards the triggering
    ///     request, then relays on: the test's way to act at one exact step of a device's
    ///     conversation (another device's change lands just before that request).
    ///   - cut: what stops it (a `SIGKILL` of the server instance), run once.
    init(upstream: Int, trigger: String, forwardsAfterCut: Bool = false, cut: @escaping @Sendable () -> Void) throws {
        self.upstream = upstream
        self.trigger = Data(trigger.utf8)
        self.cut = cut
        self.forwardsAfterCut = forwardsAfterCut
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
        guard bound == 0, listen(listener, 16) == 0 else { throw WebTestError.socket("the proxy cannot listen") }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        self.address = WebServerAddress(port: Int(UInt16(bigEndian: address.sin_port)))
        Thread.detachNewThread { [weak self] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                guard let self else {
                    close(client)
                    return
                }
                self.serve(client)
            }
        }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    var hasCut: Bool { cutDone.withLock { $0 } }

    private func serve(_ client: Int32) {
        guard !hasCut || forwardsAfterCut, let server = try? WebServerAddress(port: upstream).connect() else {
            close(client)
            return
        }
        Thread.detachNewThread { Self.pump(from: server, to: client, check: nil) }
        Thread.detachNewThread { [self] in
            Self.pump(from: client, to: server) { bytes in
                // The server takes only requests naming it in Host (which clients spell either way).
                for name in ["Host", "host"] {
                    if let host = bytes.range(of: Data("\(name): 127.0.0.1:\(self.address.port)".utf8)) {
                        bytes.replaceSubrange(host, with: Data("\(name): 127.0.0.1:\(self.upstream)".utf8))
                    }
                }
                guard bytes.range(of: self.trigger) != nil else { return self.hasCut && !self.forwardsAfterCut }
                let first = self.cutDone.withLock { done in
                    defer { done = true }
                    return !done
                }
                if first { self.cut() }
                return !self.forwardsAfterCut
            }
        }
    }

    /// Copies bytes until either side closes, or `check` (which may rewrite them) says to stop
    /// before forwarding.
    private static func pump(from source: Int32, to destination: Int32, check: ((inout Data) -> Bool)?) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(source, &buffer, buffer.count, 0)
            if count <= 0 { break }
            var bytes = Data(buffer[0..<count])
            if let check, check(&bytes) { break }
            let sent = bytes.withUnsafeBytes { send(destination, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent != bytes.count { break }
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(destination, Int32(SHUT_RDWR))
    }
}
