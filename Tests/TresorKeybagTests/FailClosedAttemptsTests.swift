import Foundation
import Testing
import TresorSystem
import TresorTestSupport

@testable import TresorKeybag

/// The failed-passcode count fails closed (docs/SECURITY.md §3.5): deleting
/// `unlock-attempts`, putting back one from before a passcode change, or making it unwritable
/// never resets the delay.
@Suite struct FailClosedAttemptsTests {
    /// Five wrong passcodes, then the delay they earned is running.
    func lockedOut(_ home: TemporaryHome, _ clock: TestClock) throws {
        let keybag = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock))
        for attempt in 1...5 {
            #expect(throws: KeybagError.self) { try keybag.unlock(passcode: passcode("wrong-\(attempt)")) }
        }
        #expect(keybag.status.retryAfterSeconds == 60)
    }

    @Test func deletingTheAttemptsFileDoesNotResetTheDelay() throws {
        let home = TemporaryHome()
        let clock = TestClock()
        _ = try Keybag.create(paths: home.paths, passcode: passcode("right"), settings: TestKeybag.settings(clock))
        #expect(SecureFiles.exists(home.paths.unlockAttempts), "a new keybag writes its count at once")
        try lockedOut(home, clock)
        try FileManager.default.removeItem(at: home.paths.unlockAttempts)
        let restarted = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock))
        #expect(restarted.status.attemptsFileDamaged)
        #expect(throws: KeybagError.throttled(failedAttempts: 5, retryAfterSeconds: 60)) {
            try restarted.unlock(passcode: passcode("right"))
        }
        clock.advance(by: 61)
        try restarted.unlock(passcode: passcode("right"))
        #expect(!restarted.status.attemptsFileDamaged)
        #expect(SecureFiles.exists(home.paths.unlockAttempts))
    }

    @Test func aCountFromBeforeAPasscodeChangeIsALockout() throws {
        let home = TemporaryHome()
        let clock = TestClock()
        let keybag = try Keybag.create(paths: home.paths, passcode: passcode("first"), settings: TestKeybag.settings(clock))
        let old = try Data(contentsOf: home.paths.unlockAttempts)
        try keybag.changePasscode(current: passcode("first"), to: passcode("second"))
        try old.write(to: home.paths.unlockAttempts)
        let restarted = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock))
        #expect(restarted.status.attemptsFileDamaged)
        #expect(throws: KeybagError.throttled(failedAttempts: 5, retryAfterSeconds: 60)) {
            try restarted.unlock(passcode: passcode("second"))
        }
    }

    /// A home from before the requirement (no file while nothing failed, a keybag without the
    /// flag) gets its file and the flag when opened; from then on a missing file is a lockout.
    @Test func anOlderHomeGetsItsCountOnceThenRequiresIt() throws {
        let home = TemporaryHome()
        let clock = TestClock()
        _ = try Keybag.create(paths: home.paths, passcode: passcode("right"), settings: TestKeybag.settings(clock))
        let deviceKey = try DeviceKey.load(from: home.paths.deviceKey)
        var record = try #require(try KeybagRecord.file(deviceKey).read(home.paths.keybag))
        record.attemptsFileRequired = nil
        try KeybagRecord.file(deviceKey).write(record, to: home.paths.keybag)
        try FileManager.default.removeItem(at: home.paths.unlockAttempts)

        let migrated = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock))
        #expect(!migrated.status.attemptsFileDamaged)
        try migrated.unlock(passcode: passcode("right"))
        #expect(SecureFiles.exists(home.paths.unlockAttempts))
        #expect(try KeybagRecord.file(deviceKey).read(home.paths.keybag)?.attemptsFileRequired == true)

        try FileManager.default.removeItem(at: home.paths.unlockAttempts)
        let deleted = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock))
        #expect(deleted.status.attemptsFileDamaged)
        #expect(throws: KeybagError.throttled(failedAttempts: 5, retryAfterSeconds: 60)) {
            try deleted.unlock(passcode: passcode("right"))
        }
    }

    /// A failure that cannot be written stops every further attempt, the right passcode too,
    /// until it can: a daemon restarted meanwhile would otherwise have forgotten it.
    @Test func aCountThatCannotBeSavedStopsFurtherAttempts() throws {
        let home = TemporaryHome()
        let clock = TestClock()
        _ = try Keybag.create(paths: home.paths, passcode: passcode("right"), settings: TestKeybag.settings(clock))
        let keybag = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock))
        // A folder where the file goes: the atomic replace of the count fails (even for root).
        try FileManager.default.removeItem(at: home.paths.unlockAttempts)
        try FileManager.default.createDirectory(at: home.paths.unlockAttempts, withIntermediateDirectories: false)
        #expect(throws: KeybagError.wrongPasscode(failedAttempts: 1, retryAfterSeconds: nil)) {
            try keybag.unlock(passcode: passcode("wrong"))
        }
        #expect(throws: KeybagError.self) { try keybag.unlock(passcode: passcode("right")) }
        #expect(keybag.lockState != .unlocked)

        try FileManager.default.removeItem(at: home.paths.unlockAttempts)
        try keybag.unlock(passcode: passcode("right"))
        #expect(keybag.lockState == .unlocked)
    }
}
