import Foundation
import Testing
import TresorAge
import TresorCrypto

/// Files Tresor writes read back byte for byte, at every size around the 64 KiB chunk edges and
/// the edges of the groups of 16 chunks the reader opens at once.
@Suite struct AgeRoundTripTests {
    static let passphrase = SecretText("correct horse battery staple")

    @Test(arguments: [0, 1, 65_535, 65_536, 65_537, 3 * 65_536, 3 * 65_536 + 5, 16 * 65_536, 16 * 65_536 + 1, 17 * 65_536, 40 * 65_536 + 9])
    func roundTrip(size: Int) throws {
        let plaintext = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
        let file = try AgeFile.encrypt(plaintext, passphrase: Self.passphrase, workFactor: 4)
        #expect(try AgeFile.decrypt(file, passphrase: Self.passphrase) == plaintext)
        // 16-byte tag per chunk; an empty file still has one (empty) final chunk.
        let chunks = max(1, (size + 65_535) / 65_536)
        #expect(file.count == Self.headerByteCount(of: file) + 16 + size + 16 * chunks)
    }

    @Test func writesInAnySizeGiveTheSameStream() throws {
        let plaintext = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0) })
        var file = Data()
        var encryptor = try AgeEncryptor(passphrase: Self.passphrase, workFactor: 4) { file += $0 }
        var offset = 0
        for size in [1, 7, 65_536, 3, 100_000, 34_453] {
            try encryptor.write(plaintext[offset..<offset + size])
            offset += size
        }
        try encryptor.finish()
        #expect(try AgeFile.decrypt(file, passphrase: Self.passphrase) == plaintext)
    }

    /// A payload written before its header (the scrypt run, while the payload is sealed) opens
    /// like any other file once the header is put before it; the header's length is known
    /// before the KDF runs; a wrong passphrase does not open it.
    @Test(arguments: [1, 4, 9, 10])
    func aPayloadWrittenBeforeItsHeaderOpens(workFactor: Int) throws {
        let key = try AgeFileKey(workFactor: workFactor)
        var payload = Data()
        var encryptor = AgeEncryptor(payloadOf: key) { payload += $0 }
        try encryptor.write(Data(repeating: 7, count: 70_000))
        try encryptor.finish()
        let header = try key.header(passphrase: Self.passphrase)
        #expect(header.count == key.headerByteCount)
        #expect(try AgeFile.decrypt(header + payload, passphrase: Self.passphrase) == Data(repeating: 7, count: 70_000))
        #expect(throws: AgeError.self) { try AgeFile.decrypt(header + payload, passphrase: SecretText("wrong")) }
        #expect(throws: (any Error).self) { try key.header(passphrase: SecretText("")) }
    }

    @Test func workFactorsOutsideScryptsRangeAreRefused() {
        #expect(throws: AgeError.self) { try AgeFileKey(workFactor: 0) }
        #expect(throws: AgeError.self) { try AgeFileKey(workFactor: ScryptStanza.maximumWorkFactor + 1) }
    }

    @Test func chunksComeBackAtMost64KiBAtATime() throws {
        let file = try AgeFile.encrypt(Data(count: 300_000), passphrase: Self.passphrase, workFactor: 4)
        var remaining = file[...]
        var decryptor = try AgeDecryptor(passphrase: Self.passphrase) { count in
            let next = remaining.prefix(count)
            remaining = remaining.dropFirst(next.count)
            return Data(next)
        }
        var sizes: [Int] = []
        while let chunk = try decryptor.read() { sizes.append(chunk.count) }
        #expect(sizes == [65_536, 65_536, 65_536, 65_536, 37_856])
    }

    @Test func theHeaderStatesTheWorkFactorAndEachFileHasItsOwnSaltAndKey() throws {
        let first = try AgeFile.encrypt(Data("same".utf8), passphrase: Self.passphrase, workFactor: 5)
        let second = try AgeFile.encrypt(Data("same".utf8), passphrase: Self.passphrase, workFactor: 5)
        let lines = String(decoding: first.prefix(Self.headerByteCount(of: first)), as: UTF8.self).split(separator: "\n")
        #expect(lines[0] == "age-encryption.org/v1")
        let stanza = lines[1].split(separator: " ")
        #expect(stanza.count == 4 && stanza[0] == "->" && stanza[1] == "scrypt" && stanza[3] == "5")
        #expect(stanza[2].count == 22, "16 salt bytes, unpadded Base64")
        #expect(lines[3].hasPrefix("--- "))
        #expect(first != second)
        #expect(first.count == second.count)
    }

    @Test func theDefaultWorkFactorIsAges() {
        #expect(ScryptStanza.defaultWorkFactor == 18)
        #expect(ScryptStanza.maximumWorkFactor == 20)
    }

    @Test func anEmptyPassphraseIsRefused() {
        #expect(throws: (any Error).self) { try AgeFile.encrypt(Data("x".utf8), passphrase: SecretText(""), workFactor: 4) }
    }

    /// The header's length: through the newline ending the `--- MAC` line.
    static func headerByteCount(of file: Data) -> Int {
        let marker = Data("\n--- ".utf8)
        let start = file.range(of: marker)!.upperBound
        return file[start...].firstIndex(of: UInt8(ascii: "\n"))! + 1 - file.startIndex
    }
}
