import Foundation
import Synchronization
import TresorCrypto
import TresorKeychain
import TresorSystem

/// SHA-256 of files by path, cached by device, inode, size, modification and change time.
final class FileHashes: Sendable {
    static let shared = FileHashes()

    /// ctime is in the key too: unlike mtime, no unprivileged process can set it back, so a
    /// binary edited in place is always hashed again.
    struct Identity: Hashable {
        var device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int, changeSeconds: Int, changeNanoseconds: Int

        init(_ info: stat) {
            (device, inode, size) = (UInt64(info.st_dev), UInt64(info.st_ino), Int64(info.st_size))
            (seconds, nanoseconds) = (info.st_mtim.tv_sec, info.st_mtim.tv_nsec)
            (changeSeconds, changeNanoseconds) = (info.st_ctim.tv_sec, info.st_ctim.tv_nsec)
        }
    }

    private let cache = Mutex<[Identity: Data]>([:])

    /// The hash of the file open at `fd`.
    /// - Parameters:
    ///   - fd: an open file.
    ///   - name: what the file is, for the error.
    /// - Throws: `KeychainError.param` for anything but a regular file: a directory, a FIFO, a device.
    func sha256(ofOpenFile fd: Int32, named name: String = "the executable") throws -> Data {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw KeychainError.param("cannot stat \(name) (errno \(errno))") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw KeychainError.param("\(name) is not a file") }
        let identity = Identity(info)
        if let known = cache.withLock({ $0[identity] }) { return known }
        let hash = try Digest.sha256(readingFileDescriptor: fd)
        cache.withLock { $0[identity] = hash }
        return hash
    }

    /// The hash of the file at `url`. A file hashed before costs one `stat` (every connection
    /// asks whether its client is the CLI).
    /// - Throws: `KeychainError.param` when the path names no file, or a directory, a FIFO or a
    ///   device (a FIFO is opened without waiting for a writer, then refused).
    func sha256(of url: URL) throws -> Data {
        var info = stat()
        if stat(url.path, &info) == 0, let known = cache.withLock({ $0[Identity(info)] }) { return known }
        let fd = open(url.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw KeychainError.param("cannot open \(url.path) (errno \(errno))") }
        defer { close(fd) }
        return try sha256(ofOpenFile: fd, named: url.path)
    }
}
