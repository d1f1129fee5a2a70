import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock` on a file, held for the life of the process: one daemon per home.
public final class DaemonLock: Sendable {
    private let fd: Int32

    /// Takes the lock, or returns nil when another process holds it.
    public init?(at url: URL) throws {
        let fd = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SecureFileError.systemCall("open", path: url.path, errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        self.fd = fd
    }

    deinit { close(fd) }
}
