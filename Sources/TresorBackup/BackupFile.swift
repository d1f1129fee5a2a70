import Foundation
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// The backup file on disk: written as `FILE.partial` and renamed over `FILE` once complete and
/// durable, so an existing `FILE` is replaced whole or not at all; read piece by piece.
enum BackupFile {
    /// Writes a new backup at `url`: `body` writes everything after the header through the
    /// output function it receives, then the header — whose size is known up front, its bytes
    /// only after a KDF — is written before it.
    /// - Parameters:
    ///   - url: the backup file.
    ///   - header: the header's byte count, and what makes its bytes (called once `body` returned).
    ///   - body: writes the rest of the file.
    /// - Throws: ``BackupError/io(_:)`` when the file cannot be written; what `body` or
    ///   `header.bytes` throws (the partial file is removed then).
    static func write<T>(
        to url: URL, header: (byteCount: Int, bytes: () throws -> Data), _ body: (@escaping (Data) throws -> Void) throws -> T
    ) throws -> T {
        let partial = URL(fileURLWithPath: url.path + ".partial")
        // What an interrupted backup left; `unlink` removes a link itself, never what it names.
        unlink(partial.path)
        let file: ExclusiveFile
        do {
            file = try ExclusiveFile(creating: partial, reservingPrefix: header.byteCount)
        } catch {
            throw BackupError.io("cannot create \(partial.path): \(Self.reason(error))")
        }
        let result: T
        do {
            result = try body { bytes in
                do {
                    try file.append(bytes)
                } catch {
                    throw BackupError.io("cannot write \(partial.path): \(Self.reason(error))")
                }
            }
            let headerBytes = try header.bytes()
            guard headerBytes.count == header.byteCount else {
                throw BackupError.io("the backup's header is \(headerBytes.count) bytes, not \(header.byteCount)")
            }
            try file.writePrefix(headerBytes)
            try file.commit()
        } catch let error as SecureFileError {
            file.abandon()
            if let refusal = StorageRefusal(error) { throw refusal }
            throw BackupError.io("cannot write \(partial.path): \(Self.reason(error))")
        } catch {
            file.abandon()
            throw error
        }
        guard rename(partial.path, url.path) == 0 else {
            let code = errno
            unlink(partial.path)
            throw BackupError.io("cannot rename \(partial.path) to \(url.lastPathComponent): \(String(cString: strerror(code)))")
        }
        try SecureFiles.syncDirectory(url.deletingLastPathComponent())
        return result
    }

    /// Opens the backup at `url` for reading and hands `body` its size and a reader of its
    /// bytes (returning up to the requested count, empty at the end).
    /// - Throws: ``BackupError/io(_:)`` when it cannot be opened or read; what `body` throws.
    static func read<T>(_ url: URL, _ body: (Int, @escaping (Int) throws -> Data) throws -> T) throws -> T {
        do {
            return try SecureFiles.withReader(url, limit: Int.max) { file in
                let size = file.size
                // The reader is handed to a closure the age layer keeps; it lives as long as `body`.
                return try withUnsafeMutablePointer(to: &file) { reader in
                    try body(size) { count in
                        do {
                            return try reader.pointee.read(count: min(count, reader.pointee.size - reader.pointee.offset))
                        } catch {
                            throw BackupError.io("cannot read \(url.path): \(Self.reason(error))")
                        }
                    }
                }
            }
        } catch let error as SecureFileError {
            if case .notFound = error { throw BackupError.io("\(url.path) does not exist") }
            throw BackupError.io("cannot read \(url.path): \(Self.reason(error))")
        }
    }

    private static func reason(_ error: any Error) -> String {
        if case .systemCall(_, _, let code) = error as? SecureFileError { return String(cString: strerror(code)) }
        return String(describing: error)
    }
}
