import Foundation
import Testing
import TresorTestSupport

@testable import TresorKeybag

/// Wrong passcodes are counted persistently; after the fifth, escalating delays; the same wrong
/// passcode twice counts once (docs/API.md, "Limits"; docs/FORMAT.md, "Failed attempts payload").
@Suite struct FailedAttemptTests {
    /// The web sign-in of the local account counts its own failures: here a wrong passcode
    /// is only `false` — no count on disk, no delay for `tresor unlock` — and the right one
    /// unlocks even while the keybag's own delay runs.
    @Test func aCheckCountedElsewhereLeavesTheCounterAlone() throws {
        let home = TemporaryHome()
        let clock = TestClock()
        _ = try Keybag.create(paths: home.paths, passcode: passcode("right"), settings: TestKeybag.settings(clock))
        let keybag = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock))
        for attempt in 1...10 { #expect(try !keybag.unlockCountingElsewhere(passcode: passcode("wrong-\(attempt)"))) }
        #expect(keybag.status.failedAttempts == 0 && keybag.status.retryAfterSeconds == nil && keybag.lockState == .lockedSinceStart)
        #expect(try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock)).status.failedAttempts == 0)
        for attempt in 1...5 { _ = try? keybag.unlock(passcode: passcode("cli-wrong-\(attempt)")) }
        #expect(keybag.status.retryAfterSeconds != nil)
        #expect(try keybag.unlockCountingElsewhere(passcode: passcode("right")))
        #expect(keybag.lockState == .unlocked && keybag.status.failedAttempts == 0)
    }

    @Test func theSixthAttemptWaitsAndTheWaitSurvivesARestart() throws {
        let home = TemporaryHome()
        let clock = TestClock()
        _ = try Keybag.create(paths: home.paths, passcode: passcode("right"), settings: TestKeybag.settings(clock))
        let keybag = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock))
        for attempt in 1...4 {
            #expect(throws: KeybagError.wrongPasscode(failedAttempts: attempt, retryAfterSeconds: nil)) {
                try keybag.unlock(passcode: passcode("wrong-\(attempt)"))
            }
        }
        #expect(throws: KeybagError.wrongPasscode(failedAttempts: 5, retryAfterSeconds: 60)) {
            try keybag.unlock(passcode: passcode("wrong-5"))
        }
        // Even the right passcode is refused while the delay runs.
        #expect(throws: KeybagError.throttled(failedAttempts: 5, retryAfterSeconds: 60)) {
            try keybag.unlock(passcode: passcode("right"))
        }
        clock.advance(by: 20)
        let restarted = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock))
        #expect(throws: KeybagError.throttled(failedAttempts: 5, retryAfterSeconds: 40)) {
            try restarted.unlock(passcode: passcode("right"))
        }
        #expect(restarted.status.failedAttempts == 5)
        #expect(restarted.status.retryAfterSeconds == 40)

        clock.advance(by: 41)
        #expect(throws: KeybagError.wrongPasscode(failedAttempts: 6, retryAfterSeconds: 300)) {
            try restarted.unlock(passcode: passcode("wrong-6"))
        }
        clock.advance(by: 301)
        #expect(throws: KeybagError.wrongPasscode(failedAttempts: 7, retryAfterSeconds: 900)) {
            try restarted.unlock(passcode: passcode("wrong-7"))
        }
        clock.advance(by: 901)
        try restarted.unlock(passcode: passcode("right"))
        #expect(restarted.status.failedAttempts == 0)
        #expect(try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock)).status.failedAttempts == 0)
    }

    @Test func aClockSetBackDoesNotStretchTheWait() throws {
        let home = TemporaryHome()
        let clock = TestClock()
        let keybag = try Keybag.create(paths: home.paths, passcode: passcode("right"), settings: TestKeybag.settings(clock))
        for attempt in 1...5 { #expect(throws: KeybagError.self) { try keybag.unlock(passcode: passcode("wrong-\(attempt)")) } }
        clock.advance(by: -86_400)  // the clock jumps a day back
        #expect(throws: KeybagError.throttled(failedAttempts: 5, retryAfterSeconds: 60)) { try keybag.unlock(passcode: passcode("right")) }
        clock.advance(by: 61)
        try keybag.unlock(passcode: passcode("right"))
    }

    @Test func theDelayScheduleIsApples() {
        let minutes = (1...11).map { GuessingDelay.delay(afterFailures: $0) / 60 }
        #expect(minutes == [0, 0, 0, 0, 1, 5, 15, 15, 60, 60, 60])
    }

    @Test func theSameWrongPasscodeCountsOnce() throws {
        let home = TemporaryHome()
        let keybag = try Keybag.create(paths: home.paths, passcode: passcode("right"), settings: TestKeybag.settings(TestClock()))
        keybag.lock()
        for _ in 1...6 {
            #expect(throws: KeybagError.wrongPasscode(failedAttempts: 1, retryAfterSeconds: nil)) {
                try keybag.unlock(passcode: passcode("same-typo"))
            }
        }
        #expect(throws: KeybagError.wrongPasscode(failedAttempts: 2, retryAfterSeconds: nil)) {
            try keybag.unlock(passcode: passcode("another-typo"))
        }
        try keybag.unlock(passcode: passcode("right"))
    }

    @Test func theAttemptsFileHoldsNoWrongPasscode() throws {
        let home = TemporaryHome()
        let keybag = try Keybag.create(paths: home.paths, passcode: passcode("right"), settings: TestKeybag.settings(TestClock()))
        #expect(throws: KeybagError.self) { try keybag.unlock(passcode: passcode("marker-wrong-passcode-0815")) }
        let file = try home.bytes(home.paths.unlockAttempts)
        #expect(file.range(of: Data("marker-wrong-passcode-0815".utf8)) == nil)
        #expect(file.range(of: Data("0815".utf8)) == nil)
    }

    @Test func aDamagedAttemptsFileMeansALockoutNotAReset() throws {
        let home = TemporaryHome()
        let clock = TestClock()
        _ = try Keybag.create(paths: home.paths, passcode: passcode("right"), settings: TestKeybag.settings(clock))
        try Data("garbage that is not an attempts file at all........................".utf8).write(to: home.paths.unlockAttempts)
        let keybag = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock))
        #expect(keybag.status.attemptsFileDamaged)
        #expect(throws: KeybagError.throttled(failedAttempts: 5, retryAfterSeconds: 60)) {
            try keybag.unlock(passcode: passcode("right"))
        }
        clock.advance(by: 61)
        try keybag.unlock(passcode: passcode("right"))
        #expect(!keybag.status.attemptsFileDamaged)
    }
}
