import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// Five wrong passcodes, then the sixth attempt is refused with the remaining delay — also
/// after the daemon is SIGKILLed and restarted.
@Suite(.blocksItsThread, .serialized) struct ThrottlingTests {
    @Test func theSixthAttemptIsRefusedEvenAfterAKill() throws {
        let harness = try Harness()
        let passcode = "e2e-throttle-\(UUID().uuidString.prefix(6))"
        let wrong = (1...5).map { "e2e-wrong-\($0)-\(UUID().uuidString.prefix(4))" }
        harness.secrets = [passcode] + wrong
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n").succeeded)
        #expect(try harness.tresor(["lock"]).succeeded)

        for (index, attempt) in wrong.enumerated() {
            let result = try harness.tresor(["unlock", "--passcode-stdin"], input: attempt + "\n")
            #expect(result.status == 1)
            #expect(result.stderr.contains("wrong passcode (\(index + 1) failed attempt"))
        }
        let refused = try harness.json(ErrorResponse.self, ["unlock", "--passcode-stdin"], input: passcode + "\n")
        #expect(refused.error.code == .throttled)
        let wait = try #require(refused.error.retryAfterSeconds)
        #expect((1...60).contains(wait))
        #expect(refused.error.message.contains("try again in"))

        harness.killDaemon()
        try harness.startDaemon()
        let status = try harness.status()
        #expect(status.keybag == .lockedSinceStart)
        #expect(status.failedAttempts == 5)
        #expect((1...60).contains(status.retryAfterSeconds ?? 0))
        let stillRefused = try harness.tresor(["unlock", "--passcode-stdin"], input: passcode + "\n")
        #expect(stillRefused.status == 1)
        #expect(stillRefused.stderr.contains("too many wrong passcodes"))
        #expect(try harness.status().keybag == .lockedSinceStart)
        try harness.expectNoSecretLeaked()
    }
}
