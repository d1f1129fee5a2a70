import Foundation
import Synchronization

/// The daemons harnesses started and have not stopped. A harness still alive when the test
/// process exits — kept by a proxy's thread whose closure holds it — would leave its daemon
/// running for good, reparented to init: at exit, every daemon left is killed.
enum RunningDaemons {
    private static let pids = Mutex<Set<pid_t>>([])
    private static let hookInstalled = Mutex(false)

    /// Records a daemon a harness started.
    static func started(_ pid: pid_t) {
        hookInstalled.withLock { installed in
            guard !installed else { return }
            installed = true
            atexit { RunningDaemons.killAll() }
        }
        pids.withLock { _ = $0.insert(pid) }
    }

    /// Forgets a daemon a harness stopped.
    static func ended(_ pid: pid_t) {
        pids.withLock { _ = $0.remove(pid) }
    }

    /// Kills each daemon left — by its pid, so only while that pid still runs `tresord` (one
    /// that ended by itself may have left its pid to another program).
    private static func killAll() {
        for pid in pids.withLock({ $0 }) {
            guard let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8), command.contains("tresord") else {
                continue
            }
            kill(pid, SIGKILL)
        }
    }
}
