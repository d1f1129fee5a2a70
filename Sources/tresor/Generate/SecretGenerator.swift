import ArgumentParser
import TresorModel

/// Strong random secrets for `tresor item generate`: characters drawn from chosen classes
/// (at least one of each), or a passphrase of words from the EFF's long list. Every draw is
/// uniform (`SystemRandomNumberGenerator`: the kernel's `getrandom`).
enum SecretGenerator {
    /// The kinds of characters a generated secret draws from.
    enum CharacterClass: String, CaseIterable, ExpressibleByArgument {
        case lower, upper, digits, symbols

        /// Its characters. Symbols leave out quotes, backslash, backtick and space, which
        /// break shell and configuration files.
        var characters: [Character] {
            switch self {
            case .lower: return Array("abcdefghijklmnopqrstuvwxyz")
            case .upper: return Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
            case .digits: return Array("0123456789")
            case .symbols: return Array("!#$%&()*+,-./:;<=>?@[]^_{|}~")
            }
        }
    }

    /// The longest secret generated.
    static let maximumLength = 4096

    /// `length` characters drawn uniformly from `classes`, with at least one of each.
    /// - Parameters:
    ///   - length: how many characters; at least the number of classes.
    ///   - classes: which kinds of characters.
    /// - Returns: the secret.
    /// - Throws: `ValidationError` for an impossible length or no class.
    static func characters(length: Int, classes: [CharacterClass]) throws -> String {
        let classes = CharacterClass.allCases.filter(classes.contains)
        guard !classes.isEmpty else { throw ValidationError("give at least one character class") }
        guard length >= classes.count, length <= maximumLength else {
            throw ValidationError("the length must be between \(classes.count) and \(maximumLength)")
        }
        let alphabet = classes.flatMap(\.characters)
        var generator = SystemRandomNumberGenerator()
        while true {
            let secret = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            // Rejection keeps the draw uniform over the secrets that have every class.
            if classes.allSatisfy({ $0.characters.contains(where: secret.contains) }) { return secret }
        }
    }

    /// `count` words of the EFF's long list, joined by `separator`.
    /// - Parameters:
    ///   - count: how many words, 1 to 64.
    ///   - separator: between words.
    /// - Returns: the passphrase.
    /// - Throws: `ValidationError` for a count out of range.
    static func passphrase(words count: Int, separator: String) throws -> String {
        guard (1...64).contains(count) else { throw ValidationError("--words takes 1 to 64") }
        let words = EFFLongWordList.words
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in words.randomElement(using: &generator)! }.joined(separator: separator)
    }

    /// The bits of entropy of such a secret (for characters: before the one-of-each rule,
    /// which removes less than a bit for lengths over 10).
    static func bits(length: Int, classes: [CharacterClass]) -> Int {
        let alphabet = CharacterClass.allCases.filter(classes.contains).reduce(0) { $0 + $1.characters.count }
        return Int(Double(length) * log2(Double(alphabet)))
    }

    static func bits(words: Int) -> Int { Int(Double(words) * log2(7776)) }
}

#if canImport(Glibc)
import Glibc
#endif
