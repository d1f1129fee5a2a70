import Foundation
import TresorAge
import TresorCrypto

/// Writes a backup's record stream into an age file as it goes: each record is framed and
/// handed to the ``AgeEncryptor``, which seals and writes 64 KiB at a time, so memory holds a
/// record and a chunk whatever the backup's size. ``finish()`` writes the trailer with the
/// counts of every kind.
public struct RecordStreamWriter {
    private var encryptor: AgeEncryptor
    private var counts: [String: Int] = [:]
    private var attachmentBytes = 0
    private var finished = false

    /// Starts the age file and writes the stream's magic and version.
    /// - Parameters:
    ///   - passphrase: the backup passphrase (UTF-8 bytes, not empty).
    ///   - workFactor: scrypt's log2(N).
    ///   - output: receives the file's bytes in order.
    /// - Throws: ``BackupError/file(_:)`` for bad parameters; what `output` throws.
    public init(passphrase: SecretText, workFactor: Int, output: @escaping (Data) throws -> Void) throws {
        do {
            encryptor = try AgeEncryptor(passphrase: passphrase, workFactor: workFactor, output: output)
        } catch let error as AgeError {
            throw BackupError.file(error)
        }
        try encryptor.write(BackupFormat.magic + [BackupFormat.version])
    }

    /// Starts the stream in the payload of an age file whose header is written apart
    /// (``TresorAge/AgeFileKey/header(passphrase:)``, before the payload's first byte).
    /// - Parameters:
    ///   - key: the file's key.
    ///   - output: receives the payload's bytes in order.
    /// - Throws: what `output` throws.
    public init(payloadOf key: AgeFileKey, output: @escaping (Data) throws -> Void) throws {
        encryptor = AgeEncryptor(payloadOf: key, output: output)
        try encryptor.write(BackupFormat.magic + [BackupFormat.version])
    }

    /// Writes one record.
    /// - Parameter record: any record but the trailer, which ``finish()`` writes.
    /// - Throws: what the output throws; ``BackupError/damaged(_:)`` for a record too large.
    public mutating func write(_ record: BackupRecord) throws {
        precondition(!finished, "RecordStreamWriter.write after finish")
        let body = try record.body()
        guard body.count <= record.kind.maximumBodyBytes else {
            throw BackupError.damaged("a \(record.kind.name) record is larger than \(record.kind.maximumBodyBytes) bytes")
        }
        var header = Data([record.kind.rawValue])
        withUnsafeBytes(of: UInt32(body.count).bigEndian) { header.append(contentsOf: $0) }
        try encryptor.write(header)
        try encryptor.write(body)
        counts[record.kind.name, default: 0] += 1
        if case .piece = record { attachmentBytes += body.count }
    }

    /// Writes the trailer and the final chunk: the file is complete after this.
    /// - Returns: the trailer written.
    /// - Throws: what the output throws.
    @discardableResult
    public mutating func finish() throws -> BackupTrailer {
        let trailer = BackupTrailer(records: counts, attachmentBytes: attachmentBytes)
        try write(.trailer(trailer))
        finished = true
        try encryptor.finish()
        return trailer
    }
}
