import Foundation
import TresorSystem
#if canImport(Glibc)
import Glibc
#endif

/// The backup file on disk: written as `FILE.partial` and renamed over `FILE` once complete and
/// durable, so an existing `FILE` is replaced whole or not at all; read piece by piece.
enum BackupFile {
    /// Writes a new backup at `url` through `body`, which receives the output function.
    /// - Throws: ``BackupError/io(_:)`` when the file cannot be written; what `body` throws
    ///   (the partial file is removed then).
    static func write<T>(to url: URL, _ body: (@escaping (Data) throws -> Void) throws -> T) throws -> T {
        let partial = URL(fileURLWithPath: url.path + ".partial")
        // What an interrupted backup left; `unlink` removes a link itself, never what it names.
        unlink(partial.path)
        let file: ExclusiveFile
        do {
            file = try ExclusiveFile(creating: partial)
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
            try file.commit()
        } catch let error as SecureFileError {
            file.abandon()
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
        let folder = open(url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
        return result
    }

    /// Opens the backup at `url` for reading and hands `body` its size and a reader of its
    /// bytes (returning up to the requested count, empty at the end).
    /// - Throws: ``BackupError/io(_:)`` when it cannot be opened or read; what `body` throws.
    static func read<T>(_ url: URL, _ body: (Int, @escaping (Int) throws -> Data) throws -> T) throws -> T {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BackupError.io("cannot open \(url.path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { throw BackupError.io("\(url.path) is not a regular file") }
        return try body(Int(info.st_size)) { count in
            var buffer = Data(count: count)
            let got = buffer.withUnsafeMutableBytes { raw -> Int in
                var done = 0
                while done < count {
                    let read = Glibc.read(fd, raw.baseAddress! + done, count - done)
                    if read < 0 && errno == EINTR { continue }
                    if read <= 0 { return read < 0 && done == 0 ? -1 : done }
                    done += read
                }
                return done
            }
            guard got >= 0 else { throw BackupError.io("cannot read \(url.path): \(String(cString: strerror(errno)))") }
            buffer.count = got
            return buffer
        }
    }

    private static func reason(_ error: any Error) -> String {
        if case .systemCall(_, _, let code) = error as? SecureFileError { return String(cString: strerror(code)) }
        return String(describing: error)
    }
}
