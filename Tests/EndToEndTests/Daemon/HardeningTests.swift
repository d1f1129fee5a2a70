import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// The daemon turns core dumps off; the CLI asks for secrets on the terminal without echo.
@Suite(.blocksItsThread, .serialized) struct HardeningTests {
    @Test func theDaemonTurnsCoreDumpsOff() throws {
        let harness = try Harness()
        try harness.startDaemon()
        let status = try harness.status()
        let limits = try String(contentsOfFile: "/proc/\(status.pid)/limits", encoding: .utf8)
        let coreLine = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
        let fields = coreLine.split(separator: " ", omittingEmptySubsequences: true)
        #expect(fields.dropFirst(4).prefix(2) == ["0", "0"], "soft and hard RLIMIT_CORE must be 0: \(coreLine)")

        let findings = try TresorKitClient.connect(harness).doctor().findings
        let coreDumps = try #require(findings.first { $0.check == "core-dumps" })
        #expect(coreDumps.severity == .ok, "\(coreDumps.summary)")
    }

    /// Drives `tresor unlock` on a pseudo-terminal: types the passcode after the prompt
    /// appears and checks the screen never shows it.
    @Test func thePromptDoesNotEcho() throws {
        let harness = try Harness()
        let passcode = "e2e-tty-\(UUID().uuidString.prefix(8))"
        harness.secrets = [passcode]
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n").succeeded)
        #expect(try harness.tresor(["lock"]).succeeded)

        let screen = try harness.onTerminal(["unlock"], answers: [("Passcode:", passcode)], timeout: 20)
        #expect(screen.text.contains("Passcode:"))
        #expect(screen.text.contains("Keybag unlocked."), "\(screen.text)")
        #expect(!screen.text.contains(passcode), "the typed passcode was echoed")
        #expect(try harness.status().keybag == .unlocked)
        // The transcript holds the input we fed python, which is not tresor's output: check the rest.
        harness.secrets = []
        #expect(!harness.daemonLog.contains(passcode))
    }

    @Test func withoutATerminalOrStdinFlagTheCLIRefusesToGuess() throws {
        let harness = try Harness()
        try harness.startDaemon()
        let result = try harness.run(
            URL(fileURLWithPath: "/usr/bin/setsid"), ["--wait", Harness.binaries.appendingPathComponent("tresor").path, "init"], input: "")
        #expect(result.status == 1)
        #expect(result.stderr.contains("--passcode-stdin"))
        #expect(try harness.status().keybag == .notInitialized)
    }
}
