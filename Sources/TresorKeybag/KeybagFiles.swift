import Foundation
import TresorSystem

/// Where one keybag keeps its files. The login keybag lives at the top of the home; each
/// keychain the user creates has its own keybag (its own passcode and lock state) under
/// `keychains/`. All of them share the home's one device key.
public struct KeybagFiles: Sendable, Equatable {
    /// The folder the keybag's files live in (created 0700).
    public var folder: URL
    public var deviceKey: URL
    /// The device key's place inside the home, in homes made before it moved out.
    public var legacyDeviceKey: URL
    public var keybag: URL
    public var unlockAttempts: URL
    /// The login link (`tresor passcode link-login`): the class keys under the login password.
    public var loginLink: URL

    /// The login keybag of a home.
    public init(paths: TresorPaths) {
        folder = paths.home
        deviceKey = paths.deviceKey
        legacyDeviceKey = paths.legacyDeviceKey
        keybag = paths.keybag
        unlockAttempts = paths.unlockAttempts
        loginLink = paths.loginLink
    }

    /// The keybag of the keychain `name`, created with `tresor keychain create`.
    public static func keychain(_ name: String, in paths: TresorPaths) -> KeybagFiles {
        var files = KeybagFiles(paths: paths)
        files.folder = paths.keychainsFolder
        files.keybag = paths.keychainsFolder.appendingPathComponent("\(name).keybag")
        files.unlockAttempts = paths.keychainsFolder.appendingPathComponent("\(name).unlock-attempts")
        files.loginLink = paths.keychainsFolder.appendingPathComponent("\(name).login-link")
        return files
    }
}
