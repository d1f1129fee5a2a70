import Crypto
import Foundation

/// SHA-256 digests, for identifying executables by content.
public enum Digest {
    /// The SHA-256 of everything readable from `fd`, read in 64 KiB blocks from its current offset.
    public static func sha256(readingFileDescriptor fd: Int32) throws -> Data {
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw CryptoError.invalidParameter("read failed while hashing (errno \(errno))")
            }
            if count == 0 { break }
            buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
        return Data(hasher.finalize())
    }

    /// The SHA-256 of `data`.
    public static func sha256<D: DataProtocol>(_ data: D) -> Data {
        Data(SHA256.hash(data: data))
    }
}
