import Crypto
import Foundation
import TresorCrypto

/// The server key (docs/SECURITY.md, "A Tresor server"): 32 random bytes in a file of mode
/// 0600 (`head -c 32 /dev/urandom > server.key`), the same on every instance and never in the
/// database. Every sealed value in the database is sealed under keys derived from it, so a
/// copy of the database alone reveals no note text, title, folder name or hint.
public struct ServerKey: Sendable {
    /// The size of a server key file.
    public static let byteCount = 32

    let contentKey: SymmetricKey

    /// Reads the key file.
    /// - Parameter path: the file.
    /// - Throws: ``ServerSetupError/serverKey(_:)`` for a missing, unreadable, group- or
    ///   world-accessible file, or one of another size than 32 bytes.
    public init(file path: String) throws {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw ServerSetupError.serverKey(
                "\(path) cannot be read (\(String(cString: strerror(errno)))) — make one with: head -c 32 /dev/urandom > \(path); chmod 600 \(path)")
        }
        guard status.st_mode & S_IFMT == S_IFREG else { throw ServerSetupError.serverKey("\(path) is not a regular file") }
        guard status.st_mode & 0o077 == 0 else {
            throw ServerSetupError.serverKey("\(path) may be read by others (mode \(String(status.st_mode & 0o777, radix: 8))): chmod 600 \(path)")
        }
        guard status.st_size == Self.byteCount else {
            throw ServerSetupError.serverKey("\(path) holds \(status.st_size) bytes, not \(Self.byteCount): make one with head -c 32 /dev/urandom")
        }
        guard let data = FileManager.default.contents(atPath: path), data.count == Self.byteCount else {
            throw ServerSetupError.serverKey("\(path) cannot be read")
        }
        try self.init(bytes: data)
    }

    /// A key from its 32 bytes (tests, tools).
    /// - Parameter bytes: the key.
    /// - Throws: ``ServerSetupError/serverKey(_:)`` for another size.
    public init(bytes: Data) throws {
        guard bytes.count == Self.byteCount else { throw ServerSetupError.serverKey("a server key is \(Self.byteCount) bytes") }
        contentKey = KeyDerivation.hkdfSHA256(inputKeyMaterial: SymmetricKey(data: bytes), salt: Data(), info: "tresor.server.v1.content")
    }
}
