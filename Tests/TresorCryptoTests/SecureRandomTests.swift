import Crypto
import Foundation
import Testing
import TresorCrypto

@Suite("SecureRandom")
struct SecureRandomTests {
    @Test("bytes(count:) returns exactly count bytes", arguments: [0, 1, 12, 16, 31, 32, 33, 1000])
    func sizes(count: Int) {
        #expect(SecureRandom.bytes(count: count).count == count)
    }

    @Test("Successive draws differ")
    func distinct() {
        var seen = Set<Data>()
        for _ in 0..<256 { seen.insert(SecureRandom.bytes(count: 16)) }
        #expect(seen.count == 256)
    }

    @Test("Output is not degenerate (a 4 KiB draw uses most byte values)")
    func notDegenerate() {
        let sample = SecureRandom.bytes(count: 4096)
        // Expected ≈ 256 distinct values; fewer than 200 has negligible probability.
        #expect(Set(sample).count > 200)
        #expect(sample != Data(count: 4096))
    }

    @Test("key(bitCount:) gives keys of the asked size, fresh each time", arguments: [128, 192, 256])
    func keys(bits: Int) {
        let a = SecureRandom.key(bitCount: bits)
        let b = SecureRandom.key(bitCount: bits)
        #expect(a.bitCount == bits)
        #expect(a.bytes.count == bits / 8)
        #expect(a.bytes != b.bytes)
    }
}
