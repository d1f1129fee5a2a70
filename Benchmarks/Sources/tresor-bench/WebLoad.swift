import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The web scenarios' load generator (BENCHMARKS.md, "Web server"): plain keep-alive HTTP/1.1
/// over loopback TCP sockets, one thread per connection, no HTTP library in between — so what is
/// timed is the request's round trip through tresord (docs/WEB.md, "Endpoints").
final class HTTPConnection {
    struct Answer {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]

        func header(_ name: String) -> [String] {
            headers.filter { $0.0.caseInsensitiveCompare(name) == .orderedSame }.map(\.1)
        }

        var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] }
    }

    let port: Int
    private var fd: Int32 = -1
    private var buffer: [UInt8] = []
    private var scratch = [UInt8](repeating: 0, count: 1 << 16)

    init(port: Int) { self.port = port }
    deinit { if fd >= 0 { close(fd) } }

    private func connect() throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let error = errno
            close(fd)
            fd = -1
            throw BenchError("connect to 127.0.0.1:\(port): errno \(error)")
        }
        buffer.removeAll(keepingCapacity: true)
    }

    func disconnect() {
        if fd >= 0 { close(fd) }
        fd = -1
    }

    /// One request and its whole answer; a connection the server closed is opened again once.
    func send(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil) throws -> Answer {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let bytes = Array(head.utf8) + (body ?? [])
        for attempt in 0..<2 {
            if fd < 0 { try connect() }
            do {
                try write(bytes)
                return try readAnswer()
            } catch let error as Closed {
                disconnect()
                if attempt == 1 { throw BenchError("\(method) \(path): \(error.reason)") }
            }
        }
        throw BenchError("unreachable")
    }

    private struct Closed: Error { var reason: String }

    private func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Closed(reason: "send: errno \(errno)") }
            sent += n
        }
    }

    /// Reads more bytes into the buffer.
    private func fill() throws {
        while true {
            let n = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Closed(reason: n == 0 ? "closed by the server" : "recv: errno \(errno)") }
            buffer.append(contentsOf: scratch[0..<n])
            return
        }
    }

    private static let headEnd: [UInt8] = Array("\r\n\r\n".utf8)
    private static let lineEnd: [UInt8] = Array("\r\n".utf8)

    private func find(_ needle: [UInt8], from start: Int = 0) -> Int? {
        guard buffer.count >= needle.count + start else { return nil }
        var index = start
        while index <= buffer.count - needle.count {
            if buffer[index] == needle[0] {
                var match = true
                for k in 1..<needle.count where buffer[index + k] != needle[k] {
                    match = false
                    break
                }
                if match { return index }
            }
            index += 1
        }
        return nil
    }

    private func readAnswer() throws -> Answer {
        var searched = 0
        var end: Int?
        while true {
            end = find(Self.headEnd, from: max(0, searched - 3))
            if end != nil { break }
            searched = buffer.count
            try fill()
        }
        let headText = String(decoding: buffer[0..<end!], as: UTF8.self)
        buffer.removeFirst(end! + 4)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw BenchError("bad status line \(statusLine)") }
        var headers: [(String, String)] = []
        var length: Int?
        var chunked = false
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon]), value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers.append((name, value))
            if name.caseInsensitiveCompare("Content-Length") == .orderedSame { length = Int(value) }
            if name.caseInsensitiveCompare("Transfer-Encoding") == .orderedSame, value.lowercased().contains("chunked") { chunked = true }
        }
        var body: [UInt8] = []
        if chunked {
            while true {
                var lineEnd = find(Self.lineEnd)
                while lineEnd == nil { try fill(); lineEnd = find(Self.lineEnd) }
                let sizeText = String(decoding: buffer[0..<lineEnd!], as: UTF8.self).split(separator: ";")[0]
                guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { throw BenchError("bad chunk size") }
                buffer.removeFirst(lineEnd! + 2)
                while buffer.count < size + 2 { try fill() }
                body.append(contentsOf: buffer[0..<size])
                buffer.removeFirst(size + 2)
                if size == 0 { break }
            }
        } else {
            let count = length ?? 0
            while buffer.count < count { try fill() }
            body = Array(buffer[0..<count])
            buffer.removeFirst(count)
        }
        return Answer(status: status, headers: headers, body: body)
    }
}

/// A signed-in web session as the page holds it: the cookie, the origin token, the CSRF token
/// (docs/WEB.md, "Accounts and sessions").
struct WebSessionTokens {
    var cookie: String
    var originToken: String
    var csrfToken: String
    /// Which seeded account it belongs to (an index into the notes' ids).
    var account: Int

    func headers(port: Int, writing: Bool) -> [(String, String)] {
        var headers = [("Cookie", "tresor_session=\(cookie)"), ("X-Tresor-Origin-Token", originToken)]
        if writing {
            headers += [("Origin", "http://127.0.0.1:\(port)"), ("X-Tresor-CSRF", csrfToken), ("Content-Type", "application/json")]
        }
        return headers
    }

    /// `POST /api/session`: the sign-in, with the password in the body only.
    static func signIn(_ connection: HTTPConnection, name: String, password: String, account: Int) throws -> (
        WebSessionTokens?, HTTPConnection.Answer
    ) {
        let body = try JSONSerialization.data(withJSONObject: ["name": name, "password": password])
        let answer = try connection.send(
            "POST", "/api/session",
            headers: [
                ("Origin", "http://127.0.0.1:\(connection.port)"), ("Content-Type", "application/json"),
            ], body: Array(body))
        guard answer.status == 200, let json = answer.json, let origin = json["originToken"] as? String,
            let csrf = json["csrfToken"] as? String,
            let cookie = answer.header("Set-Cookie").lazy.compactMap({ Self.cookieValue($0) }).first
        else { return (nil, answer) }
        return (WebSessionTokens(cookie: cookie, originToken: origin, csrfToken: csrf, account: account), answer)
    }

    private static func cookieValue(_ header: String) -> String? {
        guard header.hasPrefix("tresor_session=") else { return nil }
        let value = header.dropFirst("tresor_session=".count).prefix { $0 != ";" }
        return value.isEmpty ? nil : String(value)
    }
}

/// Runs `connections` threads for `seconds`, each calling `request(thread, connection, n)` in a
/// loop on its own keep-alive connection; every call's wall time is a sample. Returns requests/s,
/// p50/p99, errors (non-2xx answers, with the first one's text) and this process's CPU.
func runLoad(
    ports: [Int], connections: Int, seconds: Double,
    _ request: @escaping (_ thread: Int, _ connection: HTTPConnection, _ n: Int) throws -> HTTPConnection.Answer
) -> [String: Any] {
    /// What the connections' threads hand back, under its lock.
    final class Collected: @unchecked Sendable {
        let lock = NSLock()
        var samples: [Double] = []
        var errors = 0
        var firstError: String?
    }
    let collected = Collected()
    let group = DispatchGroup()
    let cpuBefore = selfCPUMs()
    let start = nowNanos()
    let deadline = start + UInt64(seconds * 1e9)
    for thread in 0..<connections {
        group.enter()
        let worker = Thread {
            defer { group.leave() }
            let connection = HTTPConnection(port: ports[thread % ports.count])
            var mine: [Double] = []
            mine.reserveCapacity(4096)
            var failed = 0
            var message: String?
            var n = 0
            while nowNanos() < deadline {
                let t0 = nowNanos()
                do {
                    let answer = try request(thread, connection, n)
                    if answer.status >= 300 {
                        failed += 1
                        if message == nil { message = "\(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self))" }
                    } else {
                        mine.append(Double(nowNanos() - t0) / 1e6)
                    }
                } catch {
                    failed += 1
                    if message == nil { message = "\(error)" }
                    usleep(10_000)
                }
                n += 1
            }
            collected.lock.lock()
            collected.samples += mine
            collected.errors += failed
            if collected.firstError == nil { collected.firstError = message }
            collected.lock.unlock()
        }
        worker.stackSize = 1 << 20
        worker.start()
    }
    group.wait()
    let wall = Double(nowNanos() - start) / 1e9
    let samples = collected.samples, errors = collected.errors, firstError = collected.firstError
    var result = summary(samples)
    result["requests_per_s"] = Double(samples.count) / wall
    result["seconds"] = wall
    result["connections"] = connections
    result["errors"] = errors
    if let firstError { result["first_error"] = firstError }
    result["client_cpu_ms_per_request"] = samples.isEmpty ? 0 : (selfCPUMs() - cpuBefore) / Double(samples.count)
    return result
}

/// A free TCP port on loopback (bound, read and released).
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
            guard bind(fd, pointer, length) == 0 else { return -1 }
            return getsockname(fd, pointer, &length)
        }
    }
    guard bound == 0 else { throw BenchError("cannot find a free port: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Waits until something accepts connections on `port` (a daemon's web server starting).
func waitForPort(_ port: Int, seconds: Double, log path: String) throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        let connection = HTTPConnection(port: port)
        if let answer = try? connection.send("GET", "/healthz"), answer.status > 0 { return }
        usleep(50_000)
    }
    throw BenchError("nothing answered on port \(port); see \(path)")
}

/// Runs async work to its end from the harness's synchronous code.
final class BlockingBox<T>: @unchecked Sendable { var result: Result<T, Error>? }

func blocking<T>(_ body: @escaping () async throws -> T) throws -> T {
    let box = BlockingBox<T>()
    let semaphore = DispatchSemaphore(value: 0)
    Task {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        semaphore.signal()
    }
    semaphore.wait()
    return try box.result!.get()
}
