import Foundation

#if canImport(Glibc)
import Glibc
#endif

// tresor-bench: Tresor's side of the performance harness (BENCHMARKS.md).
//
//   tresor-bench --bin DIR --out FILE [--smoke] [--counts 1000,10000,100000]
//                [--notes 10000] [--notes-bytes 1000000000] [--only keychain|notes|secret-service|backup]
//                [--ss-counts 1000,10000,100000]
//                [--web-accounts 10000,1000] [--web-notes 100] [--web-seconds 10] [--web-configs sqlite-1,postgres-1,postgres-2]
//                [--sync-counts 10000,100000 | --large] [--sync-parts live,scale] [--no-peers]
//   tresor-bench ss-client --name NAME --items N --out FILE [--smoke]   (SecretServiceBench.swift)
//
// DIR holds the release `tresor` and `tresord`. Writes one JSON object to FILE. Run through
// `scripts/bench`, which also runs the peers and writes the table.

setvbuf(stdout, nil, _IOLBF, 0)
var arguments = Array(CommandLine.arguments.dropFirst())
// The Secret Service client, the same for every provider (SecretServiceBench.swift; run by
// this harness against tresord and by Benchmarks/peers.sh against gnome-keyring and KeePassXC).
if arguments.first == "ss-client" { exit(SecretServiceClientBench.main(Array(arguments.dropFirst()))) }
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
let smoke = arguments.contains("--smoke")
// The soak (SoakBench.swift): tresor-bench soak --bin DIR --out FILE [--seconds S] [--kill-every S] [--seed N]
if arguments.first == "soak", let bin = option("--bin"), let out = option("--out") {
    let seconds = Double(option("--seconds") ?? "") ?? 600
    let bench = SoakBench(
        binDirectory: URL(fileURLWithPath: bin), seconds: seconds, killEvery: Double(option("--kill-every") ?? "") ?? max(20, seconds / 5),
        seed: UInt64(option("--seed") ?? "") ?? UInt64.random(in: 1...UInt64.max))
    var soak: [String: Any]
    do { soak = try bench.run() } catch { soak = ["error": "\(error)"] }
    try JSONSerialization.data(withJSONObject: ["soak": soak], options: [.prettyPrinted, .sortedKeys]).write(to: URL(fileURLWithPath: out))
    let passed = (soak["checks"] as? [String: Bool])?.values.allSatisfy { $0 } ?? false
    log("soak: \(passed ? "every check passed" : "a check failed"): \(soak["checks"] ?? soak["error"] ?? "")")
    exit(passed ? 0 : 1)
}
guard let bin = option("--bin"), let out = option("--out") else {
    log(
        "usage: tresor-bench --bin DIR --out FILE [--smoke] [--counts N,N,…] [--notes N] [--notes-bytes B] [--only keychain|notes|secret-service|backup|web|sync] [--ss-counts N,N,…] [--web-accounts N,N] [--web-notes N] [--web-seconds S] [--web-configs …]"
    )
    exit(2)
}
let counts = (option("--counts") ?? (smoke ? "200,1000" : "1000,10000,100000")).split(separator: ",").compactMap { Int($0) }
let noteCount = Int(option("--notes") ?? (smoke ? "100" : "10000"))!
let noteBytes = Int(option("--notes-bytes") ?? (smoke ? "1000000" : "1000000000"))!
let secretServiceCounts = (option("--ss-counts") ?? (smoke ? "50,200" : "1000,10000,100000")).split(separator: ",").compactMap { Int($0) }
let only = option("--only")
// The sync scenarios' counts (BENCHMARKS.md, "Sync"): 10,000 items + 10,000 notes, and 100,000
// items with --large (about 10 minutes more here); their peers unless --no-peers.
let syncCounts = (option("--sync-counts") ?? (smoke ? "200" : arguments.contains("--large") ? "10000,100000" : "10000"))
    .split(separator: ",").compactMap { Int($0) }
let syncPeers = !arguments.contains("--no-peers")
let syncParts = (option("--sync-parts") ?? "live,scale").split(separator: ",").map(String.init)

var result: [String: Any] = [
    "smoke": smoke,
    "started": ISO8601DateFormatter().string(from: Date()),
]
do {
    if only == nil || only == "notes" {
        let start = nowNanos()
        result["notes"] = try NotesBench(smoke: smoke, noteCount: noteCount, totalBytes: noteBytes).run()
        log("notes scenarios: \(Int(Double(nowNanos() - start) / 1e9)) s")
    }
    if only == nil || only == "keychain" {
        let start = nowNanos()
        let bench = try KeychainBench(binDirectory: URL(fileURLWithPath: bin), counts: counts, smoke: smoke)
        log("transport floors: bare socket, SwiftNIO HTTP/1, Hummingbird")
        result["transport"] = try TransportBench(binDirectory: URL(fileURLWithPath: bin), work: bench.work, requests: smoke ? 200 : 5000).floors()
        result["wire_coding"] = try WireCodingBench(repetitions: smoke ? 2000 : 20000).run()
        result["keychain"] = try bench.run { partial in
            // written after every item count, so a long run that dies keeps what it measured
            var snapshot = result
            snapshot["keychain"] = partial
            snapshot["partial"] = true
            if let json = try? JSONSerialization.data(withJSONObject: snapshot, options: [.prettyPrinted, .sortedKeys]) {
                try? json.write(to: URL(fileURLWithPath: out))
            }
        }
        log("keychain scenarios: \(Int(Double(nowNanos() - start) / 1e9)) s")
    }
    if only == nil || only == "backup" {
        let start = nowNanos()
        result["backup"] = try BackupBench(binDirectory: URL(fileURLWithPath: bin), smoke: smoke).run()
        log("backup scenarios: \(Int(Double(nowNanos() - start) / 1e9)) s")
    }
    if only == nil || only == "secret-service" {
        let start = nowNanos()
        let secretService = try SecretServiceBench(binDirectory: URL(fileURLWithPath: bin), counts: secretServiceCounts, smoke: smoke).run()
        result["secret_service"] = secretService
        if let error = secretService["error"] { throw BenchError("secret service: \(error)") }
        log("secret service scenarios: \(Int(Double(nowNanos() - start) / 1e9)) s")
    }
    if only == nil || only == "web" {
        let start = nowNanos()
        // Scales: the issue's 10,000 accounts × 100 notes and a tenth of it, unless given
        // (BENCHMARKS.md, "Web server" says which ran).
        let bench = WebBench(
            binDirectory: URL(fileURLWithPath: bin), smoke: smoke,
            accountCounts: option("--web-accounts").map { $0.split(separator: ",").compactMap { Int($0) } },
            notesPerAccount: option("--web-notes").flatMap { Int($0) }, seconds: option("--web-seconds").flatMap { Double($0) },
            configs: option("--web-configs").map { $0.split(separator: ",").map(String.init) })
        result["web"] = try bench.run()
        log("web scenarios: \(Int(Double(nowNanos() - start) / 1e9)) s")
    }
    if only == nil || only == "sync" {
        let start = nowNanos()
        var sync: [String: Any] = [:]
        if syncParts.contains("live") {
            sync["live"] = try SyncLiveBench(binDirectory: URL(fileURLWithPath: bin), changes: smoke ? 10 : 50).run()
            log("sync live scenario: \(Int(Double(nowNanos() - start) / 1e9)) s")
        }
        // The whole keychain's sync at each count (10,000 items + 10,000 notes; 100,000 items
        // with --large); the peers beside the first count.
        var scales: [[String: Any]] = []
        for (index, count) in syncCounts.enumerated() where syncParts.contains("scale") {
            let scaleStart = nowNanos()
            let bench = SyncScaleBench(
                binDirectory: URL(fileURLWithPath: bin), items: count, notes: count <= 10_000 ? count : 0, changes: smoke ? 10 : 100,
                idleSyncs: smoke ? 5 : 30, rounds: smoke || count > 10_000 ? 1 : 3, peers: syncPeers && index == 0)
            var scale: [String: Any]
            do { scale = try bench.run() } catch { scale = ["items": count, "error": "\(error)"] }
            scales.append(scale)
            result["sync"] = sync.merging(["scales": scales] as [String: Any]) { $1 }
            log("sync scale \(count): \(Int(Double(nowNanos() - scaleStart) / 1e9)) s")
        }
        sync["scales"] = scales
        result["sync"] = sync
        if let failed = scales.first(where: { $0["error"] != nil }) { throw BenchError("sync scale: \(failed["error"] ?? "")") }
    }
} catch {
    log("failed: \(error)")
    result["error"] = "\(error)"
}
result["finished"] = ISO8601DateFormatter().string(from: Date())
let json = try JSONSerialization.data(withJSONObject: result, options: [.prettyPrinted, .sortedKeys])
try json.write(to: URL(fileURLWithPath: out))
exit(result["error"] == nil ? 0 : 1)
