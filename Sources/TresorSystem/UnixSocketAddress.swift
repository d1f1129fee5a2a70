#if canImport(Glibc)
import Glibc
#endif

// Binding and connecting to a path: the one place that fills a `sockaddr_un`.
extension UnixSockets {
    /// Connects socket `fd` to the Unix socket at `path` (`connect(2)`).
    /// - Parameters:
    ///   - fd: an unconnected `AF_UNIX` socket.
    ///   - path: the socket's path in the file system.
    /// - Returns: 0, or the failure's `errno`: `ENAMETOOLONG` for a path longer than a socket
    ///   address holds, `EINVAL` for one with a NUL byte in it (the kernel would read a shorter path).
    public static func connect(_ fd: Int32, to path: String) -> Int32 {
        withAddress(of: path) { Glibc.connect(fd, $0, $1) }
    }

    /// Binds socket `fd` to `path` (`bind(2)`), which must not exist yet.
    /// - Parameters:
    ///   - fd: an unbound `AF_UNIX` socket.
    ///   - path: where the socket is to appear in the file system.
    /// - Returns: 0, or the failure's `errno`, as ``connect(_:to:)`` says.
    public static func bind(_ fd: Int32, to path: String) -> Int32 {
        withAddress(of: path) { Glibc.bind(fd, $0, $1) }
    }

    private static func withAddress(of path: String, _ call: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.contains(0) else { return EINVAL }
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return ENAMETOOLONG }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return result == 0 ? 0 : errno
    }
}
