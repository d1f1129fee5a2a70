import FoundationEssentials
import Glibc

/// Small read-only helpers shared by the environment checks. They use `lstat` so that a
/// symbolic link is judged as itself and never silently followed.
enum EnvironmentProbe {
    /// The kind of a file system entry, from `st_mode`.
    enum Kind: Equatable {
        case directory, regular, symlink, other
    }

    /// What the checks need from `lstat`.
    struct Status {
        var kind: Kind
        /// Permission bits including setuid/setgid/sticky (`st_mode & 07777`).
        var mode: UInt32
        var owner: UInt32
        var device: UInt64
    }

    /// `lstat` of a path; `nil` with `errno` left set if it fails.
    static func status(_ path: String) -> Status? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        let kind: Kind
        switch st.st_mode & S_IFMT {
        case S_IFDIR: kind = .directory
        case S_IFREG: kind = .regular
        case S_IFLNK: kind = .symlink
        default: kind = .other
        }
        return Status(kind: kind, mode: UInt32(st.st_mode & 0o7777), owner: st.st_uid, device: UInt64(st.st_dev))
    }

    /// Reads a small text file such as a `/proc` or `/sys` entry. procfs reports a size of 0,
    /// so this reads until end of file instead of trusting `st_size`.
    static func readText(_ url: URL, limit: Int = 1 << 20) -> String? {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// What is wrong with an entry's mode and owner, or nil when they are as wanted.
    static func issue(of status: Status, want: UInt32, uid: UInt32) -> String? {
        var parts: [String] = []
        if status.mode != want {
            parts.append("\(octal(status.mode)), want \(octal(want))")
        }
        if status.owner != uid { parts.append("owner uid \(status.owner), want \(uid)") }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// The first line of a small text file, trimmed.
    static func readLine(_ url: URL) -> String? {
        readText(url)?.split(separator: "\n", omittingEmptySubsequences: false).first
            .map { $0.trimmingWhitespace() }
    }

    /// `0644`-style octal text for messages.
    static func octal(_ mode: UInt32) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// Joins at most `limit` items for a one-line summary, noting how many were left out.
    static func list(_ items: [String], limit: Int = 5) -> String {
        let shown = items.prefix(limit).joined(separator: ", ")
        return items.count > limit ? "\(shown) and \(items.count - limit) more" : shown
    }
}
