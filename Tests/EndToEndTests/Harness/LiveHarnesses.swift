import Foundation
import Synchronization

/// The harnesses alive and the daemons they started, checked when the test process exits.
///
/// A harness still alive then — kept by a thread or a closure that outlived its test — never ran
/// its deinit: its test's secret scan never ran, its home stays on disk and its daemon would run
/// on, reparented to init. At exit every daemon left is killed, every home left is removed, and
/// a harness left fails the run, naming the homes, so such a cycle is found the day it is made.
enum LiveHarnesses {
    private struct Ledger {
        var roots: Set<String> = []
        var daemons: Set<pid_t> = []
        var hookInstalled = false
    }

    private static let ledger = Mutex(Ledger())

    /// Records a harness made, with its temporary root.
    static func opened(_ root: URL) {
        ledger.withLock { ledger in
            if !ledger.hookInstalled {
                ledger.hookInstalled = true
                atexit { LiveHarnesses.atExit() }
            }
            ledger.roots.insert(root.path)
        }
    }

    /// Forgets a harness whose deinit ran.
    static func closed(_ root: URL) {
        ledger.withLock { _ = $0.roots.remove(root.path) }
    }

    /// Records a daemon a harness started.
    static func started(_ pid: pid_t) {
        ledger.withLock { _ = $0.daemons.insert(pid) }
    }

    /// Forgets a daemon a harness stopped.
    static func ended(_ pid: pid_t) {
        ledger.withLock { _ = $0.daemons.remove(pid) }
    }

    private static func atExit() {
        let left = ledger.withLock { $0 }
        // By its pid, only while that pid still runs `tresord`: one that ended by itself may
        // have left its pid to another program.
        for pid in left.daemons {
            guard let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8), command.contains("tresord") else {
                continue
            }
            kill(pid, SIGKILL)
        }
        guard !left.roots.isEmpty else { return }
        for root in left.roots { try? FileManager.default.removeItem(atPath: root) }
        let homes = left.roots.sorted().joined(separator: "\n  ")
        FileHandle.standardError.write(
            Data(
                """
                error: \(left.roots.count) test harness(es) were never released: something kept them past their \
                test (a thread, a closure), so their secret scans never ran. Their homes (removed now):
                  \(homes)

                """.utf8))
        fflush(nil)
        _exit(1)
    }
}
