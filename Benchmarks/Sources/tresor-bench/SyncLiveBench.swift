import Foundation
import Glibc
import TresorKit
import TresorModel
import TresorSystem

/// A change on one device visible on the other (BENCHMARKS.md, "Sync"): one server instance on a
/// throwaway PostgreSQL (fsync on), two device homes with their own release `tresord`, joined to
/// its sync account and syncing by themselves (docs/SYNC.md, "Background sync"). Each change is
/// a synchronizable item added on the laptop through TresorKit, timed from before the add until
/// the phone's daemon returns its secret (polled every 2 ms), one change at a time.
struct SyncLiveBench {
    static let passcode = "bench sync passcode"
    static let appID = "BENCH.sync"
    static let webName = "syncbench", webPassword = "bench sync web password 1"
    static let service = "sync.bench.example"
    /// Changes made first and not counted (connections, caches).
    static let warmUp = 3

    let binDirectory: URL
    let changes: Int

    func run() throws -> [String: Any] {
        guard let pgBin = PostgresServer.binDirectory else { return ["skipped": "PostgreSQL not installed (Debian: postgresql)"] }
        let work = try makeTemporaryFolder("tresor-bench-sync")
        defer { try? FileManager.default.removeItem(at: work) }
        let postgres = try PostgresServer(bin: pgBin)
        defer { postgres.finish() }
        try postgres.start(seeding: false)
        try postgres.createDatabase("bench_sync")

        let keyFile = work.appendingPathComponent("server.key")
        let key = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
        guard FileManager.default.createFile(atPath: keyFile.path, contents: key, attributes: [.posixPermissions: 0o600]) else {
            throw BenchError("cannot write \(keyFile.path)")
        }
        let server = try BenchHome(work: work, name: "server", binDirectory: binDirectory)
        try SecureFiles.createDirectory(server.home)
        try SecureFiles.writeAtomically(Data(#"{"webRegistration": "open"}"#.utf8), to: server.paths.config)
        let port = try freeLoopbackPort()
        server.extraArguments = ["--web", "\(port)", "--database", postgres.url("bench_sync"), "--server-key-file", keyFile.path]
        try server.start()
        defer { server.stop() }
        try waitForPort(port, seconds: 20, log: server.log)
        let registration = try JSONSerialization.data(withJSONObject: [
            "name": Self.webName, "password": Self.webPassword, "passwordAgain": Self.webPassword,
        ])
        let registered = try HTTPConnection(port: port).send(
            "POST", "/api/accounts", headers: [("Origin", "http://127.0.0.1:\(port)"), ("Content-Type", "application/json")],
            body: Array(registration))
        guard registered.status == 201 else { throw BenchError("web registration answered \(registered.status)") }

        let laptop = try device("laptop", work: work), phone = try device("phone", work: work)
        defer {
            laptop.stop()
            phone.stop()
        }
        let origin = "http://127.0.0.1:\(port)"
        _ = try cli(
            laptop, ["sync", "join", origin, "--account", Self.webName, "--password-stdin", "--device-name", "laptop", "--no-wait"],
            stdin: Self.webPassword + "\n", work: work)
        let asked = try cli(
            phone, ["sync", "join", origin, "--account", Self.webName, "--password-stdin", "--device-name", "phone", "--no-wait"],
            stdin: Self.webPassword + "\n", work: work)
        guard let request = asked["requestID"] as? String else { throw BenchError("the phone's join made no request") }
        _ = try cli(laptop, ["sync", "approve", request, "--passcode-stdin"], stdin: Self.passcode + "\n", work: work)
        _ = try cli(phone, ["sync", "join", origin, "--account", Self.webName, "--no-wait"], work: work)
        let deadline = Date().addingTimeInterval(30)
        while try ![laptop, phone].allSatisfy({ try cli($0, ["sync", "status"], work: work)["live"] as? Bool == true }) {
            guard Date() < deadline else { throw BenchError("the devices' live streams did not open") }
            usleep(100_000)
        }

        let writer = TresorKit.Keychain(client: try TresorClient.connect(paths: laptop.paths, startDaemon: false))
        let reader = TresorKit.Keychain(client: try TresorClient.connect(paths: phone.paths, startDaemon: false))
        var samples: [Double] = []
        for n in 0..<(Self.warmUp + changes) {
            var query = ItemQuery.genericPassword(service: Self.service, account: "change-\(n)")
            let start = nowNanos()
            _ = try writer.add(query, secret: Data("bench sync secret \(n)".utf8)) { $0.synchronizable = true }
            query.attributes.synchronizable = true
            while (try? reader.secret(query)) == nil {
                guard Double(nowNanos() - start) / 1e9 < 30 else { throw BenchError("change \(n) not on the phone within 30 s") }
                usleep(2_000)
            }
            if n >= Self.warmUp { samples.append(Double(nowNanos() - start) / 1e6) }
            usleep(50_000)  // one change at a time: the next one after both daemons went quiet
        }
        return [
            "changes": changes, "visible_on_other_device": summary(samples),
            "setup": "1 server instance on PostgreSQL (fsync on), 2 device homes with their own tresord, loopback http",
        ]
    }

    /// A device home: its daemon, its keybag, this executable registered as an app.
    func device(_ name: String, work: URL) throws -> BenchHome {
        let home = try BenchHome(work: work, name: name, binDirectory: binDirectory)
        try home.start()
        try TresorClient.connect(paths: home.paths, startDaemon: false).initialize(passcode: Self.passcode)
        let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        try Child.run(
            [home.tresor, "app", "register", "--home", home.home.path, "--id", Self.appID, "--team", "BENCH", "--exe", me, "--passcode-stdin"],
            environment: home.environment, stdin: Self.passcode + "\n", output: work.appendingPathComponent("\(name)-cli.log").path)
        return home
    }

    /// `tresor ARGUMENTS --json` on `home`, its answer decoded.
    func cli(_ home: BenchHome, _ arguments: [String], stdin: String? = nil, work: URL) throws -> [String: Any] {
        let output = work.appendingPathComponent("cli-\(UUID().uuidString).json").path
        try Child.run([home.tresor] + arguments + ["--json"], environment: home.environment, stdin: stdin, output: output)
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }
}
