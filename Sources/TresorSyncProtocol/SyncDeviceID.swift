import Crypto
import Foundation
import TresorModel

/// A device's id, the same on every device and on the server: the first 16 bytes of the SHA-256
/// of the device's Ed25519 signing key — the key it signs its records and its sign-ins with — in
/// lowercase hex. An id thus names one key: a server that enrolls a device checks that the id is
/// its credential key's, so no other key can take over a device's id.
public enum SyncDeviceID {
    /// The id of the device whose signing public key is `key`.
    /// - Parameter key: the device's Ed25519 public key (32 bytes, raw).
    /// - Returns: 32 lowercase hexadecimal characters.
    public static func of(signingKey key: Data) -> String {
        SHA256.hash(data: key).prefix(16).hexString
    }

    /// Whether `id` has an id's form: 32 lowercase hexadecimal characters.
    /// - Parameter id: what a request names as a device id.
    /// - Returns: true for the form ``of(signingKey:)`` gives.
    public static func isWellFormed(_ id: String) -> Bool {
        id.utf8.count == 32
            && id.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }
}
