import Crypto
import Foundation
import TresorCrypto
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
    static let chunkByteCount = 1 << 20

    /// Seals `data` into a new file in `folder` and returns its name.
    ///
    /// Each chunk is sealed and written before the next one is read: both layers seal into
    /// swift-crypto's own output buffers and those go to the file as they are (no joined record,
    /// no whole-file buffer), while the disk already writes the previous chunks. One fsync at the
    /// end; a failed write leaves no file.
    static func write(
        _ data: Data, attachmentID: String, in folder: URL, sealing: ContentSealing, noteKey: SymmetricKey?
    ) throws -> String {
        // An empty attachment is one empty final chunk.
        let chunkCount = max(1, (data.count + chunkByteCount - 1) / chunkByteCount)
        return try create(in: folder) { file in
            for index in 0..<chunkCount {
                let start = data.startIndex + index * chunkByteCount
                let chunk = data[start..<min(start + chunkByteCount, data.endIndex)]
                let isFinal = index == chunkCount - 1
                let inner = try noteKey.map {
                    try LockedNoteCrypto.sealChunk(chunk, with: $0, attachmentID: attachmentID, index: UInt64(index), isFinal: isFinal)
                }
                try appendRecord(inner ?? chunk, to: &file, attachmentID: attachmentID, index: UInt64(index), isFinal: isFinal, sealing: sealing)
            }
        }
    }

    /// Writes a locked attachment whose chunks were sealed under the note key elsewhere (by the
    /// web client), adding the keybag layer. Returns the new file's name.
    static func write(sealedChunks: [Data], attachmentID: String, in folder: URL, sealing: ContentSealing) throws -> String {
        try create(in: folder) { file in
            for (index, chunk) in sealedChunks.enumerated() {
                try appendRecord(chunk, to: &file, attachmentID: attachmentID, index: UInt64(index),
                                 isFinal: index == sealedChunks.count - 1, sealing: sealing)
            }
        }
    }

    /// Creates a new file named by a random id, writes the magic and version, lets `body` append the
    /// records, and fsyncs it (``SecureFiles/createExclusively(at:_:)``).
    private static func create(in folder: URL, _ body: (inout SecureFiles.AppendOnlyFile) throws -> Void) throws -> String {
        let name = UUID().uuidString.lowercased()
        try SecureFiles.createExclusively(at: folder.appendingPathComponent(name)) { file in
            try file.append(magic + [version])
            try body(&file)
        }
        return name
    }

    /// One record: the big-endian length, then the envelope as its header and body, each written
    /// as it came out of the seal.
    private static func appendRecord(
        _ inner: some DataProtocol, to file: inout SecureFiles.AppendOnlyFile, attachmentID: String, index: UInt64, isFinal: Bool,
        sealing: ContentSealing
    ) throws {
        let (header, body) = try sealing.sealParts(inner, table: "attachments", id: attachmentID, column: chunkColumn(index, isFinal))
        var prefix = Data(capacity: 4 + header.count)
        withUnsafeBytes(of: UInt32(header.count + body.count).bigEndian) { prefix.append(contentsOf: $0) }
        prefix.append(header)
        try file.append(prefix)
        try file.append(body)
    }

    /// Opens file `name`, checking every chunk, their order and that the last one is final.
    static func read(
        _ name: String, attachmentID: String, byteCount: Int, in folder: URL, sealing: ContentSealing,
        noteKey: SymmetricKey?
    ) throws -> Data {
        let damaged = NotesError.damaged("attachment \(attachmentID)")
        var data = Data()
        try forEachRecord(name, attachmentID: attachmentID, byteCount: byteCount, in: folder, sealing: sealing) { opened, index, isFinal in
            var chunk = opened
            if let noteKey {
                guard let plain = try? LockedNoteCrypto.openChunk(
                    opened, with: noteKey, attachmentID: attachmentID, index: index, isFinal: isFinal)
                else { throw damaged }
                chunk = plain
            }
            // A one-chunk attachment is returned as opened; larger ones are gathered into one
            // buffer sized once.
            if index == 0 && isFinal {
                data = chunk
                return
            }
            if index == 0 { data.reserveCapacity(min(byteCount, NoteLimits.attachmentBytes)) }
            data.append(chunk)
        }
        guard data.count == byteCount else { throw damaged }
        return data
    }

    /// A locked attachment's chunks as sealed under the note key (the keybag layer opened and
    /// checked), for the web client to open.
    static func readChunks(_ name: String, attachmentID: String, byteCount: Int, in folder: URL, sealing: ContentSealing) throws -> [Data] {
        var chunks: [Data] = []
        try forEachRecord(name, attachmentID: attachmentID, byteCount: byteCount, in: folder, sealing: sealing) { opened, _, _ in
            chunks.append(opened)
        }
        return chunks
    }

    /// Reads file `name` record by record and hands each, opened from the keybag layer, to `body`
    /// with its index and final flag. A cut, reordered or spliced file fails.
    private static func forEachRecord(
        _ name: String, attachmentID: String, byteCount: Int, in folder: URL, sealing: ContentSealing,
        _ body: (Data, UInt64, Bool) throws -> Void
    ) throws {
        let damaged = NotesError.damaged("attachment \(attachmentID)")
        let limit = byteCount + (byteCount / chunkByteCount + 1) * 128 + 16
        do {
            try SecureFiles.withReader(folder.appendingPathComponent(name), limit: limit) { file in
                guard try file.read(count: magic.count + 1) == magic + [version] else { throw damaged }
                var index: UInt64 = 0
                while file.offset < file.size {
                    let length = try file.read(count: 4).reduce(0) { $0 << 8 | Int($1) }
                    guard length > 0 else { throw damaged }
                    // Each record is read into its own buffer, opened while it is still in cache.
                    let record = try file.read(count: length)
                    let isFinal = file.offset == file.size
                    // The final flag is bound into both layers: a file cut after any chunk but the
                    // last, or with chunks swapped, fails here.
                    try body(try sealing.open(record, table: "attachments", id: attachmentID, column: chunkColumn(index, isFinal)), index, isFinal)
                    index += 1
                }
                guard index > 0 else { throw damaged }
            }
        } catch is SecureFileError {
            throw damaged
        }
    }

    /// Overwrites the file with zeros, then unlinks it. The bytes were sealed, so this is
    /// hygiene (nothing of a removed attachment stays readable even with the keys), not the
    /// only protection.
    static func remove(_ name: String, in folder: URL) {
        let path = folder.appendingPathComponent(name).path
        let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd >= 0 {
            var info = stat()
            if fstat(fd, &info) == 0, info.st_size > 0 {
                let zeros = [UInt8](repeating: 0, count: 1 << 16)
                var remaining = Int(info.st_size)
                while remaining > 0 {
                    let written = zeros.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, min(remaining, $0.count)) }
                    if written <= 0 { break }
                    remaining -= written
                }
                fsync(fd)
            }
            close(fd)
        }
        unlink(path)
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
