import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

extension Data {
    /// Everything left to read from file descriptor `fd`, up to end of file (or the first
    /// error other than an interrupted read), or its first `limit` bytes. The descriptor stays
    /// open.
    public init(readingToEndOf fd: Int32, upTo limit: Int = .max) {
        self.init()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while count < limit {
            let wanted = Swift.min(buffer.count, limit - count)
            let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, wanted) }
            if got > 0 {
                append(contentsOf: buffer[0..<got])
            } else if got < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}

extension Data {
    /// Writes all of the bytes at file descriptor `fd`'s current offset — or, given `position`,
    /// at that offset of the file without moving the descriptor's (`pwrite`) — through short and
    /// interrupted writes. Returns nil once everything is written, else the `errno` of the write
    /// that failed.
    @discardableResult
    public func write(toDescriptor fd: Int32, at position: Int64? = nil) -> Int32? {
        withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let start = buffer.baseAddress! + offset
                let written =
                    position.map { pwrite(fd, start, buffer.count - offset, off_t($0) + off_t(offset)) }
                    ?? Glibc.write(fd, start, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
    }
}
