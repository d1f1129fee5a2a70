import FoundationEssentials
import TresorProtocol
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// A minimal blocking HTTP/1.1 client over one kept-alive Unix socket connection: all the
/// daemon's local API needs, and cheap enough that a CLI process stays within milliseconds.
final class UnixSocketHTTP {
    private let fd: Int32
    private var buffer = [UInt8]()
    /// What one recv() fills, allocated once: a lookup's answer is a few hundred bytes, and
    /// zeroing 16 KiB per read cost more than the read.
    private var chunk = [UInt8](repeating: 0, count: 16_384)
    private var answerWait = AnswerWait()
    /// How long a read or a write may wait for the daemon, in whole seconds (for the error).
    private let timeoutSeconds: Int
    /// How long the daemon keeps this connection while it sends nothing: what its last answer
    /// said (`Keep-Alive: timeout=N`), until then its default.
    private var keptFor = Duration.seconds(SocketConnections.defaultIdleSeconds)
    /// When the connection was opened, or its last answer read.
    private var lastAnswer = ContinuousClock.now

    /// Whether the daemon may close the connection before a request sent now reaches it: it has
    /// been idle for half the time the daemon keeps an idle one. The clock goes on while the
    /// machine sleeps; the daemon's does not, so the client errs on the safe side.
    var mayBeClosedByDaemon: Bool { ContinuousClock.now - lastAnswer >= keptFor / 2 }

    /// Connects to `path` and checks that the listening process runs as this user. A connect,
    /// read or write that waits longer than `timeout` for the daemon fails with
    /// ``TresorClientError/daemonNotAnswering(seconds:)`` instead of hanging.
    init(path: String, timeout: Duration) throws {
        timeoutSeconds = Int(timeout.components.seconds)
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TresorClientError.protocolError("socket() failed (errno \(errno))") }
        // On every failure below, deinit closes the descriptor: closing it here as well would
        // close it twice, and in a threaded process the second close can hit someone else's file.
        // Set before connecting: a daemon that stopped accepting leaves connect(2) waiting for
        // room in its backlog, for as long as the send timeout allows.
        var limit = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            guard setsockopt(fd, SOL_SOCKET, option, &limit, socklen_t(MemoryLayout<timeval>.size)) == 0 else {
                throw TresorClientError.protocolError("cannot set the socket's timeout (errno \(errno))")
            }
        }
        switch UnixSockets.connect(fd, to: path) {
        case 0: break
        case ENAMETOOLONG, EINVAL: throw TresorClientError.protocolError("not a socket path: \(path)")
        case EAGAIN: throw TresorClientError.daemonNotAnswering(seconds: timeoutSeconds)
        default: throw TresorClientError.daemonNotRunning(socket: path)
        }
        let server = try PeerCredentials(socket: fd)
        guard server.uid == getuid() else { throw TresorClientError.untrustedDaemon(uid: server.uid) }
    }

    deinit { if fd >= 0 { close(fd) } }

    struct Response {
        var status: Int
        /// Header names in lower case.
        var headers: [String: String] = [:]
        var body: Data
    }

    /// Sends one request. `body` is JSON unless `contentType` says otherwise; `headers` are
    /// extra request headers (names and values must be header-safe ASCII).
    func send(
        method: String, path: String, body: Data?, contentType: String = "application/json", headers: [(String, String)] = []
    ) throws -> Response {
        var message = try head(method: method, path: path, headers: headers, contentType: contentType, contentLength: body?.count)
        // A small body goes out with the head in one write; a large one (an attachment) is sent
        // from where it is, not copied behind the head.
        if let body, body.count <= 1 << 16 {
            message.append(body)
            try writeAll(message)
        } else {
            try writeAll(message)
            if let body { try writeAll(body) }
        }
        return try readResponse()
    }

    /// Sends one request with a small body and hands a successful answer's body to `receive` a
    /// piece at a time as it arrives (an attachment is never held whole); the answer returned then
    /// has an empty body. An error answer is read whole, as ``send(method:path:body:contentType:headers:)``
    /// does. When `receive` throws, or the answer ends short, the connection is shut down (the
    /// rest of the answer is not read) and the error thrown.
    func send(
        method: String, path: String, body: Data, contentType: String, receive: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Response {
        var message = try head(method: method, path: path, headers: [], contentType: contentType, contentLength: body.count)
        message.append(body)
        try writeAll(message)
        do {
            return try withoutActuallyEscaping(receive) { try readResponse(receive: $0) }
        } catch {
            shutdown(fd, Int32(SHUT_RDWR))
            throw error
        }
    }

    /// Sends one request whose body is the next `length` bytes of the open file `file`, read and
    /// sent a piece at a time (an attachment is never held whole). A file that ends early leaves
    /// the request unfinished: the connection is shut down and ``TresorClientError/fileChanged(path:)``
    /// thrown with `fileName`.
    func send(
        method: String, path: String, file: Int32, length: Int, fileName: String, contentType: String, headers: [(String, String)] = []
    ) throws -> Response {
        try writeAll(try head(method: method, path: path, headers: headers, contentType: contentType, contentLength: length))
        var piece = [UInt8](repeating: 0, count: max(1, min(length, 1 << 20)))
        var remaining = length
        while remaining > 0 {
            let count = piece.withUnsafeMutableBytes { Glibc.read(file, $0.baseAddress, min($0.count, remaining)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                shutdown(fd, Int32(SHUT_RDWR))
                throw TresorClientError.fileChanged(path: fileName)
            }
            try piece.withUnsafeBytes { try writeAll(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            remaining -= count
        }
        return try readResponse()
    }

    /// A request's head; `contentLength` nil means no body.
    private func head(method: String, path: String, headers: [(String, String)], contentType: String, contentLength: Int?) throws -> Data {
        var request = "\(method) \(path) HTTP/1.1\r\nHost: tresord\r\nAccept: application/json\r\n"
        for (name, value) in headers {
            guard !(name + value).contains(where: { $0 == "\r" || $0 == "\n" }) else {
                throw TresorClientError.protocolError("a request header holds a line break")
            }
            request += "\(name): \(value)\r\n"
        }
        if let contentLength {
            request += "Content-Type: \(contentType)\r\nContent-Length: \(contentLength)\r\n"
        } else if method != "GET" && method != "DELETE" {
            request += "Content-Length: 0\r\n"
        }
        request += "\r\n"
        return Data(request.utf8)
    }

    private func writeAll(_ data: Data) throws {
        try data.withUnsafeBytes { try writeAll($0) }
    }

    private func writeAll(_ raw: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < raw.count {
            let sent = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            if sent < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { throw TresorClientError.daemonNotAnswering(seconds: timeoutSeconds) }
                throw TresorClientError.connectionClosedBeforeRequest(errno: errno)
            }
            offset += sent
        }
    }

    /// Reads what has arrived; the first read of an answer polls for a moment before it sleeps
    /// (``AnswerWait``: a sleeping client's wake-up cost a lookup as much as the daemon's work).
    private func fill(answer: Bool = false) throws {
        while true {
            let count = chunk.withUnsafeMutableBytes {
                answer ? answerWait.receive(from: fd, into: $0) : recv(fd, $0.baseAddress, $0.count, 0)
            }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { throw TresorClientError.daemonNotAnswering(seconds: timeoutSeconds) }
            guard count > 0 else { throw TresorClientError.closedBeforeAnswer }
            buffer.append(contentsOf: chunk[0..<count])
            return
        }
    }

    private func readLine() throws -> String {
        while true {
            if let end = buffer.firstIndex(of: 0x0A) {
                let line = buffer[..<end]
                buffer.removeSubrange(...end)
                return String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self)
            }
            guard buffer.count < 64 * 1024 else { throw TresorClientError.protocolError("header line too long") }
            try fill()
        }
    }

    private func readBytes(_ count: Int) throws -> Data {
        guard count > 1 << 16 else {
            while buffer.count < count { try fill() }
            let data = Data(buffer[..<count])
            buffer.removeSubrange(..<count)
            return data
        }
        // A large body is received into a buffer of its own size, not grown in
        // `buffer` and copied out; nothing past it is read (the connection is kept alive). No
        // answer whole in memory is larger than an import: a bogus length reserves no more than that.
        var data = Data(capacity: min(count, NotesWire.maximumImportRequestBytes))
        let buffered = min(buffer.count, count)
        data.append(contentsOf: buffer[..<buffered])
        buffer.removeSubrange(..<buffered)
        while data.count < count {
            let wanted = count - data.count
            let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, min($0.count, wanted), 0) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { throw TresorClientError.closedBeforeAnswer }
            data.append(contentsOf: chunk[0..<got])
        }
        return data
    }

    /// Hands the next `count` bytes of the answer to `receive` as they arrive.
    private func receive(_ count: Int, into receive: (UnsafeRawBufferPointer) throws -> Void) throws {
        let buffered = min(buffer.count, count)
        if buffered > 0 {
            try buffer.withUnsafeBytes { try receive(UnsafeRawBufferPointer(rebasing: $0[..<buffered])) }
            buffer.removeSubrange(..<buffered)
        }
        var remaining = count - buffered
        guard remaining > 0 else { return }
        // Larger than `chunk`: a 256 MiB attachment in 1,024 reads and writes, not 16,384.
        let piece = UnsafeMutableRawBufferPointer.allocate(byteCount: min(remaining, 1 << 18), alignment: 1)
        defer { piece.deallocate() }
        while remaining > 0 {
            let got = recv(fd, piece.baseAddress, min(piece.count, remaining), 0)
            if got < 0 && errno == EINTR { continue }
            if got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { throw TresorClientError.daemonNotAnswering(seconds: timeoutSeconds) }
            guard got > 0 else { throw TresorClientError.protocolError("tresord's answer ended \(remaining) bytes short (its log says why)") }
            try receive(UnsafeRawBufferPointer(rebasing: piece[0..<got]))
            remaining -= got
        }
    }

    /// The size of a chunked body's next chunk; after the last (0), its trailer is read too.
    private func readChunkSize() throws -> Int {
        let line = try readLine()
        guard let field = line.split(separator: ";").first, let size = Int(field, radix: 16), size >= 0 else {
            throw TresorClientError.protocolError("bad chunk size")
        }
        if size == 0 { while try !readLine().isEmpty {} }
        return size
    }

    /// The next answer. With `receive`, a successful answer's body goes to it as it arrives.
    private func readResponse(receive: ((UnsafeRawBufferPointer) throws -> Void)? = nil) throws -> Response {
        if buffer.isEmpty { try fill(answer: true) }
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw TresorClientError.protocolError("bad status line")
        }
        var contentLength: Int?
        var chunked = false
        var headers: [String: String] = [:]
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimming { $0 == " " || $0 == "\t" }  // optional whitespace (RFC 9110)
            headers[name] = value
            if name == "content-length" {
                guard let length = Int(value), length >= 0 else { throw TresorClientError.protocolError("bad Content-Length") }
                contentLength = length
            }
            if name == "transfer-encoding" && value.lowercased().contains("chunked") { chunked = true }
            if name == "keep-alive", let seconds = SocketConnections.timeout(inKeepAlive: value) { keptFor = .seconds(seconds) }
        }
        // A successful answer's body goes to `receive` as it arrives, any other is gathered.
        var body = Data()
        let take: (Int) throws -> Void
        if let receive, (200..<300).contains(status) {
            take = { try self.receive($0, into: receive) }
        } else {
            take = { count in
                let bytes = try self.readBytes(count)
                if body.isEmpty { body = bytes } else { body.append(bytes) }
            }
        }
        if chunked {
            while true {
                let size = try readChunkSize()
                if size == 0 { break }
                try take(size)
                _ = try readLine()
            }
        } else {
            try take(contentLength ?? 0)
        }
        lastAnswer = .now
        return Response(status: status, headers: headers, body: body)
    }
}
