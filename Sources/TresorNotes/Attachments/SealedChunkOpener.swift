import Crypto
import Foundation
import TresorNotesDomain

/// Opens an attachment that arrives as its chunks sealed under a note key (docs/FORMAT.md,
/// "Attachments"), in pieces of any size: each chunk is opened once all of it came, with its
/// index and final flag bound, so a cut, reordered or swapped chunk fails. What a device uses
/// to take the sealed copy the server holds of an attachment into a note whose lock it removed
/// (docs/SYNC.md, "A lock removed travels").
struct SealedChunkOpener {
    private let noteKey: SymmetricKey
    private let attachmentID: String
    /// The attachment's plaintext size: it says how many chunks come and how long the last is.
    private let byteCount: Int
    private var pending = Data()
    private var index = 0
    /// Sealed bytes taken in so far.
    private(set) var receivedByteCount = 0

    init(noteKey: SymmetricKey, attachmentID: String, byteCount: Int) {
        self.noteKey = noteKey
        self.attachmentID = attachmentID
        self.byteCount = byteCount
    }

    private var chunkCount: Int { LockedNoteShape.chunkCount(plaintextByteCount: byteCount) }

    /// The sealed size of chunk `index`: a whole plaintext chunk but the last.
    private func sealedSize(of index: Int) -> Int {
        let plaintext = index < chunkCount - 1 ? LockedNoteShape.chunkByteCount : byteCount - (chunkCount - 1) * LockedNoteShape.chunkByteCount
        return plaintext + LockedNoteShape.chunkOverheadByteCount
    }

    /// Takes the next bytes.
    /// - Parameter piece: what arrived.
    /// - Returns: the plaintext of each chunk it completed, in order.
    /// - Throws: ``NotesError/invalid(_:)`` for more bytes than the chunks hold, or a chunk that
    ///   does not open under the note key.
    mutating func open(_ piece: Data) throws -> [Data] {
        receivedByteCount += piece.count
        pending.append(piece)
        var opened: [Data] = []
        while index < chunkCount, pending.count >= sealedSize(of: index) {
            let size = sealedSize(of: index)
            let chunk = pending.prefix(size)
            do {
                opened.append(
                    try LockedNoteCrypto.openChunk(
                        Data(chunk), with: noteKey, attachmentID: attachmentID, index: UInt64(index), isFinal: index == chunkCount - 1))
            } catch {
                throw NotesError.invalid("attachment \(attachmentID) does not open with its note's key")
            }
            pending.removeFirst(size)
            index += 1
        }
        guard index < chunkCount || pending.isEmpty else {
            throw NotesError.invalid("attachment \(attachmentID) came with more bytes than its chunks")
        }
        return opened
    }

    /// Checks that every chunk came.
    /// - Throws: ``NotesError/invalid(_:)`` for an attachment cut short.
    func finish() throws {
        guard index == chunkCount, pending.isEmpty else { throw NotesError.invalid("attachment \(attachmentID) came cut short") }
    }
}
