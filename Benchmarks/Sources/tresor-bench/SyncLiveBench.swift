import Foundation
import Glibc
import TresorKit
import TresorModel
import TresorSystem

/// A change on one device visible on the other (BENCHMARKS.md, "Sync"): two server instances on
/// one throwaway PostgreSQL (fsync on), each behind its own port of one nginx, and two device
/// homes with their own release `tresord`, the laptop on the first instance and the phone on the
/// second, joined to the sync account and syncing by themselves (docs/SYNC.md, "Background
/// sync") — the change crosses the server's event bus. Each change is a synchronizable item added
/// on the laptop through TresorKit, timed from before the add until the phone's daemon returns
/// its secret (polled every 2 ms), one change at a time.
struct SyncLiveBench {
    static let service = "sync.bench.example"
    /// Changes made first and not counted (connections, caches).
    static let warmUp = 3

    let binDirectory: URL
    let changes: Int

    func run() throws -> [String: Any] {
        guard PostgresServer.binDirectory != nil else { return ["skipped": "PostgreSQL not installed (Debian: postgresql)"] }
        guard FileManager.default.isExecutableFile(atPath: SyncBenchServer.nginx) else { return ["skipped": "nginx not installed (Debian: nginx)"] }
        let work = try makeTemporaryFolder("tresor-bench-sync")
        defer { try? FileManager.default.removeItem(at: work) }
        let server = try SyncBenchServer(work: work, binDirectory: binDirectory, instances: 2, behindNginx: true)
        defer { server.finish() }
        let laptop = try server.device("laptop"), phone = try server.device("phone")
        defer {
            laptop.stop()
            phone.stop()
        }
        try server.joinFirst(laptop, origin: server.origins[0])
        try server.join(phone, approvedBy: laptop, origin: server.origins[1])
        let deadline = Date().addingTimeInterval(30)
        while try ![laptop, phone].allSatisfy({ try server.cli($0, ["sync", "status"])["live"] as? Bool == true }) {
            guard Date() < deadline else { throw BenchError("the devices' live streams did not open") }
            usleep(100_000)
        }

        let writer = TresorKit.Keychain(client: try TresorClient.connect(paths: laptop.paths, startDaemon: false))
        let reader = TresorKit.Keychain(client: try TresorClient.connect(paths: phone.paths, startDaemon: false))
        var samples: [Double] = []
        let loadStart = loadAverage()
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
            "changes": changes, "visible_on_other_device": summary(samples), "load_start": loadStart, "load_end": loadAverage(),
            "setup":
                "2 server instances on one PostgreSQL (fsync on), each behind its own port of one nginx; laptop on the first, phone on the second; loopback http",
        ]
    }
}
