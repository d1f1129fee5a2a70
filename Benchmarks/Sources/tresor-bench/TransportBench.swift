import Foundation
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// Where the time of one request over the Unix socket goes, every row measured by the same
/// raw client (one kept-alive connection, one request at a time, waiting for each answer as
/// TresorKit does: ``AnswerWait``): a bare socket answered by a thread of this process — also
/// with the client asleep in `recv`, what the wait saves —, SwiftNIO's HTTP/1 pipeline with one
/// synchronous handler, a one-route Hummingbird app (`transport-floor`), then tresord's
/// `GET /v1/status` and a keychain lookup. The bare socket and the two servers are floors no
/// handler can go under (BENCHMARKS.md §1).
struct TransportBench {
    let binDirectory: URL
    let work: URL
    let requests: Int

    /// A request as bytes, ready to send.
    static func request(_ method: String, _ path: String, body: Data = Data()) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: tresord\r\n"
        if !body.isEmpty { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        return Array((head + "\r\n").utf8) + Array(body)
    }

    static let status = request("GET", "/v1/status")

    /// p50/p99 of `requests` round trips on one connection to `socket`, cycling through `sent`.
    func measure(socket: String, _ sent: [UInt8]...) throws -> [String: Any] {
        try measure(socket: socket, sent)
    }

    func measure(socket: String, _ sent: [[UInt8]], polling: Bool = true) throws -> [String: Any] {
        let client = try RawHTTPClient(path: socket, polling: polling)
        for i in 0..<200 { try client.roundTrip(sent[i % sent.count]) }
        var samples: [Double] = []
        samples.reserveCapacity(requests)
        for i in 0..<requests { samples.append(try timeMs { try client.roundTrip(sent[i % sent.count]) }) }
        return summary(samples)
    }

    /// p50/p99 of `requests` requests to `socket`, each on a connection of its own (connect, send,
    /// read the answer, close) — what a one-shot client such as a `tresor` process pays.
    func measureNewConnections(socket: String, _ sent: [[UInt8]]) throws -> [String: Any] {
        for i in 0..<100 { try RawHTTPClient(path: socket).roundTrip(sent[i % sent.count]) }
        var samples: [Double] = []
        samples.reserveCapacity(requests)
        for i in 0..<requests { samples.append(try timeMs { try RawHTTPClient(path: socket).roundTrip(sent[i % sent.count]) }) }
        return summary(samples)
    }

    /// The three floors. tresord's rows are added by the keychain scenario, on its own daemon.
    func floors() throws -> [String: Any] {
        var result: [String: Any] = [:]
        let echo = work.appendingPathComponent("echo.sock").path
        try EchoServer.start(at: echo)
        result["bare_socket"] = try measure(socket: echo, Self.status)
        result["bare_socket_sleeping"] = try measure(socket: echo, [Self.status], polling: false)
        for server in ["nio", "hummingbird"] {
            let socket = work.appendingPathComponent("\(server).sock").path
            let child = try Child([binDirectory.appendingPathComponent("transport-floor").path, server, socket], environment: [:])
            defer { kill(child.pid, SIGKILL); child.wait() }
            try waitForSocket(socket)
            result[server] = try measure(socket: socket, Self.status)
        }
        return result
    }

    func waitForSocket(_ path: String) throws {
        for _ in 0..<200 {
            if (try? RawHTTPClient(path: path)) != nil { return }
            usleep(20_000)
        }
        throw BenchError("\(path) did not come up")
    }
}

/// One blocking HTTP/1.1 connection over a Unix socket: sends a request, reads the headers
/// and `Content-Length` bytes of body. Nothing else — no JSON, no TresorKit. It waits for an
/// answer's first bytes as TresorKit does (``AnswerWait``), or, not `polling`, asleep in `recv`.
final class RawHTTPClient {
    private let fd: Int32
    private var buffer = [UInt8](repeating: 0, count: 65536)
    private var answerWait: AnswerWait?

    init(path: String, polling: Bool = true) throws {
        answerWait = polling ? AnswerWait() : nil
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket failed") }
        let failure = UnixSockets.connect(fd, to: path)
        guard failure == 0 else {
            close(fd)
            throw BenchError("connect to \(path) failed: errno \(failure)")
        }
    }

    deinit { close(fd) }

    /// Sends `request` and reads its answer whole; returns the answer's status code.
    @discardableResult
    func roundTrip(_ request: [UInt8]) throws -> Int {
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            throw BenchError("short send")
        }
        var received = 0
        var expected: Int?
        while expected.map({ received < $0 }) ?? true {
            let n = buffer.withUnsafeMutableBytes { buffer in
                let free = UnsafeMutableRawBufferPointer(rebasing: buffer[received...])
                return received == 0 && answerWait != nil
                    ? answerWait!.receive(from: fd, into: free) : recv(fd, free.baseAddress, free.count, 0)
            }
            guard n > 0 else { throw BenchError("connection closed") }
            received += n
            if expected == nil, let end = Self.headerEnd(buffer, received) {
                expected = end + Self.contentLength(buffer[..<end])
            }
        }
        return Int(String(decoding: buffer[9..<min(12, received)], as: UTF8.self)) ?? 0
    }

    static func headerEnd(_ bytes: [UInt8], _ count: Int) -> Int? {
        guard count >= 4 else { return nil }
        for i in 3..<count where bytes[i - 3] == 13 && bytes[i - 2] == 10 && bytes[i - 1] == 13 && bytes[i] == 10 { return i + 1 }
        return nil
    }

    static func contentLength(_ head: ArraySlice<UInt8>) -> Int {
        let text = String(decoding: head, as: UTF8.self).lowercased()
        guard let range = text.range(of: "content-length:") else { return 0 }
        return Int(text[range.upperBound...].prefix { $0 != "\r" }.trimmingCharacters(in: .whitespaces)) ?? 0
    }
}

/// A thread that answers every read on its one connection with a fixed response: the kernel's
/// socket round trip and nothing more.
enum EchoServer {
    static func start(at path: String) throws {
        unlink(path)
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let bound = UnixSockets.bind(listener, to: path)
        guard listener >= 0, bound == 0, listen(listener, 4) == 0 else { throw BenchError("echo server: errno \(errno)") }
        let response = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}".utf8)
        Thread.detachNewThread {
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                var scratch = [UInt8](repeating: 0, count: 65536)
                while scratch.withUnsafeMutableBytes({ recv(connection, $0.baseAddress, $0.count, 0) }) > 0 {
                    _ = response.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                }
                close(connection)
            }
        }
    }
}
