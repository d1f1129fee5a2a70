import Foundation
import Glibc
import TresorKit
import TresorSystem

/// What the sync scenarios share (BENCHMARKS.md, "Sync"): a Tresor server — `instances` release
/// `tresord --web` on one throwaway PostgreSQL (fsync on) with the web account `syncbench`,
/// optionally each behind its own port of one Debian nginx — and device homes joined to it with
/// the `tresor` CLI, as a user does.
final class SyncBenchServer {
    static let passcode = "bench sync passcode"
    static let appID = "BENCH.sync"
    static let webName = "syncbench", webPassword = "bench sync web password 1"
    static let nginx = "/usr/sbin/nginx"

    let work: URL
    let binDirectory: URL
    let postgres: PostgresServer
    private(set) var instances: [BenchHome] = []
    /// Where devices reach each instance: the instance's own port, or nginx's port in front of it.
    private(set) var origins: [String] = []
    private var nginxProcess: Child?

    /// Starts PostgreSQL, the instances (and nginx), and registers the web account.
    /// - Parameters:
    ///   - instances: server instances on the one database.
    ///   - behindNginx: each instance behind its own nginx port (one nginx process).
    init(work: URL, binDirectory: URL, instances count: Int = 1, behindNginx: Bool = false) throws {
        guard let pgBin = PostgresServer.binDirectory else { throw BenchError("PostgreSQL not installed (Debian: postgresql)") }
        self.work = work
        self.binDirectory = binDirectory
        postgres = try PostgresServer(bin: pgBin)
        try postgres.start(seeding: false)
        try postgres.createDatabase("bench_sync")
        let keyFile = work.appendingPathComponent("server.key")
        let key = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
        guard FileManager.default.createFile(atPath: keyFile.path, contents: key, attributes: [.posixPermissions: 0o600]) else {
            throw BenchError("cannot write \(keyFile.path)")
        }
        // Behind nginx, each instance is told the origin devices use (`--public-origin`) and
        // trusts nginx's `X-Forwarded-For`, as docs/WEB.md's reverse proxy set-up has it.
        let ports = try (0..<count).map { _ in try freeLoopbackPort() }
        let front = behindNginx ? try ports.map { _ in try freeLoopbackPort() } : ports
        origins = front.map { "http://127.0.0.1:\($0)" }
        let configuration = behindNginx ? #"{"webRegistration": "open", "webTrustedProxies": ["127.0.0.1"]}"# : #"{"webRegistration": "open"}"#
        for index in 0..<count {
            let server = try BenchHome(work: work, name: "server-\(index)", binDirectory: binDirectory)
            try SecureFiles.createDirectory(server.home)
            try SecureFiles.writeAtomically(Data(configuration.utf8), to: server.paths.config)
            server.extraArguments =
                [
                    "--web", "\(ports[index])", "--database", postgres.url("bench_sync"), "--server-key-file", keyFile.path,
                ] + (behindNginx ? ["--public-origin", origins[index]] : [])
            try server.start()
            instances.append(server)
            try waitForPort(ports[index], seconds: 20, log: server.log)
        }
        if behindNginx { try startNginx(listening: front, upstreams: ports) }
        let registration = try JSONSerialization.data(withJSONObject: [
            "name": Self.webName, "password": Self.webPassword, "passwordAgain": Self.webPassword,
        ])
        let registered = try HTTPConnection(port: front[0]).send(
            "POST", "/api/accounts", headers: [("Origin", origins[0]), ("Content-Type", "application/json")], body: Array(registration))
        guard registered.status == 201 else { throw BenchError("web registration answered \(registered.status)") }
    }

    /// Stops nginx, the instances and PostgreSQL.
    func finish() {
        if let nginxProcess {
            kill(nginxProcess.pid, SIGKILL)
            nginxProcess.wait()
        }
        nginxProcess = nil
        instances.forEach { $0.stop() }
        postgres.finish()
    }

    /// The server side's CPU time so far: every instance's and PostgreSQL's, in milliseconds.
    func cpuMs() -> (instances: Double, postgres: Double) {
        (instances.compactMap(\.pid).reduce(0) { $0 + tresor_bench.cpuMs(of: $1) }, postgres.cpuMs())
    }

    /// One nginx (Debian's, single process) proxying `listening[i]` to `upstreams[i]`, with the
    /// proxy settings of `Support/nginx/tresor.conf` (docs/WEB.md) that Server-Sent Events need (no
    /// buffering, long reads).
    private func startNginx(listening: [Int], upstreams: [Int]) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.nginx) else { throw BenchError("nginx not installed (Debian: nginx)") }
        let dir = work.appendingPathComponent("nginx").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let servers = zip(listening, upstreams).map { port, upstream in
            """
                server {
                    listen 127.0.0.1:\(port);
                    client_max_body_size 64m;
                    keepalive_timeout 30s;
                    location / {
                        proxy_pass http://127.0.0.1:\(upstream);
                        proxy_http_version 1.1;
                        proxy_set_header Host $http_host;
                        proxy_set_header Connection "";
                        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                        proxy_buffering off;
                        proxy_read_timeout 1h;
                    }
                }
            """
        }.joined(separator: "\n")
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
            \(servers)
            }
            """
        let file = dir + "/nginx.conf"
        try Data(configuration.utf8).write(to: URL(fileURLWithPath: file))
        nginxProcess = try Child([Self.nginx, "-e", dir + "/error.log", "-c", file], environment: ["PATH": "/usr/sbin:/usr/bin:/bin"])
        for port in listening { try waitForPort(port, seconds: 15, log: dir + "/error.log") }
    }

    /// A device home with its daemon running (`arguments` added to `tresord`'s) and this
    /// executable registered as the app `BENCH.sync`.
    /// - Parameter prepare: fills the home in-process before its daemon starts (it makes the
    ///   keybag with ``passcode``); without it the keybag is initialised through the daemon.
    func device(_ name: String, arguments: [String] = [], prepare: ((BenchHome) throws -> Void)? = nil) throws -> BenchHome {
        let home = try BenchHome(work: work, name: name, binDirectory: binDirectory)
        home.extraArguments = arguments
        let log = work.appendingPathComponent("\(name)-cli.log").path
        if let prepare {
            try prepare(home)
            try home.start()
            try Child.run([home.tresor, "unlock", "--passcode-stdin"], environment: home.environment, stdin: Self.passcode + "\n", output: log)
        } else {
            try home.start()
            try TresorClient.connect(paths: home.paths, startDaemon: false).initialize(passcode: Self.passcode)
        }
        let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        try Child.run(
            [home.tresor, "app", "register", "--home", home.home.path, "--id", Self.appID, "--team", "BENCH", "--exe", me, "--passcode-stdin"],
            environment: home.environment, stdin: Self.passcode + "\n", output: log)
        return home
    }

    /// Joins `device` to the account as its first device: it makes the circle.
    func joinFirst(_ device: BenchHome, origin: String? = nil) throws {
        _ = try cli(
            device,
            [
                "sync", "join", origin ?? origins[0], "--account", Self.webName, "--password-stdin", "--device-name", device.home.lastPathComponent,
                "--no-wait",
            ],
            stdin: Self.webPassword + "\n")
    }

    /// Joins `device` to the account, approved by the trusted device `approver`.
    func join(_ device: BenchHome, approvedBy approver: BenchHome, origin: String? = nil) throws {
        let origin = origin ?? origins[0]
        let asked = try cli(
            device,
            ["sync", "join", origin, "--account", Self.webName, "--password-stdin", "--device-name", device.home.lastPathComponent, "--no-wait"],
            stdin: Self.webPassword + "\n")
        guard let request = asked["requestID"] as? String else { throw BenchError("\(device.home.lastPathComponent)'s join made no request") }
        try cli(approver, ["sync", "approve", request, "--passcode-stdin"], stdin: Self.passcode + "\n")
        try cli(device, ["sync", "join", origin, "--account", Self.webName, "--no-wait"])
    }

    /// `tresor ARGUMENTS --json` on `home`, its answer decoded.
    @discardableResult
    func cli(_ home: BenchHome, _ arguments: [String], stdin: String? = nil) throws -> [String: Any] {
        let output = work.appendingPathComponent("cli-\(UUID().uuidString).json").path
        do {
            try Child.run([home.tresor] + arguments + ["--json"], environment: home.environment, stdin: stdin, output: output)
        } catch {
            // The folder goes with the scenario: say what the command printed.
            let printed = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            throw BenchError("tresor \(arguments.prefix(2).joined(separator: " ")) failed: \(printed.prefix(500))")
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }
}
