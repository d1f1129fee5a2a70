import Foundation
import Testing
import TresorAge
import TresorCrypto

/// Every way a file can be wrong gives the error that says so — wrong passphrase, changed
/// header, changed/moved/cut chunks, extra bytes, foreign files, absurd work factors.
@Suite struct AgeDamagedFileTests {
    static let passphrase = SecretText("correct horse battery staple")
    static let plaintext = Data((0..<(3 * 65_536 + 100)).map { UInt8(truncatingIfNeeded: $0 / 3) })
    static let file = try! AgeFile.encrypt(plaintext, passphrase: passphrase, workFactor: 4)
    static var headerEnd: Int { AgeRoundTripTests.headerByteCount(of: file) }
    static var payloadStart: Int { headerEnd + 16 }
    static let sealedChunk = 65_536 + 16

    func decrypt(_ file: Data, passphrase: SecretText = Self.passphrase, maximumWorkFactor: Int = ScryptStanza.maximumWorkFactor) throws {
        _ = try AgeFile.decrypt(file, passphrase: passphrase, maximumWorkFactor: maximumWorkFactor)
    }

    @Test func aWrongPassphrase() {
        #expect(throws: AgeError.wrongPassphrase) { try decrypt(Self.file, passphrase: SecretText("correct horse battery stapler")) }
        #expect(throws: AgeError.wrongPassphrase) { try decrypt(Self.file, passphrase: SecretText("")) }
    }

    @Test func aChangedHeaderByte() throws {
        // The salt's first character: the stanza still parses, but its key changes.
        var file = Self.file
        let salt = file.firstRange(of: Data("scrypt ".utf8))!.upperBound
        file[salt] = file[salt] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: AgeError.wrongPassphrase) { try decrypt(file) }

        // A bit of the MAC itself.
        var mac = Self.file
        mac[Self.headerEnd - 2] = mac[Self.headerEnd - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: (any Error).self) { try decrypt(mac) }
        #expect(throws: AgeError.headerAltered) {
            // The MAC is canonical Base64 of 32 bytes only if its last character keeps the
            // unused bits clear; change a middle one instead.
            var middle = Self.file
            let index = Self.headerEnd - 20
            middle[index] = middle[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            try decrypt(middle)
        }
    }

    @Test(arguments: [0, 1, 2, 3])
    func aFlippedBitInAChunk(chunk: Int) {
        var file = Self.file
        file[Self.payloadStart + chunk * Self.sealedChunk + 10] ^= 0x04
        #expect(throws: AgeError.payloadAltered(chunk: chunk)) { try decrypt(file) }
    }

    @Test func aFlippedBitInThePayloadNonce() {
        var file = Self.file
        file[Self.headerEnd + 3] ^= 0x80
        #expect(throws: AgeError.payloadAltered(chunk: 0)) { try decrypt(file) }
    }

    @Test func swappedChunks() {
        let start = Self.payloadStart
        let first = Self.file[start..<start + Self.sealedChunk]
        let second = Self.file[start + Self.sealedChunk..<start + 2 * Self.sealedChunk]
        var file = Self.file
        file.replaceSubrange(start..<start + 2 * Self.sealedChunk, with: second + first)
        #expect(throws: AgeError.payloadAltered(chunk: 0)) { try decrypt(file) }
    }

    @Test(arguments: [1, 2, 3])
    func cutAtAChunkEdge(chunks: Int) {
        let file = Self.file.prefix(Self.payloadStart + chunks * Self.sealedChunk)
        #expect(throws: AgeError.truncated) { try decrypt(Data(file)) }
    }

    @Test func cutAnywhereElse() {
        for length in [Self.headerEnd, Self.headerEnd + 7, Self.payloadStart, Self.payloadStart + 100, Self.file.count - 1] {
            #expect(throws: (any Error).self, "cut at \(length)") { try decrypt(Data(Self.file.prefix(length))) }
        }
        for length in [0, 10, Self.headerEnd - 1] {
            #expect(throws: (any Error).self, "cut at \(length)") { try decrypt(Data(Self.file.prefix(length))) }
        }
    }

    @Test func bytesAfterTheEnd() {
        #expect(throws: AgeError.trailingData) {
            // The final chunk here is a full one, so the extra bytes follow it whole.
            let full = try AgeFile.encrypt(Data(count: 65_536), passphrase: Self.passphrase, workFactor: 4)
            try decrypt(full + Data("more".utf8))
        }
        #expect(throws: (any Error).self) { try decrypt(Self.file + Data([0])) }
    }

    @Test func foreignFiles() {
        #expect(throws: AgeError.notAnAgeFile("the file is empty")) { try decrypt(Data()) }
        #expect(throws: AgeError.self) { try decrypt(Data("PK\u{3}\u{4} a zip file\n".utf8)) }
        #expect(throws: AgeError.self) { try decrypt(Data([0xFF, 0xFE, 0x00, 0x0A, 0x01])) }
        #expect(throws: AgeError.unsupportedVersion("v2")) { try decrypt(Data("age-encryption.org/v2\n".utf8)) }
        #expect(throws: AgeError.self) { try decrypt(Data("-----BEGIN AGE ENCRYPTED FILE-----\n".utf8)) }
    }

    @Test func aFileForKeysNotAPassphrase() {
        let header = """
            age-encryption.org/v1
            -> X25519 TEiF0ypqr+bpvcqXNyCVJpL7OuwPdVwPL7KQEbFDOCc
            EmECAEcKN+n/Vs9SbWiV+Hu0r+E8R77DdWYyd83nw7U
            --- Vn+54jqiiUCE+WZcEVY3f1sqHjlu/z1LCQ/T7Xm7qI0

            """
        #expect(throws: AgeError.notPassphraseEncrypted) { try decrypt(Data(header.utf8)) }
    }

    @Test func workFactorsOutOfBounds() throws {
        let text = String(decoding: Self.file.prefix(Self.headerEnd), as: UTF8.self)
        func withFactor(_ factor: String) -> Data {
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            var stanza = lines[1].split(separator: " ").map(String.init)
            stanza[3] = factor
            lines[1] = stanza.joined(separator: " ")
            return Data(lines.joined(separator: "\n").utf8) + Self.file.dropFirst(Self.headerEnd)
        }
        #expect(throws: AgeError.workFactorTooHigh(22, maximum: 20)) { try decrypt(withFactor("22")) }
        #expect(throws: AgeError.workFactorTooHigh(5, maximum: 4)) { try decrypt(withFactor("5"), maximumWorkFactor: 4) }
        for bad in ["0", "04", "0x4", "+4", "-4", "4a", "123", ""] {
            #expect(throws: AgeError.self, "work factor \(bad)") { try decrypt(withFactor(bad)) }
        }
        // The right factor written another way is no longer the header that was MACed.
        #expect(throws: AgeError.wrongPassphrase) { try decrypt(withFactor("5")) }
    }

    @Test func aSecondStanzaBesideScrypt() {
        let text = String(decoding: Self.file.prefix(Self.headerEnd), as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.insert(contentsOf: ["-> X25519 TEiF0ypqr+bpvcqXNyCVJpL7OuwPdVwPL7KQEbFDOCc", "EmECAEcKN+n/Vs9SbWiV+Hu0r+E8R77DdWYyd83nw7U"], at: 1)
        let file = Data(lines.joined(separator: "\n").utf8) + Self.file.dropFirst(Self.headerEnd)
        #expect(throws: AgeError.malformedHeader("a passphrase (scrypt) stanza must be the header's only stanza")) { try decrypt(file) }
    }
}
