/// Why an age file could not be written or read, in words a user can act on.
///
/// No case carries a passphrase, key or plaintext byte, so an error can be shown and logged
/// as it is.
public enum AgeError: Error, Equatable, Sendable {
    /// The bytes do not start like an age file (empty, another format, or armored text).
    case notAnAgeFile(String)
    /// An age file of a version this build does not read.
    case unsupportedVersion(String)
    /// The header breaks the format's rules (which rule is named; never a key byte).
    case malformedHeader(String)
    /// The file is encrypted to age recipients (public keys), not to a passphrase.
    case notPassphraseEncrypted
    /// The header's scrypt work factor is above what this reader accepts.
    case workFactorTooHigh(Int, maximum: Int)
    /// The passphrase does not open the file key (or the stanza holding it was changed).
    case wrongPassphrase
    /// The header's MAC does not match: the header was changed after it was written.
    case headerAltered
    /// A payload chunk does not authenticate: the file was changed, or chunks were moved.
    case payloadAltered(chunk: Int)
    /// The file ends before its last chunk: it was cut short.
    case truncated
    /// Bytes follow the last chunk.
    case trailingData
}

extension AgeError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .notAnAgeFile(let reason): return "not an age file: \(reason)"
        case .unsupportedVersion(let version): return "age format version \(version) is not supported (only v1)"
        case .malformedHeader(let rule): return "damaged age header: \(rule)"
        case .notPassphraseEncrypted: return "this age file is encrypted to keys, not to a passphrase"
        case .workFactorTooHigh(let factor, let maximum):
            return "the file asks for scrypt work factor \(factor); at most \(maximum) is accepted (it would need \(Self.memory(factor)) of memory)"
        case .wrongPassphrase: return "the passphrase does not open this file (or the file was changed)"
        case .headerAltered: return "the file's header was changed after it was written"
        case .payloadAltered(let chunk): return "the file was changed: chunk \(chunk) does not authenticate"
        case .truncated: return "the file is cut short: its last part is missing"
        case .trailingData: return "the file has extra bytes after its end"
        }
    }

    /// scrypt with r = 8 needs 1 KiB per round.
    private static func memory(_ factor: Int) -> String {
        guard factor < 40 else { return "more than a terabyte" }
        let kib = 1 << factor
        return kib >= 1 << 20 ? "\(kib >> 20) GiB" : "\(kib >> 10) MiB"
    }
}
