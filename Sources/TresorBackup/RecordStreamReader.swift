import Foundation
import TresorAge
import TresorCrypto

/// Reads a backup's record stream from an age file, one record at a time, checking the format
/// as it goes: the magic and version, each record's kind and length, the manifest first, an
/// attachment's pieces between it and its end, the trailer last and its counts equal to what
/// came before. Memory holds one record and one 64 KiB chunk.
///
/// Every record returned comes from authenticated chunks, but only ``next()`` returning nil —
/// after the trailer, at the file's authenticated end — proves the stream is whole: a restore
/// stages everything before it acts.
public struct RecordStreamReader {
    private var decryptor: AgeDecryptor
    private var buffer = Data()
    /// How much of `buffer` was taken already.
    private var offset = 0
    private var ended = false
    private var started = false
    private var counts: [String: Int] = [:]
    private var attachmentBytes = 0
    private var inAttachment = false
    private var trailerSeen = false
    /// Plaintext bytes read from the file so far.
    public private(set) var payloadBytes = 0
    /// The size of the record ``next()`` returned last, as the stream holds it (what it costs in
    /// memory until it is staged).
    public private(set) var recordBytes = 0

    /// Opens the age file: the passphrase must open it.
    /// - Parameters:
    ///   - passphrase: the backup passphrase.
    ///   - maximumWorkFactor: the largest scrypt work factor accepted.
    ///   - input: returns up to the requested number of the file's bytes, empty at its end.
    /// - Throws: ``BackupError/file(_:)`` (a wrong passphrase is `.file(.wrongPassphrase)`).
    public init(passphrase: SecretText, maximumWorkFactor: Int = ScryptStanza.maximumWorkFactor, input: @escaping (Int) throws -> Data) throws {
        do {
            decryptor = try AgeDecryptor(passphrase: passphrase, maximumWorkFactor: maximumWorkFactor, input: input)
        } catch let error as AgeError {
            throw BackupError.file(error)
        }
    }

    /// The next record, or nil after the trailer at the file's end.
    /// - Throws: ``BackupError`` for anything the format does not allow; the age layer's errors
    ///   as ``BackupError/file(_:)``.
    public mutating func next() throws -> BackupRecord? {
        if !started {
            started = true
            let head = try take(BackupFormat.magic.count + 1)
            guard let head, head.prefix(BackupFormat.magic.count) == BackupFormat.magic else { throw BackupError.notABackup }
            guard head.last == BackupFormat.version else { throw BackupError.unsupportedVersion(Int(head.last!)) }
        }
        guard let header = try take(5) else {
            guard trailerSeen else { throw BackupError.damaged("the stream ends before its trailer") }
            return nil
        }
        guard !trailerSeen else { throw BackupError.damaged("records follow the trailer") }
        guard let kind = BackupFormat.Kind(rawValue: header[header.startIndex]) else {
            throw BackupError.damaged("a record of unknown kind \(header[header.startIndex])")
        }
        let length = header.dropFirst().reduce(0) { $0 << 8 | Int($1) }
        guard length <= kind.maximumBodyBytes else { throw BackupError.damaged("a \(kind.name) record is larger than the format allows") }
        guard let body = try take(length) else { throw BackupError.damaged("the stream ends inside a record") }
        let record = try BackupRecord(kind: kind, body: body)
        try checkOrder(record)
        try BackupRecordRules.check(record)
        recordBytes = 5 + length
        return record
    }

    /// The manifest first; pieces only inside an attachment; the trailer's counts.
    private mutating func checkOrder(_ record: BackupRecord) throws {
        let kind = record.kind
        if counts.isEmpty && kind != .manifest { throw BackupError.damaged("the stream does not start with its manifest") }
        switch record {
        case .manifest(let manifest):
            guard counts.isEmpty else { throw BackupError.damaged("a second manifest") }
            guard manifest.format == "tresor-backup" else { throw BackupError.notABackup }
            guard manifest.version == Int(BackupFormat.version) else { throw BackupError.unsupportedVersion(manifest.version) }
        case .attachment:
            guard !inAttachment else { throw BackupError.damaged("an attachment starts before the previous one ended") }
            inAttachment = true
        case .piece(let bytes):
            guard inAttachment else { throw BackupError.damaged("attachment bytes outside an attachment") }
            attachmentBytes += bytes.count
        case .attachmentEnd:
            guard inAttachment else { throw BackupError.damaged("an attachment end outside an attachment") }
            inAttachment = false
        case .trailer(let trailer):
            guard !inAttachment else { throw BackupError.damaged("the trailer comes inside an attachment") }
            guard trailer.records == counts, trailer.attachmentBytes == attachmentBytes else {
                throw BackupError.damaged("the trailer's counts do not match the records")
            }
            trailerSeen = true
            return
        default:
            guard !inAttachment else { throw BackupError.damaged("a \(kind.name) record inside an attachment") }
        }
        counts[kind.name, default: 0] += 1
    }

    /// Exactly `count` bytes of plaintext, or nil at the authenticated end with nothing read;
    /// a stream that ends after some of them is damaged.
    private mutating func take(_ count: Int) throws -> Data? {
        let available = buffer.count - offset
        if available >= count {
            let start = buffer.startIndex + offset
            offset += count
            return Data(buffer[start..<(start + count)])
        }
        // Across chunks: the record is put together once, in a buffer of its size (an
        // attachment's 1 MiB piece spans sixteen chunks). A chunk is kept as it came, not
        // copied into a growing buffer: what is left of it is the next record's start.
        var taken = Data(capacity: count)
        taken.append(buffer[(buffer.startIndex + offset)...])
        buffer = Data()
        offset = 0
        while taken.count < count, let chunk = try nextChunk() {
            let needed = count - taken.count
            guard chunk.count > needed else {
                taken.append(chunk)
                continue
            }
            taken.append(chunk[chunk.startIndex..<(chunk.startIndex + needed)])
            buffer = chunk
            offset = needed
        }
        guard taken.count == count else {
            guard taken.isEmpty else { throw BackupError.damaged("the stream ends inside a record") }
            return nil
        }
        return taken
    }

    /// The next chunk of plaintext, nil at the authenticated end.
    private mutating func nextChunk() throws -> Data? {
        guard !ended else { return nil }
        let chunk: Data?
        do {
            chunk = try decryptor.read()
        } catch let error as AgeError {
            throw BackupError.file(error)
        }
        guard let chunk else {
            ended = true
            return nil
        }
        payloadBytes += chunk.count
        return chunk
    }
}
