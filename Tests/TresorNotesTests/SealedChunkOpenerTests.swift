import Crypto
import Foundation
import Testing
import TresorNotesDomain

@testable import TresorNotes

/// `SealedChunkOpener`: an attachment's chunks sealed under a note key, arriving in pieces of
/// any size, come out as the plaintext — and a chunk altered, swapped, cut short or followed by
/// more bytes fails.
@Suite("Sealed chunks opened as they arrive")
struct SealedChunkOpenerTests {
    static let chunk = LockedNoteShape.chunkByteCount
    let key = LockedNoteCrypto.newNoteKey()
    let id = "0b1e6c0e-8f55-4a4f-9a8e-5c0d2b7f2a11"

    /// `plaintext` sealed as the server holds a locked note's attachment: chunk after chunk.
    func sealed(_ plaintext: Data) throws -> [Data] {
        let count = LockedNoteShape.chunkCount(plaintextByteCount: plaintext.count)
        return try (0..<count).map { index in
            let start = plaintext.startIndex + index * Self.chunk
            let piece = plaintext[start..<min(start + Self.chunk, plaintext.endIndex)]
            return try LockedNoteCrypto.sealChunk(piece, with: key, attachmentID: id, index: UInt64(index), isFinal: index == count - 1)
        }
    }

    func opened(_ stream: Data, byteCount: Int, pieceSize: Int) throws -> Data {
        var opener = SealedChunkOpener(noteKey: key, attachmentID: id, byteCount: byteCount)
        var plaintext = Data()
        var offset = stream.startIndex
        while offset < stream.endIndex {
            let end = min(offset + pieceSize, stream.endIndex)
            for chunk in try opener.open(Data(stream[offset..<end])) { plaintext.append(chunk) }
            offset = end
        }
        try opener.finish()
        #expect(opener.receivedByteCount == stream.count)
        return plaintext
    }

    @Test(arguments: [0, 1, 300, 1 << 20, (1 << 20) + 1, (2 << 20) + 777])
    func anyPiecesGiveThePlaintext(size: Int) throws {
        let plaintext = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let stream = try sealed(plaintext).reduce(Data(), +)
        for pieceSize in [1_000, 65_536, Self.chunk + 28, stream.count + 1] where pieceSize > 0 {
            #expect(try opened(stream, byteCount: size, pieceSize: pieceSize) == plaintext)
        }
    }

    @Test func alteredSwappedCutOrLongerStreamsFail() throws {
        let plaintext = Data(repeating: 0x5A, count: 2 * Self.chunk + 10)
        let chunks = try sealed(plaintext)
        var flipped = chunks.reduce(Data(), +)
        flipped[flipped.startIndex + Self.chunk + 40] ^= 1
        let swapped = chunks[1] + chunks[0] + chunks[2]
        let cut = chunks[0] + chunks[1]
        let longer = chunks.reduce(Data(), +) + Data([0])
        for (what, stream) in [("flipped", flipped), ("swapped", swapped), ("cut", cut), ("longer", longer)] {
            #expect(throws: NotesError.self, "\(what)") { try opened(stream, byteCount: plaintext.count, pieceSize: 4096) }
        }
        // Another note's key opens nothing.
        var other = SealedChunkOpener(noteKey: LockedNoteCrypto.newNoteKey(), attachmentID: id, byteCount: plaintext.count)
        #expect(throws: NotesError.self) { _ = try other.open(chunks[0]) }
    }
}
