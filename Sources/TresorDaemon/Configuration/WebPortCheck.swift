import Foundation

/// Whether the web client's port can be listened on, tried before anything starts, so that a
/// taken port stops the daemon at once with a plain reason (``DaemonError/webPortInUse(_:)``).
enum WebPortCheck {
    /// - Throws: ``DaemonError/webPortInUse(_:)`` or ``DaemonError/webPort(_:reason:)``.
    static func requireAvailable(_ port: Int, address text: String = "127.0.0.1") throws {
        var v6 = in6_addr()
        let isV6 = inet_pton(AF_INET6, text, &v6) == 1
        let fd = socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var reuse: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        let bound: Int32
        if isV6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
            address.sin6_addr = v6
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
            inet_pton(AF_INET, text, &address.sin_addr)
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard bound != 0 else { return }
        let failure = errno
        if failure == EADDRINUSE { throw DaemonError.webPortInUse(port) }
        throw DaemonError.webPort(port, reason: String(cString: strerror(failure)))
    }
}
