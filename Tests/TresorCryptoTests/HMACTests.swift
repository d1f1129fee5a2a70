import Crypto
import Foundation
import Testing
import TresorCrypto

struct HMACVector: Sendable, CustomTestStringConvertible {
    let name: String
    let key: String
    let data: String
    let mac: String
    var testDescription: String { name }
}

// RFC 4231 ("Identifiers and Test Vectors for HMAC-SHA-224, -256, -384, and -512"),
// section 4, HMAC-SHA-256 results of test cases 1, 2, 3, 4, 6 and 7 (test case 5 is a
// truncated output and is covered by the rejection test below). Cross-checked with
// Python's hmac/hashlib.
let rfc4231Vectors: [HMACVector] = [
    HMACVector(
        name: "RFC 4231 §4.2 Test Case 1", key: String(repeating: "0b", count: 20),
        data: Data("Hi There".utf8).hex,
        mac: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
    HMACVector(
        name: "RFC 4231 §4.3 Test Case 2 (\"Jefe\")", key: Data("Jefe".utf8).hex,
        data: Data("what do ya want for nothing?".utf8).hex,
        mac: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
    HMACVector(
        name: "RFC 4231 §4.4 Test Case 3", key: String(repeating: "aa", count: 20),
        data: String(repeating: "dd", count: 50),
        mac: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
    HMACVector(
        name: "RFC 4231 §4.5 Test Case 4", key: "0102030405060708090a0b0c0d0e0f10111213141516171819",
        data: String(repeating: "cd", count: 50),
        mac: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
    HMACVector(
        name: "RFC 4231 §4.7 Test Case 6 (key longer than a block)", key: String(repeating: "aa", count: 131),
        data: Data("Test Using Larger Than Block-Size Key - Hash Key First".utf8).hex,
        mac: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
    HMACVector(
        name: "RFC 4231 §4.8 Test Case 7 (key and data longer than a block)", key: String(repeating: "aa", count: 131),
        data: Data(
            ("This is a test using a larger than block-size key and a larger than block-size data. "
                + "The key needs to be hashed before being used by the HMAC algorithm.").utf8
        ).hex,
        mac: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
]

@Suite("HMAC-SHA256")
struct HMACTests {
    @Test("RFC 4231 vectors", arguments: rfc4231Vectors)
    func publishedVectors(_ v: HMACVector) {
        let key = SymmetricKey(hex: v.key)
        let mac = MessageAuthentication.hmacSHA256(Data(hex: v.data), key: key)
        #expect(mac.hex == Data(hex: v.mac).hex)
        #expect(MessageAuthentication.isValidHMACSHA256(Data(hex: v.mac), for: Data(hex: v.data), key: key))
        // A prepared key gives the same code, and the same again: each message starts from
        // the keyed state, not from where the last one left it.
        let prepared = PreparedHMACKey(key)
        #expect(prepared.authenticationCode(for: Data(hex: v.data)).hex == Data(hex: v.mac).hex)
        #expect(prepared.authenticationCode(for: Data(hex: v.data)).hex == Data(hex: v.mac).hex)
    }

    @Test("A prepared key used from many threads at once gives each message its own code")
    func preparedKeyConcurrently() async {
        let key = SymmetricKey(hex: rfc4231Vectors[1].key)
        let prepared = PreparedHMACKey(key)
        await withTaskGroup(of: Bool.self) { group in
            for n in 0..<64 {
                group.addTask {
                    let message = Data("message \(n)".utf8)
                    return (0..<50).allSatisfy { _ in prepared.authenticationCode(for: message) == MessageAuthentication.hmacSHA256(message, key: key)
                    }
                }
            }
            for await same in group { #expect(same) }
        }
    }

    @Test("Validation rejects any flipped bit, a truncated or extended code, other data and other keys")
    func validationRejects() {
        let v = rfc4231Vectors[1]
        let key = SymmetricKey(hex: v.key)
        let data = Data(hex: v.data)
        let mac = Data(hex: v.mac)
        for bit in 0..<(mac.count * 8) {
            #expect(!MessageAuthentication.isValidHMACSHA256(mac.flippingBit(bit), for: data, key: key), "bit \(bit)")
        }
        // RFC 4231 test case 5 publishes an output truncated to 128 bits; Tresor's check wants all 32 bytes.
        #expect(!MessageAuthentication.isValidHMACSHA256(mac.prefix(16), for: data, key: key))
        #expect(!MessageAuthentication.isValidHMACSHA256(Data(), for: data, key: key))
        #expect(!MessageAuthentication.isValidHMACSHA256(mac + Data([0]), for: data, key: key))
        #expect(!MessageAuthentication.isValidHMACSHA256(mac, for: data + Data([0]), key: key))
        #expect(!MessageAuthentication.isValidHMACSHA256(mac, for: data, key: SymmetricKey(data: Data("Jefd".utf8))))
    }

    @Test("Codes given as slices or arrays validate")
    func containerIndependent() {
        let v = rfc4231Vectors[0]
        let key = SymmetricKey(hex: v.key)
        let data = Data(hex: v.data)
        let buffer = Data([1, 2, 3]) + Data(hex: v.mac)
        #expect(MessageAuthentication.isValidHMACSHA256(buffer.dropFirst(3), for: data, key: key))
        #expect(MessageAuthentication.isValidHMACSHA256(Array(Data(hex: v.mac)), for: data, key: key))
    }
}
