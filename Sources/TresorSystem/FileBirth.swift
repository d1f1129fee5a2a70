import CTresorSystem
import FoundationEssentials

/// When a file was made, as its file system recorded it. Foundation's `creationDate` on Linux
/// is the last modification, not the birth.
public enum FileBirth {
    /// The birth time of the file at `path` (statx(2)'s `stx_btime`).
    /// - Parameter path: the file.
    /// - Returns: when it was made; nil when it cannot be read or its file system keeps no birth
    ///   time (tmpfs before Linux 5.18, some network file systems).
    public static func time(of path: String) -> Date? {
        var seconds: Int64 = 0
        var nanoseconds: UInt32 = 0
        guard tresor_birth_time(path, &seconds, &nanoseconds) == 0 else { return nil }
        return Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
    }
}
