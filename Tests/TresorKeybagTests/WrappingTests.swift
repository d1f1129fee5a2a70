import Crypto
import Foundation
import Testing
import TresorCrypto
import TresorTestSupport

@testable import TresorKeybag

/// Neither the passcode alone nor the device key alone unwraps a passcode-protected class key
/// (docs/FORMAT.md, "Class-key wrapping"). These tests rebuild key-encryption keys by hand from the
/// file's contents.
@Suite struct WrappingTests {
    let home = TemporaryHome()

    func record() throws -> KeybagRecord {
        try #require(try KeybagRecord.file(DeviceKey.load(from: home.paths.deviceKey)).read(home.paths.keybag))
    }

    @Test func theDeviceKeyAloneCannotUnwrapAPasscodeProtectedClassKey() throws {
        _ = try Keybag.create(paths: home.paths, passcode: passcode("1234-abcd"), settings: TestKeybag.settings(TestClock()))
        let deviceKey = try DeviceKey.load(from: home.paths.deviceKey)
        let record = try record()
        for protectionClass in ProtectionClass.allCases {
            let wrapped = try #require(record.wrappedClassKeys[protectionClass.rawValue])
            let deviceOnly = deviceKey.derive("kek." + protectionClass.rawValue)
            if protectionClass.availability == .always {
                // Positive control: `always` keys are meant to open with the device key alone.
                #expect(throws: Never.self) { try KeyWrap.unwrap(wrapped, using: deviceOnly) }
            } else {
                #expect(throws: CryptoError.unwrapFailed, "\(protectionClass)") { try KeyWrap.unwrap(wrapped, using: deviceOnly) }
            }
        }
    }

    @Test func thePasscodeWithAnotherDeviceKeyCannotUnwrap() throws {
        _ = try Keybag.create(paths: home.paths, passcode: passcode("1234-abcd"), settings: TestKeybag.settings(TestClock()))
        let record = try record()
        let parameters = try #require(record.passcode)
        let passcodeKey = try PBKDF2.deriveKey(from: Array("1234-abcd".utf8), parameters: parameters)
        let realDevice = try DeviceKey.load(from: home.paths.deviceKey)
        let otherDevice = DeviceKey(key: SymmetricKey(size: .bits256))
        let wrapped = try #require(record.wrappedClassKeys[ProtectionClass.whenUnlocked.rawValue])

        #expect(throws: Never.self) {
            try KeyWrap.unwrap(wrapped, using: realDevice.derive("kek.whenUnlocked", passcodeKey: passcodeKey))
        }
        #expect(throws: CryptoError.unwrapFailed) {
            try KeyWrap.unwrap(wrapped, using: otherDevice.derive("kek.whenUnlocked", passcodeKey: passcodeKey))
        }
        // The PBKDF2 output used directly as the KEK (no device key at all) does not work either.
        #expect(throws: CryptoError.unwrapFailed) { try KeyWrap.unwrap(wrapped, using: passcodeKey) }
    }

    @Test func wrappedKeysAreBoundToTheirClass() throws {
        _ = try Keybag.create(paths: home.paths, passcode: passcode("1234-abcd"), settings: TestKeybag.settings(TestClock()))
        let record = try record()
        let deviceKey = try DeviceKey.load(from: home.paths.deviceKey)
        let wrapped = try #require(record.wrappedClassKeys[ProtectionClass.always.rawValue])
        #expect(throws: CryptoError.unwrapFailed) {
            try KeyWrap.unwrap(wrapped, using: deviceKey.derive("kek.alwaysThisDeviceOnly"))
        }
    }

    @Test func theProductionDefaultIsAtLeast600000Rounds() throws {
        #expect(KeybagSettings.production.kdfRounds >= 600_000)
        #expect(PBKDF2Parameters.defaultRounds >= 600_000)
    }

    @Test func homeFilesArePrivate() throws {
        _ = try Keybag.create(paths: home.paths, passcode: passcode("1234-abcd"), settings: TestKeybag.settings(TestClock()))
        #expect(try mode(home.paths.home) == 0o700)
        #expect(try mode(home.paths.deviceKey) == 0o600)
        #expect(try mode(home.paths.keybag) == 0o600)
        #expect(try home.bytes(home.paths.deviceKey).count == 32)
    }

    func mode(_ url: URL) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int ?? -1) & 0o777
    }
}
