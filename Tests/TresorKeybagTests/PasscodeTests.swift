import Crypto
import Foundation
import Testing
import TresorCrypto
import TresorTestSupport

@testable import TresorKeybag

@Suite struct PasscodeTests {
    @Test func changingThePasscodeKeepsEveryClassKeyAndOnlyTheNewOneOpens() throws {
        let home = TemporaryHome()
        let keybag = try Keybag.create(paths: home.paths, passcode: passcode("old-passcode"), settings: TestKeybag.settings(TestClock()))
        let before = try ProtectionClass.allCases.map { bytes(of: try keybag.classKey(for: $0)) }
        try keybag.changePasscode(current: passcode("old-passcode"), to: passcode("new-passcode"))

        let reopened = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(TestClock()))
        #expect(throws: KeybagError.wrongPasscode(failedAttempts: 1, retryAfterSeconds: nil)) {
            try reopened.unlock(passcode: passcode("old-passcode"))
        }
        try reopened.unlock(passcode: passcode("new-passcode"))
        let after = try ProtectionClass.allCases.map { bytes(of: try reopened.classKey(for: $0)) }
        #expect(before == after, "a passcode change re-wraps class keys, it never replaces them")
    }

    @Test func changingNeedsTheCurrentPasscode() throws {
        let home = TemporaryHome()
        let keybag = try Keybag.create(paths: home.paths, passcode: passcode("old-passcode"), settings: TestKeybag.settings(TestClock()))
        let file = try home.bytes(home.paths.keybag)
        #expect(throws: KeybagError.wrongPasscode(failedAttempts: 1, retryAfterSeconds: nil)) {
            try keybag.changePasscode(current: passcode("not-it"), to: passcode("new-passcode"))
        }
        #expect(throws: KeybagError.passcodeRequired) { try keybag.changePasscode(current: nil, to: passcode("new-passcode")) }
        #expect(try home.bytes(home.paths.keybag) == file, "a refused change must not rewrite the keybag")
    }

    @Test func removingThePasscodeDestroysExactlyTheWhenPasscodeSetKey() throws {
        let home = TemporaryHome()
        let keybag = try Keybag.create(paths: home.paths, passcode: passcode("1234-abcd"), settings: TestKeybag.settings(TestClock()))
        let before = try Dictionary(uniqueKeysWithValues: ProtectionClass.allCases.map { ($0, bytes(of: try keybag.classKey(for: $0))) })
        try keybag.removePasscode(current: passcode("1234-abcd"))

        let reopened = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(TestClock()))
        #expect(reopened.lockState == .unlocked, "without a passcode there is nothing to wait for")
        #expect(!reopened.status.isPasscodeSet)
        for protectionClass in ProtectionClass.allCases where protectionClass != .whenPasscodeSetThisDeviceOnly {
            #expect(bytes(of: try reopened.classKey(for: protectionClass)) == before[protectionClass], "\(protectionClass)")
        }
        #expect(throws: KeybagError.classKeyAbsent(.whenPasscodeSetThisDeviceOnly)) {
            try reopened.classKey(for: .whenPasscodeSetThisDeviceOnly)
        }
        let record = try KeybagRecord.file(DeviceKey.load(from: home.paths.deviceKey)).read(home.paths.keybag)
        #expect(record?.wrappedClassKeys[ProtectionClass.whenPasscodeSetThisDeviceOnly.rawValue] == nil)
        #expect(record?.wrappedClassKeys.count == ProtectionClass.allCases.count - 1)

        // A new passcode brings a *new* key for the class: the old items stay unreadable.
        try reopened.changePasscode(current: nil, to: passcode("second"))
        let fresh = bytes(of: try reopened.classKey(for: .whenPasscodeSetThisDeviceOnly))
        #expect(fresh != before[.whenPasscodeSetThisDeviceOnly])
    }

    @Test func removingWithoutAPasscodeOrWithAWrongOneFails() throws {
        let home = TemporaryHome()
        let withPasscode = try Keybag.create(paths: home.paths, passcode: passcode("1234-abcd"), settings: TestKeybag.settings(TestClock()))
        #expect(throws: KeybagError.wrongPasscode(failedAttempts: 1, retryAfterSeconds: nil)) {
            try withPasscode.removePasscode(current: passcode("nope"))
        }
        #expect(try withPasscode.classKey(for: .whenPasscodeSetThisDeviceOnly).bitCount == 256)

        let other = TemporaryHome()
        let without = try Keybag.create(paths: other.paths, passcode: nil, settings: TestKeybag.settings(TestClock()))
        #expect(throws: KeybagError.noPasscodeSet) { try without.removePasscode(current: passcode("anything")) }
    }

    @Test func aKeybagWithoutPasscodeIsUnlockedAndHasNoWhenPasscodeSetKey() throws {
        let home = TemporaryHome()
        _ = try Keybag.create(paths: home.paths, passcode: nil, settings: TestKeybag.settings(TestClock()))
        let keybag = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(TestClock()))
        #expect(keybag.lockState == .unlocked)
        #expect(throws: KeybagError.classKeyAbsent(.whenPasscodeSetThisDeviceOnly)) {
            try keybag.classKey(for: .whenPasscodeSetThisDeviceOnly)
        }
        keybag.lock()
        #expect(throws: KeybagError.self) { try keybag.classKey(for: .whenUnlocked) }
        try keybag.unlock(passcode: nil)
        #expect(try keybag.classKey(for: .whenUnlocked).bitCount == 256)

        try keybag.changePasscode(current: nil, to: passcode("first-passcode"))
        #expect(try keybag.classKey(for: .whenPasscodeSetThisDeviceOnly).bitCount == 256)
        let reopened = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(TestClock()))
        #expect(reopened.lockState == .lockedSinceStart)
        #expect(throws: KeybagError.passcodeRequired) { try reopened.unlock(passcode: nil) }
    }

    @Test func passcodesNeverPrint() throws {
        let secret = passcode("marker-passcode-4711")
        #expect(!"\(secret)".contains("4711"))
        #expect(!String(reflecting: secret).contains("4711"))
        #expect(!String(describing: [secret]).contains("4711"))
        #expect(throws: KeybagError.self) { try Passcode("") }
        #expect(throws: KeybagError.self) { try Passcode(String(repeating: "x", count: 1025)) }
    }
}
