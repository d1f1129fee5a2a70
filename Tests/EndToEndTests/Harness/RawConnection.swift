import Foundation
import Testing
import TresorProtocol
import TresorSystem
import TresorTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 connection to the daemon's socket, spoken by hand and kept alive until released:
/// what a test sends that no client of ours would, and connections held open on purpose.
final class RawConnection {
    private let fd: Int32

    /// A request as it goes on the wire: a method, a path and a JSON body (none when empty).
    struct Request {
        var method = "GET"
        var path: String
        var body = Data()
    }

    /// An answer as it came: its status, content type and body.
    struct Answer {
        var status: Int
        var contentType: String?
        var body: Data
        var error: APIError? { try? APICoding.decoder.decode(ErrorResponse.self, from: body).error }
    }

    /// One `GET` on a connection of its own.
    static func get(_ path: String, socket: String) throws -> Answer {
        try #require(try get([path], socket: socket).first)
    }

    /// `GET`s one after another on one kept-alive connection.
    static func get(_ paths: [String], socket: String) throws -> [Answer] {
        try exchange(paths.map { Request(path: $0) }, socket: socket)
    }

    /// Requests one after another on one kept-alive connection of their own.
    static func exchange(_ requests: [Request], socket: String) throws -> [Answer] {
        try RawConnection(socket: socket).exchange(requests)
    }

    /// Connects to the daemon's socket at `path`.
    init(socket path: String) throws {
        // Close-on-exec: a program another test starts meanwhile must not keep it open.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError.daemonDidNotStart("socket failed: errno \(errno)") }
        let failure = UnixSockets.connect(fd, to: path)
        guard failure == 0 else {
            close(fd)
            throw HarnessError.daemonDidNotStart("connect failed: errno \(failure)")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Bytes read and not yet taken as an answer.
    private var received = Data()

    /// Requests one after another, each answer read by its `Content-Length` before the next
    /// request goes out.
    func exchange(_ requests: [Request]) throws -> [Answer] {
        try requests.map { request in
            try send(request)
            return try #require(try answer(within: nil), "no answer")
        }
    }

    /// Sends `raw` without waiting for its answer.
    func send(_ raw: Request) throws {
        try send(bytes: Self.bytes(of: raw))
    }

    /// Sends `bytes` as they are: a request, or any part of one.
    func send(bytes: [UInt8]) throws {
        guard bytes.withUnsafeBytes({ Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
            throw HarnessError.daemonDidNotStart("short send")
        }
    }

    /// `raw` as HTTP/1.1 puts it on the wire.
    static func bytes(of raw: Request) -> [UInt8] {
        let length = raw.body.isEmpty ? "" : "Content-Length: \(raw.body.count)\r\nContent-Type: application/json\r\n"
        return Array("\(raw.method) \(raw.path) HTTP/1.1\r\nHost: t\r\n\(length)\r\n".utf8) + Array(raw.body)
    }

    /// The next answer, read by its `Content-Length`; nil when none came within `timeout` (nil:
    /// waits as long as it takes).
    func answer(within timeout: TimeInterval?) throws -> Answer? {
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            if let end = received.range(of: Data("\r\n\r\n".utf8)) {
                let head = String(decoding: received[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
                func field(_ name: String) -> String? {
                    head.dropFirst().first { $0.lowercased().hasPrefix(name + ":") }
                        .map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
                }
                let length = try #require(field("content-length").flatMap { Int($0) })
                if received.count - end.upperBound >= length {
                    let body = Data(received[end.upperBound..<(end.upperBound + length)])
                    received = Data(received[(end.upperBound + length)...])
                    return Answer(
                        status: Int(head[0].split(separator: " ")[1]) ?? -1, contentType: field("content-type"), body: body)
                }
            }
            if let deadline {
                var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let left = Int32(max(0, deadline.timeIntervalSinceNow) * 1_000)
                guard poll(&ready, 1, left) > 0 else { return nil }
            }
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { throw HarnessError.daemonDidNotStart("connection closed before the answer") }
            received.append(contentsOf: buffer[..<count])
        }
    }
}
