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
    private let state: Mutex<State>
    private let trigger: Data
    private let cut: @Sendable () -> Void
    private let forwardsAfterCut: Bool
    private let dropsAnswer: Bool
    private let occurrence: Int

    private struct State {
        var upstream: Int
        /// Requests seen so far that contain the trigger.
        var triggered = 0
        var hasCut = false
        /// Set by ``relay(to:)``: a stopped proxy relays again.
        var relaysAgain = false
        /// Each relayed request's method and path (no query), in order.
        var requests: [String] = []
        /// Bytes replaced in the server's answers, by as many: ``rewriteAnswers(_:with:)``.
        var answerRewrite: (from: Data, to: Data)?
        /// The relayed connections still open, ended when the proxy goes.
        var connections: [ObjectIdentifier: Connection] = [:]
    }

    /// One relayed connection: its two sockets, and whether the answer it waits for is the one
    /// to drop. Each direction runs on a thread of its own; the second to end closes both sockets.
    private final class Connection: Sendable {
        let client: Int32
        let server: Int32
        let dropsNextAnswer = Mutex(false)
        /// The directions still running, and whether the sockets are closed: under one lock, so
        /// that the proxy's end never shuts down a descriptor number the test process reused.
        private let sockets = Mutex((directionsRunning: 2, closed: false))

        init(client: Int32, server: Int32) {
            (self.client, self.server) = (client, server)
        }

        /// Stops both directions: each thread's `recv` returns.
        func end() {
            sockets.withLock { if !$0.closed { shutdownBoth() } }
        }

        /// - Returns: whether this was the last direction running, and the sockets were closed.
        func directionEnded() -> Bool {
            sockets.withLock { sockets in
                guard !sockets.closed else { return false }
                shutdownBoth()
                sockets.directionsRunning -= 1
                guard sockets.directionsRunning == 0 else { return false }
                close(client)
                close(server)
                sockets.closed = true
                return true
            }
        }

        private func shutdownBoth() {
            shutdown(client, Int32(SHUT_RDWR))
            shutdown(server, Int32(SHUT_RDWR))
        }
    }

    /// - Parameters:
    ///   - upstream: the server's port on 127.0.0.1.
    ///   - trigger: the bytes (a request line's path) that stop it.
    ///   - occurrence: which request containing `trigger` stops it (1: the first).
    ///   - forwardsAfterCut: instead of stopping, runs `cut` before it forwards the triggering
    ///     request, then relays on: the test's way to act at one exact step of a device's
    ///     conversation (another device's change lands just before that request).
    ///   - dropsAnswer: instead of stopping, forwards the triggering request, waits for the
    ///     server's answer, runs `cut` (a `SIGKILL` of the device's daemon, or nothing) and drops
    ///     that answer, closing the connection; then relays on: the server did the step, the
    ///     device never heard.
    ///   - cut: what stops it (a `SIGKILL` of the server instance), run once.
    init(
        upstream: Int, trigger: String, occurrence: Int = 1, forwardsAfterCut: Bool = false, dropsAnswer: Bool = false,
        cut: @escaping @Sendable () -> Void
    ) throws {
        self.state = Mutex(State(upstream: upstream))
        self.trigger = Data(trigger.utf8)
        self.occurrence = occurrence
        self.cut = cut
        self.forwardsAfterCut = forwardsAfterCut
        self.dropsAnswer = dropsAnswer
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

    /// The relay threads hold the proxy weakly, so a connection a device keeps open does not keep
    /// the proxy — and the harnesses its `cut` holds — alive past its test: the proxy's end ends them.
    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for connection in state.withLock({ $0.connections.values }) { connection.end() }
    }

    var hasCut: Bool { state.withLock { $0.hasCut } }

    /// The requests relayed since the proxy started or ``forgetRequests()``, each as its method
    /// and path without the query (`GET /v1/sync/state`): what a device asked of the server.
    var requests: [String] { state.withLock { $0.requests } }

    func forgetRequests() { state.withLock { $0.requests = [] } }

    /// From now on replaces `text` in the server's answers with `replacement`, of the same length
    /// (so no `Content-Length` changes): the test's way to make the server answer as an older
    /// one would. Nil stops it.
    func rewriteAnswers(_ text: String?, with replacement: String = "") {
        precondition(text.map { $0.utf8.count == replacement.utf8.count } ?? true, "a rewrite keeps the answer's length")
        state.withLock { $0.answerRewrite = text.map { (Data($0.utf8), Data(replacement.utf8)) } }
    }

    /// The method and path of the request `bytes` begin with, when they begin one.
    private static func requestLine(_ bytes: Data) -> String? {
        guard let end = bytes.range(of: Data("\r\n".utf8)) else { return nil }
        let parts = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).split(separator: " ")
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1."), parts[0].allSatisfy({ $0.isUppercase }), parts[1].hasPrefix("/") else {
            return nil
        }
        return "\(parts[0]) \(parts[1].split(separator: "?", maxSplits: 1)[0])"
    }

    /// From now on relays every connection to `upstream` (a server instance started again after
    /// the cut, on a port of its own); the trigger stops nothing more.
    func relay(to upstream: Int) {
        state.withLock {
            $0.upstream = upstream
            $0.relaysAgain = true
        }
    }

    /// Whether requests are dropped now: after a cut that stops, until ``relay(to:)``.
    private var stopped: Bool {
        state.withLock { $0.hasCut && !$0.relaysAgain } && !forwardsAfterCut && !dropsAnswer
    }

    private func serve(_ client: Int32) {
        let upstream = state.withLock { $0.upstream }
        guard !stopped, let server = try? WebServerAddress(port: upstream).connect() else {
            close(client)
            return
        }
        let connection = Connection(client: client, server: server)
        state.withLock { $0.connections[ObjectIdentifier(connection)] = connection }
        Thread.detachNewThread { [weak self] in
            Self.pump(from: server, to: client) { bytes in
                guard let self else { return true }
                if let (text, replacement) = self.state.withLock({ $0.answerRewrite }) {
                    while let found = bytes.range(of: text) { bytes.replaceSubrange(found, with: replacement) }
                }
                guard connection.dropsNextAnswer.withLock({ $0 }) else { return false }
                self.state.withLock { $0.hasCut = true }
                self.cut()
                return true
            }
            if connection.directionEnded() { self?.forget(connection) }
        }
        Thread.detachNewThread { [weak self] in
            Self.pump(from: client, to: server) { bytes in
                guard let self else { return true }
                if let line = Self.requestLine(bytes) { self.state.withLock { $0.requests.append(line) } }
                // The server takes only requests naming it in Host (which clients spell either way).
                for name in ["Host", "host"] {
                    if let host = bytes.range(of: Data("\(name): 127.0.0.1:\(self.address.port)".utf8)) {
                        bytes.replaceSubrange(host, with: Data("\(name): 127.0.0.1:\(upstream)".utf8))
                    }
                }
                guard bytes.range(of: self.trigger) != nil else { return self.stopped }
                let fires = self.state.withLock { state in
                    guard !state.hasCut, !state.relaysAgain else { return false }
                    state.triggered += 1
                    guard state.triggered == self.occurrence else { return false }
                    if !self.dropsAnswer { state.hasCut = true }
                    return true
                }
                guard fires else { return self.stopped }
                if self.dropsAnswer {
                    // Marked before the request goes, so its answer cannot arrive unmarked.
                    connection.dropsNextAnswer.withLock { $0 = true }
                    return false
                }
                self.cut()
                return !self.forwardsAfterCut
            }
            if connection.directionEnded() { self?.forget(connection) }
        }
    }

    private func forget(_ connection: Connection) {
        _ = state.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(connection)) }
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
    }
}
