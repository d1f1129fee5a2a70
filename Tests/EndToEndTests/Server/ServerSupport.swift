import Foundation
import Synchronization
import Testing
import TresorSystem
import TresorTestSupport

#if canImport(Glibc)
import Glibc
#endif

// The server tests' tools (docs/WEB.md, "Running a Tresor server"): real `tresord` instances,
// each on a home of its own, sharing one fresh database on the tests' throwaway PostgreSQL
// and one server key file; a reader of a page's live-update stream.

extension Harness {
    /// A server key file in the harness's root: `bytes` random bytes (32 for a good one) of
    /// `mode` (0600 for a good one).
    func writeServerKey(named name: String = "server.key", bytes: Int = 32, mode: Int = 0o600) throws -> URL {
        let file = root.appendingPathComponent(name)
        let key = Data((0..<bytes).map { _ in UInt8.random(in: 0...255) })
        guard FileManager.default.createFile(atPath: file.path, contents: key, attributes: [.posixPermissions: mode]) else {
            throw WebTestError.socket("cannot write \(file.path)")
        }
        return file
    }
}

/// `tresord` servers on one fresh PostgreSQL database, started at the same moment.
final class ServerInstances: @unchecked Sendable {
    static let passcode = "e2e-server-home-passcode"

    let databaseURL: String
    var databaseName: String { TestPostgres.databaseName(of: databaseURL) }
    let keyFile: URL
    let harnesses: [Harness]
    let servers: [WebServerAddress]

    /// - Parameters:
    ///   - count: how many instances.
    ///   - configuration: added to each home's `config.json` (registration is open).
    ///   - arguments: added to each `tresord`'s arguments.
    init(count: Int, configuration: [String: Any] = [:], arguments: [String] = []) async throws {
        databaseURL = try await TestPostgres.freshDatabase()
        harnesses = try (0..<count).map { _ in try Harness() }
        keyFile = try harnesses[0].writeServerKey()
        for harness in harnesses { try harness.mergeConfiguration(configuration) }
        let serverArguments = ["--database", databaseURL, "--server-key-file", keyFile.path] + arguments
        let started = Mutex<[Int: Result<WebServerAddress, any Error>]>([:])
        nonisolated(unsafe) let harnesses = self.harnesses
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let result = Result { try harnesses[index].startWebDaemon(passcode: Self.passcode, extraArguments: serverArguments) }
            started.withLock { $0[index] = result }
        }
        servers = try (0..<count).map { index in try started.withLock { $0[index]! }.get() }
    }

    /// The same signed-in session, sent to another instance.
    func browser(_ browser: WebBrowser, on server: WebServerAddress) -> WebBrowser {
        var moved = WebBrowser(server)
        moved.token = browser.token
        moved.originToken = browser.originToken
        moved.csrf = browser.csrf
        moved.account = browser.account
        return moved
    }

    /// Registers `name` through `server` and declares its password and tokens secret.
    func registered(_ name: String, on server: WebServerAddress) throws -> (browser: WebBrowser, password: String) {
        try WebBrowser.registered(name, on: server, declaring: declareSecret)
    }

    /// A value no instance may log or print.
    func declareSecret(_ value: String) {
        for harness in harnesses { harness.secrets.append(value) }
    }
}

/// A page's live-update stream (`GET /api/events`), read as it arrives.
final class EventStreamReader {
    private let fd: Int32
    private(set) var received = ""

    /// Opens the stream of `browser`'s session.
    init(_ browser: WebBrowser) throws {
        fd = try browser.server.connect()
        var headers: [(String, String)] = [("Accept", "text/event-stream")]
        if let token = browser.token { headers.append(("Cookie", "tresor_session=\(token)")) }
        if let originToken = browser.originToken { headers.append(("X-Tresor-Origin-Token", originToken)) }
        browser.server.write(browser.server.requestBytes("GET", "/api/events", headers: headers, body: nil, host: nil), to: fd)
    }

    /// Opens the stream at `path` of `server` with `headers` (a sync device's stream).
    init(_ server: WebServerAddress, path: String, headers: [(String, String)]) throws {
        fd = try server.connect()
        server.write(server.requestBytes("GET", path, headers: [("Accept", "text/event-stream")] + headers, body: nil, host: nil), to: fd)
    }

    deinit { close(fd) }

    /// Reads until `text` has arrived (since the stream opened), or `seconds` pass.
    /// - Returns: whether it arrived.
    func waitFor(_ text: String, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 16384)
        while !received.contains(text) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(left, 1) * 1000)) >= 0 else { return false }
            if poller.revents == 0 { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { return received.contains(text) }
            received += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        return true
    }
}

/// Debian's nginx as the load balancer in front of server instances, run by the test in a
/// directory of its own (one process, no daemon), as docs/WEB.md's configuration has it.
final class NginxBalancer {
    static let binary = "/usr/sbin/nginx"
    /// Whether the nginx test runs: nginx is installed, or CI requires it (and fails without it).
    static var shouldRun: Bool {
        FileManager.default.isExecutableFile(atPath: binary) || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    private let process = Process()
    let server: WebServerAddress

    /// Starts nginx on `port`, balancing over `upstreams`, and waits until it answers.
    /// - Parameters:
    ///   - port: where it listens (127.0.0.1).
    ///   - upstreams: the instances' ports.
    ///   - directory: for its configuration, temporary files and error log.
    ///   - tls: the PEM files of its certificate (chain) and key: it terminates TLS on `port`.
    ///   - locations: more `location` blocks, before the one that passes everything on.
    init(port: Int, upstreams: [Int], directory: URL, tls: (certificate: String, key: String)? = nil, locations: String = "") throws {
        let dir = directory.appendingPathComponent("nginx").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let configuration = """
            daemon off;
            master_process off;
            pid \(dir)/nginx.pid;
            error_log \(dir)/error.log;
            events { worker_connections 256; }
            http {
                access_log off;
                client_body_temp_path \(dir)/body;
                proxy_temp_path \(dir)/proxy;
                fastcgi_temp_path \(dir)/fastcgi;
                uwsgi_temp_path \(dir)/uwsgi;
                scgi_temp_path \(dir)/scgi;
                limit_conn_zone $binary_remote_addr zone=tresor_clients:10m;
                upstream tresor {
            \(upstreams.map { "        server 127.0.0.1:\($0);" }.joined(separator: "\n"))
                }
                server {
                    listen 127.0.0.1:\(port)\(tls == nil ? "" : " ssl");
            \(tls.map { "        ssl_certificate \($0.certificate);\n        ssl_certificate_key \($0.key);" } ?? "")
                    client_max_body_size 64m;
                    limit_conn tresor_clients 16;
                    limit_conn_status 429;
                    client_header_timeout 10s;
                    client_body_timeout 60s;
                    send_timeout 60s;
                    keepalive_timeout 30s;
            \(locations)
                    location / {
                        proxy_pass http://tresor;
                        proxy_http_version 1.1;
                        proxy_set_header Host $http_host;
                        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                        proxy_buffering off;
                        proxy_read_timeout 1h;
                    }
                }
            }
            """
        let file = dir + "/nginx.conf"
        try Data(configuration.utf8).write(to: URL(fileURLWithPath: file))
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["-e", dir + "/error.log", "-c", file]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        server = WebServerAddress(port: port)
        let deadline = Date().addingTimeInterval(15)
        // With TLS, plain HTTP gets nginx's 400: an answer all the same.
        while (try? server.send("GET", "/healthz")) == nil {
            guard process.isRunning, Date() < deadline else {
                let log = (try? String(contentsOfFile: dir + "/error.log", encoding: .utf8)) ?? ""
                throw WebTestError.socket("nginx did not start: \(log.suffix(2000))")
            }
            usleep(20_000)
        }
    }

    deinit {
        // SIGKILL: a single-process nginx keeps the signal mask it was started with, and the
        // test process's threads block SIGTERM.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilEnded()
        }
    }
}
