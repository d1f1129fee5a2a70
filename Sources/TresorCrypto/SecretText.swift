import Crypto
import Foundation

/// Text the user typed as a secret — a passcode, a passphrase, a password — kept in the storage
/// swift-crypto gives its keys, whose bytes are zeroed when the last copy is released. The
/// text's UTF-8 goes there straight from the string, through no buffer of its own.
///
/// The string it was made from is the caller's to let go of; what a `SecretText` guarantees is
/// that the copy every key derivation reads does not outlive its use in freed memory. Two are
/// equal when their bytes are, compared in constant time (swift-crypto's key comparison).
public struct SecretText: TypedSecret, Sendable, Equatable {
    private let storage: SymmetricKey

    /// The UTF-8 of `text`.
    public init(_ text: String) {
        var text = text
        storage = text.withUTF8 { SymmetricKey(data: UnsafeRawBufferPointer($0)) }
    }

    /// UTF-8 that arrived as bytes (a password the desktop's prompter sent), copied from where
    /// they are.
    public init(utf8 bytes: some ContiguousBytes) {
        storage = SymmetricKey(data: bytes)
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
