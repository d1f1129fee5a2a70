import Foundation
import Testing
import TresorCrypto
import TresorTestSupport

/// The harness itself: a command that writes more than a pipe holds to one output while the
/// other is still open — or before it reads its input — is run to its end. (With the harness as
/// it was, reading one output to its end before the other, this test hangs: its pipes deadlock.)
@Suite(.blocksItsThread) struct HarnessTests {
    /// The harness's debug daemons write the PBKDF2 count of `TresordFixture.cheapKeyDerivation`;
    /// one asked for production's writes that (docs/ARCHITECTURE.md, "Tests").
    @Test func daemonsDeriveNewKeysCheaplyUnlessAskedForProductionsCount() throws {
        for (production, rounds) in [(false, 1_000), (true, PBKDF2Parameters.defaultRounds)] {
            let harness = try Harness.initialized(passcode: "e2e-harness-kdf-passcode", productionKeyDerivation: production)
            try expectKeybag(of: harness, at: rounds)
        }
    }

    /// A daemon the debug CLI starts by itself is given the variable too
    /// (`DaemonEnvironment.debugKeyDerivationRounds`), and derives as the harness's own do.
    @Test func aDaemonTheCLIStartsDerivesAsTheHarnesssOwnDo() throws {
        let harness = try Harness()
        harness.secrets = ["e2e-harness-kdf-autostart"]
        let initialized = try harness.tresor(["init", "--passcode-stdin"], input: "e2e-harness-kdf-autostart\n")
        #expect(initialized.succeeded, "\(initialized.stderr)")
        try expectKeybag(of: harness, at: 1_000)
    }

    /// Expects the keybag file of `harness`'s home to keep its passcode at `rounds` PBKDF2 rounds.
    func expectKeybag(of harness: Harness, at rounds: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let keybag = try Data(contentsOf: harness.paths.keybag)
        #expect(
            keybag.range(of: Data("\"rounds\":\(rounds),".utf8)) != nil, "the keybag's passcode is not at \(rounds) rounds",
            sourceLocation: sourceLocation)
    }

    @Test func outputsLargerThanAPipeOnBothStreamsAndALargeInput() throws {
        let harness = try Harness()
        let shell = URL(fileURLWithPath: "/bin/sh")
        // 300 KB to standard error first, then 300 KB to standard output, then the input read back.
        let script = "head -c 300000 /dev/zero | tr '\\0' e >&2; head -c 300000 /dev/zero | tr '\\0' o; wc -c"
        let input = String(repeating: "i", count: 200_000)
        let result = try harness.run(shell, ["-c", script], input: input)
        #expect(result.status == 0)
        #expect(result.stderr.count == 300_000 && result.stderr.allSatisfy { $0 == "e" })
        #expect(result.stdout.hasPrefix(String(repeating: "o", count: 300_000)))
        #expect(result.stdout.dropFirst(300_000).trimmingCharacters(in: .whitespacesAndNewlines) == "200000")
    }

    /// Every command the harness runs has a time limit: one that hangs is killed and fails its
    /// test naming itself (a `sleep` standing in for a stuck command).
    @Test func aCommandPastItsTimeLimitIsKilledAndNamed() throws {
        let harness = try Harness()
        #expect {
            try harness.run(URL(fileURLWithPath: "/bin/sleep"), ["30"], timeout: 1)
        } throws: { error in
            guard case HarnessError.timedOut(let command, after: 1) = error else { return false }
            return command == "sleep 30"
        }
    }

    /// A watchdog lets go of its process (and the process's pipes) once its command has ended
    /// and it was asked whether it fired, not at its deadline: so every command can have one.
    @Test func aWatchdogLetsGoOfItsProcessOnceAsked() throws {
        weak var released: Process?
        do {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/true")
            process.standardOutput = Pipe()
            try process.run()
            let watchdog = Watchdog(process, after: 3600)
            process.waitUntilEnded()
            #expect(!watchdog.fired)
            released = process
        }
        // The timer's cancellation lets go of its handler on the timer's queue.
        let deadline = Date() + 10
        while released != nil, Date() < deadline { usleep(10_000) }
        #expect(released == nil, "the watchdog still holds its process until its deadline")
    }
}
