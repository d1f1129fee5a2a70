import Foundation
import Glibc
import TresorKeybag
import TresorKeychain
import TresorKit
import TresorModel
import TresorNotes
import TresorProtocol

/// A whole keychain's sync (BENCHMARKS.md, "Sync"): one server instance on a throwaway PostgreSQL
/// (fsync on); a laptop home holding `items` synchronizable generic passwords and `notes` notes,
/// filled in-process, joins the account and sends them all in its first sync (the seeding); then,
/// each device's daemon syncing only when asked (`--no-background-sync`), with `tresor sync now`
/// (only the CLI may ask the daemon for a sync), timed as a process:
/// - a new device's first sync (the phone joins, is approved, and syncs to up to date), with its
///   daemon's peak RSS (`VmHWM`, reset before);
/// - syncs with nothing to do, with the server side's CPU per sync (the instance's and
///   PostgreSQL's, from `/proc`);
/// - `changes` items updated on the laptop and sent, then applied by the phone's sync (timed);
/// - `tresor sync remove` of the phone from the laptop: the revocation and its key roll.
/// Beside them, with `peers`, Benchmarks/sync-peers.sh: `git clone` of a `pass` store of as many
/// entries and `keepassxc-cli merge` of as many changes.
struct SyncScaleBench {
    static let service = "sync.scale.example"

    let binDirectory: URL
    let items: Int
    let notes: Int
    let changes: Int
    let idleSyncs: Int
    let rounds: Int
    let peers: Bool

    func run() throws -> [String: Any] {
        guard PostgresServer.binDirectory != nil else { return ["skipped": "PostgreSQL not installed (Debian: postgresql)"] }
        let work = try makeTemporaryFolder("tresor-bench-sync-scale")
        defer { try? FileManager.default.removeItem(at: work) }
        let server = try SyncBenchServer(work: work, binDirectory: binDirectory)
        defer { server.finish() }
        var result: [String: Any] = ["items": items, "notes": notes, "changes": changes, "load_start": loadAverage()]
        defer { log("sync scale \(items): load average at the end \(loadAverage())") }

        let fillStart = nowNanos()
        let laptop = try server.device("laptop", arguments: ["--no-background-sync"], prepare: fill)
        defer { laptop.stop() }
        result["fill_seconds"] = Double(nowNanos() - fillStart) / 1e9
        log("sync scale \(items): laptop filled with \(items) items and \(notes) notes")
        try server.joinFirst(laptop)
        // The seeding: the laptop's first sync records every item and sends it (as many syncs as
        // it takes, should one not send everything).
        var syncs = 0, pushed = 0
        let seeded = try laptop.measure {
            var answer = try server.cli(laptop, ["sync", "now"])
            syncs = 1
            pushed = answer["pushed"] as? Int ?? 0
            while answer["pushed"] as? Int ?? 0 > 0 && syncs < 1000 {
                answer = try server.cli(laptop, ["sync", "now"])
                syncs += 1
                pushed += answer["pushed"] as? Int ?? 0
            }
        }
        result["seeding"] = seeded.merging(["syncs": syncs, "pushed": pushed] as [String: Any]) { $1 }
        log("sync scale \(items): seeded by the laptop in \(Int(seeded["seconds"] as? Double ?? 0)) s (\(syncs) syncs, \(pushed) pushed)")
        result["server_database_bytes"] = server.postgres.databaseBytes("bench_sync")

        // A new device's first sync, `rounds` devices one after the other.
        var firstSyncs: [[String: Any]] = []
        var phone: BenchHome?
        for round in 0..<rounds {
            let device = try server.device("phone-\(round)", arguments: ["--no-background-sync"])
            try server.join(device, approvedBy: laptop)
            // Profiling hook (Benchmarks/profile.sh sync-first): names the daemons of the first
            // new device's sync and gives perf time to attach.
            if round == 0, ProcessInfo.processInfo.environment["TRESOR_BENCH_PROFILE_SYNC"] != nil {
                log("profile: first sync device pid \(device.pid ?? 0) server pid \(server.instances.first?.pid ?? 0)")
                Thread.sleep(forTimeInterval: 3)
            }
            var answer: [String: Any] = [:]
            // Beside the wall time, the CPU each side spent on it: the device's daemon, the
            // server instance and PostgreSQL — how far each is from the whole.
            let serverBefore = server.cpuMs(), deviceBefore = cpuMs(of: device.pid ?? 0)
            var figures = try device.measure { answer = try server.cli(device, ["sync", "now"]) }
            let serverAfter = server.cpuMs()
            figures["device_daemon_cpu_s"] = (cpuMs(of: device.pid ?? 0) - deviceBefore) / 1000
            figures["server_instance_cpu_s"] = (serverAfter.instances - serverBefore.instances) / 1000
            figures["server_postgres_cpu_s"] = (serverAfter.postgres - serverBefore.postgres) / 1000
            let applied = answer["applied"] as? Int ?? 0, notesApplied = (answer["notes"] as? [String: Any])?["applied"] as? Int ?? 0
            figures["applied"] = applied
            figures["notes_applied"] = notesApplied
            figures["peak_rss_MB"] = Double(memory(of: device.pid ?? 0).hwmKB) / 1024
            figures["complete"] = applied == items && notesApplied >= notes
            firstSyncs.append(figures)
            log("sync scale \(items): a new device's first sync \(figures)")
            if round == rounds - 1 {
                phone = device
            } else {
                device.stop()
            }
        }
        result["first_sync"] = firstSyncs
        guard let phone else { throw BenchError("no device") }
        defer { phone.stop() }
        // Syncs with nothing to do.
        try server.cli(phone, ["sync", "now"])
        var idle: [Double] = []
        let cpuBefore = server.cpuMs()
        let deviceCPUBefore = cpuMs(of: phone.pid ?? 0)
        for _ in 0..<idleSyncs {
            idle.append(try timeMs { try server.cli(phone, ["sync", "now"]) })
        }
        let cpuAfter = server.cpuMs()
        result["idle_sync"] = summary(idle)
        result["idle_sync_server_cpu_ms"] = [
            "instance": (cpuAfter.instances - cpuBefore.instances) / Double(idleSyncs),
            "postgres": (cpuAfter.postgres - cpuBefore.postgres) / Double(idleSyncs),
        ]
        result["idle_sync_device_cpu_ms"] = (cpuMs(of: phone.pid ?? 0) - deviceCPUBefore) / Double(idleSyncs)
        var status: [Double] = []
        for _ in 0..<idleSyncs { status.append(try timeMs { try server.cli(phone, ["sync", "status"]) }) }
        // The client's floor: a `tresor sync status` process, answered from the home.
        result["sync_status_process"] = summary(status)
        // Profiling hook (Benchmarks/profile.sh sync): TRESOR_BENCH_PROFILE=N runs N more idle
        // syncs, not counted, after a 3 s pause in which perf attaches to the pids logged.
        if let more = ProcessInfo.processInfo.environment["TRESOR_BENCH_PROFILE"].flatMap(Int.init) {
            log("profile: server pid \(server.instances[0].pid ?? 0), device pid \(phone.pid ?? 0), \(more) idle syncs in 3 s")
            Thread.sleep(forTimeInterval: 3)
            let start = nowNanos()
            for _ in 0..<more { try server.cli(phone, ["sync", "now"]) }
            log("profile: idle syncs done in \((nowNanos() - start) / 1_000_000) ms")
        }

        // `changes` items changed on the laptop, sent, then applied by the phone.
        let writer = TresorKit.Keychain(client: try client(laptop))
        var applies: [Double] = [], pushes: [Double] = [], appliedCounts: [Int] = []
        for round in 0..<rounds {
            for index in 0..<changes {
                var query = ItemQuery.genericPassword(service: Self.service, account: "account-\((round * changes + index) % items)")
                query.attributes.synchronizable = true
                _ = try writer.update(query, secret: Data("changed \(round) \(index) \(UUID().uuidString)".utf8))
            }
            var pushed: [String: Any] = [:]
            pushes.append(try timeMs { pushed = try server.cli(laptop, ["sync", "now"]) })
            if pushed["pushed"] as? Int != changes { log("sync scale \(items): the laptop sent \(pushed["pushed"] ?? 0) of \(changes) changes") }
            var applied: [String: Any] = [:]
            applies.append(try timeMs { applied = try server.cli(phone, ["sync", "now"]) })
            appliedCounts.append(applied["applied"] as? Int ?? 0)
        }
        result["apply_changes"] = summary(applies)
        result["apply_changes_applied"] = appliedCounts
        result["push_changes"] = summary(pushes)
        log("sync scale \(items): \(changes) changes applied p50 \(summary(applies)["p50_ms"] ?? 0) ms")

        // The revocation: the server refuses the phone, the laptop signs the list without it
        // and shares the new epoch's key (docs/SYNC.md, "Devices").
        result["remove_device_ms"] = try timeMs {
            try server.cli(laptop, ["sync", "remove", phone.home.lastPathComponent, "--passcode-stdin"], stdin: SyncBenchServer.passcode + "\n")
        }

        result["load_before_peers"] = loadAverage()
        if peers {
            result["peers"] = try peerFigures(work: work)
        }
        result["load_end"] = loadAverage()
        return result
    }

    /// The laptop's keybag, `items` synchronizable generic passwords in the app's group and
    /// `notes` notes of about 500 bytes, in-process with the daemon stopped.
    func fill(_ home: BenchHome) throws {
        let keybag = try Keybag.create(paths: home.paths, passcode: try Passcode(SyncBenchServer.passcode))
        let keychain = try KeychainStore(file: home.paths.loginKeychain, keybag: keybag)
        let app = Caller(accessGroups: [SyncBenchServer.appID], defaultAccessGroup: SyncBenchServer.appID)
        for index in 0..<items {
            var attributes = ItemAttributes()
            attributes.service = Self.service
            attributes.account = "account-\(index)"
            attributes.label = "Sync bench item \(index)"
            attributes.synchronizable = true
            try keychain.add(.genericPassword, attributes: attributes, secret: Data("secret-\(index)-\(UUID().uuidString)".utf8), caller: app)
        }
        let store = try NotesStore(paths: home.paths, keybag: keybag)
        for index in 0..<notes {
            _ = try store.createNote(NoteDraft(title: "Sync bench note \(index)", body: String(repeating: "Note \(index) body line. ", count: 20)))
        }
    }

    func client(_ home: BenchHome) throws -> TresorClient {
        try TresorClient.connect(paths: home.paths, startDaemon: false, timeout: .seconds(3600))
    }

    /// Benchmarks/sync-peers.sh for as many entries and changes (its JSON).
    func peerFigures(work: URL) throws -> [String: Any] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("sync-peers.sh").path
        let output = work.appendingPathComponent("peers.json").path
        log("sync peers: pass through git and keepassxc-cli merge, \(items + notes) entries")
        try Child.run(
            ["/bin/bash", "-c", "'\(script)' '\(work.path)/peers' \(items + notes) \(changes) \(rounds) > '\(output)' 2> '\(output).log'"],
            environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C.UTF-8"])
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        return (try JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }
}
