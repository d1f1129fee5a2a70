import Foundation
import Testing
import TresorSystem
import TresorTestSupport

#if canImport(Glibc)
import Glibc
#endif

// The web API tests' tools: a daemon started with `--web` on a free loopback port, and an
// HTTP/1.1 client on a plain socket — so a test sends exactly the bytes it means (`..` in a
// path, a foreign Host, a forged cookie) with no client library rewriting them, and no
// secret ever goes on a command line.

extension Harness {
    /// A free TCP port on 127.0.0.1 (bound once by the kernel's choice, then released).
    static func freePort() throws -> Int { try LoopbackPort.free() }

    /// Starts `tresord --web PORT`, initialises the keybag with `passcode`, and waits until
    /// the web server answers on `address`. Returns the web server's address. Registration is open
    /// (`"webRegistration": "open"` added to the home's config.json) unless `openRegistration`
    /// is false: most tests register whom they need; the invite tests do not. `port` is a free one
    /// unless given (an instance started again where its clients know it).
    func startWebDaemon(
        passcode: String, extraArguments: [String] = [], openRegistration: Bool = true, address: String = "127.0.0.1", port: Int? = nil
    ) throws -> WebServerAddress {
        if openRegistration { try mergeConfiguration(["webRegistration": "open"]) }
        let port = try port ?? Self.freePort()
        secrets.append(passcode)
        try startDaemon(extraArguments: ["--web", "\(port)"] + extraArguments)
        let server = WebServerAddress(port: port, address: address)
        let deadline = Date().addingTimeInterval(15)
        while (try? server.send("GET", "/")) == nil {
            guard Date() < deadline else { throw HarnessError.daemonDidNotStart(daemonLog) }
            usleep(20_000)
        }
        if try status().keybag == .notInitialized {
            #expect(try tresor(["init", "--passcode-stdin"], input: passcode + "\n").succeeded)
        }
        return server
    }
}

extension Harness {
    /// Adds `values` to the home's config.json (created when missing), keeping keys already set.
    func mergeConfiguration(_ values: [String: Any]) throws {
        var configuration: [String: Any] = [:]
        if let data = try? Data(contentsOf: paths.config), let existing = try JSONSerialization.jsonObject(with: data) as? [String: Any] {
            configuration = existing
        }
        for (key, value) in values where configuration[key] == nil { configuration[key] = value }
        try SecureFiles.createDirectory(paths.home)
        try SecureFiles.writeAtomically(try JSONSerialization.data(withJSONObject: configuration), to: paths.config)
    }
}

enum WebTestError: Error {
    case socket(String)
    case malformedResponse
}

/// An answer of the web server.
struct WebResponse {
    var status: Int
    /// Header names lowercased; a repeated header keeps its last value.
    var headers: [String: String]
    var setCookies: [String]
    var body: Data

    var text: String { String(decoding: body, as: UTF8.self) }
    /// The body as a JSON object (nil when it is not one).
    var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
    /// The body as a JSON array.
    var jsonArray: [[String: Any]]? { (try? JSONSerialization.jsonObject(with: body)) as? [[String: Any]] }
    /// An error answer's code.
    var code: String? { json?["code"] as? String }

    /// The session token a `Set-Cookie` carried.
    var sessionToken: String? {
        for cookie in setCookies where cookie.hasPrefix("tresor_session=") {
            return String(cookie.dropFirst("tresor_session=".count).prefix { $0 != ";" })
        }
        return nil
    }
}

/// The web server of a test daemon.
struct WebServerAddress {
    let port: Int
    /// The address the server listens on.
    var address = "127.0.0.1"
    /// The origin a reverse proxy serves it as: requests name it in `Host` and `Origin`.
    var publicOrigin: String?
    /// The local address requests leave from (another loopback address plays a proxy).
    var source: String?
    var origin: String { publicOrigin ?? "http://\(address):\(port)" }

    /// One request on a fresh connection (`Connection: close`), exactly as given.
    func send(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: Data? = nil, host: String? = nil
    ) throws -> WebResponse {
        let fd = try connect()
        defer { close(fd) }
        write(requestBytes(method, target, headers: headers, body: body, host: host), to: fd)
        return try Self.parse(Self.readAll(fd))
    }

    /// Requests sent together, each on its own connection: every connection is opened and
    /// every request written before any answer is read, so the server has them all at once.
    func sendTogether(_ requests: [(method: String, target: String, headers: [(String, String)], body: Data?)]) throws -> [WebResponse] {
        let fds = try requests.map { _ in try connect() }
        defer { fds.forEach { close($0) } }
        for (fd, request) in zip(fds, requests) {
            write(requestBytes(request.method, request.target, headers: request.headers, body: request.body, host: nil), to: fd)
        }
        return try fds.map { try Self.parse(Self.readAll($0)) }
    }

    /// A TCP connection to the server (answers awaited up to 60 s, writes up to 5 s).
    func connect() throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw WebTestError.socket("socket") }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // A server that answered early (413) may stop reading: give up writing after a while.
        var sendTimeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            guard bound else {
                close(fd)
                throw WebTestError.socket("bind \(source)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(self.address)
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            close(fd)
            throw WebTestError.socket("connect")
        }
        return fd
    }

    func requestBytes(_ method: String, _ target: String, headers: [(String, String)], body: Data?, host: String?) -> Data {
        let ownHost = origin.split(separator: "://", maxSplits: 1).last.map(String.init) ?? ""
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(host ?? ownHost)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        var request = Data(head.utf8)
        if let body { request.append(body) }
        return request
    }

    /// Writes `request`, stopping early once the server has answered (413 before the body).
    func write(_ request: Data, to fd: Int32) {
        var offset = 0
        while offset < request.count {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 0) > 0 { break }
            let chunk = request[offset..<min(request.count, offset + 65536)]
            let written = chunk.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { break }
            offset += written
        }
    }

    /// Everything the server sends until it closes (or 60 s pass without a byte).
    static func readAll(_ fd: Int32) -> Data {
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return received
    }

    static func parse(_ data: Data) throws -> WebResponse {
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else { throw WebTestError.malformedResponse }
        let lines = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw WebTestError.malformedResponse }
        var headers: [String: String] = [:]
        var cookies: [String] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased(), value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = value
            if name == "set-cookie" { cookies.append(value) }
        }
        var body = Data(data[end.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = try dechunk(body) }
        return WebResponse(status: status, headers: headers, setCookies: cookies, body: body)
    }

    static func dechunk(_ data: Data) throws -> Data {
        var result = Data(), rest = data[...]
        while let lineEnd = rest.range(of: Data("\r\n".utf8)) {
            guard let size = Int(String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";")[0], radix: 16) else {
                throw WebTestError.malformedResponse
            }
            if size == 0 { break }
            let start = lineEnd.upperBound
            guard rest.distance(from: start, to: rest.endIndex) >= size else { throw WebTestError.malformedResponse }
            result.append(rest[start..<rest.index(start, offsetBy: size)])
            rest = rest[rest.index(start, offsetBy: size + 2)...]
        }
        return result
    }
}

/// A signed-in (or not yet signed-in) browser: its session cookie, origin token and CSRF
/// token, sent with every request as Tresor's page would (the origin token on every request,
/// same-origin `Origin` and the CSRF token on every non-GET).
struct WebBrowser {
    let server: WebServerAddress
    var token: String?
    /// What the page keeps in its origin's storage (docs/WEB.md, "The origin token").
    var originToken: String?
    var csrf: String?
    var account: [String: Any]?
    /// The `User-Agent` sent with every request; none when nil.
    var userAgent: String?

    init(_ server: WebServerAddress) { self.server = server }

    var accountID: String? { account?["id"] as? String }

    func request(
        _ method: String, _ path: String, json: Any? = nil, raw: Data? = nil, headers extra: [(String, String)] = [],
        csrf useCSRF: Bool = true, origin: String? = nil
    ) throws -> WebResponse {
        var headers: [(String, String)] = [("Accept", "application/json")]
        if let userAgent { headers.append(("User-Agent", userAgent)) }
        if let token { headers.append(("Cookie", "tresor_session=\(token)")) }
        if let originToken { headers.append(("X-Tresor-Origin-Token", originToken)) }
        if method != "GET" && method != "HEAD" {
            headers.append(("Origin", origin ?? server.origin))
            if useCSRF, let csrf { headers.append(("X-Tresor-CSRF", csrf)) }
        }
        var body = raw
        if let json {
            body = try JSONSerialization.data(withJSONObject: json)
            headers.append(("Content-Type", "application/json"))
        } else if raw != nil {
            headers.append(("Content-Type", "application/octet-stream"))
        }
        return try server.send(method, path, headers: headers + extra, body: body)
    }

    func get(_ path: String) throws -> WebResponse { try request("GET", path) }
    func post(_ path: String, _ json: Any) throws -> WebResponse { try request("POST", path, json: json) }
    func patch(_ path: String, _ json: Any) throws -> WebResponse { try request("PATCH", path, json: json) }
    func put(_ path: String, _ json: Any) throws -> WebResponse { try request("PUT", path, json: json) }
    func delete(_ path: String) throws -> WebResponse { try request("DELETE", path) }

    /// Registers (password typed twice) and keeps the session.
    @discardableResult
    mutating func register(_ name: String, _ password: String) throws -> WebResponse {
        let response = try post("/api/accounts", ["name": name, "password": password, "passwordAgain": password])
        adopt(response)
        return response
    }

    @discardableResult
    mutating func signIn(_ name: String, _ password: String) throws -> WebResponse {
        let response = try post("/api/session", ["name": name, "password": password])
        adopt(response)
        return response
    }

    /// Sets a forgotten password with the owner's reset code (typed twice), and keeps the session.
    @discardableResult
    mutating func resetPassword(_ name: String, code: String, _ password: String) throws -> WebResponse {
        let response = try post("/api/account/password-reset", ["name": name, "code": code, "newPassword": password, "newPasswordAgain": password])
        adopt(response)
        return response
    }

    private mutating func adopt(_ response: WebResponse) {
        guard (200..<300).contains(response.status) else { return }
        token = response.sessionToken
        originToken = response.json?["originToken"] as? String
        csrf = response.json?["csrfToken"] as? String
        account = response.json?["account"] as? [String: Any]
    }

    /// A browser registered as `name` on `server` with a new password; the password and the
    /// session's tokens are handed to `declare`, which declares them secret.
    /// - Parameters:
    ///   - name: the account's name.
    ///   - server: the web server.
    ///   - declare: what the secret scan is told of each secret.
    /// - Returns: the signed-in browser and the account's password.
    static func registered(
        _ name: String, on server: WebServerAddress, declaring declare: (String) -> Void
    ) throws -> (browser: WebBrowser, password: String) {
        let password = "e2e-\(name)-password-\(UUID().uuidString.prefix(8))"
        declare(password)
        var browser = WebBrowser(server)
        let answer = try browser.register(name, password)
        #expect(answer.status == 201, "register \(name): \(answer.status) \(answer.text)")
        [browser.token, browser.originToken].compactMap { $0 }.forEach(declare)
        return (browser, password)
    }

    /// ``registered(_:on:declaring:)`` with `harness`'s secret scan.
    static func registered(_ name: String, on server: WebServerAddress, _ harness: Harness) throws -> (browser: WebBrowser, password: String) {
        try registered(name, on: server) { harness.secrets.append($0) }
    }

    /// Creates a note; returns its id.
    func createNote(title: String, body: String, extra: [String: Any] = [:]) throws -> String {
        let response = try post("/api/notes", ["title": title, "body": body].merging(extra) { $1 })
        #expect(response.status == 201, "create: \(response.text)")
        return try #require(response.json?["id"] as? String)
    }
}

/// The security headers docs/WEB.md puts on every response.
func expectSecurityHeaders(_ response: WebResponse, api: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
    let csp = response.headers["content-security-policy"] ?? ""
    #expect(
        csp.contains("default-src 'self'") && csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'")
            && csp.contains("object-src 'none'") && !csp.contains("unsafe-inline"), "CSP: \(csp)", sourceLocation: sourceLocation)
    #expect(response.headers["x-content-type-options"] == "nosniff", sourceLocation: sourceLocation)
    #expect(response.headers["referrer-policy"] == "no-referrer", sourceLocation: sourceLocation)
    #expect(response.headers["x-frame-options"] == "DENY", sourceLocation: sourceLocation)
    if api { #expect(response.headers["cache-control"] == "no-store", sourceLocation: sourceLocation) }
}
