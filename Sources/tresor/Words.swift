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
