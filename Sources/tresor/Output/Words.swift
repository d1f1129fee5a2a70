import ArgumentParser
import TresorKit

/// Names of values (`afterFirstUnlockThisDeviceOnly`, `readOnly`) as people read them:
/// "after first unlock, this device only", "read-only".
enum Words {
    /// `count` and the noun, singular for one: "1 change", "3 changes".
    /// - Parameters:
    ///   - count: how many.
    ///   - noun: the singular; an `s` makes the plural.
    static func counted(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

    /// A length of time, as exact as a glance needs: "90 s", "25 min", "8 h", "7 d".
    /// - Parameter seconds: how long.
    static func duration(_ seconds: Int) -> String {
        switch seconds {
        case ..<120: "\(seconds) s"
        case ..<7200: "\(seconds / 60) min"
        case ..<172_800: "\(seconds / 3600) h"
        default: "\(seconds / 86400) d"
        }
    }

    /// A camel-case name in words; other text as it is.
    /// - Parameter name: e.g. `whenPasscodeSetThisDeviceOnly`.
    /// - Returns: e.g. "when passcode set, this device only".
    static func of(_ name: String) -> String {
        switch name {
        case "readOnly": return "read-only"
        case "lockedSinceStart": return "locked since the daemon started"
        default: break
        }
        guard name.contains(where: \.isUppercase), !name.contains(" ") else { return name }
        var words = ""
        for character in name {
            if character.isUppercase && !words.isEmpty { words += " " }
            words += character.lowercased()
        }
        return words.replacing(" this device only", with: ", this device only")
    }
}

extension ProtectionClass: ExpressibleByArgument {
    /// A protection class by its name (`afterFirstUnlock`) or in words, any case, with
    /// spaces or dashes (`after-first-unlock`, "after first unlock, this device only").
    public init?(argument: String) {
        let key = { (text: String) in text.lowercased().filter(\.isLetter) }
        guard let match = Self.allCases.first(where: { key($0.rawValue) == key(argument) }) else { return nil }
        self = match
    }
}
