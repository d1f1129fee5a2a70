internal import CTresorCrypto
import Foundation

/// Finite-field Diffie–Hellman in the Second Oakley Group (RFC 2409 §6.2: the 1024-bit MODP
/// prime, generator 2) — the key agreement of the freedesktop Secret Service's
/// `dh-ietf1024-sha256-aes128-cbc-pkcs7` session — and in RFC 3526's 1536-bit group, that of
/// gcr's secret exchange with the desktop's prompter (``Group/modp1536``). Nothing else in
/// Tresor uses it, and nothing new should: 1024-bit DH gives about 80 bits of security. The session key is derived from
/// the shared secret with ``KeyDerivation/secretServiceSessionKey(sharedSecret:)``.
///
/// Integers travel as unsigned big-endian bytes, as the Secret Service specification
/// transfers them. Our public key is always written at the prime's size; a peer's is read at any
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
    /// A MODP group: a safe prime p, big-endian, with generator 2. Integers of the group travel
    /// as unsigned big-endian bytes, ours always written at the prime's length.
    public struct Group: Sendable, Equatable {
        /// The prime, big-endian, exactly as its RFC prints it.
        public let prime: Data
        /// p − 1, big-endian: a peer's key equal to it is refused.
        let primeMinusOne: Data

        /// The size of the prime, and so of our public key and of every shared secret.
        public var byteCount: Int { prime.count }

        init(words: String) {
            prime = DiffieHellman.bigEndianWords(words)
            var bytes = prime
            bytes[bytes.index(before: bytes.endIndex)] -= 1  // p is odd: no borrow
            primeMinusOne = bytes
        }

        /// The Second Oakley Group (RFC 2409 §6.2, 1024 bits): the Secret Service's session. It
        /// is also defined as 2^1024 − 2^960 − 1 + 2^64 · (⌊2^894 π⌋ + 129093).
        public static let secondOakley = Group(
            words: """
                FFFFFFFF FFFFFFFF C90FDAA2 2168C234 C4C6628B 80DC1CD1
                29024E08 8A67CC74 020BBEA6 3B139B22 514A0879 8E3404DD
                EF9519B3 CD3A431B 302B0A6D F25F1437 4FE1356D 6D51C245
                E485B576 625E7EC6 F44C42E9 A637ED6B 0BFF5CB6 F406B7ED
                EE386BFB 5A899FA5 AE9F2411 7C4B1FE6 49286651 ECE65381
                FFFFFFFF FFFFFFFF
                """)

        /// The 1536-bit MODP group (RFC 3526 §2, "group 5"): what gcr's secret exchange with the
        /// desktop's prompter agrees keys in (gcr calls it `ietf-ike-grp-modp-1536`).
        public static let modp1536 = Group(
            words: """
                FFFFFFFF FFFFFFFF C90FDAA2 2168C234 C4C6628B 80DC1CD1
                29024E08 8A67CC74 020BBEA6 3B139B22 514A0879 8E3404DD
                EF9519B3 CD3A431B 302B0A6D F25F1437 4FE1356D 6D51C245
                E485B576 625E7EC6 F44C42E9 A637ED6B 0BFF5CB6 F406B7ED
                EE386BFB 5A899FA5 AE9F2411 7C4B1FE6 49286651 ECE45B3D
                C2007CB8 A163BF05 98DA4836 1C55D39A 69163FA8 FD24CF5F
                83655D23 DCA3AD96 1C62F356 208552BB 9ED52907 7096966D
                670C354E 4ABC9804 F1746C08 CA237327 FFFFFFFF FFFFFFFF
                """)
    }

    /// The size of the Second Oakley Group's prime, and so of our public key and of every
    /// shared secret of a Secret Service session: 128 bytes.
    public static let byteCount = 128

    /// The Second Oakley Group's prime p, 128 bytes big-endian, exactly as RFC 2409 §6.2 prints
    /// it (``Group/secondOakley``).
    public static var prime: Data { Group.secondOakley.prime }

    /// The groups' generator (RFC 2409 §6.2, RFC 3526 §2).
    public static let generator: UInt8 = 2

    /// The size of a fresh private exponent: 256 bits. RFC 7919 §5.2 ("Short Exponents")
    /// allows exponents of at least twice the group's security strength — about 80 bits for a
    /// 1024-bit prime, so 160 (about 90 for 1536 bits) — in a safe-prime group like these; 256
    /// bits keep a wide margin at a fraction of the cost of a full-size exponent.
    public static let privateExponentByteCount = 32

    /// The longest peer public key read at all. A value of the prime's size or fewer after its
    /// leading zeros is all that can be valid; anything over this bound is refused before a
    /// single byte of it is examined, so a huge key costs nothing.
    public static let maximumPeerPublicKeyByteCount = 512

    /// One side of an agreement: a private exponent and its public key g^x mod p.
    public struct KeyPair: Sendable {
        private let exponent: Data
        /// The group this pair agrees keys in.
        public let group: Group

        /// g^x mod p, the prime's size big-endian (left-padded with zeros).
        public let publicKey: Data

        /// A fresh key pair in `group`: a 256-bit private exponent from ``SecureRandom``.
        public init(group: Group = .secondOakley) {
            var exponent = Data()
            // 0 and 1 come with probability 2^-255; drawn again rather than trusted never to.
            while DiffieHellman.isBelowTwo(exponent) {
                exponent = SecureRandom.bytes(count: DiffieHellman.privateExponentByteCount)
            }
            self.init(checkedExponent: exponent, group: group)
        }

        /// A key pair with a given private exponent (big-endian). Only for known-answer tests
        /// and interoperability checks: a real session draws its exponent with ``init()``.
        /// Throws ``CryptoError/invalidParameter(_:)`` unless 2 ≤ exponent ≤ p − 2.
        public init(privateExponent: Data, group: Group = .secondOakley) throws {
            guard privateExponent.count <= group.byteCount else {
                throw CryptoError.invalidParameter("a Diffie-Hellman private exponent is at most \(group.byteCount) bytes")
            }
            guard !DiffieHellman.isBelowTwo(privateExponent),
                DiffieHellman.compare(privateExponent, group.primeMinusOne) == .orderedAscending
            else {
                throw CryptoError.invalidParameter("a Diffie-Hellman private exponent lies between 2 and p - 2")
            }
            self.init(checkedExponent: privateExponent, group: group)
        }

        private init(checkedExponent exponent: Data, group: Group) {
            self.exponent = exponent
            self.group = group
            publicKey = DiffieHellman.power(Data([DiffieHellman.generator]), exponent, group)
        }

        /// The shared secret with a peer: peer^x mod p, left-padded with zeros to the prime's size —
        /// the padding the Secret Service's session key is derived from (libsecret pads to the
        /// prime's length too; a secret hashed without its leading zeros would give another
        /// key about one session in 256).
        ///
        /// Throws ``CryptoError/invalidPublicKey(_:)`` when `peerPublicKey` is empty, longer
        /// than ``maximumPeerPublicKeyByteCount``, or its value is 0, 1, p − 1 or at least p
        /// (the check of RFC 7919 §5.1: 1 and p − 1 would force the secret into {1, p − 1}).
        public func sharedSecret(peerPublicKey: Data) throws -> Data {
            DiffieHellman.power(try DiffieHellman.peerValue(peerPublicKey, group), exponent, group)
        }
    }

    /// A peer's public key without its leading zeros, refused unless 1 < y < p − 1. Every check
    /// on the byte count comes before any comparison of values.
    static func peerValue(_ key: Data, _ group: Group = .secondOakley) throws -> Data {
        guard !key.isEmpty else { throw CryptoError.invalidPublicKey("it is empty") }
        guard key.count <= maximumPeerPublicKeyByteCount else {
            throw CryptoError.invalidPublicKey("it is longer than \(maximumPeerPublicKeyByteCount) bytes")
        }
        let significant = Data(key.drop(while: { $0 == 0 }))
        guard !significant.isEmpty else { throw CryptoError.invalidPublicKey("it is zero") }
        guard significant.count <= group.byteCount else { throw CryptoError.invalidPublicKey("it is not less than p") }
        guard significant != Data([1]) else { throw CryptoError.invalidPublicKey("it is one") }
        switch compare(significant, group.primeMinusOne) {
        case .orderedSame: throw CryptoError.invalidPublicKey("it is p - 1")
        case .orderedDescending: throw CryptoError.invalidPublicKey("it is not less than p")
        case .orderedAscending: return significant
        }
    }

    /// base^exponent mod p as the prime's size in bytes, base < p.
    static func power(_ base: Data, _ exponent: Data, _ group: Group = .secondOakley) -> Data {
        let prime = group.prime
        var out = Data(count: group.byteCount)
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
    fileprivate static func bigEndianWords(_ words: String) -> Data {
        Data(
            words.split(whereSeparator: \.isWhitespace).flatMap { word -> [UInt8] in
                guard word.count == 8, let value = UInt32(word, radix: 16) else { preconditionFailure("not a 32-bit hex word") }
                return withUnsafeBytes(of: value.bigEndian) { Array($0) }
            })
    }
}
