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
}
