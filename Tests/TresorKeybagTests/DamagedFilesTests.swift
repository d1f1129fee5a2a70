import Foundation
import Testing
import TresorSystem
import TresorTestSupport

@testable import TresorKeybag

/// Bad input on disk: a truncated or tampered keybag, a missing or damaged device key. Each
/// gets a clear error, and nothing on disk is rewritten.
@Suite struct DamagedFilesTests {
    let home = TemporaryHome()

    init() throws {
        _ = try Keybag.create(paths: home.paths, passcode: passcode("right"), settings: TestKeybag.settings(TestClock()))
    }

    func expectUntouched(_ files: [URL: Data]) throws {
        for (url, content) in files { #expect(try home.bytes(url) == content, "\(url.lastPathComponent) was rewritten") }
    }

    @Test func everyFlippedByteOfTheKeybagIsDetected() throws {
        let original = try home.bytes(home.paths.keybag)
        // Every byte of the header and MAC, and a spread of bytes of the JSON.
        let positions = Array(0..<37) + stride(from: 37, to: original.count, by: 7)
        for position in positions {
            var tampered = original
            tampered[position] ^= 0x01
            try tampered.write(to: home.paths.keybag)
            #expect(throws: KeybagError.self, "byte \(position)") { try Keybag.open(paths: home.paths, settings: TestKeybag.settings(TestClock())) }
            try expectUntouched([home.paths.keybag: tampered])
        }
    }

    @Test func aTruncatedKeybagIsReportedAsDamaged() throws {
        let original = try home.bytes(home.paths.keybag)
        for length in [0, 3, 5, 36, 37, original.count / 2, original.count - 1] {
            let truncated = original.prefix(length)
            try truncated.write(to: home.paths.keybag)
            do {
                _ = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(TestClock()))
                Issue.record("a keybag truncated to \(length) bytes opened")
            } catch let error as KeybagError {
                guard case .fileCorrupted(let file, _) = error else {
                    Issue.record("unexpected \(error)")
                    continue
                }
                #expect(file == "keybag")
                #expect(error.description.contains("damaged"))
            }
            try expectUntouched([home.paths.keybag: Data(truncated)])
        }
    }

    @Test func aMissingDeviceKeyIsNamedAndNotReplaced() throws {
        let keybag = try home.bytes(home.paths.keybag)
        try FileManager.default.removeItem(at: home.paths.deviceKey)
        #expect(throws: KeybagError.deviceKeyMissing(path: home.paths.deviceKey.path)) {
            try Keybag.open(paths: home.paths, settings: TestKeybag.settings(TestClock()))
        }
        #expect(throws: KeybagError.alreadyInitialized) {
            try Keybag.create(paths: home.paths, passcode: passcode("new"), settings: TestKeybag.settings(TestClock()))
        }
        #expect(!FileManager.default.fileExists(atPath: home.paths.deviceKey.path), "no new device key may be invented")
        try expectUntouched([home.paths.keybag: keybag])
    }

    /// A home moved to another path finds no key named for it; the key named for its old path,
    /// which opens its keybag, is named, with the command that puts it right — not "restore the
    /// file" — and nothing is renamed or invented meanwhile.
    @Test func aMovedHomeNamesTheKeyOfItsOldPath() throws {
        let moved = TresorPaths(home: home.root.appendingPathComponent("moved").path, environment: ["HOME": home.root.path])
        try FileManager.default.moveItem(at: home.paths.home, to: moved.home)
        #expect(throws: KeybagError.deviceKeyNamedForAnotherPath(path: moved.deviceKey.path, found: home.paths.deviceKey.path)) {
            try Keybag.open(paths: moved, settings: TestKeybag.settings(TestClock()))
        }
        #expect(!FileManager.default.fileExists(atPath: moved.deviceKey.path), "no key was renamed or made")
        try FileManager.default.moveItem(at: home.paths.deviceKey, to: moved.deviceKey)
        let keybag = try Keybag.open(paths: moved, settings: TestKeybag.settings(TestClock()))
        try keybag.unlock(passcode: passcode("right"))
    }

    @Test func aDamagedOrForeignDeviceKeyIsReported() throws {
        try Data(repeating: 7, count: 31).write(to: home.paths.deviceKey)
        #expect(throws: KeybagError.deviceKeyCorrupted(path: home.paths.deviceKey.path)) {
            try Keybag.open(paths: home.paths, settings: TestKeybag.settings(TestClock()))
        }
        try Data(repeating: 7, count: 32).write(to: home.paths.deviceKey)
        do {
            _ = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(TestClock()))
            Issue.record("a keybag opened with another device key")
        } catch let error as KeybagError {
            guard case .fileCorrupted(file: "keybag", _) = error else { throw error }
        }
    }

    @Test func createRefusesAnExistingKeybag() throws {
        let before = try home.bytes(home.paths.keybag)
        #expect(throws: KeybagError.alreadyInitialized) {
            try Keybag.create(paths: home.paths, passcode: passcode("other"), settings: TestKeybag.settings(TestClock()))
        }
        try expectUntouched([home.paths.keybag: before])
    }

    @Test func anInterruptedCreateReusesTheDeviceKey() throws {
        let deviceKey = try home.bytes(home.paths.deviceKey)
        try FileManager.default.removeItem(at: home.paths.keybag)  // as if create died after the device key
        _ = try Keybag.create(paths: home.paths, passcode: passcode("again"), settings: TestKeybag.settings(TestClock()))
        #expect(try home.bytes(home.paths.deviceKey) == deviceKey)
    }
}
