import Foundation

/// A TCP port of 127.0.0.1 that nothing listens on just now (the kernel picks it; it is
/// released at once, for a server the test starts to take).
public enum LoopbackPort {
    /// - Returns: the port.
    /// - Throws: ``TestPostgres/Failure`` when no socket can be bound.
    public static func free() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestPostgres.Failure("socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TestPostgres.Failure("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
