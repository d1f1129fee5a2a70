import Crypto

/// Text the user typed as a secret — a passcode, a passphrase, a password — kept in the storage
/// swift-crypto gives its keys, whose bytes are zeroed when the last copy is released. The
/// text's UTF-8 goes there straight from the string, through no buffer of its own.
///
/// The string it was made from is the caller's to let go of; what a `SecretText` guarantees is
/// that the copy every key derivation reads does not outlive its use in freed memory.
public struct SecretText: Sendable {
    private let storage: SymmetricKey

    /// The UTF-8 of `text`.
    public init(_ text: String) {
        var text = text
        storage = text.withUTF8 { SymmetricKey(data: UnsafeRawBufferPointer($0)) }
    }

    /// How many UTF-8 bytes the text has.
    public var byteCount: Int { storage.bitCount / 8 }

    /// Calls `body` with the text's UTF-8, where it is kept.
    /// - Parameter body: reads the bytes; they must not escape it.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes(body)
    }
}
