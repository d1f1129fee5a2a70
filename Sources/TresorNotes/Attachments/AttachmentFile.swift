import Crypto
import Foundation
import TresorCrypto
import TresorNotesDomain
import TresorSystem

/// One attachment's bytes on disk: `attachments/<file>`, named by a random id that the
/// database row points to (a file no row points to is an interrupted write and is removed
/// at start).
///
/// Layout: `TRNA` ‖ version (1 byte) ‖ chunk records, each a big-endian UInt32 length and an
/// ``Envelope`` sealed under the content key with the attachment id, chunk index and final
/// flag as associated data. Inside, an unlocked note's chunk is the plaintext; a locked note's
/// is the chunk sealed again under the note key (``LockedNoteCrypto/sealChunk``). Chunks hold
/// 1 MiB of plaintext, so a large attachment never needs a second copy in memory per layer, and a
/// truncated, reordered or spliced file fails to open.
enum AttachmentFile {
    static let magic = Data("TRNA".utf8)
    static let version: UInt8 = 1
    static let chunkByteCount = LockedNoteShape.chunkByteCount

    /// Seals an attachment into a new file in `folder` chunk by chunk as its bytes arrive, so
    /// memory holds at most about one chunk whatever the attachment's size.
    ///
    /// A chunk is sealed once the next byte shows it is not the last (the final flag is bound into
    /// it), so up to one whole chunk waits for `finish()`. Whole chunks of a large `append` are
    /// sealed straight from the caller's buffer; both layers seal into swift-crypto's own output
    /// buffers and those go to the file as they are (no joined record, no whole-file buffer).
    /// From an attachment's second chunk on, chunks are sealed and written on a thread of the
    /// writer's own (``OrderedWorker``, four chunks ahead at most: a restore hands them over in
    /// bursts as the backup's groups of chunks are opened) while the caller brings the next
    /// — copying into the page cache costs as much as the rest of a restore's work on the bytes.
    /// One fsync at the end. A writer dropped or failed before `finish()` leaves no file
    /// (``ExclusiveFile``).
    final class Writer {
        /// The file's name in the folder.
        let name: String
        private let file: ExclusiveFile
        private let attachmentID: String
        private let sealing: ContentSealing
        private let noteKey: SymmetricKey?
        /// Plaintext not sealed yet: less than a chunk, or one whole chunk that may be the last.
        private var pending = Data()
        private var index: UInt64 = 0
        /// Plaintext bytes appended so far.
        private(set) var byteCount = 0
        /// Seals and writes chunks once there is more than one; an attachment of one chunk
        /// (most of them) costs no thread.
        private var worker: OrderedWorker<Chunk>.Owner?
        /// Bytes of a chunk as appended: 1 MiB of plaintext, or — for chunks that come sealed
        /// under the note key already (a synced locked note's) — that and their IV and tag.
        private let chunkByteCount: Int
        /// Chunks sealed so far.
        var chunkCount: Int { Int(index) }

        /// A chunk of plaintext and its place in the file.
        private struct Chunk {
            var plaintext: Data
            var index: UInt64
            var isFinal: Bool
        }

        /// - Parameter presealed: the bytes appended are chunks sealed under the note key
        ///   elsewhere, one after another (`noteKey` is then nil): each is written as it is.
        init(attachmentID: String, in folder: URL, sealing: ContentSealing, noteKey: SymmetricKey?, presealed: Bool = false) throws {
            (name, file) = try AttachmentFile.create(in: folder)
            self.attachmentID = attachmentID
            self.sealing = sealing
            self.noteKey = noteKey
            chunkByteCount = AttachmentFile.chunkByteCount + (presealed ? LockedNoteShape.chunkOverheadByteCount : 0)
        }

        func append(_ bytes: Data) throws {
            byteCount += bytes.count
            var rest = bytes
            if !pending.isEmpty {
                let taken = min(chunkByteCount - pending.count, rest.count)
                pending.append(rest.prefix(taken))
                rest = rest.dropFirst(taken)
                guard !rest.isEmpty else { return }
                // More follows a whole pending chunk: it is not the last.
                try seal(pending, isFinal: false)
                pending = Data()
            }
            while rest.count > chunkByteCount {
                try seal(rest.prefix(chunkByteCount), isFinal: false)
                rest = rest.dropFirst(chunkByteCount)
            }
            // Nothing is pending here (it was filled and sealed, or never started): the tail waits
            // as the caller's bytes, copied only if a later append has to add to it.
            pending = rest
        }

        /// Seals what is left as the final chunk (an empty attachment is one empty final chunk),
        /// makes the file durable (``ExclusiveFile/commit(syncingFolder:)``) and returns its name.
        func finish(syncingFolder: Bool = true) throws -> String {
            try seal(pending, isFinal: true)
            pending = Data()
            try worker?.worker.finish()
            try file.commit(syncingFolder: syncingFolder)
            return name
        }

        /// Removes the file; nothing of the attachment stays.
        func abandon() {
            worker?.worker.stop()
            file.abandon()
        }

        /// A writer dropped unfinished leaves no file now, not when its worker's thread is gone
        /// (which holds the file too). After `finish()`, abandoning does nothing.
        deinit { abandon() }

        private func seal(_ plaintext: Data, isFinal: Bool) throws {
            let chunk = Chunk(plaintext: plaintext, index: index, isFinal: isFinal)
            index += 1
            if let worker {
                try worker.worker.submit(chunk)
            } else {
                // The worker holds what writing needs, not the writer: a writer dropped unfinished
                // still goes, and with it its file and the thread (``OrderedWorker/Owner``).
                let (file, attachmentID, sealing, noteKey) = (file, attachmentID, sealing, noteKey)
                let write = { (chunk: Chunk) in
                    try Self.write(chunk, to: file, attachmentID: attachmentID, sealing: sealing, noteKey: noteKey)
                }
                if isFinal { return try write(chunk) }
                let worker = OrderedWorker<Chunk>.Owner(OrderedWorker(name: "tresor-attach", depth: 4, write))
                self.worker = worker
                try worker.worker.submit(chunk)
            }
        }

        /// Seals `chunk` (under the note key too, for a locked note) and appends it to the file:
        /// on the caller's thread or the worker's, never both (the worker, once started, takes
        /// every later chunk).
        private static func write(
            _ chunk: Chunk, to file: ExclusiveFile, attachmentID: String, sealing: ContentSealing, noteKey: SymmetricKey?
        ) throws {
            let inner = try noteKey.map {
                try LockedNoteCrypto.sealChunk(chunk.plaintext, with: $0, attachmentID: attachmentID, index: chunk.index, isFinal: chunk.isFinal)
            }
            try appendRecord(
                inner ?? chunk.plaintext, to: file, attachmentID: attachmentID, index: chunk.index, isFinal: chunk.isFinal, sealing: sealing)
        }
    }

    /// Writes a locked attachment whose chunks were sealed under the note key elsewhere (by the
    /// web client), adding the keybag layer. Returns the new file's name.
    static func write(sealedChunks: [Data], attachmentID: String, in folder: URL, sealing: ContentSealing) throws -> String {
        let writer = try SealedChunkWriter(attachmentID: attachmentID, in: folder, sealing: sealing)
        for (index, chunk) in sealedChunks.enumerated() { try writer.append(chunk, isFinal: index == sealedChunks.count - 1) }
        return try writer.commit()
    }

    /// Writes a locked attachment's chunks — sealed under the note key elsewhere: by the web
    /// client, or in the home a backup came from — one at a time, adding the keybag layer. A
    /// writer dropped before ``commit()`` leaves no file.
    final class SealedChunkWriter {
        /// The file's name in the folder.
        let name: String
        private let file: ExclusiveFile
        private let attachmentID: String
        private let sealing: ContentSealing
        private var index: UInt64 = 0

        init(attachmentID: String, in folder: URL, sealing: ContentSealing) throws {
            (name, file) = try AttachmentFile.create(in: folder)
            self.attachmentID = attachmentID
            self.sealing = sealing
        }

        /// Adds the next chunk (IV ‖ ciphertext ‖ tag under the note key).
        func append(_ chunk: Data, isFinal: Bool) throws {
            try appendRecord(chunk, to: file, attachmentID: attachmentID, index: index, isFinal: isFinal, sealing: sealing)
            index += 1
        }

        /// Makes the file durable (``ExclusiveFile/commit(syncingFolder:)``) and returns its name.
        func commit(syncingFolder: Bool = true) throws -> String {
            try file.commit(syncingFolder: syncingFolder)
            return name
        }

        func abandon() { file.abandon() }
    }

    /// Creates a new file named by a random id and writes the magic and version.
    private static func create(in folder: URL) throws -> (name: String, file: ExclusiveFile) {
        let name = UUID().uuidString.lowercased()
        let file = try ExclusiveFile(creating: folder.appendingPathComponent(name))
        try file.append(magic + [version])
        return (name, file)
    }

    /// One record: the big-endian length, then the envelope as its header and body, each written
    /// as it came out of the seal.
    private static func appendRecord(
        _ inner: some DataProtocol, to file: ExclusiveFile, attachmentID: String, index: UInt64, isFinal: Bool,
        sealing: ContentSealing
    ) throws {
        let (header, body) = try sealing.sealParts(inner, table: "attachments", id: attachmentID, column: chunkColumn(index, isFinal))
        var prefix = Data(capacity: 4 + header.count)
        withUnsafeBytes(of: UInt32(header.count + body.count).bigEndian) { prefix.append(contentsOf: $0) }
        prefix.append(header)
        try file.append(prefix)
        try file.append(body)
    }

    /// Opens file `name` whole, checking every chunk, their order and that the last one is final.
    static func read(
        _ name: String, attachmentID: String, byteCount: Int, in folder: URL, sealing: ContentSealing,
        noteKey: SymmetricKey?
    ) throws -> Data {
        var data = Data()
        try forEachChunk(name, attachmentID: attachmentID, byteCount: byteCount, in: folder, sealing: sealing, noteKey: noteKey) { chunk in
            // A one-chunk attachment is returned as opened; larger ones are gathered into one
            // buffer sized once.
            if data.isEmpty && chunk.count == byteCount {
                data = chunk
                return
            }
            if data.isEmpty { data.reserveCapacity(byteCount) }
            data.append(chunk)
        }
        return data
    }

    /// Opens file `name` chunk by chunk — both layers — and hands each chunk's plaintext to
    /// `body`, so a large attachment can be re-sealed without being held whole. A cut, reordered
    /// or spliced file, or one whose chunks do not add up to `byteCount`, fails (possibly after
    /// some chunks were handed over).
    static func forEachChunk(
        _ name: String, attachmentID: String, byteCount: Int, in folder: URL, sealing: ContentSealing,
        noteKey: SymmetricKey?, _ body: (Data) throws -> Void
    ) throws {
        let reader = try Reader(name, attachmentID: attachmentID, byteCount: byteCount, in: folder, sealing: sealing, layers: .plaintext(noteKey))
        while let chunk = try reader.next() { try body(chunk) }
    }

    /// Reads file `name` record by record and hands each, opened from the keybag layer, to `body`
    /// with its index and final flag. A cut, reordered or spliced file fails.
    static func forEachRecord(
        _ name: String, attachmentID: String, byteCount: Int, in folder: URL, sealing: ContentSealing,
        _ body: (Data, UInt64, Bool) throws -> Void
    ) throws {
        let reader = try Reader(name, attachmentID: attachmentID, byteCount: byteCount, in: folder, sealing: sealing, layers: .keybag)
        while let record = try reader.nextRecord() { try body(record.opened, record.index, record.isFinal) }
    }

    /// File `name` opened a chunk at a time, each read and opened when asked for: what answers an
    /// attachment of any size while holding one chunk of it (the daemon's answer, the web
    /// client's download). Every check of a whole read is made, in order: a cut, reordered or
    /// spliced file, or one whose chunks do not add up to the attachment's size, fails at the
    /// chunk that shows it — after the chunks before it were handed out.
    final class Reader {
        /// Which layers ``next()`` opens.
        enum Layers {
            /// Both: the plaintext (a locked note's under `noteKey`).
            case plaintext(SymmetricKey?)
            /// The keybag layer only: a locked note's chunks as sealed under the note key.
            case keybag
        }

        private let file: SecureFiles.OpenedFile
        private let attachmentID: String
        private let byteCount: Int
        private let sealing: ContentSealing
        private let layers: Layers
        private var index: UInt64 = 0
        /// Plaintext bytes handed out so far.
        private var total = 0
        private var ended = false

        init(_ name: String, attachmentID: String, byteCount: Int, in folder: URL, sealing: ContentSealing, layers: Layers) throws {
            let damaged = NotesError.damaged("attachment \(attachmentID)")
            let limit = byteCount + (byteCount / chunkByteCount + 1) * 128 + 16
            do {
                file = try SecureFiles.OpenedFile(reading: folder.appendingPathComponent(name), limit: limit)
                guard try file.reader.read(count: magic.count + 1) == magic + [version] else { throw damaged }
            } catch is SecureFileError {
                throw damaged
            }
            self.attachmentID = attachmentID
            self.byteCount = byteCount
            self.sealing = sealing
            self.layers = layers
        }

        /// The next chunk through the reader's layers, or nil after the last.
        /// - Throws: ``NotesError/damaged(_:)``.
        func next() throws -> Data? {
            guard let record = try nextRecord() else {
                if case .plaintext = layers, total != byteCount { throw damaged }
                return nil
            }
            guard case .plaintext(let noteKey) = layers else { return record.opened }
            var chunk = record.opened
            if let noteKey {
                guard
                    let plain = try? LockedNoteCrypto.openChunk(
                        chunk, with: noteKey, attachmentID: attachmentID, index: record.index, isFinal: record.isFinal)
                else { throw damaged }
                chunk = plain
            }
            total += chunk.count
            guard total <= byteCount else { throw damaged }
            return chunk
        }

        /// The next record opened from the keybag layer, with its index and final flag; nil after
        /// the last.
        /// - Throws: ``NotesError/damaged(_:)``.
        func nextRecord() throws -> (opened: Data, index: UInt64, isFinal: Bool)? {
            guard !ended else { return nil }
            do {
                guard file.reader.offset < file.reader.size else {
                    ended = true
                    guard index > 0 else { throw damaged }
                    return nil
                }
                let length = try file.reader.read(count: 4).reduce(0) { $0 << 8 | Int($1) }
                guard length > 0 else { throw damaged }
                // Each record is read into its own buffer, opened while it is still in cache.
                let record = try file.reader.read(count: length)
                let isFinal = file.reader.offset == file.reader.size
                // The final flag is bound into both layers: a file cut after any chunk but the
                // last, or with chunks swapped, fails here.
                let opened = try sealing.open(record, table: "attachments", id: attachmentID, column: chunkColumn(index, isFinal))
                defer { index += 1 }
                return (opened, index, isFinal)
            } catch is SecureFileError {
                throw damaged
            }
        }

        private var damaged: NotesError { NotesError.damaged("attachment \(attachmentID)") }
    }

    /// Overwrites the file with zeros, then unlinks it. The bytes were sealed, so this is
    /// hygiene (nothing of a removed attachment stays readable even with the keys), not the
    /// only protection.
    static func remove(_ name: String, in folder: URL) {
        SecureFiles.overwriteAndRemove(folder.appendingPathComponent(name))
    }

    /// Removes every file in `folder` that no attachment row names (interrupted writes).
    static func removeUnreferenced(in folder: URL, keeping referenced: Set<String>) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names where !referenced.contains(name) { remove(name, in: folder) }
    }

    private static func chunkColumn(_ index: UInt64, _ isFinal: Bool) -> String {
        "chunk/\(index)/\(isFinal ? "final" : "more")"
    }
}
