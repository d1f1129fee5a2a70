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
    static func write(
        _ data: Data, attachmentID: String, in folder: URL, sealing: ContentSealing, noteKey: SymmetricKey?
    ) throws -> String {
        let name = UUID().uuidString.lowercased()
        var file = magic
        file.append(version)
        file.reserveCapacity(data.count + data.count / chunkByteCount * 96 + 128)
        var index: UInt64 = 0
        var offset = data.startIndex
        repeat {
            let end = min(offset + chunkByteCount, data.endIndex)
            let isFinal = end == data.endIndex
            let chunk = data[offset..<end]
            let inner = try noteKey.map {
                try LockedNoteCrypto.sealChunk(chunk, with: $0, attachmentID: attachmentID, index: index, isFinal: isFinal)
            }
            try appendRecord(inner ?? chunk, to: &file, attachmentID: attachmentID, index: index, isFinal: isFinal, sealing: sealing)
            index += 1
            offset = end
        } while offset < data.endIndex
        try SecureFiles.createExclusively(file, at: folder.appendingPathComponent(name))
        return name
    }

    /// Writes a locked attachment whose chunks were sealed under the note key elsewhere (by the
    /// web client), adding the keybag layer. Returns the new file's name.
    static func write(sealedChunks: [Data], attachmentID: String, in folder: URL, sealing: ContentSealing) throws -> String {
        let name = UUID().uuidString.lowercased()
        var file = magic
        file.append(version)
        for (index, chunk) in sealedChunks.enumerated() {
            try appendRecord(chunk, to: &file, attachmentID: attachmentID, index: UInt64(index),
                             isFinal: index == sealedChunks.count - 1, sealing: sealing)
        }
        try SecureFiles.createExclusively(file, at: folder.appendingPathComponent(name))
        return name
    }

    private static func appendRecord(
        _ inner: some DataProtocol, to file: inout Data, attachmentID: String, index: UInt64, isFinal: Bool, sealing: ContentSealing
    ) throws {
        let sealed = try sealing.seal(inner, table: "attachments", id: attachmentID, column: chunkColumn(index, isFinal))
        var length = UInt32(sealed.count).bigEndian
        withUnsafeBytes(of: &length) { file.append(contentsOf: $0) }
        file.append(sealed)
    }

    /// Opens file `name`, checking every chunk, their order and that the last one is final.
    static func read(
        _ name: String, attachmentID: String, byteCount: Int, in folder: URL, sealing: ContentSealing,
        noteKey: SymmetricKey?
    ) throws -> Data {
        var data = Data()
        data.reserveCapacity(byteCount)
        try forEachRecord(name, attachmentID: attachmentID, byteCount: byteCount, in: folder, sealing: sealing) { opened, index, isFinal in
            if let noteKey {
                guard let chunk = try? LockedNoteCrypto.openChunk(
                    opened, with: noteKey, attachmentID: attachmentID, index: index, isFinal: isFinal)
                else { throw NotesError.damaged("attachment \(attachmentID)") }
                data.append(chunk)
            } else {
                data.append(opened)
            }
        }
        guard data.count == byteCount else { throw NotesError.damaged("attachment \(attachmentID)") }
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

    /// Reads file `name` and hands each record, opened from the keybag layer, to `body` with
    /// its index and final flag. A cut, reordered or spliced file fails.
    private static func forEachRecord(
        _ name: String, attachmentID: String, byteCount: Int, in folder: URL, sealing: ContentSealing,
        _ body: (Data, UInt64, Bool) throws -> Void
    ) throws {
        let damaged = NotesError.damaged("attachment \(attachmentID)")
        let limit = byteCount + (byteCount / chunkByteCount + 1) * 128 + 16
        let file: Data
        do {
            file = try SecureFiles.read(folder.appendingPathComponent(name), limit: limit)
        } catch {
            throw damaged
        }
        guard file.count > magic.count, file.prefix(magic.count) == magic, file[file.startIndex + magic.count] == version else {
            throw damaged
        }
        var offset = file.startIndex + magic.count + 1
        var index: UInt64 = 0
        while offset < file.endIndex {
            guard file.endIndex - offset >= 4 else { throw damaged }
            let length = file[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            offset += 4
            guard length > 0, file.endIndex - offset >= length else { throw damaged }
            let record = file[offset..<offset + length]
            offset += length
            let isFinal = offset == file.endIndex
            // The final flag is bound into both layers: a file cut after any chunk but the
            // last, or with chunks swapped, fails here.
            try body(try sealing.open(Data(record), table: "attachments", id: attachmentID, column: chunkColumn(index, isFinal)), index, isFinal)
            index += 1
        }
        guard index > 0 else { throw damaged }
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
