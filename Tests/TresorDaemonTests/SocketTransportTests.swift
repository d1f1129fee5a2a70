import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Testing
import TresorProtocol
import TresorSystem

@testable import TresorDaemon

/// The socket API's HTTP/1.1 connections (`SocketAPIServer`, `SocketAPIChannel`, `SocketRequestHandler`) on a real
/// Unix socket, with a small router behind the daemon's `ErrorMiddleware`: requests answered in
/// order, bodies bounded per route, refusals before a large body is read, `Connection: close`.
@Suite(.serialized) struct SocketTransportTests {
    /// Runs `body` against a server with the test routes; stops the server afterwards.
    /// With `gate`, `/held` is a large-body route that reads nothing of its body until `gate` yields.
    /// `idleSeconds`, `keepsOpen` and `perProcess` are the server's connection settings.
    func withServer(
        holding gate: AsyncStream<Void>? = nil, idleSeconds: Int = SocketConnections.defaultIdleSeconds,
        keepsOpen: @escaping @Sendable (ConnectionID) -> Bool = { _ in false }, perProcess: Int = 64,
        _ body: (String) async throws -> Void
    ) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-transport-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sock").path

        let router = Router(context: DaemonRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        // Echoes the body it got, and its size in a header.
        router.post("/echo") { request, context -> Response in
            var request = request
            let body = try await request.collectBody(upTo: context.maxUploadSize)
            return Response(status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: body))
        }
        // An answer that takes its time, as an unlock's key derivation or `tresor approve`'s wait does.
        router.get("/slow") { _, _ -> String in
            try await Task.sleep(for: .seconds(2.5))
            return "slow"
        }
        // An answer too large to gather, written a piece at a time as an attachment's export is.
        router.get("/large-answer") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "application/octet-stream"],
                body: ResponseBody(contentLength: Self.largeAnswerBytes) { writer in
                    let piece = ByteBuffer(repeating: 0x61, count: 1 << 16)
                    for _ in 0..<(Self.largeAnswerBytes >> 16) { try await writer.write(piece) }
                    try await writer.finish(nil)
                })
        }
        // A large-body route that refuses before reading, as the notes routes refuse other clients.
        router.post("/refuse") { _, _ -> Response in throw APIError(.forbidden, "refused before the body") }
        // A large-body route that reads its body, up to its own limit.
        router.post("/large") { request, _ -> String in
            var request = request
            do {
                return "\(try await request.collectBody(upTo: 100_000).readableBytes)"
            } catch is NIOTooManyBytesError {
                throw APIError(.requestTooLarge, "the upload is larger than 100000 bytes")
            }
        }
        if let gate {
            router.post("/held") { request, _ -> String in
                for await _ in gate { break }
                var count = 0
                for try await part in request.body { count += part.readableBytes }
                return "\(count)"
            }
        }
        let limits = RequestBodyLimits(standard: 1024, largerByPath: ["/large": 100_000, "/refuse": 100_000, "/held": 64 << 20])
        // The socket's file shows at bind, before the server listens: wait for `onRunning`.
        let (listening, listened) = AsyncStream<Void>.makeStream()
        let server = SocketAPIServer(
            path: path, maximumConnections: 16, maximumConnectionsPerProcess: perProcess,
            channelSetup: SocketAPIChannel(
                responder: router.buildResponder(), bodyLimits: limits, idleSeconds: idleSeconds, keepsOpen: keepsOpen),
            logger: Logger(label: "test"), onRunning: { listened.finish() })
        let services = ServiceGroup(services: [server], logger: Logger(label: "test"))
        let running = Task {
            defer { listened.finish() }
            try await services.run()
        }
        for await _ in listening {}
        do {
            try await body(path)
        } catch {
            await services.triggerGracefulShutdown()
            throw error
        }
        await services.triggerGracefulShutdown()
        try await running.value
    }

    /// The size of `/large-answer`'s body: far more than a socket's buffers hold.
    static let largeAnswerBytes = 64 << 20

    static func request(_ method: String, _ path: String, body: String = "", headers: [String] = []) -> String {
        (["\(method) \(path) HTTP/1.1", "Host: tresord", "Content-Length: \(body.utf8.count)"] + headers).joined(separator: "\r\n")
            + "\r\n\r\n" + body
    }

    @Test func pipelinedRequestsAreAnsweredInOrderOnOneConnection() async throws {
        try await withServer { path in
            let client = try RawConnection(path: path)
            try client.send(
                Self.request("POST", "/echo", body: "first") + Self.request("POST", "/echo", body: "second")
                    + Self.request("GET", "/no-such-route"))
            #expect(try client.readResponse().body == "first")
            #expect(try client.readResponse().body == "second")
            let missing = try client.readResponse()
            #expect(missing.status == 404)
            #expect(missing.errorCode == .notFound)
        }
    }

    @Test func aBodyOverTheLimitIsRefusedAndTheConnectionStaysUsable() async throws {
        try await withServer { path in
            let client = try RawConnection(path: path)
            // Declared too large: answered from the head alone; the body that follows is dropped.
            try client.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1025\r\n\r\n")
            let declared = try client.readResponse()
            #expect(declared.status == 413)
            #expect(declared.errorCode == .requestTooLarge)
            try client.send(String(repeating: "x", count: 1025))
            #expect(try client.readResponse(after: Self.request("POST", "/echo", body: "after")).body == "after")

            // Chunked, no length given: refused once it passes the limit.
            let chunk = String(repeating: "y", count: 600)
            let chunked =
                "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "258\r\n\(chunk)\r\n258\r\n\(chunk)\r\n0\r\n\r\n"
            let streamed = try client.readResponse(after: chunked)
            #expect(streamed.status == 413)
            #expect(streamed.errorCode == .requestTooLarge)
            #expect(try client.readResponse(after: Self.request("POST", "/echo", body: "still")).body == "still")
        }
    }

    @Test func aLargeBodyRouteCanRefuseBeforeTheBodyIsSent() async throws {
        try await withServer { path in
            let client = try RawConnection(path: path)
            // Only the head: the route answers without waiting for 90,000 bytes that never come.
            try client.send("POST /refuse HTTP/1.1\r\nHost: t\r\nContent-Length: 90000\r\n\r\n")
            let refused = try client.readResponse()
            #expect(refused.status == 403)
            #expect(refused.errorCode == .forbidden)
        }
    }

    @Test func aLargeBodyRouteReadsItsBodyUpToItsOwnLimit() async throws {
        try await withServer { path in
            let client = try RawConnection(path: path)
            #expect(try client.readResponse(after: Self.request("POST", "/large", body: String(repeating: "z", count: 90_000))).body == "90000")
            let over = try client.readResponse(
                after: "POST /large HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "C350\r\n\(String(repeating: "a", count: 50_000))\r\nC350\r\n\(String(repeating: "b", count: 50_000))\r\n"
                    + "1\r\nc\r\n0\r\n\r\n")
            #expect(over.status == 413)
            #expect(over.errorMessage == "the upload is larger than 100000 bytes")
            #expect(try client.readResponse(after: Self.request("POST", "/echo", body: "next")).body == "next")
        }
    }

    /// A streamed body is read no faster than its route takes it: while the route has taken
    /// nothing, only a bounded part of a 32 MiB upload gets into the connection (the daemon's
    /// few buffered parts and the kernel's socket buffers), not the upload; once the route reads,
    /// every byte arrives.
    @Test func aStreamedBodyIsReadNoFasterThanItsRouteTakesIt() async throws {
        let gate = AsyncStream<Void>.makeStream()
        try await withServer(holding: gate.stream) { path in
            let client = try RawConnection(path: path)
            let size = 32 << 20
            try client.send("POST /held HTTP/1.1\r\nHost: t\r\nContent-Length: \(size)\r\n\r\n")
            let body = [UInt8](repeating: 0x61, count: size)
            var sent = 0
            // Without back-pressure the server reads all it gets: 16 MiB goes in well within the second.
            for _ in 0..<200 where sent < 16 << 20 {
                sent += try client.sendWithoutWaiting(body[sent...])
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(sent > 0)
            #expect(sent < 4 << 20, "the server read \(sent) bytes of a body its route had not started reading")
            gate.continuation.yield()
            try client.send(body[sent...])
            #expect(try client.readResponse().body == "\(size)")
            #expect(try client.readResponse(after: Self.request("POST", "/echo", body: "next")).body == "next")
        }
    }

    @Test func connectionCloseIsHonoured() async throws {
        try await withServer { path in
            let client = try RawConnection(path: path)
            let answer = try client.readResponse(after: Self.request("POST", "/echo", body: "bye", headers: ["Connection: close"]))
            #expect(answer.body == "bye")
            #expect(answer.headers["connection"] == "close")
            #expect(try client.readToEnd().isEmpty, "the server closes the connection after the answer")
        }
    }

    @Test func malformedHTTPIsAnsweredWith400AndClosed() async throws {
        try await withServer { path in
            let client = try RawConnection(path: path)
            try client.send("NOT HTTP AT ALL\r\n\r\n")
            #expect(try client.readResponse().status == 400)
            #expect(try client.readToEnd().isEmpty)
        }
    }
}

/// A blocking Unix-socket client that reads HTTP/1.1 responses with a `Content-Length`.
final class RawConnection {
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: String
        var error: APIError? { try? APICoding.decoder.decode(ErrorResponse.self, from: Data(body.utf8)).error }
        var errorCode: APIError.Code? { error?.code }
        var errorMessage: String? { error?.message }
    }

    private let fd: Int32
    private var pending = Data()

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let failure = UnixSockets.connect(fd, to: path)
        // Not closed here: the object is whole, so its deinit closes it (twice would close a
        // descriptor another thread may have been given meanwhile).
        guard failure == 0 else { throw TransportTestError("connect failed: errno \(failure)") }
    }

    deinit { close(fd) }

    func send(_ text: String) throws {
        try send(Array(text.utf8)[...])
    }

    func send(_ bytes: ArraySlice<UInt8>) throws {
        var bytes = bytes
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw TransportTestError("send failed: errno \(errno)") }
            bytes = bytes.dropFirst(sent)
        }
    }

    /// Sends what the connection takes now, without waiting; returns how many bytes.
    func sendWithoutWaiting(_ bytes: ArraySlice<UInt8>) throws -> Int {
        var bytes = bytes
        var total = 0
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { break }
            guard sent > 0 else { throw TransportTestError("send failed: errno \(errno)") }
            total += sent
            bytes = bytes.dropFirst(sent)
        }
        return total
    }

    func readResponse(after request: String) throws -> Answer {
        try send(request)
        return try readResponse()
    }

    func readResponse() throws -> Answer {
        while pending.range(of: Data("\r\n\r\n".utf8)) == nil { try receiveSome() }
        let end = pending.range(of: Data("\r\n\r\n".utf8))!
        let lines = String(decoding: pending[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        let length = Int(headers["content-length"] ?? "") ?? 0
        pending = Data(pending[end.upperBound...])
        while pending.count < length { try receiveSome() }
        let body = String(decoding: pending.prefix(length), as: UTF8.self)
        pending = Data(pending.dropFirst(length))
        let status = Int(lines[0].split(separator: " ")[1]) ?? -1
        return Answer(status: status, headers: headers, body: body)
    }

    /// Everything until the server closes the connection.
    func readToEnd() throws -> Data {
        while try receive() > 0 {}
        defer { pending = Data() }
        return pending
    }

    /// Reads what is there; 0 once the server has closed the connection.
    @discardableResult
    private func receive() throws -> Int {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count >= 0 else { throw TransportTestError("recv failed: errno \(errno)") }
        pending.append(contentsOf: buffer[..<count])
        return count
    }

    private func receiveSome() throws {
        guard try receive() > 0 else { throw TransportTestError("the server closed the connection mid-answer") }
    }
}

struct TransportTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
