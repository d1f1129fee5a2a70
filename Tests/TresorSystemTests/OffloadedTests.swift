import Foundation
import Synchronization
import Testing
import TresorSystem

/// ``offloaded(_:)``: what a job captured — a passcode, a secret — is let go of once the job has
/// run, on a new thread as on one that served a job before, not kept while the thread waits
/// for more work.
@Suite(.serialized) struct OffloadedTests {
    /// Whether something was released.
    final class Flag: Sendable {
        let value = Mutex(false)
    }

    /// Stands for what a job captures; raises its flag when released.
    final class Captured: Sendable {
        let released: Flag
        init(_ released: Flag) { self.released = released }
        deinit { released.value.withLock { $0 = true } }
    }

    /// Runs an offloaded job that captures a `Captured`, and waits until it is released — at most
    /// five seconds, far past the moment it should be (the job's end), and well short of the ten
    /// seconds after which an idle thread ends and releases everything it holds anyway.
    func isReleasedAfterItsJob() async throws -> Bool {
        let flag = Flag()
        do {
            let captured = Captured(flag)
            try await offloaded { withExtendedLifetime(captured) {} }
        }
        for _ in 0..<500 where !flag.value.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        return flag.value.withLock { $0 }
    }

    @Test func whatAJobCapturedIsReleasedOnceItHasRun() async throws {
        // Several in a row: the first may start a thread, the later ones reuse a waiting one.
        for index in 0..<3 {
            #expect(try await isReleasedAfterItsJob(), "job \(index)'s captures were kept after it ran")
        }
    }
}
