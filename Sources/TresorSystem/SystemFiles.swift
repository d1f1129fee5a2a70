#if canImport(Glibc)
import Glibc
#endif

/// Files only root can have put where they are: what lets a path, rather than a hash, name a
/// program to the Secret Service (`SecretServiceIdentities.group`).
public enum SystemFiles {
    /// Whether the file at `path` is a regular file (not a link someone could repoint) and it and
    /// every folder above it are root's and writable by root alone, so no other user can put
    /// another program there.
    /// - Parameter path: an absolute path; a relative one is never system-owned.
    /// - Returns: whether every component passes; false when one cannot be read.
    public static func isSystemOwned(_ path: String) -> Bool {
        guard path.hasPrefix("/") else { return false }
        var current = Substring(path)
        var isTheFile = true
        while true {
            var info = stat()
            guard lstat(String(current), &info) == 0, info.st_uid == 0, info.st_mode & 0o022 == 0 else { return false }
            if isTheFile && (info.st_mode & S_IFMT) != S_IFREG { return false }
            isTheFile = false
            guard current != "/", let slash = current.lastIndex(of: "/") else { return true }
            current = slash == current.startIndex ? path.prefix(1) : current[..<slash]
        }
    }
}
