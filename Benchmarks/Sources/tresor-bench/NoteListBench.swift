import Foundation
import TresorKeybag
import TresorKit
import TresorNotes

extension KeychainBench {
    /// `tresor note list` over many notes, one process per listing, as a user runs it: the
    /// notes are added in-process with `NotesStore` while the daemon is stopped (2 KB bodies,
    /// one in ten in a folder), then a fresh daemon is started and unlocked. The process's wall
    /// time, and the daemon's CPU per listing (`/proc/PID/stat`).
    func noteListThroughDaemon() throws -> [String: Any] {
        let count = smoke ? 200 : 10_000
        log("notes: adding \(count) notes (in-process, daemon stopped)")
        do {
            let keybag = try Keybag.open(paths: paths)
            try keybag.unlock(passcode: try Passcode(Self.passcode))
            let store = try NotesStore(paths: paths, keybag: keybag, settings: .production)
            let body = String(repeating: "a line of a note's body\n", count: 2048 / 24)
            for i in 0..<count {
                _ = try store.createNote(NoteDraft(title: "note \(i)", body: body, folder: i % 10 == 0 ? "Folder \(i % 7)" : nil))
            }
        }
        let daemon = try startDaemon()
        defer { stopDaemon(daemon) }
        try TresorClient.connect(paths: paths, startDaemon: false).unlock(passcode: Self.passcode)
        let output = work.appendingPathComponent("note-list.txt")
        let list = { try Child.run([self.tresor, "note", "list", "--home", self.home.path], environment: self.environment, output: output.path) }
        try list()  // the first reads the notes database's pages into the page cache
        let runs = smoke ? 2 : 5
        let cpuBefore = cpuMs(of: daemon.pid)
        var samples: [Double] = []
        for _ in 0..<runs {
            try? FileManager.default.removeItem(at: output)
            samples.append(try timeMs { try list() })
        }
        let daemonCPU = (cpuMs(of: daemon.pid) - cpuBefore) / Double(runs)
        let lines = try String(contentsOf: output, encoding: .utf8).split(separator: "\n").count
        guard lines >= count else { throw BenchError("tresor note list printed \(lines) lines for \(count) notes") }
        log("notes: tresor note list of \(count) notes: p50 \(summary(samples)["p50_ms"] ?? 0) ms, daemon CPU \(daemonCPU) ms per list")
        var result = summary(samples)
        result["notes"] = count
        result["daemon_cpu_ms"] = daemonCPU
        return result
    }
}
