import Foundation
import Testing
import TresorSystem
import TresorTestSupport

@testable import TresorKeybag

/// The device key lives outside the home, so a copy of the home opens nothing; an older home's
/// key moves out at its next open.
@Suite struct DeviceKeyLocationTests {
    @Test func theDeviceKeyIsNotInTheHome() throws {
        let home = TemporaryHome()
        _ = try Keybag.create(paths: home.paths, passcode: nil, settings: TestKeybag.settings(TestClock()))
        #expect(FileManager.default.fileExists(atPath: home.paths.deviceKey.path))
        #expect(!home.paths.deviceKey.path.hasPrefix(home.paths.home.path + "/"))
        #expect(!FileManager.default.fileExists(atPath: home.paths.legacyDeviceKey.path))
        #expect(try mode(home.paths.deviceKey) == 0o600)
        #expect(try mode(home.paths.deviceKey.deletingLastPathComponent()) == 0o700)

        // A copy of the home elsewhere, with its own (empty) state folder: nothing opens.
        let copy = TemporaryHome()
        try FileManager.default.createDirectory(at: copy.root, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: home.paths.home, to: copy.paths.home)
        #expect(throws: KeybagError.deviceKeyMissing(path: copy.paths.deviceKey.path)) {
            try Keybag.open(paths: copy.paths, settings: TestKeybag.settings(TestClock()))
        }
    }

    @Test func anOlderHomesKeyMovesOutAtTheNextOpen() throws {
        let home = TemporaryHome()
        _ = try Keybag.create(paths: home.paths, passcode: nil, settings: TestKeybag.settings(TestClock()))
        let key = try Data(contentsOf: home.paths.deviceKey)
        // The layout of a home made before: the key inside it, none in the state folder.
        try FileManager.default.moveItem(at: home.paths.deviceKey, to: home.paths.legacyDeviceKey)
        _ = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(TestClock()))
        #expect(try Data(contentsOf: home.paths.deviceKey) == key)
        #expect(!FileManager.default.fileExists(atPath: home.paths.legacyDeviceKey.path))

        // Two different keys: an error, and neither is touched.
        try Data(repeating: 9, count: 32).write(to: home.paths.legacyDeviceKey)
        #expect(throws: KeybagError.self) { try Keybag.open(paths: home.paths, settings: TestKeybag.settings(TestClock())) }
        #expect(try Data(contentsOf: home.paths.deviceKey) == key)
        #expect(try Data(contentsOf: home.paths.legacyDeviceKey) == Data(repeating: 9, count: 32))
    }

    func mode(_ url: URL) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int ?? -1) & 0o777
    }
}
