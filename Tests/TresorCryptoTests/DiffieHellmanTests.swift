import Foundation
import Testing
import TresorCrypto

/// One fixed-exponent exchange in the Second Oakley Group.
struct DHVector: Sendable, CustomTestStringConvertible {
    let name: String
    /// The two private exponents (32 bytes each).
    let a: String
    let b: String
    /// g^a and g^b mod p, as 128 bytes.
    let publicA: String
    let publicB: String
    /// g^(ab) mod p, as 128 bytes.
    let sharedSecret: String
    var testDescription: String { name }
}

// Produced on this machine by Tests/Fixtures/secret-service-session-vectors.py, independently
// of Tresor: the prime from RFC 2409 §6.2's formula (2^1024 − 2^960 − 1 + 2^64 · (⌊2^894 π⌋ +
// 129093), π by Machin's formula), not from the hex below; the public keys with Python's
// integers (pow); the shared secret with Python's integers AND with pyca/cryptography 48's DH
// exchange (OpenSSL), which agreed from both sides.
// The exponents are SHA-256 of fixed labels. Vector 2's b was searched for (label counter 456)
// so that g^b mod p and the shared secret both begin with a zero byte: its peer key is 127
// bytes when written minimally, and its secret shows the 128-byte left padding.
let dhVectors: [DHVector] = [
    DHVector(
        name: "vector 1",
        a: "9572e9715fc4c6610f4dae41a6adcdb9a9b5d338d9f8f11e070afd7039885ca4",
        b: "345a270e41cfb1ea624a4d37fe35c599a81364a6d9dc890c02b4ea50fc9e6fae",
        publicA: """
            b905738e009a20259a77988be7f9633b5461f37a37b9ae741429855e619904b98647a3bc4d5cdef753a9c8499b0fa4ef
            96410d446c078cbad032ca011f71b225fe173e489a8f7cced794e5a939c663417ba2b21016cc6585f0ae8ddd358754d6
            c39e6d750289756bf4f3a87ee251114c24078fbdc9577b8e1e814bd0c018df53
            """,
        publicB: """
            8a8f91cd87a547666be9dc4192f2ce793d0c288a4897c2e2d16b582103e87bed2f1b024054b24411a4af70d157668333
            be573621702084248404080daa1a8c49db6a9e0a063f00d4e2828f6fa9863c8e5f46025ae21e790dfe8ae329236fe24f
            d8c6d16af555cb0a587f26dce9763dd38a31d5099615131f7cac492b63092dac
            """,
        sharedSecret: """
            dc3a83d03ca650fc178ba0092f83ce7333bb729c1ab0eeed3de5355f733fee0b5a8010357c3270168e58ff6d041e996f
            ae160af2b7d840e2e38673528b6308cc8f021d6c79bd2cc3cee9a43a1424da8e06fd8d16101f94a3ae1fed254074003d
            760897e72f4c0cd1ba5108a024a3138e32ebcb3bf3041cc086d1d5d852961664
            """),
    DHVector(
        name: "vector 2 (peer key and secret with a leading zero byte)",
        a: "9572e9715fc4c6610f4dae41a6adcdb9a9b5d338d9f8f11e070afd7039885ca4",
        b: "a8e6cfeae9b5ad0b60aecf298723627fb7f3d5245980ede0db6c74189f9918e5",
        publicA: """
            b905738e009a20259a77988be7f9633b5461f37a37b9ae741429855e619904b98647a3bc4d5cdef753a9c8499b0fa4ef
            96410d446c078cbad032ca011f71b225fe173e489a8f7cced794e5a939c663417ba2b21016cc6585f0ae8ddd358754d6
            c39e6d750289756bf4f3a87ee251114c24078fbdc9577b8e1e814bd0c018df53
            """,
        publicB: """
            0054b399461cd79240a3e75c617f1c37ed6af3f1a67b1a7dfb0cfe044466ee1832577815e5ad8a80179cb3ec9027f09f
            17f01ff0de5f8d094349cf4daee965b20b69e7cfac3f2792ddbc48250730f1d58bb6e12de7047c30b3e6e59fb48fc72a
            63bdcba5b8892d075968ef91531e35452b8f94fe543baffe17926a52fa231b7c
            """,
        sharedSecret: """
            00de59b704b8d71c4e2a3b39c408cb00147b237b8ae9996bd4b5364687313717aa3a19fe503bd9c965231abeff2200a7
            0e6a37a198579c22b0176352f8562c76ab98df4ab1bc3df70a2fbdf3291136f0ff4dc9b4778909e56dfd755933f2e834
            8190d1d87c71506e2fb19fbeca26146f0b3386e8d34ec477aa0785517bd2fe86
            """),
]

/// The Second Oakley Group's prime as RFC 2409 §6.2 prints it.
private let rfc2409Prime = """
    FFFFFFFF FFFFFFFF C90FDAA2 2168C234 C4C6628B 80DC1CD1
    29024E08 8A67CC74 020BBEA6 3B139B22 514A0879 8E3404DD
    EF9519B3 CD3A431B 302B0A6D F25F1437 4FE1356D 6D51C245
    E485B576 625E7EC6 F44C42E9 A637ED6B 0BFF5CB6 F406B7ED
    EE386BFB 5A899FA5 AE9F2411 7C4B1FE6 49286651 ECE65381
    FFFFFFFF FFFFFFFF
    """

/// p − 1 and p + 1, written out (the prime ends in 0xFF…FF).
private let primeMinusOne: Data = {
    var bytes = Data(hex: rfc2409Prime)
    bytes[bytes.count - 1] = 0xFE
    return bytes
}()
private let primePlusOne: Data = {
    var bytes = Data(hex: rfc2409Prime)
    // …ECE65381 FFFFFFFF FFFFFFFF + 1 = …ECE65382 00000000 00000000
    for index in (bytes.count - 8)..<bytes.count { bytes[index] = 0 }
    bytes[bytes.count - 9] += 1
    return bytes
}()

@Suite("Diffie-Hellman (RFC 2409 Second Oakley Group)")
struct DiffieHellmanTests {
    @Test("The group is RFC 2409 §6.2's: the published prime, 1024 bits, generator 2")
    func group() {
        #expect(DiffieHellman.prime.hex == Data(hex: rfc2409Prime).hex)
        #expect(DiffieHellman.prime.count == 128 && DiffieHellman.byteCount == 128)
        #expect(DiffieHellman.prime.first == 0xFF)
        #expect(DiffieHellman.generator == 2)
    }

    @Test("Two fresh key pairs agree on one 128-byte secret; fresh pairs differ")
    func agreement() throws {
        let alice = DiffieHellman.KeyPair(), bob = DiffieHellman.KeyPair()
        #expect(alice.publicKey.count == 128 && bob.publicKey.count == 128)
        #expect(alice.publicKey != bob.publicKey)
        let secretA = try alice.sharedSecret(peerPublicKey: bob.publicKey)
        let secretB = try bob.sharedSecret(peerPublicKey: alice.publicKey)
        #expect(secretA.count == 128)
        #expect(secretA == secretB)
        let carol = DiffieHellman.KeyPair()
        #expect(try carol.sharedSecret(peerPublicKey: alice.publicKey) != secretA)
    }

    @Test("Fixed exponents give the independently computed public keys and secret", arguments: dhVectors)
    func knownAnswer(_ v: DHVector) throws {
        let a = try DiffieHellman.KeyPair(privateExponent: Data(hex: v.a))
        let b = try DiffieHellman.KeyPair(privateExponent: Data(hex: v.b))
        #expect(a.publicKey.hex == Data(hex: v.publicA).hex)
        #expect(b.publicKey.hex == Data(hex: v.publicB).hex)
        #expect(try a.sharedSecret(peerPublicKey: Data(hex: v.publicB)).hex == Data(hex: v.sharedSecret).hex)
        #expect(try b.sharedSecret(peerPublicKey: Data(hex: v.publicA)).hex == Data(hex: v.sharedSecret).hex)
    }

    @Test("A peer key is read at any length up to 512 bytes: 127 bytes, or with extra leading zeros")
    func peerKeyLengths() throws {
        let v = dhVectors[1]
        let a = try DiffieHellman.KeyPair(privateExponent: Data(hex: v.a))
        let padded = Data(hex: v.publicB)
        let minimal = padded.drop(while: { $0 == 0 })
        #expect(minimal.count == 127)
        for key in [Data(minimal), padded, Data(count: 200) + padded, Data(count: 512 - 128) + padded] {
            #expect(try a.sharedSecret(peerPublicKey: key).hex == Data(hex: v.sharedSecret).hex, "\(key.count) bytes")
        }
        // The smallest valid key, 2, written in one byte.
        #expect(try a.sharedSecret(peerPublicKey: Data([2])) == a.publicKey)
        // And p − 2, the largest.
        var pMinusTwo = primeMinusOne
        pMinusTwo[127] = 0xFD
        #expect(try a.sharedSecret(peerPublicKey: pMinusTwo).count == 128)
    }

    @Test("Peer keys that are empty, 0, 1, p − 1, p or more, or over 512 bytes are refused")
    func refusedPeerKeys() throws {
        let pair = DiffieHellman.KeyPair()
        let cases: [(String, Data, String)] = [
            ("empty", Data(), "it is empty"),
            ("0", Data([0]), "it is zero"),
            ("0 in 128 bytes", Data(count: 128), "it is zero"),
            ("1", Data([1]), "it is one"),
            ("1 in 128 bytes", Data(count: 127) + [1], "it is one"),
            ("p - 1", primeMinusOne, "it is p - 1"),
            ("p - 1 after zeros", Data(count: 3) + primeMinusOne, "it is p - 1"),
            ("p", Data(hex: rfc2409Prime), "it is not less than p"),
            ("p + 1", primePlusOne, "it is not less than p"),
            ("2^1024 - 1", Data(repeating: 0xFF, count: 128), "it is not less than p"),
            ("129 bytes", Data([1]) + Data(count: 128), "it is not less than p"),
            ("512 bytes of 0xFF", Data(repeating: 0xFF, count: 512), "it is not less than p"),
            ("513 zero bytes", Data(count: 513), "it is longer than 512 bytes"),
            ("10 KB", Data(repeating: 0xA5, count: 10_240), "it is longer than 512 bytes"),
        ]
        for (name, key, reason) in cases {
            let error = #expect(throws: CryptoError.self, "\(name)") { try pair.sharedSecret(peerPublicKey: key) }
            #expect(error == .invalidPublicKey(reason), "\(name)")
        }
    }

    @Test("A 10 MB peer key is refused by its length, before any arithmetic")
    func hugePeerKeyIsRefusedByItsLength() throws {
        let pair = DiffieHellman.KeyPair()
        let huge = Data(repeating: 0x7F, count: 10 << 20)
        // The length's reason, not the range check's: the key was never converted to a number.
        #expect(throws: CryptoError.invalidPublicKey("it is longer than 512 bytes")) {
            try pair.sharedSecret(peerPublicKey: huge)
        }
    }

    @Test("Errors never carry the key's bytes")
    func errorsCarryNoKey() {
        let pair = DiffieHellman.KeyPair()
        let key = Data(count: 127) + [1]
        let error = #expect(throws: CryptoError.self) { try pair.sharedSecret(peerPublicKey: key) }
        #expect(error?.description == "invalid Diffie-Hellman public key: it is one")
    }

    @Test("Private exponents outside 2…p − 2 or over 128 bytes are refused")
    func refusedExponents() throws {
        let invalid: [(String, Data)] = [
            ("empty", Data()), ("0", Data([0])), ("1", Data([1])), ("1 in 32 bytes", Data(count: 31) + [1]),
            ("p - 1", primeMinusOne), ("p", Data(hex: rfc2409Prime)), ("129 bytes", Data(count: 129)),
        ]
        for (name, exponent) in invalid {
            let error = #expect(throws: CryptoError.self, "\(name)") {
                try DiffieHellman.KeyPair(privateExponent: exponent)
            }
            #expect(error?.kind == "invalidParameter", "\(name)")
        }
        // 2 is the smallest accepted: its public key is g² = 4.
        #expect(try DiffieHellman.KeyPair(privateExponent: Data([2])).publicKey == Data(count: 127) + [4])
    }
}
