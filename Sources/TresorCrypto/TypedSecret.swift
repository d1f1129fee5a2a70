/// A secret the user typed — a passcode, a passphrase, a password — kept in a ``SecretText``
/// once made from the string it arrived as.
public protocol TypedSecret {
    /// The secret of `text`, or an error saying why `text` cannot be one (empty, too long).
    init(_ text: String) throws
}

extension TypedSecret {
    /// The secret of the string a request was decoded into, taken out of it: the string's bytes
    /// are overwritten with zeros where they are kept, so its freed storage holds no copy of the
    /// secret (docs/SECURITY.md §4.11), and `text` is left empty.
    ///
    /// `text` must be the only copy of its storage — a field of a body just decoded, not a string
    /// shared with anything that reads it later — or the other copies read zeros too.
    /// - Parameter text: the decoded field.
    /// - Returns: the secret.
    /// - Throws: what ``init(_:)`` throws; `text` is zeroed all the same.
    public static func taking(_ text: inout String) throws -> Self {
        var taken = text
        text = ""
        defer { taken.overwriteWithZeros() }
        return try Self(taken)
    }

    /// `taking(_:)` of an optional field: nil when it is absent.
    /// - Parameter text: the decoded field, nil afterwards.
    /// - Returns: the secret, or nil.
    /// - Throws: what ``init(_:)`` throws; `text` is zeroed all the same.
    public static func taking(_ text: inout String?) throws -> Self? {
        guard var taken = text else { return nil }
        text = nil
        return try taking(&taken)
    }
}

extension String {
    /// Overwrites the bytes of the string's storage with zeros. Only for a string that is the
    /// only copy of its storage (`TypedSecret.taking(_:)`).
    mutating func overwriteWithZeros() {
        withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            // The storage is this string's alone: writing through its UTF-8 view changes no
            // other string.
            UnsafeMutableRawPointer(mutating: base).initializeMemory(as: UInt8.self, repeating: 0, count: bytes.count)
        }
        self = ""
    }
}
