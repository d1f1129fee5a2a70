internal import CTresorCrypto
import Foundation

/// Finite-field Diffie–Hellman in the Second Oakley Group (RFC 2409 §6.2: the 1024-bit MODP
/// prime, generator 2) — the key agreement of the freedesktop Secret Service's
/// `dh-ietf1024-sha256-aes128-cbc-pkcs7` session. Nothing else in Tresor uses it, and nothing
/// new should: 1024-bit DH gives about 80 bits of security. The session key is derived from
/// the shared secret with ``KeyDerivation/secretServiceSessionKey(sharedSecret:)``.
///
/// Integers travel as unsigned big-endian bytes, as the Secret Service specification
/// transfers them. Our public key is always written as 128 bytes; a peer's is read at any
/// length (leading zero bytes mean nothing) but must lie strictly between 1 and p − 1.
///
/// The arithmetic is BoringSSL's constant-time Montgomery exponentiation
/// (`BN_mod_exp_mont_consttime`), from the copy swift-crypto vendors and links (swift-crypto
/// has no finite-field DH API; `Sources/CTresorCrypto/modexp.c` says how it is reached). Every
/// key pair is ephemeral — made for one session, used for one agreement, never stored. The
/// Secret Service specification itself says this transport encryption is not meant to withstand
/// active attacks: it is there so that secrets do not lie in plain text in memory, swap or
/// caches along the way.
public enum DiffieHellman {
    /// The size of the prime, and so of our public key and of every shared secret: 128 bytes.
    public static let byteCount = 128

    /// The Second Oakley Group's prime p, 128 bytes big-endian, exactly as RFC 2409 §6.2 prints
    /// it. The RFC also defines it as 2^1024 − 2^960 − 1 + 2^64 · (⌊2^894 π⌋ + 129093).
    public static let prime = bigEndianWords("""
        FFFFFFFF FFFFFFFF C90FDAA2 2168C234 C4C6628B 80DC1CD1
        29024E08 8A67CC74 020BBEA6 3B139B22 514A0879 8E3404DD
        EF9519B3 CD3A431B 302B0A6D F25F1437 4FE1356D 6D51C245
        E485B576 625E7EC6 F44C42E9 A637ED6B 0BFF5CB6 F406B7ED
        EE386BFB 5A899FA5 AE9F2411 7C4B1FE6 49286651 ECE65381
        FFFFFFFF FFFFFFFF
        """)

    /// The group's generator (RFC 2409 §6.2).
    public static let generator: UInt8 = 2

    /// The size of a fresh private exponent: 256 bits. RFC 7919 §5.2 ("Short Exponents")
    /// allows exponents of at least twice the group's security strength — about 80 bits for a
    /// 1024-bit prime, so 160 — in a safe-prime group like this one; 256 bits keep a wide
    /// margin at a quarter of the cost of a full-size exponent.
    public static let privateExponentByteCount = 32

    /// The longest peer public key read at all. A value of 128 bytes or fewer after its
    /// leading zeros is all that can be valid; anything over this bound is refused before a
    /// single byte of it is examined, so a huge key costs nothing.
    public static let maximumPeerPublicKeyByteCount = 512

    /// p − 1, big-endian: a peer's key equal to it is refused.
    static let primeMinusOne: Data = {
        var bytes = prime
        bytes[bytes.index(before: bytes.endIndex)] -= 1     // p is odd: no borrow
        return bytes
    }()

    /// One side of an agreement: a private exponent and its public key g^x mod p.
    public struct KeyPair: Sendable {
        private let exponent: Data

        /// g^x mod p, 128 bytes big-endian (left-padded with zeros).
        public let publicKey: Data

        /// A fresh key pair: a 256-bit private exponent from ``SecureRandom``.
        public init() {
            var exponent = Data()
            // 0 and 1 come with probability 2^-255; drawn again rather than trusted never to.
            while DiffieHellman.isBelowTwo(exponent) {
                exponent = SecureRandom.bytes(count: DiffieHellman.privateExponentByteCount)
            }
            self.init(checkedExponent: exponent)
        }

        /// A key pair with a given private exponent (big-endian). Only for known-answer tests
        /// and interoperability checks: a real session draws its exponent with ``init()``.
        /// Throws ``CryptoError/invalidParameter(_:)`` unless 2 ≤ exponent ≤ p − 2.
        public init(privateExponent: Data) throws {
            guard privateExponent.count <= DiffieHellman.byteCount else {
                throw CryptoError.invalidParameter("a Diffie-Hellman private exponent is at most 128 bytes")
            }
            guard !DiffieHellman.isBelowTwo(privateExponent),
                DiffieHellman.compare(privateExponent, DiffieHellman.primeMinusOne) == .orderedAscending
            else {
                throw CryptoError.invalidParameter("a Diffie-Hellman private exponent lies between 2 and p - 2")
            }
            self.init(checkedExponent: privateExponent)
        }

        private init(checkedExponent exponent: Data) {
            self.exponent = exponent
            publicKey = DiffieHellman.power(Data([DiffieHellman.generator]), exponent)
        }

        /// The shared secret with a peer: peer^x mod p, left-padded with zeros to 128 bytes —
        /// the padding the Secret Service's session key is derived from (libsecret pads to the
        /// prime's length too; a secret hashed without its leading zeros would give another
        /// key about one session in 256).
        ///
        /// Throws ``CryptoError/invalidPublicKey(_:)`` when `peerPublicKey` is empty, longer
        /// than ``maximumPeerPublicKeyByteCount``, or its value is 0, 1, p − 1 or at least p
        /// (the check of RFC 7919 §5.1: 1 and p − 1 would force the secret into {1, p − 1}).
        public func sharedSecret(peerPublicKey: Data) throws -> Data {
            DiffieHellman.power(try DiffieHellman.peerValue(peerPublicKey), exponent)
        }
    }

    /// A peer's public key without its leading zeros, refused unless 1 < y < p − 1. Every check
    /// on the byte count comes before any comparison of values.
    static func peerValue(_ key: Data) throws -> Data {
        guard !key.isEmpty else { throw CryptoError.invalidPublicKey("it is empty") }
        guard key.count <= maximumPeerPublicKeyByteCount else {
            throw CryptoError.invalidPublicKey("it is longer than \(maximumPeerPublicKeyByteCount) bytes")
        }
        let significant = Data(key.drop(while: { $0 == 0 }))
        guard !significant.isEmpty else { throw CryptoError.invalidPublicKey("it is zero") }
        guard significant.count <= byteCount else { throw CryptoError.invalidPublicKey("it is not less than p") }
        guard significant != Data([1]) else { throw CryptoError.invalidPublicKey("it is one") }
        switch compare(significant, primeMinusOne) {
        case .orderedSame: throw CryptoError.invalidPublicKey("it is p - 1")
        case .orderedDescending: throw CryptoError.invalidPublicKey("it is not less than p")
        case .orderedAscending: return significant
        }
    }

    /// base^exponent mod p as 128 bytes, base < p.
    static func power(_ base: Data, _ exponent: Data) -> Data {
        var out = Data(count: byteCount)
        let ok = out.withUnsafeMutableBytes { out in
            base.withUnsafeBytes { base in
                exponent.withUnsafeBytes { exponent in
                    prime.withUnsafeBytes { prime in
                        tresor_mod_exp(
                            base.bindMemory(to: UInt8.self).baseAddress, base.count,
                            exponent.bindMemory(to: UInt8.self).baseAddress, exponent.count,
                            prime.bindMemory(to: UInt8.self).baseAddress, prime.count,
                            out.bindMemory(to: UInt8.self).baseAddress, out.count)
                    }
                }
            }
        }
        // Only allocation can fail here: p is odd and every base was checked to be below it.
        precondition(ok == 1, "BoringSSL's modular exponentiation failed")
        return out
    }

    /// Two unsigned big-endian numbers compared by value (leading zeros mean nothing).
    static func compare(_ a: Data, _ b: Data) -> ComparisonResult {
        let a = a.drop(while: { $0 == 0 }), b = b.drop(while: { $0 == 0 })
        if a.count != b.count { return a.count < b.count ? .orderedAscending : .orderedDescending }
        for (x, y) in zip(a, b) where x != y { return x < y ? .orderedAscending : .orderedDescending }
        return .orderedSame
    }

    /// Whether an unsigned big-endian number is 0 or 1.
    static func isBelowTwo(_ value: Data) -> Bool {
        let significant = value.drop(while: { $0 == 0 })
        return significant.isEmpty || significant.elementsEqual([1])
    }

    /// Bytes from 32-bit words in hex separated by whitespace, the way RFC 2409 prints its primes.
    private static func bigEndianWords(_ words: String) -> Data {
        Data(words.split(whereSeparator: \.isWhitespace).flatMap { word -> [UInt8] in
            guard word.count == 8, let value = UInt32(word, radix: 16) else { preconditionFailure("not a 32-bit hex word") }
            return withUnsafeBytes(of: value.bigEndian) { Array($0) }
        })
    }
}
