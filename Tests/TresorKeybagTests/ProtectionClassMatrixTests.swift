import Crypto
import Foundation
import Testing
import TresorTestSupport

@testable import TresorKeybag

/// Each protection class × each lock state gives its key or a clear error (docs/API.md,
/// "Protection classes and lock states").
@Suite struct ProtectionClassMatrixTests {
    /// Which classes a state may serve, written out by hand from the table in docs/API.md,
    /// "Protection classes and lock states".
    static let expected: [LockState: Set<ProtectionClass>] = [
        .lockedSinceStart: [.always, .alwaysThisDeviceOnly],
        .unlocked: Set(ProtectionClass.allCases),
        .locked: [.always, .alwaysThisDeviceOnly, .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly],
    ]

    @Test(arguments: [LockState.lockedSinceStart, .unlocked, .locked])
    func classAvailabilityFollowsLockState(state: LockState) throws {
        let home = TemporaryHome()
        _ = try Keybag.create(paths: home.paths, passcode: passcode("1234-abcd"), settings: TestKeybag.settings(TestClock()))
        let keybag = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(TestClock()))
        #expect(keybag.lockState == .lockedSinceStart)
        if state != .lockedSinceStart { try keybag.unlock(passcode: passcode("1234-abcd")) }
        if state == .locked { keybag.lock() }
        #expect(keybag.lockState == state)

        for protectionClass in ProtectionClass.allCases {
            if Self.expected[state]!.contains(protectionClass) {
                #expect(try keybag.classKey(for: protectionClass).bitCount == 256, "\(protectionClass) in \(state)")
            } else {
                #expect(throws: KeybagError.classUnavailable(protectionClass, state), "\(protectionClass) in \(state)") {
                    try keybag.classKey(for: protectionClass)
                }
            }
        }
        #expect(Set(keybag.status.availableClasses) == Self.expected[state]!)
    }

    @Test func everyClassHasItsOwnKey() throws {
        let home = TemporaryHome()
        let keybag = try Keybag.create(paths: home.paths, passcode: passcode("1234-abcd"), settings: TestKeybag.settings(TestClock()))
        let keys = try ProtectionClass.allCases.map { bytes(of: try keybag.classKey(for: $0)) }
        #expect(Set(keys).count == ProtectionClass.allCases.count)
    }

    @Test func lockingTwiceAndLockingBeforeUnlockKeepTheRightState() throws {
        let home = TemporaryHome()
        _ = try Keybag.create(paths: home.paths, passcode: passcode("1234-abcd"), settings: TestKeybag.settings(TestClock()))
        let keybag = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(TestClock()))
        keybag.lock()
        #expect(keybag.lockState == .lockedSinceStart, "lock before the first unlock must not make afterFirstUnlock keys appear")
        #expect(throws: KeybagError.self) { try keybag.classKey(for: .afterFirstUnlock) }
        try keybag.unlock(passcode: passcode("1234-abcd"))
        keybag.lock()
        keybag.lock()
        #expect(keybag.lockState == .locked)
        #expect(throws: KeybagError.classUnavailable(.whenUnlocked, .locked)) { try keybag.classKey(for: .whenUnlocked) }
    }

    @Test func aKeyStaysTheSameAcrossRestartsAndUnlocks() throws {
        let home = TemporaryHome()
        let created = try Keybag.create(paths: home.paths, passcode: passcode("1234-abcd"), settings: TestKeybag.settings(TestClock()))
        let before = try ProtectionClass.allCases.map { bytes(of: try created.classKey(for: $0)) }
        let reopened = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(TestClock()))
        try reopened.unlock(passcode: passcode("1234-abcd"))
        let after = try ProtectionClass.allCases.map { bytes(of: try reopened.classKey(for: $0)) }
        #expect(before == after)
    }
}
