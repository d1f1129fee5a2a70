import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Why a file operation in the home failed.
public enum SecureFileError: Error, Equatable, Sendable, CustomStringConvertible {
    case systemCall(String, path: String, errno: Int32)
    case tooLarge(path: String, limit: Int)
    case notFound(path: String)
    /// A FIFO, a device, a socket or a folder where a file was to be read.
    case notAFile(path: String)

    public var description: String {
        switch self {
        case .systemCall(let call, let path, let code):
            return "\(call) failed for \(path): \(String(cString: strerror(code)))"
        case .tooLarge(let path, let limit):
            return "\(path) is larger than the \(limit) bytes it may hold"
        case .notFound(let path):
            return "\(path) does not exist"
        case .notAFile(let path):
            return "\(path) is not a regular file (a pipe, a device or a folder)"
        }
    }
}

/// File operations with the home's modes (docs/FORMAT.md, "Home files"): folders 0700, files
/// 0600, written atomically so a crash leaves either the old or the new content, never a mix.
public enum SecureFiles {
    /// Creates `directory` with mode 0700 (missing parents too, also 0700) and tightens
    /// `directory` itself if it exists. Parents that exist are left exactly as they are.
    /// A folder already 0700 is not touched, so a home on a read-only file system still opens.
    public static func createDirectory(_ directory: URL) throws {
        try makeMissing(directory)
        let path = directory.path
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & 0o7777 == 0o700 { return }
        if chmod(path, 0o700) != 0 { throw SecureFileError.systemCall("chmod", path: path, errno: errno) }
    }

    /// The bytes an unprivileged writer may still use on the file system holding `url`.
    /// - Parameter url: an existing path.
    /// - Returns: nil when it cannot be told.
    public static func availableBytes(at url: URL) -> Int? {
        var info = statvfs()
        guard statvfs(url.path, &info) == 0 else { return nil }
        return Int(clamping: UInt64(info.f_bavail) &* UInt64(info.f_frsize))
    }

    /// Whether `url` (a file or a folder) lies on a file system mounted read-only.
    /// - Parameter url: an existing path.
    /// - Returns: false when it cannot be told (a missing path).
    public static func isOnReadOnlyFileSystem(_ url: URL) -> Bool {
        var info = statvfs()
        guard statvfs(url.path, &info) == 0 else { return false }
        return info.f_flag & 1 != 0  // ST_RDONLY
    }

    private static func makeMissing(_ directory: URL) throws {
        let path = directory.path
        guard !FileManager.default.fileExists(atPath: path) else { return }
        try makeMissing(directory.deletingLastPathComponent())
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw SecureFileError.systemCall("mkdir", path: path, errno: errno)
        }
    }

    /// Writes `data` to `url` with mode 0600: to a temporary file in the same folder, fsync,
    /// rename over the target, fsync the folder.
    public static func writeAtomically(_ data: Data, to url: URL) throws {
        let temporary = temporaryPath(replacing: url)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SecureFileError.systemCall("open", path: temporary, errno: errno) }
        do {
            try writeAll(data, to: fd, path: temporary)
            guard fchmod(fd, 0o600) == 0 else { throw SecureFileError.systemCall("fchmod", path: temporary, errno: errno) }
            guard fsync(fd) == 0 else { throw SecureFileError.systemCall("fsync", path: temporary, errno: errno) }
            close(fd)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, url.path) == 0 else {
            let code = errno
            unlink(temporary)
            throw SecureFileError.systemCall("rename", path: url.path, errno: code)
        }
        try syncDirectory(url.deletingLastPathComponent())
    }

    /// Where a file that replaces `url` is written before it is renamed over it: beside it, as
    /// `.<name>.tmp-<pid>` (what ``removeInterruptedWrites(in:)`` clears).
    static func temporaryPath(replacing url: URL) -> String {
        url.deletingLastPathComponent().path + "/." + url.lastPathComponent + ".tmp-\(getpid())"
    }

    /// Makes the folder's entries durable (fsync of the folder): after a rename, an unlink or a
    /// new file, so a power cut does not undo them.
    /// - Parameter directory: the folder.
    /// - Throws: ``SecureFileError/systemCall(_:path:errno:)`` when the folder cannot be opened or
    ///   synced: what was written into it is then not known to be durable.
    public static func syncDirectory(_ directory: URL) throws {
        let path = directory.path
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SecureFileError.systemCall("open", path: path, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw SecureFileError.systemCall("fsync", path: path, errno: errno) }
    }

    /// Overwrites the file at `url` with zeros (fsynced), then unlinks it, never through a link:
    /// what the home removes of content that was sealed — hygiene, so nothing of it stays
    /// readable even with the keys, not the only protection.
    /// - Parameter url: the file.
    public static func overwriteAndRemove(_ url: URL) {
        let path = url.path
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

    /// Removes the temporary files an interrupted ``writeAtomically(_:to:)`` left in `directory`
    /// (`.<name>.tmp-<pid>`): they may hold a state that was never acknowledged, such as a
    /// keybag wrapped under a passcode change that did not complete. Returns their names.
    @discardableResult
    public static func removeInterruptedWrites(in directory: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let stale = names.filter { $0.hasPrefix(".") && $0.contains(".tmp-") }
        for name in stale { unlink(directory.appendingPathComponent(name).path) }
        return stale
    }

    /// Creates `url` with `data` and mode 0600, failing if it already exists; a failed write
    /// leaves no file.
    public static func createExclusively(_ data: Data, at url: URL) throws {
        let file = try ExclusiveFile(creating: url)
        try file.append(data)
        try file.commit()
    }

    /// Appends `data` to the file at `url` at byte `length`, dropping whatever followed (the torn
    /// tail of an append a crash interrupted), then fsyncs it; a missing file is created with
    /// mode 0600 (and its folder synced). Never through a link.
    /// - Parameters:
    ///   - data: the bytes to append.
    ///   - url: the file.
    ///   - length: the bytes of the file to keep before them.
    /// - Throws: ``SecureFileError/systemCall(_:path:errno:)``; what was appended is then not durable.
    public static func append(_ data: Data, to url: URL, after length: Int) throws {
        let path = url.path
        let created = !exists(url)
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SecureFileError.systemCall("open", path: path, errno: errno) }
        defer { close(fd) }
        guard ftruncate(fd, off_t(length)) == 0 else { throw SecureFileError.systemCall("ftruncate", path: path, errno: errno) }
        guard lseek(fd, off_t(length), SEEK_SET) == off_t(length) else { throw SecureFileError.systemCall("seek", path: path, errno: errno) }
        try writeAll(data, to: fd, path: path)
        guard fsync(fd) == 0 else { throw SecureFileError.systemCall("fsync", path: path, errno: errno) }
        if created { try syncDirectory(url.deletingLastPathComponent()) }
    }

    /// Writes all of `data` at `fd`'s current offset, through short and interrupted writes.
    static func writeAll(_ data: Data, to fd: Int32, path: String) throws {
        if let code = data.write(toDescriptor: fd) { throw SecureFileError.systemCall("write", path: path, errno: code) }
    }

    /// Opens `url` read-only, never through a symbolic link, and only a regular file: a missing
    /// file is `notFound`, anything else `notAFile`. Non-blocking until checked: opening a FIFO
    /// would otherwise wait for a writer, and reading it wait for data, with the caller's thread.
    /// - Returns: the descriptor and the file's size.
    private static func openForReading(_ url: URL) throws -> (fd: Int32, size: Int) {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ENOENT { throw SecureFileError.notFound(path: url.path) }
            throw SecureFileError.systemCall("open", path: url.path, errno: errno)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw SecureFileError.systemCall("fstat", path: url.path, errno: code)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw SecureFileError.notAFile(path: url.path)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return (fd, Int(info.st_size))
    }

    /// Reads `url` whole, refusing files larger than `limit` bytes (so a corrupted or hostile
    /// file cannot exhaust memory).
    public static func read(_ url: URL, limit: Int) throws -> Data {
        let fd = try openForReading(url).fd
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw SecureFileError.systemCall("read", path: url.path, errno: errno)
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
            if data.count > limit { throw SecureFileError.tooLarge(path: url.path, limit: limit) }
        }
        return data
    }

    /// Opens `url` for reading piece by piece with `body`, refusing files larger than `limit` bytes
    /// before reading anything. For files read in records (attachments): each record lands in its
    /// own buffer straight from the kernel, with no whole-file copy and no growing buffer.
    public static func withReader<T>(_ url: URL, limit: Int, _ body: (inout SequentialReader) throws -> T) throws -> T {
        let file = try OpenedFile(reading: url, limit: limit)
        return try body(&file.reader)
    }

    /// A file opened for reading in order, as ``withReader(_:limit:_:)`` does, for a reader that
    /// outlives one call (an attachment answered a chunk at a time); closed when dropped.
    public final class OpenedFile {
        /// Its reader, from the start.
        public var reader: SequentialReader

        /// Opens `url`, never through a symbolic link.
        /// - Parameters:
        ///   - url: the file.
        ///   - limit: the largest size accepted, checked before anything is read.
        /// - Throws: ``SecureFileError`` (`notFound`, `tooLarge`, a failed call).
        public init(reading url: URL, limit: Int) throws {
            let (fd, size) = try openForReading(url)
            guard size <= limit else {
                close(fd)
                throw SecureFileError.tooLarge(path: url.path, limit: limit)
            }
            reader = SequentialReader(fd: fd, path: url.path, size: size)
        }

        deinit { close(reader.fd) }
    }

    /// A file opened by ``withReader(_:limit:_:)``, read from the start in order.
    public struct SequentialReader {
        let fd: Int32
        let path: String
        /// The file's size when it was opened.
        public let size: Int
        /// Bytes read so far.
        public private(set) var offset = 0

        /// The next `count` bytes. Throws ``SecureFileError/tooLarge(path:limit:)`` when fewer
        /// remain (of the size the file had when opened), so a bogus length cannot make it allocate
        /// more than the file holds.
        public mutating func read(count: Int) throws -> Data {
            guard count >= 0, count <= size - offset else { throw SecureFileError.tooLarge(path: path, limit: size) }
            guard count > 0 else { return Data() }
            // Not Data(count:): that zero-fills memory the read overwrites at once.
            let buffer = malloc(count)!
            var done = 0
            while done < count {
                let got = Glibc.read(fd, buffer + done, count - done)
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else {
                    let code = got < 0 ? errno : EIO
                    free(buffer)
                    throw SecureFileError.systemCall("read", path: path, errno: code)
                }
                done += got
            }
            offset += count
            return Data(bytesNoCopy: buffer, count: count, deallocator: .free)
        }
    }

    public static func exists(_ url: URL) -> Bool {
        var info = stat()
        return lstat(url.path, &info) == 0
    }

    /// Whether `url` is a folder (following a symbolic link to one).
    /// - Parameter url: the path.
    /// - Returns: true for a folder.
    public static func isDirectory(_ url: URL) -> Bool {
        var info = stat()
        return stat(url.path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}
