import Foundation
import Testing
import TresorTestSupport

/// The tests' wait for a program they started (`Process.waitForStatus()`, in TresorTestSupport)
/// ends when the program does — also when a child it left running holds the socket by which
/// Foundation hears of its end, which `waitUntilExit()` would wait on for as long as the child runs.
@Suite struct TestProcessWaitTests {
    @Test func aProgramWhoseChildOutlivesItIsSeenToEndWithItsStatus() throws {
        let pidFile = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-sleeper-\(UUID().uuidString).pid")
        defer { try? FileManager.default.removeItem(at: pidFile) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", #"sleep 600 & echo $! > "$1"; exit 7"#, "sh", pidFile.path]
        try process.run()
        let status = process.waitForStatus()
        let sleeper = try #require(pid_t(try String(contentsOf: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        defer { kill(sleeper, SIGKILL) }
        #expect(status == 7)
        #expect(kill(sleeper, 0) == 0, "the wait ended while the child still runs")
    }
}
