import Crypto
import Foundation
import Testing
import TresorKeybag
import TresorSystem
import TresorTestSupport

@testable import TresorSync

@Suite("A device's sync identity")
struct DeviceIdentityTests {
    @Test func theDeviceIDIsTheHashOfTheSigningKey() throws {
        let device = try LocalDevice(
            name: "laptop", signingKey: .init(rawRepresentation: Data(repeating: 1, count: 32)),
            agreementKey: .init(rawRepresentation: Data(repeating: 2, count: 32)))
        // Computed with Python `cryptography` and hashlib (SHA-256 of the Ed25519 public key, 16 bytes).
        #expect(device.identity.signingKey.hex == "8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c")
        #expect(device.identity.agreementKey.hex == "ce8d3ad1ccb633ec7b70c17814a5c76ecd029685050d344745ba05870e587d59")
        #expect(device.deviceID == "34750f98bd59fcfc946da45aaabe933b")
    }

    @Test func anIdentityWithABadKeyOrNameIsRefused() throws {
        let device = try LocalDevice.create(name: "laptop")
        #expect(throws: SyncError.self) { try DeviceIdentity(name: "x", signingKey: Data(count: 31), agreementKey: device.identity.agreementKey) }
        let keys = device.identity
        #expect(throws: SyncError.self) { try DeviceIdentity(name: "", signingKey: keys.signingKey, agreementKey: keys.agreementKey) }
        #expect(throws: SyncError.self) { try DeviceIdentity(name: "a\nb", signingKey: keys.signingKey, agreementKey: keys.agreementKey) }
        let json = try JSONEncoder().encode(device.identity)
        #expect(try JSONDecoder().decode(DeviceIdentity.self, from: json) == device.identity)
    }

    @Test func theIdentityIsKeptSealedUnderTheKeybagAndComesBack() throws {
        let home = TemporaryHome()
        let keybag = try Keybag.create(paths: home.paths, passcode: try Passcode("correct horse"), settings: testKeybagSettings)
        let device = try LocalDevice.create(name: "laptop")
        try device.save(to: home.paths.syncDeviceIdentity, keybag: keybag)
        let file = try Data(contentsOf: home.paths.syncDeviceIdentity)
        let secret = device.signingKey.rawRepresentation
        #expect(file.firstRange(of: secret) == nil, "the private key is not in the file in the clear")
        let loaded = try #require(try LocalDevice.load(from: home.paths.syncDeviceIdentity, keybag: keybag))
        #expect(loaded.identity == device.identity)
        #expect(loaded.signingKey.rawRepresentation == secret)
        #expect(loaded.agreementKey.rawRepresentation == device.agreementKey.rawRepresentation)
        // One identity per device: a second save does not replace it.
        #expect(throws: SyncError.self) { try LocalDevice.create(name: "other").save(to: home.paths.syncDeviceIdentity, keybag: keybag) }
        #expect(try LocalDevice.load(from: home.paths.syncDeviceIdentity, keybag: keybag)?.identity == device.identity)
    }

    @Test func noIdentityIsNil() throws {
        let home = TemporaryHome()
        let keybag = try Keybag.create(paths: home.paths, passcode: nil, settings: testKeybagSettings)
        #expect(try LocalDevice.load(from: home.paths.syncDeviceIdentity, keybag: keybag) == nil)
    }

    @Test func theIdentityFileOpensOnNoOtherHome() throws {
        let home = TemporaryHome(), other = TemporaryHome()
        let keybag = try Keybag.create(paths: home.paths, passcode: nil, settings: testKeybagSettings)
        let otherKeybag = try Keybag.create(paths: other.paths, passcode: nil, settings: testKeybagSettings)
        try LocalDevice.create(name: "laptop").save(to: home.paths.syncDeviceIdentity, keybag: keybag)
        // A copy of the home's file on another machine (another device key, other class keys).
        try FileManager.default.copyItem(at: home.paths.syncDeviceIdentity, to: other.paths.syncDeviceIdentity)
        #expect(throws: SyncError.self) { try LocalDevice.load(from: other.paths.syncDeviceIdentity, keybag: otherKeybag) }
    }

    @Test func anAlteredIdentityFileIsRefused() throws {
        let home = TemporaryHome()
        let keybag = try Keybag.create(paths: home.paths, passcode: nil, settings: testKeybagSettings)
        try LocalDevice.create(name: "laptop").save(to: home.paths.syncDeviceIdentity, keybag: keybag)
        var bytes = try Data(contentsOf: home.paths.syncDeviceIdentity)
        bytes[bytes.count - 20] ^= 1
        try bytes.write(to: home.paths.syncDeviceIdentity)
        #expect(throws: SyncError.self) { try LocalDevice.load(from: home.paths.syncDeviceIdentity, keybag: keybag) }
    }

    @Test func theIdentityNeedsTheKeybagUnlockedOnceSinceStart() throws {
        let home = TemporaryHome()
        let code = try Passcode("correct horse")
        let keybag = try Keybag.create(paths: home.paths, passcode: code, settings: testKeybagSettings)
        let device = try LocalDevice.create(name: "laptop")
        try device.save(to: home.paths.syncDeviceIdentity, keybag: keybag)
        let restarted = try Keybag.open(paths: home.paths, settings: testKeybagSettings)
        #expect(throws: SyncError.self) { try LocalDevice.load(from: home.paths.syncDeviceIdentity, keybag: restarted) }
        try restarted.unlock(passcode: code)
        restarted.lock()
        // Locked again, but after the first unlock: sync runs on, as Apple's class says.
        #expect(try LocalDevice.load(from: home.paths.syncDeviceIdentity, keybag: restarted)?.identity == device.identity)
    }
}

@Suite("The circle keys kept on the device")
struct CircleKeyringStorageTests {
    @Test func theKeyringIsSealedUnderTheKeybagAndTheAccount() throws {
        let home = TemporaryHome(), other = TemporaryHome()
        let keybag = try Keybag.create(paths: home.paths, passcode: nil, settings: testKeybagSettings)
        let keyring = CircleKeyring([CircleKey.generate(epoch: 1), CircleKey.generate(epoch: 2)])
        let sealed = try keyring.sealed(account: "alice", keybag: keybag)
        for key in keyring.keys {
            #expect(key.key.withUnsafeBytes { sealed.firstRange(of: Data($0)) } == nil)
        }
        let opened = try CircleKeyring(sealed: sealed, account: "alice", keybag: keybag)
        #expect(opened.epochs == [1, 2])
        #expect(opened.keys.map(\.key) == keyring.keys.map(\.key))
        #expect(throws: SyncError.self) { try CircleKeyring(sealed: sealed, account: "mallory", keybag: keybag) }
        let otherKeybag = try Keybag.create(paths: other.paths, passcode: nil, settings: testKeybagSettings)
        #expect(throws: SyncError.self) { try CircleKeyring(sealed: sealed, account: "alice", keybag: otherKeybag) }
    }
}
