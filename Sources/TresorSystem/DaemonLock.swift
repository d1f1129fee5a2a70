import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock` on a file, held for the life of the process: one daemon per home.
public final class DaemonLock: Sendable {
    private let fd: Int32

    /// Takes the lock, or returns nil when another process holds it. On a read-only file system
    /// the lock is taken on the existing file, opened read-only (`flock` needs no write access),
    /// or else on its folder.
    public init?(at url: URL) throws {
        var fd = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd < 0 && errno == EROFS {
            fd = open(url.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            if fd < 0 && errno == ENOENT { fd = open(url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        }
        guard fd >= 0 else { throw SecureFileError.systemCall("open", path: url.path, errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Writes where the daemon holding the lock listens into the lock file, so that a client
    /// whose environment names another socket (another `XDG_RUNTIME_DIR`: cron, another login)
    /// can be told where it is. Best effort: a read-only home keeps nothing.
    /// - Parameter socket: the socket's path.
    public func record(socket: String) {
        guard ftruncate(fd, 0) == 0 else { return }
        _ = Data(socket.utf8).withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    /// Where the daemon holding the home's lock listens, when that is not the socket `paths`
    /// name (it was started with another `XDG_RUNTIME_DIR`); nil when no daemon holds it, it
    /// recorded nothing, or it listens there.
    /// - Parameter paths: the home and the socket this environment looks at.
    /// - Returns: the socket's path.
    public static func socketElsewhere(for paths: TresorPaths) -> String? {
        guard let listening = socketOfHolder(at: paths.daemonLock), listening != paths.socket.path else { return nil }
        return listening
    }

    /// Where the daemon holding the lock at `url` listens, as it recorded it; nil when no
    /// daemon holds it or it recorded nothing.
    private static func socketOfHolder(at url: URL) -> String? {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // Shared and non-blocking: it succeeds only when nobody holds the lock.
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return nil
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count), as: UTF8.self)
    }
}
